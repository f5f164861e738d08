import { ConditionalCheckFailedException, type TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import { standaloneDeadline, type Deadline } from '../../deadline.js';
import { mapAtMost } from '../../map-at-most.js';
import { storedMode, type Mode } from '../../mode.js';
import type { WebhookDeliveryStore } from '../../webhooks/ports.js';
import {
  DELIVERY_RETENTION_SECONDS,
  type DeliveryAttempt,
  type DeliveryKey,
  type DeliveryStatus,
  type WebhookDelivery,
} from '../../webhooks/webhook-delivery.js';
import { DEFAULT_RETRY_POLICY, isTransactionCancelled, withRetries, type RetryPolicy } from '../retry.js';
import { ITEM_TYPES, keys } from './table-keys.js';

/**
 * The delivery log in the table (table-keys.ts: `WHD#<m><endpointId>` / `<createdAt>#<deliveryId>`),
 * one item per delivery with its attempts inline (at most 19: retry-schedule.ts `maxAttempts()`, each
 * at most about 2 KB, its error clipped to 500 characters by the use case: webhook-delivery.ts `clipAttemptError`;
 * so an item stays far under 400 KB).
 *
 * - `start` is a conditional Put (`attribute_not_exists`): every copy of a stream record and every
 *   redelivered queue message names the same key, so the log has one record per delivery.
 * - `startAll` puts the same items, with the same condition, RECORDS_PER_TRANSACTION (25) in one
 *   TransactWriteItems, one transaction after another (a planning step of 96 deliveries is four
 *   requests, not 96). A
 *   transaction costs twice the write units of the puts, and is all-or-nothing: when records
 *   exist already (a stream record read again) it is cancelled, and that group is started one by
 *   one, which answers the existing records as stored; when only some do (the delivery function
 *   started a job a fill took from its waiting list before this transaction), those are read and
 *   the others sent again in one transaction. On DynamoDB Local, where every request
 *   costs milliseconds of the one writer's time, this is most of a burst's fan-out cost
 *   (docs/performance.md section 7).
 * - `recordAttempt` is an Update conditional on the record being `pending` with exactly
 *   `attemptsBefore` attempts: two receivers of one message (SQS is at-least-once) cannot both
 *   append, and a retry whose first answer was lost finds its own attempt already there.
 * - Expired records (`ttl` past: DynamoDB deletes them up to days late) read as gone everywhere.
 */
export class DynamoWebhookDeliveryStore implements WebhookDeliveryStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly now: () => Date = () => new Date(),
    private readonly policy: RetryPolicy = DEFAULT_RETRY_POLICY,
  ) {}

  async start(delivery: WebhookDelivery, deadline: Deadline = standaloneDeadline()): Promise<WebhookDelivery> {
    const key = keys.webhookDelivery(delivery);
    const { record, put } = this.startPut(delivery);
    const command = new PutCommand(put);
    try {
      await withRetries((options) => this.client.send(command, options), deadline, this.policy);
      return record;
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      // Started before (another copy of the message, or this call's own first attempt whose answer was lost).
      const stored = await this.read(key, deadline);
      if (stored) return stored;
      throw new Error(`delivery ${delivery.deliveryId} exists but has expired`, { cause: error });
    }
  }

  async startAll(deliveries: readonly WebhookDelivery[], deadline: Deadline = standaloneDeadline()): Promise<WebhookDelivery[]> {
    // One put per record: a transaction naming an item twice is refused outright (ValidationException).
    const keyOf = (d: WebhookDelivery) => {
      const key = keys.webhookDelivery(d);
      return `${key.pk}\u0000${key.sk}`;
    };
    const distinct = [...new Map(deliveries.map((d) => [keyOf(d), d])).values()];
    const groups: WebhookDelivery[][] = [];
    for (let i = 0; i < distinct.length; i += RECORDS_PER_TRANSACTION) groups.push(distinct.slice(i, i + RECORDS_PER_TRANSACTION));
    // One transaction at a time (RECORDS_PER_TRANSACTION says why they are small: small ones sent together would
    // hold the store as long as one large one), stopping at the first that fails: the caller fails the whole call
    // and starts it again, and groups sent after a failure would only make that retry's transactions cancel.
    const started = new Map<string, WebhookDelivery>();
    for (const group of groups) for (const d of await this.startGroup(group, deadline)) started.set(keyOf(d), d);
    return deliveries.map((d) => started.get(keyOf(d))!);
  }

  private async startGroup(group: readonly WebhookDelivery[], deadline: Deadline): Promise<WebhookDelivery[]> {
    if (group.length === 1) return [await this.start(group[0]!, deadline)];
    const puts = group.map((delivery) => this.startPut(delivery));
    const command = new TransactWriteCommand({ TransactItems: puts.map(({ put }) => ({ Put: put })) });
    try {
      await withRetries((options) => this.client.send(command, options), deadline, this.policy);
      return puts.map(({ record }) => record);
    } catch (error) {
      // Cancelled by a failed condition: a record started before (a replayed stream record, or this transaction
      // itself, applied, its answer lost), possibly beside a conflict with the delivery function writing one of
      // them. One by one, each answers the record as stored (and a conflicting put is retried on its own)...
      if (!startedBefore(error)) throw error;
      const reasons = error.CancellationReasons ?? [];
      const exists = (i: number) => reasons[i]?.Code === 'ConditionalCheckFailed';
      const existing = group.filter((_, i) => exists(i));
      const rest = group.filter((_, i) => !exists(i));
      if (reasons.length !== group.length || existing.length === 0 || rest.length === 0)
        return mapAtMost(group, STARTS_AT_ONCE, (delivery) => this.start(delivery, deadline));
      // ...unless only some exist: a job a fill claimed from its waiting list and the delivery function started
      // before this step's transaction (a burst's first attempts end while its later steps are planned). Those few
      // are read as stored, and the others sent again in one transaction, where all of them were a put each. One
      // after the other: the rest's transaction, cancelled in turn, falls back to starts of its own, and beside
      // these that was up to twice STARTS_AT_ONCE in flight.
      const read = await mapAtMost(existing, STARTS_AT_ONCE, (delivery) => this.start(delivery, deadline));
      const started = await this.startGroup(rest, deadline);
      // Both keep the group's order: merged back by position.
      let r = 0;
      let s = 0;
      return group.map((_, i) => (exists(i) ? read[r++]! : started[s++]!));
    }
  }

  /** The new record (`pending`, no attempts) and its conditional put. */
  private startPut(delivery: WebhookDelivery) {
    return deliveryStartPut(this.tableName, delivery);
  }

  async get(key: DeliveryKey, deadline: Deadline = standaloneDeadline()): Promise<WebhookDelivery | undefined> {
    return this.read(keys.webhookDelivery(key), deadline);
  }

  async recordAttempt(
    key: DeliveryKey,
    attemptsBefore: number,
    attempt: DeliveryAttempt,
    next: { status: DeliveryStatus; nextAttemptAt?: string },
    deadline: Deadline = standaloneDeadline(),
  ): Promise<'recorded' | 'stale' | 'gone'> {
    const itemKey = keys.webhookDelivery(key);
    const values: Record<string, unknown> = {
      ':attempt': [attempt],
      ':status': next.status,
      ':pending': 'pending',
      ':before': attemptsBefore,
      ':updatedAt': this.now().toISOString(),
      ':nowSeconds': Math.floor(this.now().getTime() / 1000),
    };
    const pending = next.status === 'pending' && next.nextAttemptAt !== undefined;
    if (pending) values[':nextAttemptAt'] = next.nextAttemptAt;
    const command = new UpdateCommand({
      TableName: this.tableName,
      Key: itemKey,
      UpdateExpression:
        'SET attempts = list_append(attempts, :attempt), #status = :status, updatedAt = :updatedAt' +
        (pending ? ', nextAttemptAt = :nextAttemptAt' : ' REMOVE nextAttemptAt'),
      ConditionExpression: 'attribute_exists(pk) AND #ttl > :nowSeconds AND #status = :pending AND size(attempts) = :before',
      ExpressionAttributeNames: { '#status': 'status', '#ttl': 'ttl' },
      ExpressionAttributeValues: values,
    });
    try {
      await withRetries((options) => this.client.send(command, options), deadline, this.policy);
      return 'recorded';
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const stored = await this.read(itemKey, deadline);
      if (!stored) return 'gone';
      // A retry of this very update whose first answer was lost: the attempt is there, recorded by us.
      const mine = stored.attempts[attemptsBefore];
      if (stored.attempts.length === attemptsBefore + 1 && mine && sameAttempt(mine, attempt) && stored.status === next.status)
        return 'recorded';
      return 'stale';
    }
  }

  async listPage(
    mode: Mode,
    endpointId: string,
    page: { limit: number; after?: DeliveryKey },
    deadline: Deadline = standaloneDeadline(),
  ): Promise<{ deliveries: WebhookDelivery[]; last?: DeliveryKey }> {
    const deliveries: WebhookDelivery[] = [];
    let startKey: Record<string, unknown> | undefined = page.after ? { ...keys.webhookDelivery(page.after) } : undefined;
    let more = false;
    // Expired records are the oldest (ttl follows createdAt, the sort key's head), and DynamoDB's TTL
    // deletes them only within days: read, they would be walked one Query at a time (a full page asks
    // for one more record) for every list of a busy endpoint. The key condition starts at the oldest
    // createdAt not yet expired, so they are never read; `expired` still guards the boundary.
    const fromCreatedAt = oldestRetainedCreatedAt(this.now());
    // A cursor whose record has expired since (a cursor lives 24 h) names a start key outside that
    // range, which DynamoDB refuses (a ValidationException): everything after it has expired too.
    if (page.after && page.after.createdAt < fromCreatedAt) return { deliveries };
    do {
      const command = new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND sk >= :from',
        ExpressionAttributeValues: { ':pk': keys.webhookDeliveryPartition(mode, endpointId), ':from': fromCreatedAt },
        ScanIndexForward: false,
        ConsistentRead: true,
        Limit: page.limit - deliveries.length + 1,
        ExclusiveStartKey: startKey,
      });
      const out = await withRetries((options) => this.client.send(command, options), deadline, this.policy);
      for (const item of out.Items ?? []) {
        if (this.expired(item)) continue;
        if (deliveries.length === page.limit) {
          more = true;
          break;
        }
        deliveries.push(deliveryOf(item));
      }
      startKey = out.LastEvaluatedKey;
    } while (!more && startKey);
    const lastDelivery = deliveries.at(-1);
    return more && lastDelivery ? { deliveries, last: keyOf(lastDelivery) } : { deliveries };
  }

  private async read(key: { pk: string; sk: string }, deadline: Deadline): Promise<WebhookDelivery | undefined> {
    const command = new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: true });
    return this.recordOf((await withRetries((options) => this.client.send(command, options), deadline, this.policy)).Item);
  }

  /** A delivery record's item as read (here, or by the delivery function's batch read: webhook-delivery-reads.ts); an expired one is gone. */
  recordOf(item: Record<string, unknown> | undefined): WebhookDelivery | undefined {
    return item && !this.expired(item) ? deliveryOf(item) : undefined;
  }

  private expired(item: Record<string, unknown>): boolean {
    return typeof item.ttl === 'number' && item.ttl <= Math.floor(this.now().getTime() / 1000);
  }
}

