import { randomUUID } from 'node:crypto';
import { ConditionalCheckFailedException, type TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import {
  BatchWriteCommand,
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import type { Deadline } from '../../deadline.js';
import type { Mode } from '../../mode.js';
import { randomBase62 } from '../../random-id.js';
import type { DeliverySlots, StartedClaimed } from '../../webhooks/ports.js';
import {
  DELIVERY_RETENTION_SECONDS,
  deliveryJobSchema,
  distinctDeliveries,
  jobsByEndpoint,
  newDeliveryRecord,
  type DeliveryJob,
  type DeliveryKey,
} from '../../webhooks/webhook-delivery.js';
import {
  attempt,
  DEFAULT_RETRY_POLICY,
  isTransactionCancelled,
  SETTLE_AFTER_MS,
  sleep,
  withRetries,
  withUnprocessedRetries,
  type RetryPolicy,
} from '../retry.js';
import { ServiceUnavailableError } from '../../errors.js';
import { ITEM_TYPES, keys, type ItemKey } from './table-keys.js';
import { deliveryStartPut, MAX_TRANSACTION_ACTIONS } from './webhook-delivery-store.js';

/** Waiting entries per BatchWriteItem (its limit). */
const WRITES_PER_BATCH = 25;
/** Waiting jobs read per fill, in caps: the promoted ones not yet removed, this fill's, and the next fills'. */
const READ_AHEAD_CAPS = 4;
/**
 * Endpoints whose waiting jobs are remembered at once (knownWaiting), at most, per mode: past it the
 * endpoint used least recently is forgotten (it costs that endpoint one read on its next fill). So a
 * tenant with many endpoints, or test mode's traffic, never empties what every other endpoint's fills
 * rely on (it was one map for both modes, cleared whole at 1,000). About 4 caps of jobs each (~300
 * bytes a job): some 10 MB per mode at most.
 */
export const KNOWN_ENDPOINTS_PER_MODE = 1_000;
/** The `SLOTS` item's attribute of a delivery holding a slot, and the count of them. */
const HELD_PREFIX = 'held#';
/** A claim's mark: its time, this separator (never in an ISO time), and random characters (62^8 ≈ 2 × 10^14). */
const CLAIM_MARK_SEPARATOR = '~';
const CLAIM_MARK_RANDOM_LENGTH = 8;
const HELD_COUNT = 'heldCount';
/** startClaimed's transactions at most: the second with the endpoints that cancelled the first listed, or left out. */
const START_CLAIMED_ROUNDS = 2;
/**
 * How long an endpoint whose slots refused a claim as listed is taken for full (`startClaimed` lists its
 * jobs without a claim, in the same transaction as its company's other endpoints' claims): a company with
 * one endpoint down would otherwise pay a cancelled transaction on each event before its other
 * endpoints' jobs were queued. Only a hint of this process: a fill (which follows every listing) claims
 * any slot that is free after all, so a wrong one costs that endpoint's job a fill (a claim, a read when it
 * fails) before its send, never a delivery.
 */
export const KNOWN_FULL_MS = 1_000;
/** Claims lost to a concurrent fill (the same waiting jobs, or the last free slots) are tried again this often. */
const CLAIM_ROUNDS = 4;

/**
 * Each endpoint's slots in the delivery lanes and its waiting list, in the table (table-keys.ts:
 * `WHW#<m><endpointId>`; lib/webhooks/delivery-slots.ts says what they are for).
 *
 * - The slots are attributes of the `SLOTS` item, one per delivery holding one
 *   (`held#<createdAt>#<deliveryId>`, its value the claim's mark: when, and a random part), and their
 *   number, `heldCount`.
 *   A claim sets a holder's attribute conditional on its absence and on the count leaving room; a
 *   release removes it conditional on its presence; both change the count in the same write. So
 *   giving a slot back twice, or claiming it twice for one delivery, changes nothing, and the sweeper
 *   can tell which deliveries hold them. Top-level attributes, not a map: a nested path is invalid
 *   for update until its map exists, and which of that and a condition AWS checks first is not
 *   documented.
 * - A job whose delivery holds a slot is promoted: its waiting entry stays on the list until it is
 *   queued (`promoted` deletes it), and a fill skips it. So a claim is one UpdateItem of the `SLOTS`
 *   item, and a job that ended gives its slot to the next waiting job in that same write
 *   (`releasing`) when this process already knows that job: one write per ended job where a release,
 *   a two-item transaction (the slot and a promotion marker on the waiting entry) and the entry's
 *   delete were three. Otherwise the slot is given back first and the list read after, never the
 *   other way round (a job listed between a read and a later release would wait behind a free slot).
 *   A fill working from an out-of-date view of the list may claim a job another process queued and
 *   ended meanwhile; its record, settled, ends that copy at once and gives the slot back (nothing is
 *   sent twice).
 * - Items written by the earlier form (a string set `holders`) are still given back (`release`)
 *   and shown to the sweeper (`holders`); new claims count only the new form, so such an endpoint may
 *   briefly have up to twice its cap in the lanes. A waiting entry the earlier form marked
 *   `promotedAt` is claimable again: a second copy of a job that was queued is harmless (its record
 *   admits one attempt per attempt count).
 * - Items expire through `ttl` DELIVERY_RETENTION_SECONDS after they were last written: a job
 *   waiting that long has an expired delivery record anyway.
 */
export class DynamoWebhookDeliverySlots implements DeliverySlots {
  /**
   * Per endpoint, the waiting jobs the last read saw beyond those it claimed, oldest first: a burst's
   * releases are each followed by a fill, and without this each fill read the list again for one job.
   * Only a hint (this process's view): every claim is conditional on the stored state.
   */
  private readonly knownWaiting: Record<Mode, Map<string, DeliveryJob[]>> = { live: new Map(), test: new Map() };
  /** Per endpoint whose slots refused a claim as listed, until when it is taken for full (KNOWN_FULL_MS). */
  private readonly fullUntil: Record<Mode, Map<string, number>> = { live: new Map(), test: new Map() };

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly now: () => Date = () => new Date(),
    private readonly policy: RetryPolicy = DEFAULT_RETRY_POLICY,
    /** How long `startClaimed` lets a transaction in doubt settle before its last same-token attempt. */
    private readonly settleAfterMs: number = SETTLE_AFTER_MS,
  ) {}

  private ttl(): number {
    return Math.floor(this.now().getTime() / 1000) + DELIVERY_RETENTION_SECONDS;
  }

  /**
   * The jobs put in BatchWriteItem requests of up to 25 (a stream batch of 100 events to three endpoints is
   * twelve requests, where one PutItem each made it 300, the slowest part of a burst's fan-out). Not a
   * transaction: a waiting entry needs no condition (a job listed twice is the same entry, and whether it is
   * promoted is the `SLOTS` item's to say), a transactional write costs twice the write capacity, and on
   * DynamoDB Local it held the one writer twice as long (a 1,600-delivery burst's 32 transactions of 100
   * were what another company's writes waited behind). IAM judges a BatchWriteItem on every key it names at
   * once: all are `WHW#` partitions, the only ones this adapter's grant allows. Each job once: a batch naming
   * an item twice is refused.
   */
  async wait(jobs: readonly DeliveryJob[], deadline?: Deadline): Promise<void> {
    const ttl = this.ttl();
    await this.writeAll(
      distinctDeliveries(jobs).map((job) => ({ PutRequest: { Item: waitingItem(job, ttl) } })),
      deadline,
    );
  }

  async forget(jobs: readonly DeliveryJob[]): Promise<void> {
    await this.writeAll(distinctDeliveries(jobs).map((job) => ({ DeleteRequest: { Key: keys.webhookDeliveryWaiting(job) } })));
  }

  async promoted(jobs: readonly DeliveryJob[]): Promise<void> {
    await this.forget(jobs);
  }

  async claimWaiting(
    mode: Mode,
    endpointId: string,
    cap: number,
    fresh: readonly DeliveryJob[] = [],
    releasing: readonly DeliveryKey[] = [],
  ): Promise<DeliveryJob[]> {
    const giving = distinctDeliveries(releasing.filter((key) => key.mode === mode && key.endpointId === endpointId));
    const given = new Set(giving.map((key) => holderOf(key)));
    // The jobs just listed, claimed without reading first: an endpoint with free slots has nothing older waiting
    // (a free slot is filled from the list whenever one is given back), so this is the usual case for a fan-out.
    const mine = distinctDeliveries(fresh)
      .filter((job) => job.mode === mode && job.endpointId === endpointId && !given.has(holderOf(job)))
      .sort((x, y) => (holderOf(x) < holderOf(y) ? -1 : 1))
      .slice(0, cap);
    if (mine.length > 0 && (await this.tryClaim(mode, endpointId, cap, mine, giving))) return mine;
    // The slots of jobs that ended, handed to as many waiting jobs an earlier read of this endpoint saw beyond what
    // it claimed, without reading again: the write's conditions (the ended jobs still hold their slots, the claimed
    // ones do not, no more than `cap` held) keep it exact; when they fail, another fill got there first. Taken off
    // the known list before the write, so a concurrent fill of the same endpoint takes the next ones. A job of this
    // process's list that ended here (another process claimed it meanwhile) is not one to claim.
    const known = this.recall(mode, endpointId);
    for (let i = known.length - 1; i >= 0; i--) if (given.has(holderOf(known[i]!))) known.splice(i, 1);
    if (giving.length > 0 && known.length >= giving.length) {
      const candidates = known.splice(0, Math.min(giving.length, cap));
      if (await this.tryClaim(mode, endpointId, cap, candidates, giving)) return candidates;
    }
    this.knownWaiting[mode].delete(endpointId);
    // Otherwise the slots are given back first and the list read after, as a release and then a fill: a job listed
    // meanwhile is then either seen by this read or finds the slot free in its own writer's fill. (Read first and
    // given back after, a job listed in between would wait behind a free slot with no fill coming.)
    if (giving.length > 0) await this.releaseAll(mode, endpointId, giving);
    for (let round = 1; round <= CLAIM_ROUNDS; round++) {
      const { held, waiting } = await this.read(mode, endpointId, cap);
      const free = cap - held.size;
      const unpromoted = waiting.filter((job) => !held.has(holderOf(job)));
      const candidates = unpromoted.slice(0, Math.max(0, free));
      if (candidates.length === 0) return [];
      // Another fill took the slots or the jobs first: read again and claim what is left.
      if (await this.tryClaim(mode, endpointId, cap, candidates, [])) {
        this.remember(mode, endpointId, unpromoted.slice(candidates.length));
        return candidates;
      }
    }
    return [];
  }

  /** The slots given back in one write when all are held in this form; else one by one (the earlier form, or already given back). */
  private async releaseAll(mode: Mode, endpointId: string, keys: readonly DeliveryKey[]): Promise<void> {
    if (keys.length > 1 && (await this.tryClaim(mode, endpointId, 0, [], keys))) return;
    await Promise.all(keys.map((key) => this.release(key)));
  }

  /** The waiting jobs a read saw and did not claim, oldest first, for the next fills of the endpoint (bounded per mode, least recently used forgotten first). */
  private remember(mode: Mode, endpointId: string, jobs: DeliveryJob[]): void {
    const known = this.knownWaiting[mode];
    known.delete(endpointId);
    if (jobs.length === 0) return;
    // A Map keeps insertion order: the first key is the endpoint used least recently.
    while (known.size >= KNOWN_ENDPOINTS_PER_MODE) known.delete(known.keys().next().value!);
    known.set(endpointId, jobs);
  }

  /** The jobs remembered for the endpoint (the same array: a claim takes from it), now its most recently used. */
  private recall(mode: Mode, endpointId: string): DeliveryJob[] {
    const known = this.knownWaiting[mode];
    const jobs = known.get(endpointId);
    if (jobs === undefined) return [];
    known.delete(endpointId);
    known.set(endpointId, jobs);
    return jobs;
  }

  /**
   * One UpdateItem of the `SLOTS` item: the jobs' slots claimed (none held by them yet, and no more than `cap` held
   * after) and the slots of `releasing` given back (each still held by it); false when a condition failed.
   */
  private async tryClaim(
    mode: Mode,
    endpointId: string,
    cap: number,
    jobs: readonly DeliveryJob[],
    releasing: readonly DeliveryKey[],
  ): Promise<boolean> {
    // When, and which claim: the time tells the sweeper a promotion's age, the random part tells this claim's
    // write from another process's claim of the same job in the same millisecond (see the catch below).
    const claimMark = this.newClaimMark();
    const command = new UpdateCommand(this.claimUpdate(mode, endpointId, cap, jobs, releasing, claimMark));
    try {
      await withRetries((options) => this.client.send(command, options), undefined, this.policy);
      return true;
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      // A try whose answer was lost (a timeout) may have landed, and its retry then fails its own conditions: the
      // item as it stands shows this very write (the jobs held under this claim's mark, the ended ones gone), so it
      // is this claim's, and its jobs are queued now rather than by the sweeper minutes later. The mark is this
      // claim's own: a time alone matched another process's claim of the same job in the same millisecond, and
      // its jobs were queued twice.
      const stored = error.Item ? unmarshall(error.Item) : undefined;
      return (
        stored !== undefined &&
        jobs.every((job) => stored[heldAttribute(job)] === claimMark) &&
        releasing.every((key) => !(heldAttribute(key) in stored))
      );
    }
  }

  private newClaimMark(): string {
    return `${this.now().toISOString()}${CLAIM_MARK_SEPARATOR}${randomBase62(CLAIM_MARK_RANDOM_LENGTH)}`;
  }

  /**
   * The UpdateItem of the endpoint's `SLOTS` item that claims the jobs' slots under `claimMark` (none held by them
   * yet, and no more than `cap` held after) and gives back the slots of `releasing` (each still held by it).
   */
  private claimUpdate(
    mode: Mode,
    endpointId: string,
    cap: number,
    jobs: readonly DeliveryJob[],
    releasing: readonly DeliveryKey[],
    claimMark: string,
  ) {
    const names: Record<string, string> = { '#type': 'type', '#ttl': 'ttl' };
    const values: Record<string, unknown> = { ':type': ITEM_TYPES.webhookDeliverySlots, ':ttl': this.ttl() };
    const sets: string[] = [];
    const conditions: string[] = [];
    jobs.forEach((job, i) => {
      names[`#c${i}`] = heldAttribute(job);
      sets.push(`#c${i} = :at`);
      conditions.push(`attribute_not_exists(#c${i})`);
    });
    if (jobs.length > 0) values[':at'] = claimMark;
    const removes = releasing.map((key, i) => {
      names[`#r${i}`] = heldAttribute(key);
      conditions.push(`attribute_exists(#r${i})`);
      return `#r${i}`;
    });
    const delta = jobs.length - releasing.length;
    // A hand-over (as many claimed as given back) leaves the count as it is.
    if (delta !== 0) {
      names['#count'] = HELD_COUNT;
      sets.push('#count = if_not_exists(#count, :zero) + :delta');
      values[':zero'] = 0;
      values[':delta'] = delta;
    }
    if (delta > 0) {
      conditions.push('(attribute_not_exists(#count) OR #count <= :most)');
      values[':most'] = cap - delta;
    }
    sets.push('#type = :type', '#ttl = :ttl');
    return {
      TableName: this.tableName,
      Key: keys.webhookDeliverySlots(mode, endpointId),
      UpdateExpression: `SET ${sets.join(', ')}${removes.length > 0 ? ` REMOVE ${removes.join(', ')}` : ''}`,
      ...(conditions.length > 0 ? { ConditionExpression: conditions.join(' AND ') } : {}),
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
    };
  }

  /**
   * A trickle's jobs listed, started and claimed in one TransactWriteItems (per endpoint: its waiting entries, its
   * records, and one UpdateItem of its `SLOTS` item), where `wait`, `startAll` and the fresh claim were three
   * requests one after another (a company's event waited for all three before its send). The groups of several
   * endpoints share the transaction, up to DynamoDB's 100 actions (a claimed endpoint is 2 × its jobs + 1, a
   * listed one 2 × its jobs; one that does not fit is left for the usual road). An endpoint that cannot be
   * claimed (asked for more than the cap, or taken for full: KNOWN_FULL_MS) is listed: its waiting entries and
   * records only. All or nothing, so when it is cancelled it is sent once more with an endpoint whose `SLOTS`
   * update refused it listed instead of claimed, and without an endpoint one of whose records (or waiting
   * entries) refused it (a replayed stream record); a second cancellation leaves every job to the usual road,
   * as does a transaction with nothing left to claim. It costs twice the write units of the three requests (a
   * transaction), for a handful of items.
   *
   * An answer lost after the transaction landed: the retry carries the same ClientRequestToken, which DynamoDB
   * (and DynamoDB Local) answers as it answered the first for 10 minutes, so it is not cancelled by its own
   * writes. When the retries run out with the transaction in doubt (cut off, or still being applied), it is
   * settled as the case writer settles a round (case-writer.ts): one more same-token attempt SETTLE_AFTER_MS
   * after, then the claimed endpoints' `SLOTS` items read back for this call's claim marks; jobs claimed and
   * then reported as not would hold their slots with no message until the sweeper's five minutes. Only a
   * transaction still in doubt after that fails the call. A cancellation (also one whose every reason was
   * "not now", a conflict or throttling, when the retries for it ran out) or another error that wrote nothing
   * (a 4xx, with no attempt in doubt) is answered at once.
   */
  async startClaimed(jobs: readonly DeliveryJob[], startedAt: string, cap: number): Promise<StartedClaimed> {
    const byEndpoint = jobsByEndpoint(distinctDeliveries(jobs)).map((group) => ({
      jobs: group,
      // Listed only when it cannot be claimed: asked for more than the cap, or refused for want of free slots a moment ago.
      claim: group.length <= cap && !this.knownFull(group[0]!.mode, group[0]!.endpointId),
    }));
    let groups: StartGroup[] = [];
    let actions = 0;
    // The claims first, then the listings, while DynamoDB's 100 actions last: each job's waiting entry and record,
    // and a claimed endpoint's SLOTS update.
    for (const group of [...byEndpoint.filter((g) => g.claim), ...byEndpoint.filter((g) => !g.claim)]) {
      const cost = 2 * group.jobs.length + (group.claim ? 1 : 0);
      if (actions + cost > MAX_TRANSACTION_ACTIONS) continue;
      groups.push(group);
      actions += cost;
    }
    // Never a listing alone: a transaction in doubt is settled by its claim marks, which a listing has none of (the
    // usual road lists and starts in two requests, each settled on its own).
    for (let round = 1; round <= START_CLAIMED_ROUNDS && groups.some((g) => g.claim); round++) {
      const refused = await this.tryStartClaimed(groups, startedAt, cap);
      if (refused === undefined) {
        return {
          claimed: groups.filter((g) => g.claim).flatMap((g) => g.jobs),
          listed: groups.filter((g) => !g.claim).flatMap((g) => g.jobs),
        };
      }
      // Sent again with an endpoint refused for want of free slots listed, not claimed (and taken for full for a
      // moment: the next event's transaction lists it at once), and without one refused on a record (a replayed
      // stream record), which takes the usual road.
      groups = groups.flatMap((group, g) => {
        const why = refused.get(g);
        if (why === undefined) return [group];
        if (why === 'item') return [];
        if (why === 'slots-full') this.rememberFull(group.jobs[0]!.mode, group.jobs[0]!.endpointId);
        return [{ jobs: group.jobs, claim: false }];
      });
    }
    return { claimed: [], listed: [] };
  }

  /** Whether the endpoint's slots refused a claim as listed less than KNOWN_FULL_MS ago (a hint: a fill still claims what is free). */
  private knownFull(mode: Mode, endpointId: string): boolean {
    const until = this.fullUntil[mode].get(endpointId);
    if (until === undefined) return false;
    if (until > this.now().getTime()) return true;
    this.fullUntil[mode].delete(endpointId);
    return false;
  }

  private rememberFull(mode: Mode, endpointId: string): void {
    const known = this.fullUntil[mode];
    known.delete(endpointId);
    known.set(endpointId, this.now().getTime() + KNOWN_FULL_MS);
    // The one remembered longest ago is forgotten first: a tenant with many full endpoints costs another's at most
    // the one cancelled transaction that this hint spares.
    if (known.size > KNOWN_ENDPOINTS_PER_MODE) known.delete(known.keys().next().value!);
  }

  /**
   * One transaction of `startClaimed`: undefined when it landed, else why each group that cancelled it
   * did: `slots-full` (its SLOTS condition failed: too few slots free), `slots` (its SLOTS update
   * refused otherwise, as by a conflicting write) or `item` (a waiting entry or record refused it,
   * or the table named no reason).
   */
  private async tryStartClaimed(groups: readonly StartGroup[], startedAt: string, cap: number): Promise<Map<number, Refusal> | undefined> {
    const ttl = this.ttl();
    const marks = groups.map(() => this.newClaimMark());
    // Each group's actions: its waiting entries, its records, then its SLOTS update when claimed (the group's last).
    const owner: number[] = [];
    const onSlots: boolean[] = [];
    const items = groups.flatMap((group, g) => {
      const first = group.jobs[0]!;
      const actions = [
        ...group.jobs.map((job) => ({ Put: { TableName: this.tableName, Item: waitingItem(job, ttl) } })),
        ...group.jobs.map((job) => ({ Put: deliveryStartPut(this.tableName, newDeliveryRecord(job, startedAt)).put })),
        ...(group.claim ? [{ Update: claimOnly(this.claimUpdate(first.mode, first.endpointId, cap, group.jobs, [], marks[g]!)) }] : []),
      ];
      owner.push(...actions.map(() => g));
      onSlots.push(...actions.map((_, i) => group.claim && i === actions.length - 1));
      return actions;
    });
    const command = new TransactWriteCommand({ TransactItems: items, ClientRequestToken: randomUUID() });
    const everyGroup = (): Map<number, Refusal> => new Map(groups.map((_, g) => [g, 'item']));
    const refusedBy = (error: TransactionCanceledException): Map<number, Refusal> => {
      const reasons = error.CancellationReasons ?? [];
      const refused = new Map<number, Refusal>();
      reasons.forEach((reason, i) => {
        const g = owner[i];
        if (reason.Code === undefined || reason.Code === 'None' || g === undefined) return;
        // A refused waiting entry or record decides for its group; a refused SLOTS update alone lets it be listed.
        const why: Refusal = !onSlots[i] ? 'item' : reason.Code === 'ConditionalCheckFailed' ? 'slots-full' : 'slots';
        if (refused.get(g) !== 'item') refused.set(g, why);
      });
      // A cancellation that names no action (none of its reasons given) refuses them all.
      return refused.size > 0 ? refused : everyGroup();
    };
    const outcome = await attempt((options) => this.client.send(command, options), undefined, this.policy);
    if (outcome.ok) return undefined;
    const { error } = outcome;
    // Cancelled, also when every reason was "not now" and the retries ran out (withRetries would wrap that as a
    // service failure, taken for in doubt: a 5 s wait on the stream for a transaction that wrote nothing).
    if (isTransactionCancelled(error) && !outcome.inDoubt) return refusedBy(error);
    // Nothing written: every job to the usual road, which says so if the table refuses it too.
    if (!outcome.inDoubt) return everyGroup();
    // In doubt: the same token once more, once it has had time to settle...
    await sleep(this.settleAfterMs);
    try {
      await this.client.send(command);
      return undefined;
    } catch (settling) {
      if (isTransactionCancelled(settling)) return refusedBy(settling);
    }
    // ...else what the claimed endpoints' SLOTS items hold: this call's marks on every claimed job (all groups, or
    // none: one transaction, with at least one claim).
    const landed = await Promise.all(
      groups.map(async (group, g) => {
        if (!group.claim) return true;
        const held = await this.slotsItem(group.jobs[0]!.mode, group.jobs[0]!.endpointId);
        return group.jobs.every((job) => held?.[heldAttribute(job)] === marks[g]);
      }),
    );
    if (landed.every(Boolean)) return undefined;
    throw new ServiceUnavailableError(error);
  }

  async abandon(jobs: readonly DeliveryJob[]): Promise<void> {
    // Their waiting entries were never touched: giving the slots back makes them waiting again. One write per
    // endpoint (a fill's jobs are one endpoint's), not one per job: this runs when the lanes just failed, and
    // a fill's eight releases at once were eight writes of one item, beside the other fills' (two at a time).
    for (const group of jobsByEndpoint(jobs)) await this.releaseAll(group[0]!.mode, group[0]!.endpointId, group);
  }

  async release(key: DeliveryKey): Promise<void> {
    const command = new UpdateCommand({
      TableName: this.tableName,
      Key: keys.webhookDeliverySlots(key.mode, key.endpointId),
      UpdateExpression: 'SET #count = #count - :one REMOVE #holder',
      // Never creates the item, nor counts a slot the delivery did not hold (a redelivery, a second release).
      ConditionExpression: 'attribute_exists(#holder)',
      ExpressionAttributeNames: { '#count': HELD_COUNT, '#holder': heldAttribute(key) },
      ExpressionAttributeValues: { ':one': 1 },
    });
    try {
      await withRetries((options) => this.client.send(command, options), undefined, this.policy);
      return;
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
    // Not held in this form: perhaps in the earlier one (a string set `holders`).
    const legacy = new UpdateCommand({
      TableName: this.tableName,
      Key: keys.webhookDeliverySlots(key.mode, key.endpointId),
      UpdateExpression: 'DELETE holders :id',
      ConditionExpression: 'contains(holders, :holder)',
      ExpressionAttributeValues: { ':id': new Set([holderOf(key)]), ':holder': holderOf(key) },
    });
    try {
      await withRetries((options) => this.client.send(legacy, options), undefined, this.policy);
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }

  async holders(mode: Mode, endpointId: string): Promise<DeliveryKey[]> {
    const item = await this.slotsItem(mode, endpointId);
    return [...new Set([...heldOf(item).keys(), ...legacyHoldersOf(item)])].map((holder) => keyOfHolder(mode, endpointId, holder));
  }

  /** The holders claimed at least `olderThanMs` ago whose waiting entries are still there (a job is taken off the list once queued): at most a cap of reads. */
  async stalePromotions(mode: Mode, endpointId: string, olderThanMs: number): Promise<DeliveryJob[]> {
    const before = new Date(this.now().getTime() - olderThanMs).toISOString();
    const item = await this.slotsItem(mode, endpointId);
    const old = [...heldOf(item).entries()].filter(([, mark]) => claimedAt(mark) <= before).map(([holder]) => holder);
    const entries = await Promise.all(
      old.map(async (holder) => {
        const command = new GetCommand({
          TableName: this.tableName,
          Key: keys.webhookDeliveryWaiting(keyOfHolder(mode, endpointId, holder)),
          ConsistentRead: true,
        });
        const out = await withRetries((options) => this.client.send(command, options), undefined, this.policy);
        return out.Item ? jobOf(out.Item) : undefined;
      }),
    );
    return entries.filter((job): job is DeliveryJob => job !== undefined);
  }

  private async slotsItem(mode: Mode, endpointId: string): Promise<Record<string, unknown> | undefined> {
    const command = new GetCommand({ TableName: this.tableName, Key: keys.webhookDeliverySlots(mode, endpointId), ConsistentRead: true });
    return (await withRetries((options) => this.client.send(command, options), undefined, this.policy)).Item;
  }

  /** The holders and the oldest waiting jobs (enough to fill `cap` slots past the promoted ones), in one Query. */
  private async read(mode: Mode, endpointId: string, cap: number) {
    const command = new QueryCommand({
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.webhookDeliverySlotPartition(mode, endpointId) },
      ConsistentRead: true,
      // SLOTS, then the oldest waiting: the promoted ones not yet removed come first (at most `cap` of them), then
      // enough for this fill and the next few (remembered: knownWaiting).
      Limit: 1 + READ_AHEAD_CAPS * cap,
    });
    const out = await withRetries((options) => this.client.send(command, options), undefined, this.policy);
    let held = new Map<string, string>();
    const waiting: DeliveryJob[] = [];
    for (const item of out.Items ?? []) {
      if (item.type === ITEM_TYPES.webhookDeliverySlots) held = heldOf(item);
      else {
        const job = jobOf(item);
        if (job) waiting.push(job);
      }
    }
    return { held, waiting };
  }

  /**
   * Waiting entries written or deleted: one alone as a PutItem or DeleteItem, more in BatchWriteItem requests of
   * up to 25 (its limit), one after another, each request's unprocessed items sent again. One at a time: a step of
   * a burst (100 jobs) was four requests at once, all ahead of another company's write on DynamoDB Local, one store
   * for every company (bench 7c, with FILLS_AT_ONCE). On AWS a BatchWriteItem of 25 small items is about ten
   * milliseconds, so a step lists in four of them one after another.
   */
  private async writeAll(requests: readonly WaitingWrite[], deadline?: Deadline): Promise<void> {
    if (requests.length === 0) return;
    if (requests.length === 1) {
      const only = requests[0]!;
      const command =
        'PutRequest' in only
          ? new PutCommand({ TableName: this.tableName, Item: only.PutRequest.Item })
          : new DeleteCommand({ TableName: this.tableName, Key: only.DeleteRequest.Key });
      await withRetries((options) => this.client.send(command as PutCommand, options), deadline, this.policy);
      return;
    }
    for (let i = 0; i < requests.length; i += WRITES_PER_BATCH) {
      await withUnprocessedRetries<WaitingWrite>(
        requests.slice(i, i + WRITES_PER_BATCH),
        async (asked, options) => {
          const command = new BatchWriteCommand({ RequestItems: { [this.tableName]: [...asked] } });
          const out = await this.client.send(command, options);
          return (out.UnprocessedItems?.[this.tableName] ?? []) as WaitingWrite[];
        },
        deadline,
        this.policy,
      );
    }
  }
}

type WaitingWrite = { PutRequest: { Item: Record<string, unknown> } } | { DeleteRequest: { Key: ItemKey } };

/** Each job (or delivery) once (a stream batch may name one twice). */
function holderOf(key: Pick<DeliveryKey, 'createdAt' | 'deliveryId'>): string {
  return `${key.createdAt}#${key.deliveryId}`;
}

function keyOfHolder(mode: Mode, endpointId: string, holder: string): DeliveryKey {
  const at = holder.lastIndexOf('#');
  return { mode, endpointId, createdAt: holder.slice(0, at), deliveryId: holder.slice(at + 1) };
}

/** The `SLOTS` item's attribute for a delivery holding a slot. */
function heldAttribute(key: Pick<DeliveryKey, 'createdAt' | 'deliveryId'>): string {
  return `${HELD_PREFIX}${holderOf(key)}`;
}

/** One endpoint's new jobs in a `startClaimed` transaction: claimed, or listed and started only. */
interface StartGroup {
  jobs: DeliveryJob[];
  claim: boolean;
}

/** Why a group cancelled a `startClaimed` transaction (`tryStartClaimed`). */
type Refusal = 'slots-full' | 'slots' | 'item';

/** A job's waiting entry, as `wait` lists it and `startClaimed` lists it in its transaction. */
function waitingItem(job: DeliveryJob, ttl: number) {
  return { ...keys.webhookDeliveryWaiting(job), type: ITEM_TYPES.webhookDeliveryWaiting, job, ttl };
}

/** A claim's update inside a transaction: a cancellation's reasons need not carry the item. */
function claimOnly<T extends { ReturnValuesOnConditionCheckFailure?: unknown }>(update: T): Omit<T, 'ReturnValuesOnConditionCheckFailure'> {
  const { ReturnValuesOnConditionCheckFailure: _, ...rest } = update;
  return rest;
}

/** When a claim was made, from its mark (`<ISO time>~<random>`; a mark written before the random part is the time alone). */
function claimedAt(mark: string): string {
  const at = mark.indexOf(CLAIM_MARK_SEPARATOR);
  return at < 0 ? mark : mark.slice(0, at);
}

/** The deliveries holding slots (the new form), each with its claim's mark. */
function heldOf(item: Record<string, unknown> | undefined): Map<string, string> {
  const held = new Map<string, string>();
  for (const [name, value] of Object.entries(item ?? {}))
    if (name.startsWith(HELD_PREFIX)) held.set(name.slice(HELD_PREFIX.length), typeof value === 'string' ? value : '');
  return held;
}

/** The earlier form's holders: a string set. */
function legacyHoldersOf(item: Record<string, unknown> | undefined): string[] {
  const value = item?.holders;
  return value instanceof Set ? [...(value as Set<string>)] : [];
}

function jobOf(item: Record<string, unknown>): DeliveryJob | undefined {
  const parsed = deliveryJobSchema.safeParse(item.job);
  return parsed.success ? parsed.data : undefined;
}
