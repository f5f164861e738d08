import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import type { Mode } from '../../mode.js';
import type { DeliverySlots } from '../../webhooks/ports.js';
import { DELIVERY_RETENTION_SECONDS, deliveryJobSchema, type DeliveryJob, type DeliveryKey } from '../../webhooks/webhook-delivery.js';
import { DEFAULT_RETRY_POLICY, withRetries, type RetryPolicy } from '../retry.js';
import { ITEM_TYPES, keys, WEBHOOK_WAITING_SK_PREFIX } from './table-keys.js';

/** Waiting jobs put per TransactWriteItems (its limit: 100 actions). */
const PUTS_PER_TRANSACTION = 100;
/** Waiting jobs deleted at once. */
const WRITE_CONCURRENCY = 16;
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
/** Claims lost to a concurrent fill (the same waiting jobs, or the last free slots) are tried again this often. */
const CLAIM_ROUNDS = 4;

/**
 * Each endpoint's slots in the delivery lanes and its waiting list, in the table (table-keys.ts:
 * `WHW#<m><endpointId>`; lib/webhooks/delivery-slots.ts says what they are for).
 *
 * - The slots are a string set, `holders`, on the `SLOTS` item, of the deliveries holding them
 *   (`<createdAt>#<deliveryId>`): a claim is one `ADD` conditional on the set's size, a release one
 *   `DELETE`. A set, not a counter: giving a slot back twice, or claiming it twice for one delivery,
 *   changes nothing, and the sweeper can tell which deliveries hold them.
 * - A claim and the promotion of the waiting jobs it is for are one TransactWriteItems: a job is
 *   never promoted without its slot, nor a slot taken for a job another fill promoted.
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

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly now: () => Date = () => new Date(),
    private readonly policy: RetryPolicy = DEFAULT_RETRY_POLICY,
  ) {}

  private ttl(): number {
    return Math.floor(this.now().getTime() / 1000) + DELIVERY_RETENTION_SECONDS;
  }

  /**
   * The jobs put in TransactWriteItems of up to 100 (a stream batch of 100 events to three endpoints
   * is three requests, where one PutItem each made it 300, the slowest part of a burst's fan-out).
   * A transaction, not BatchWriteItem: its puts are judged by IAM one by one, like a PutItem, and it
   * leaves nothing unprocessed to send again. Each job once: a transaction naming an item twice is
   * refused.
   */
  async wait(jobs: readonly DeliveryJob[]): Promise<void> {
    const ttl = this.ttl();
    const puts = distinct(jobs).map((job) => ({
      Put: { TableName: this.tableName, Item: { ...keys.webhookDeliveryWaiting(job), type: ITEM_TYPES.webhookDeliveryWaiting, job, ttl } },
    }));
    const groups: (typeof puts)[] = [];
    for (let i = 0; i < puts.length; i += PUTS_PER_TRANSACTION) groups.push(puts.slice(i, i + PUTS_PER_TRANSACTION));
    await Promise.all(
      groups.map((group) => {
        // One job alone (an event to one endpoint) is a PutItem: a transaction costs twice the write capacity.
        const command = group.length === 1 ? new PutCommand(group[0]!.Put) : new TransactWriteCommand({ TransactItems: group });
        return withRetries((options) => this.client.send(command as PutCommand, options), undefined, this.policy);
      }),
    );
  }

  async forget(jobs: readonly DeliveryJob[]): Promise<void> {
    await this.writeEach(
      distinct(jobs).map((job) => new DeleteCommand({ TableName: this.tableName, Key: keys.webhookDeliveryWaiting(job) })),
    );
  }

  async promoted(jobs: readonly DeliveryJob[]): Promise<void> {
    await this.forget(jobs);
  }

  async claimWaiting(mode: Mode, endpointId: string, cap: number, fresh: readonly DeliveryJob[] = [], freed = 0): Promise<DeliveryJob[]> {
    // The jobs just listed, claimed without reading first: an endpoint with free slots has nothing older waiting
    // (a free slot is filled from the list whenever one is given back), so this is the usual case for a fan-out.
    const mine = [...fresh]
      .filter((job) => job.mode === mode && job.endpointId === endpointId)
      .sort((x, y) => (holderOf(x) < holderOf(y) ? -1 : 1))
      .slice(0, cap);
    if (mine.length > 0 && (await this.tryClaim(mode, endpointId, cap, mine))) return mine;
    // Slots the caller has just given back, claimed for the waiting jobs an earlier read of this endpoint saw
    // beyond what it claimed, without reading again: the claim's conditions (no more than `cap` held, each job
    // still listed and not promoted) keep it exact; when they fail, another fill got there first and the list is
    // read. Taken off the known list before the write, so a concurrent fill of the same endpoint takes the next ones.
    const known = this.recall(mode, endpointId);
    if (freed > 0 && known.length >= freed) {
      const candidates = known.splice(0, Math.min(freed, cap));
      if (await this.tryClaim(mode, endpointId, cap, candidates)) return candidates;
    }
    this.knownWaiting[mode].delete(endpointId);
    for (let round = 1; round <= CLAIM_ROUNDS; round++) {
      const { holders, waiting } = await this.read(mode, endpointId, cap);
      const free = cap - holders.length;
      const unpromoted = waiting.filter((w) => w.promotedAt === undefined).map((w) => w.job);
      const candidates = unpromoted.slice(0, Math.max(0, free));
      if (candidates.length === 0) return [];
      // Another fill took the slots or the jobs first: read again and claim what is left.
      if (await this.tryClaim(mode, endpointId, cap, candidates)) {
        this.remember(mode, endpointId, unpromoted.slice(candidates.length));
        return candidates;
      }
    }
    return [];
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

  /** One transaction: the jobs' slots (while no more than `cap` are held) and the jobs marked promoted; false when a condition failed. */
  private async tryClaim(mode: Mode, endpointId: string, cap: number, jobs: readonly DeliveryJob[]): Promise<boolean> {
    const promotedAt = this.now().toISOString();
    const command = new TransactWriteCommand({
      TransactItems: [
        {
          Update: {
            TableName: this.tableName,
            Key: keys.webhookDeliverySlots(mode, endpointId),
            UpdateExpression: 'ADD holders :ids SET #type = :type, #ttl = :ttl',
            ConditionExpression: 'attribute_not_exists(holders) OR size(holders) <= :most',
            ExpressionAttributeNames: { '#type': 'type', '#ttl': 'ttl' },
            ExpressionAttributeValues: {
              ':ids': new Set(jobs.map((job) => holderOf(job))),
              ':most': cap - jobs.length,
              ':type': ITEM_TYPES.webhookDeliverySlots,
              ':ttl': this.ttl(),
            },
          },
        },
        ...jobs.map((job) => ({
          Update: {
            TableName: this.tableName,
            Key: keys.webhookDeliveryWaiting(job),
            UpdateExpression: 'SET promotedAt = :at',
            ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(promotedAt)',
            ExpressionAttributeValues: { ':at': promotedAt },
          },
        })),
      ],
    });
    try {
      await withRetries((options) => this.client.send(command, options), undefined, this.policy);
      return true;
    } catch (error) {
      if (!(error instanceof TransactionCanceledException)) throw error;
      if (!(error.CancellationReasons ?? []).some((r) => r.Code === 'ConditionalCheckFailed')) throw error;
      return false;
    }
  }

  async abandon(jobs: readonly DeliveryJob[]): Promise<void> {
    await Promise.all(jobs.map((job) => this.release(job)));
    await Promise.all(
      jobs.map(async (job) => {
        const command = new UpdateCommand({
          TableName: this.tableName,
          Key: keys.webhookDeliveryWaiting(job),
          UpdateExpression: 'REMOVE promotedAt',
          ConditionExpression: 'attribute_exists(pk)',
        });
        try {
          await withRetries((options) => this.client.send(command, options), undefined, this.policy);
        } catch (error) {
          if (!(error instanceof ConditionalCheckFailedException)) throw error;
        }
      }),
    );
  }

  async release(key: DeliveryKey): Promise<void> {
    const command = new UpdateCommand({
      TableName: this.tableName,
      Key: keys.webhookDeliverySlots(key.mode, key.endpointId),
      UpdateExpression: 'DELETE holders :id',
      // Never creates the item: a delivery that held no slot (a redelivery) gives nothing back.
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':id': new Set([holderOf(key)]) },
    });
    try {
      await withRetries((options) => this.client.send(command, options), undefined, this.policy);
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }

  async holders(mode: Mode, endpointId: string): Promise<DeliveryKey[]> {
    const command = new GetCommand({ TableName: this.tableName, Key: keys.webhookDeliverySlots(mode, endpointId), ConsistentRead: true });
    const item = (await withRetries((options) => this.client.send(command, options), undefined, this.policy)).Item;
    return holdersOf(item?.holders).map((holder) => keyOfHolder(mode, endpointId, holder));
  }

  async stalePromotions(mode: Mode, endpointId: string, olderThanMs: number): Promise<DeliveryJob[]> {
    const before = new Date(this.now().getTime() - olderThanMs).toISOString();
    const stale: DeliveryJob[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const command = new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :waiting)',
        FilterExpression: 'promotedAt <= :before',
        ExpressionAttributeValues: {
          ':pk': keys.webhookDeliverySlotPartition(mode, endpointId),
          ':waiting': WEBHOOK_WAITING_SK_PREFIX,
          ':before': before,
        },
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      });
      const out = await withRetries((options) => this.client.send(command, options), undefined, this.policy);
      for (const item of out.Items ?? []) {
        const job = jobOf(item);
        if (job) stale.push(job);
      }
      startKey = out.LastEvaluatedKey;
    } while (startKey);
    return stale;
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
    let holders: string[] = [];
    const waiting: { job: DeliveryJob; promotedAt?: string }[] = [];
    for (const item of out.Items ?? []) {
      if (item.type === ITEM_TYPES.webhookDeliverySlots) holders = holdersOf(item.holders);
      else {
        const job = jobOf(item);
        if (job) waiting.push({ job, ...(typeof item.promotedAt === 'string' ? { promotedAt: item.promotedAt } : {}) });
      }
    }
    return { holders, waiting };
  }

  /**
   * One PutItem or DeleteItem per waiting job, WRITE_CONCURRENCY at a time: not BatchWriteItem, whose
   * IAM request names every partition of the batch at once (a single-item write is judged on its own).
   */
  private async writeEach(requests: readonly (PutCommand | DeleteCommand)[]): Promise<void> {
    let next = 0;
    const worker = async () => {
      while (next < requests.length) {
        const command = requests[next++]!;
        await withRetries((options) => this.client.send(command as PutCommand, options), undefined, this.policy);
      }
    };
    await Promise.all(Array.from({ length: Math.min(WRITE_CONCURRENCY, requests.length) }, worker));
  }
}

/** Each job once (a stream batch may name one twice). */
function distinct(jobs: readonly DeliveryJob[]): DeliveryJob[] {
  return [...new Map(jobs.map((job) => [`${job.mode}#${job.endpointId}#${job.createdAt}#${job.deliveryId}`, job])).values()];
}

function holderOf(key: Pick<DeliveryKey, 'createdAt' | 'deliveryId'>): string {
  return `${key.createdAt}#${key.deliveryId}`;
}

function keyOfHolder(mode: Mode, endpointId: string, holder: string): DeliveryKey {
  const at = holder.lastIndexOf('#');
  return { mode, endpointId, createdAt: holder.slice(0, at), deliveryId: holder.slice(at + 1) };
}

function holdersOf(value: unknown): string[] {
  return value instanceof Set ? [...(value as Set<string>)] : [];
}

function jobOf(item: Record<string, unknown>): DeliveryJob | undefined {
  const parsed = deliveryJobSchema.safeParse(item.job);
  return parsed.success ? parsed.data : undefined;
}