/**
 * A delivery's new record (`pending`, no attempts) and its put, conditional on no record of that key:
 * how `start` and `startAll` start one, and the slots' `startClaimed` in its transaction
 * (webhook-delivery-slots.ts). This module owns the record's item form.
 */
export function deliveryStartPut(tableName: string, delivery: WebhookDelivery) {
  const key = keys.webhookDelivery(delivery);
  const record: WebhookDelivery = { ...delivery, status: 'pending', attempts: [] };
  delete record.nextAttemptAt;
  const put = {
    TableName: tableName,
    Item: {
      ...keys.withTestDataListing(delivery.mode, delivery.companyId, key),
      type: ITEM_TYPES.webhookDelivery,
      ...record,
      ttl: ttlOf(delivery.createdAt),
    },
    ConditionExpression: 'attribute_not_exists(pk)',
  };
  return { record, put };
}

/** DynamoDB's limit on the actions of one TransactWriteItems. */
export const MAX_TRANSACTION_ACTIONS = 100;

/**
 * Records `startAll` starts in one transaction, at most, where DynamoDB allows 100 actions. The
 * records need no atomicity with each other (each group is settled on its own), only each its
 * condition, and DynamoDB's guide on transactions advises splitting one that can be split without
 * harm to correctness: a smaller one conflicts less and, cancelled, is less to send again. On
 * DynamoDB Local, which runs a transaction as one SQLite transaction and holds every other request
 * to the store until it ends (any table's), a burst's 96-record transactions made another company's
 * case write wait up to 103 ms and its stream read up to 270 (bench 7c; docs/performance.md, "A
 * burst's records in transactions of 25"); in 25s, sent one after another, each holds the store
 * about a quarter as long, and a step's records are as many requests as its waiting entries'
 * BatchWriteItems. On AWS a step is three round trips longer (tens of milliseconds).
 */
export const RECORDS_PER_TRANSACTION = 25;

/**
 * Records started one by one at once, at most, once a group's transaction was cancelled because
 * some exist (a replayed slice or stream record): a replayed step of 100 was 100 puts and their
 * reads in the table's queue together, just when a planning retry follows a failure. Ten, not the
 * two a first planning keeps to: a replayed step of 96 is then four cancelled transactions and
 * twelve rounds of a put and a read (some 200 ms on AWS), and a 1,600-delivery slice replayed in
 * full stays a few seconds inside the planning worker's 30 s, its retries included.
 */
export const STARTS_AT_ONCE = 10;

/**
 * A transaction cancelled because one of its conditions failed, and for no lasting reason besides
 * (a conflict with another writer of one of its items is not lasting).
 */
function startedBefore(error: unknown): error is TransactionCanceledException {
  if (!isTransactionCancelled(error)) return false;
  const codes = (error.CancellationReasons ?? []).map((r) => r.Code ?? 'None');
  return (
    codes.includes('ConditionalCheckFailed') &&
    codes.every((code) => ['ConditionalCheckFailed', 'TransactionConflict', 'None'].includes(code))
  );
}

/** Epoch seconds at which DynamoDB may delete the record: 30 days after its createdAt. */
export function ttlOf(createdAt: string): number {
  return Math.floor(Date.parse(createdAt) / 1000) + DELIVERY_RETENTION_SECONDS;
}

/**
 * The oldest createdAt (ISO 8601, the sort key's head) whose record is not expired at `now`: a
 * record has expired once its ttlOf is at or before now's epoch second.
 */
export function oldestRetainedCreatedAt(now: Date): string {
  return new Date((Math.floor(now.getTime() / 1000) - DELIVERY_RETENTION_SECONDS + 1) * 1000).toISOString();
}

function sameAttempt(a: DeliveryAttempt, b: DeliveryAttempt): boolean {
  return a.at === b.at && a.statusCode === b.statusCode && a.durationMs === b.durationMs && a.error === b.error;
}

function keyOf(delivery: WebhookDelivery): DeliveryKey {
  return { mode: delivery.mode, endpointId: delivery.endpointId, createdAt: delivery.createdAt, deliveryId: delivery.deliveryId };
}

function deliveryOf(item: Record<string, unknown>): WebhookDelivery {
  const delivery: WebhookDelivery = {
    mode: storedMode(item.mode),
    endpointId: item.endpointId as string,
    createdAt: item.createdAt as string,
    deliveryId: item.deliveryId as string,
    kind: item.kind as WebhookDelivery['kind'],
    companyId: item.companyId as string,
    eventId: item.eventId as string,
    eventType: item.eventType as string,
    status: item.status as DeliveryStatus,
    attempts: ((item.attempts as Record<string, unknown>[] | undefined) ?? []).map(attemptOf),
    updatedAt: item.updatedAt as string,
  };
  if (typeof item.nextAttemptAt === 'string') delivery.nextAttemptAt = item.nextAttemptAt;
  return delivery;
}

function attemptOf(stored: Record<string, unknown>): DeliveryAttempt {
  return {
    at: stored.at as string,
    ...(typeof stored.statusCode === 'number' ? { statusCode: stored.statusCode } : {}),
    durationMs: stored.durationMs as number,
    ...(typeof stored.error === 'string' ? { error: stored.error } : {}),
  };
}
