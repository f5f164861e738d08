import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '../../lib/adapters/dynamodb/dynamo-client.js';
import { ITEM_TYPES, keys } from '../../lib/adapters/dynamodb/table-keys.js';
import { DynamoTestModeItemStore } from '../../lib/adapters/dynamodb/test-mode-item-store.js';
import { DynamoWebhookDeliveryStore, STARTS_AT_ONCE } from '../../lib/adapters/dynamodb/webhook-delivery-store.js';
import { DynamoWebhookDeliverySlots, KNOWN_FULL_MS } from '../../lib/adapters/dynamodb/webhook-delivery-slots.js';
import { deliveryJobFor } from '../../lib/webhooks/fan-out-event.js';
import type { Mode } from '../../lib/mode.js';
import { randomBase62 } from '../../lib/random-id.js';
import { config } from '../../lib/runtime/config.js';
import type { DeliverySlots, WebhookDeliveryStore } from '../../lib/webhooks/ports.js';
import {
  DELIVERY_RETENTION_SECONDS,
  deliveryKeyOf,
  newRedeliveryId,
  scheduledDeliveryId,
  type DeliveryJob,
  type WebhookDelivery,
} from '../../lib/webhooks/webhook-delivery.js';
import { faultyDocumentClient } from '../support/faulty-client.js';
import { ddb } from '../support/fixtures.js';
import { MemoryDeliverySlots, MemoryWebhookDeliveryStore } from '../support/memory-webhooks.js';

/**
 * The delivery log's port contract (lib/webhooks/ports.ts `WebhookDeliveryStore`): one suite, run
 * against the in-memory store of the fast tier and the DynamoDB adapter on DynamoDB Local, as
 * port-contracts.test.ts does for the case ports. Each world hands out several stores over one
 * log (two Lambda instances handling copies of one message).
 */
type World = () => WebhookDeliveryStore;

const memoryWorld = (): World => {
  const store = new MemoryWebhookDeliveryStore();
  return () => store;
};
const dynamoWorld = (): World => () => new DynamoWebhookDeliveryStore(documentClient(config()), config().tableName);

function delivery(overrides: Partial<WebhookDelivery> = {}): WebhookDelivery {
  const endpointId = overrides.endpointId ?? `we_${randomBase62(22)}`;
  const eventId = overrides.eventId ?? `evt_${randomBase62(22)}`;
  const createdAt = overrides.createdAt ?? new Date().toISOString();
  return {
    mode: 'live',
    endpointId,
    createdAt,
    deliveryId: scheduledDeliveryId(endpointId, eventId),
    kind: 'scheduled',
    companyId: `co_${randomBase62(12)}`,
    eventId,
    eventType: 'case.created',
    status: 'pending',
    attempts: [],
    updatedAt: createdAt,
    ...overrides,
  };
}

const failedAttempt = (at: string) => ({ at, statusCode: 503, durationMs: 12, error: 'status 503' });

describe.each([
  ['in memory', memoryWorld],
  ['on DynamoDB Local', dynamoWorld],
])('the delivery log (%s)', (_name, makeWorld) => {
  let store: World;
  beforeEach(() => {
    store = makeWorld();
  });

  it('starting a delivery twice keeps one record, and the second start answers the first one as stored', async () => {
    const d = delivery();
    const first = await store().start(d);
    await store().recordAttempt(deliveryKeyOf(d), 0, failedAttempt(d.createdAt), { status: 'pending', nextAttemptAt: d.createdAt });
    const second = await store().start({ ...d, updatedAt: new Date().toISOString() });
    expect(first).toMatchObject({ status: 'pending', attempts: [] });
    expect(second.attempts).toHaveLength(1);
    const { deliveries } = await store().listPage('live', d.endpointId, { limit: 10 });
    expect(deliveries.map((x) => x.deliveryId)).toEqual([d.deliveryId]);
  });

  it("starting a stream batch's deliveries at once keeps the records started before as they are and starts the others, answering each in order", async () => {
    const endpointId = `we_${randomBase62(22)}`;
    // More than one transaction's worth (100), to one endpoint and others.
    const many = Array.from({ length: 130 }, (_, i) => delivery(i % 2 === 0 ? { endpointId } : {}));
    const before = many[7]!;
    await store().start(before);
    await store().recordAttempt(deliveryKeyOf(before), 0, failedAttempt(before.createdAt), { status: 'pending', nextAttemptAt: 'x1' });
    const settled = many[120]!;
    await store().start(settled);
    await store().recordAttempt(
      deliveryKeyOf(settled),
      0,
      { at: settled.createdAt, statusCode: 200, durationMs: 4 },
      { status: 'delivered' },
    );

    const started = await store().startAll(many);
    expect(started.map((d) => d.deliveryId)).toEqual(many.map((d) => d.deliveryId));
    expect(started[7]).toMatchObject({ status: 'pending', attempts: [expect.objectContaining({ statusCode: 503 })], nextAttemptAt: 'x1' });
    expect(started[120]).toMatchObject({ status: 'delivered', attempts: [expect.objectContaining({ statusCode: 200 })] });
    for (const [i, d] of started.entries()) if (i !== 7 && i !== 120) expect(d).toMatchObject({ status: 'pending', attempts: [] });
    // Stored as answered; started again (a replayed batch), nothing changes.
    expect(await store().get(deliveryKeyOf(many[3]!))).toMatchObject({ status: 'pending', attempts: [] });
    expect(await store().get(deliveryKeyOf(before))).toEqual(started[7]);
    expect(await store().startAll(many)).toEqual(started);
    const { deliveries } = await store().listPage('live', endpointId, { limit: 100 });
    expect(deliveries).toHaveLength(65);
  }, 30_000); // 130 deliveries written twice: seconds on DynamoDB Local when the machine is busy (it timed out at 5 s under load)

  it('starting new deliveries at once stores each as pending, and one named twice is one record answered twice', async () => {
    const endpointId = `we_${randomBase62(22)}`;
    const fresh = Array.from({ length: 3 }, () => delivery({ endpointId }));
    const started = await store().startAll([...fresh, fresh[1]!]);
    expect(started.map((d) => d.deliveryId)).toEqual([...fresh, fresh[1]!].map((d) => d.deliveryId));
    for (const d of started) expect(d).toMatchObject({ status: 'pending', attempts: [] });
    for (const d of fresh) expect(await store().get(deliveryKeyOf(d))).toEqual(started.find((s) => s.deliveryId === d.deliveryId));
    const { deliveries } = await store().listPage('live', endpointId, { limit: 10 });
    expect(deliveries).toHaveLength(3);
  });

  it('two receivers of one message record the same attempt count at once: one is recorded, the other is stale', async () => {
    const d = delivery();
    await store().start(d);
    const key = deliveryKeyOf(d);
    const outcomes = await Promise.all([
      store().recordAttempt(key, 0, { at: '2026-03-01T09:00:00.000Z', statusCode: 200, durationMs: 5 }, { status: 'delivered' }),
      store().recordAttempt(key, 0, { at: '2026-03-01T09:00:00.001Z', statusCode: 200, durationMs: 6 }, { status: 'delivered' }),
    ]);
    expect([...outcomes].sort()).toEqual(['recorded', 'stale']);
    const stored = await store().get(key);
    expect(stored).toMatchObject({ status: 'delivered', attempts: [expect.objectContaining({ statusCode: 200 })] });
    expect(stored!.attempts).toHaveLength(1);
    // Settled: no further attempt is recorded, whatever count it names.
    expect(await store().recordAttempt(key, 1, failedAttempt(d.createdAt), { status: 'failed' })).toBe('stale');
  });

  it('records attempts oldest first with nextAttemptAt while pending, and drops nextAttemptAt once settled', async () => {
    const d = delivery();
    await store().start(d);
    const key = deliveryKeyOf(d);
    expect(await store().recordAttempt(key, 0, failedAttempt('2026-03-01T09:00:00.000Z'), { status: 'pending', nextAttemptAt: 'x1' })).toBe(
      'recorded',
    );
    expect((await store().get(key))!.nextAttemptAt).toBe('x1');
    expect(await store().recordAttempt(key, 1, failedAttempt('2026-03-01T09:00:05.000Z'), { status: 'failed' })).toBe('recorded');
    const stored = (await store().get(key))!;
    expect(stored.status).toBe('failed');
    expect(stored.nextAttemptAt).toBeUndefined();
    expect(stored.attempts.map((a) => a.at)).toEqual(['2026-03-01T09:00:00.000Z', '2026-03-01T09:00:05.000Z']);
    expect(stored.attempts[0]).toEqual(failedAttempt('2026-03-01T09:00:00.000Z'));
  });

  it('lists an endpoint’s deliveries newest first, page by page, and nothing of another endpoint or mode', async () => {
    const endpointId = `we_${randomBase62(22)}`;
    // Recent (within the 30 days kept), whole seconds apart.
    const base = Date.now() - 60_000;
    const made = Array.from({ length: 7 }, (_, i) => delivery({ endpointId, createdAt: new Date(base + i * 1000).toISOString() }));
    // Two deliveries at the same instant (a redelivery beside the scheduled one) are ordered by id.
    made.push(delivery({ endpointId, createdAt: made[6]!.createdAt, deliveryId: newRedeliveryId(), kind: 'redelivery' }));
    await Promise.all(made.map((d) => store().start(d)));
    await store().start(delivery({ createdAt: made[3]!.createdAt }));
    await store().start(delivery({ endpointId, mode: 'test' as Mode, createdAt: made[3]!.createdAt }));

    const seen: string[] = [];
    let after;
    for (let pages = 0; pages < 10; pages++) {
      const page: Awaited<ReturnType<WebhookDeliveryStore['listPage']>> = await store().listPage('live', endpointId, {
        limit: 3,
        ...(after ? { after } : {}),
      });
      seen.push(...page.deliveries.map((d) => d.deliveryId));
      if (!page.last) break;
      expect(page.deliveries).toHaveLength(3);
      after = page.last;
    }
    const expected = [...made]
      .sort((a, b) => (`${a.createdAt}#${a.deliveryId}` < `${b.createdAt}#${b.deliveryId}` ? 1 : -1))
      .map((d) => d.deliveryId);
    expect(seen).toEqual(expected);
    // A page that ends exactly with the log says there is no next one.
    expect((await store().listPage('live', endpointId, { limit: 8 })).last).toBeUndefined();
  });

  it('a delivery past its 30 days, or never started, is gone: not read, not listed, no attempt recorded', async () => {
    const old = delivery({ createdAt: new Date(Date.now() - (DELIVERY_RETENTION_SECONDS + 60) * 1000).toISOString() });
    await store().start(old);
    const key = deliveryKeyOf(old);
    expect(await store().get(key)).toBeUndefined();
    expect(await store().recordAttempt(key, 0, failedAttempt(old.createdAt), { status: 'failed' })).toBe('gone');
    expect((await store().listPage('live', old.endpointId, { limit: 10 })).deliveries).toEqual([]);
    const never = delivery();
    expect(await store().get(deliveryKeyOf(never))).toBeUndefined();
    expect(await store().recordAttempt(deliveryKeyOf(never), 0, failedAttempt(never.createdAt), { status: 'failed' })).toBe('gone');
  });
});

describe('the delivery log on DynamoDB', () => {
  const store = () => new DynamoWebhookDeliveryStore(documentClient(config()), config().tableName);

  it('lists a busy endpoint’s log in one Query however many expired records DynamoDB’s TTL has not deleted yet', async () => {
    // DynamoDB deletes an expired item within days, and until then a Query returns it (DynamoDB Local never deletes).
    const endpointId = `we_${randomBase62(22)}`;
    const day = 24 * 60 * 60 * 1000;
    const expired = Array.from({ length: 60 }, (_, i) =>
      delivery({ endpointId, createdAt: new Date(Date.now() - DELIVERY_RETENTION_SECONDS * 1000 - day - i * 60_000).toISOString() }),
    );
    const live = [delivery({ endpointId }), delivery({ endpointId, createdAt: new Date(Date.now() - 1000).toISOString() })];
    await store().startAll([...expired, ...live]);
    const { client, counter } = faultyDocumentClient({ decide: () => undefined });
    const page = await new DynamoWebhookDeliveryStore(client, config().tableName).listPage('live', endpointId, { limit: 2 });
    expect(page.deliveries.map((d) => d.deliveryId).sort()).toEqual(live.map((d) => d.deliveryId).sort());
    expect(page.last).toBeUndefined();
    // Walked past, the expired tail cost a Query each (a full page asks for one record more): 61 here.
    expect(counter.calls).toBe(1);
  });

  it('answers an empty last page, not an error, to a cursor whose record has expired since it was given', async () => {
    const endpointId = `we_${randomBase62(22)}`;
    const day = 24 * 60 * 60 * 1000;
    const older = Array.from({ length: 3 }, (_, i) =>
      delivery({ endpointId, createdAt: new Date(Date.now() - DELIVERY_RETENTION_SECONDS * 1000 - day - i * 60_000).toISOString() }),
    );
    await store().startAll(older);
    const page = await store().listPage('live', endpointId, { limit: 2, after: deliveryKeyOf(older[0]!) });
    expect(page).toEqual({ deliveries: [] });
  });

  it('keeps a delivery 30 days after its createdAt (ttl) and types it, and lists a test delivery as test data', async () => {
    const companyId = `co_${randomBase62(12)}`;
    const live = delivery({ companyId });
    const test = delivery({ companyId, mode: 'test' });
    await store().start(live);
    await store().start(test);
    const read = async (d: WebhookDelivery) =>
      (await ddb().send(new GetCommand({ TableName: config().tableName, Key: keys.webhookDelivery(d) }))).Item!;
    const [liveItem, testItem] = [await read(live), await read(test)];
    expect(liveItem).toMatchObject({
      type: ITEM_TYPES.webhookDelivery,
      ttl: Math.floor(Date.parse(live.createdAt) / 1000) + DELIVERY_RETENTION_SECONDS,
    });
    expect(liveItem.gsi1pk).toBeUndefined();
    expect(testItem.gsi1pk).toBe(keys.testDataIndexPk(companyId));
  });

  it('an attempt recorded whose answer was lost is recorded once, and reported recorded (not stale) to the sender that retried it', async () => {
    let lost = 0;
    const { client } = faultyDocumentClient({
      decide: (name) => (name === 'UpdateItemCommand' && lost++ === 0 ? 'lost-response' : undefined),
    });
    const faulty = new DynamoWebhookDeliveryStore(client, config().tableName);
    const d = delivery();
    await faulty.start(d);
    const attempt = { at: new Date().toISOString(), statusCode: 204, durationMs: 9 };
    expect(await faulty.recordAttempt(deliveryKeyOf(d), 0, attempt, { status: 'delivered' })).toBe('recorded');
    expect(lost).toBe(2);
    expect((await store().get(deliveryKeyOf(d)))!.attempts).toEqual([attempt]);
  });

  it('starts a stream batch without naming a record twice in one transaction (DynamoDB refuses it; DynamoDB Local does not)', async () => {
    const { client } = faultyDocumentClient({
      decide: (name, input) => {
        if (name !== 'TransactWriteItemsCommand') return undefined;
        // The plan sees the input as plain values (test/support/plain-items.ts).
        const items = (input.TransactItems as { Put?: { Item: Record<string, unknown> } }[]).map(
          (a) => `${String(a.Put?.Item.pk)}|${String(a.Put?.Item.sk)}`,
        );
        return new Set(items).size === items.length
          ? undefined
          : Object.assign(new Error('Transaction request cannot include multiple operations on one item'), {
              name: 'ValidationException',
              $metadata: { httpStatusCode: 400 },
            });
      },
    });
    const d = delivery();
    const other = delivery({ endpointId: d.endpointId });
    const started = await new DynamoWebhookDeliveryStore(client, config().tableName).startAll([d, other, d]);
    expect(started.map((x) => x.deliveryId)).toEqual([d.deliveryId, other.deliveryId, d.deliveryId]);
    expect(await store().get(deliveryKeyOf(d))).toMatchObject({ status: 'pending', attempts: [] });
  });

  it("a stream batch's transaction cancelled for a record started before and a conflict with the delivery function falls back to one start each", async () => {
    const before = delivery();
    await store().start(before);
    await store().recordAttempt(deliveryKeyOf(before), 0, failedAttempt(before.createdAt), { status: 'pending', nextAttemptAt: 'x1' });
    const fresh = [delivery(), delivery()];
    let cancelled = 0;
    const { client } = faultyDocumentClient({
      decide: (name) =>
        name === 'TransactWriteItemsCommand' && cancelled++ === 0
          ? new TransactionCanceledException({
              message: 'cancelled',
              $metadata: { httpStatusCode: 400 },
              CancellationReasons: [{ Code: 'ConditionalCheckFailed' }, { Code: 'TransactionConflict' }, { Code: 'None' }],
            })
          : undefined,
    });
    const started = await new DynamoWebhookDeliveryStore(client, config().tableName).startAll([before, ...fresh]);
    expect(started[0]).toMatchObject({ deliveryId: before.deliveryId, attempts: [expect.objectContaining({ statusCode: 503 })] });
    for (const [i, d] of fresh.entries()) {
      expect(started[i + 1]).toMatchObject({ deliveryId: d.deliveryId, status: 'pending', attempts: [] });
      expect(await store().get(deliveryKeyOf(d))).toMatchObject({ status: 'pending' });
    }
  });

  it('a transaction cancelled because one of its records was started meanwhile (by the delivery function) is sent again without it: two transactions, not a put for every record', async () => {
    const before = delivery();
    await store().start(before);
    await store().recordAttempt(deliveryKeyOf(before), 0, failedAttempt(before.createdAt), { status: 'pending', nextAttemptAt: 'x1' });
    const fresh = Array.from({ length: 20 }, () => delivery({ endpointId: before.endpointId }));
    const sent: string[] = [];
    const { client } = faultyDocumentClient({
      decide: (name) => {
        sent.push(name);
        return undefined;
      },
    });
    const started = await new DynamoWebhookDeliveryStore(client, config().tableName).startAll([fresh[0]!, before, ...fresh.slice(1)]);
    expect(started[1]).toMatchObject({ deliveryId: before.deliveryId, attempts: [expect.objectContaining({ statusCode: 503 })] });
    for (const [i, d] of [fresh[0]!, ...fresh.slice(1)].entries()) {
      expect(started[i === 0 ? 0 : i + 1]).toMatchObject({ deliveryId: d.deliveryId, status: 'pending', attempts: [] });
      expect(await store().get(deliveryKeyOf(d))).toMatchObject({ status: 'pending' });
    }
    // The transaction, cancelled; the started record's put (refused) and read; the transaction of the other 20.
    expect(sent.filter((name) => name === 'TransactWriteItemsCommand')).toHaveLength(2);
    expect(sent.filter((name) => name === 'PutItemCommand')).toHaveLength(1);
  });

  it('a replayed group whose resent transaction is cancelled in turn never has more than STARTS_AT_ONCE starts in flight', async () => {
    // Twelve of a group of 25 started before; the other thirteen started by another writer just as the group's
    // resent transaction goes out, so that it is cancelled too and they are started one by one.
    const endpointId = `we_${randomBase62(22)}`;
    const group = Array.from({ length: 25 }, () => delivery({ endpointId }));
    const before = group.filter((_, i) => i % 2 === 0).slice(0, 12);
    const rest = group.filter((d) => !before.includes(d));
    await store().startAll(before);
    let transactions = 0;
    let inFlight = 0;
    let most = 0;
    const real = ddb();
    const counting = {
      send: async (command: Parameters<DynamoDBDocumentClient['send']>[0], options?: unknown) => {
        if (command.constructor.name === 'TransactWriteCommand' && ++transactions === 2) await store().startAll(rest);
        inFlight++;
        most = Math.max(most, inFlight);
        try {
          // A round trip as long as AWS's, so that what is sent together is in flight together.
          await new Promise((resolve) => setTimeout(resolve, 20));
          return await real.send(command as never, options as never);
        } finally {
          inFlight--;
        }
      },
    } as unknown as DynamoDBDocumentClient;
    const started = await new DynamoWebhookDeliveryStore(counting, config().tableName).startAll(group);
    expect(started.map((d) => d.deliveryId)).toEqual(group.map((d) => d.deliveryId));
    expect(transactions).toBe(2);
    // Before the fix: the twelve reads beside the thirteen puts, up to twenty at once.
    expect(most).toBeLessThanOrEqual(STARTS_AT_ONCE);
  });

  it('a start whose answer was lost answers the record it wrote', async () => {
    let lost = 0;
    const { client } = faultyDocumentClient({
      decide: (name) => (name === 'PutItemCommand' && lost++ === 0 ? 'lost-response' : undefined),
    });
    const d = delivery();
    expect(await new DynamoWebhookDeliveryStore(client, config().tableName).start(d)).toMatchObject({
      deliveryId: d.deliveryId,
      attempts: [],
    });
    expect(lost).toBe(2);
  });

  it('company clear-test-data removes test delivery records and leaves live ones', async () => {
    const companyId = `co_${randomBase62(12)}`;
    const endpointId = `we_${randomBase62(22)}`;
    const tests = Array.from({ length: 30 }, () => delivery({ companyId, endpointId, mode: 'test' }));
    const live = delivery({ companyId, endpointId });
    await Promise.all([...tests, live].map((d) => store().start(d)));
    expect((await store().listPage('test', endpointId, { limit: 100 })).deliveries).toHaveLength(30);

    expect(await new DynamoTestModeItemStore(ddb(), config().tableName).clearTestItems(companyId)).toBe(30);
    expect((await store().listPage('test', endpointId, { limit: 100 })).deliveries).toEqual([]);
    expect((await store().listPage('live', endpointId, { limit: 100 })).deliveries.map((d) => d.deliveryId)).toEqual([live.deliveryId]);
  }, 30_000);
});

/**
 * The slots' claim as listed (`DeliverySlots.startClaimed`), the same suite on the in-memory twin and on DynamoDB
 * Local: what the stream consumer relies on when it lists, starts and claims a trickle's jobs in one write.
 */
type SlotsWorld = () => { slots: DeliverySlots; records: WebhookDeliveryStore };
const memorySlotsWorld = (): SlotsWorld => {
  const records = new MemoryWebhookDeliveryStore();
  const slots = new MemoryDeliverySlots(records);
  return () => ({ slots, records });
};
const dynamoSlotsWorld = (): SlotsWorld => () => ({
  slots: new DynamoWebhookDeliverySlots(documentClient(config()), config().tableName),
  records: new DynamoWebhookDeliveryStore(documentClient(config()), config().tableName),
});

function newJob(endpointId: string, companyId = 'co_slots'): DeliveryJob {
  return deliveryJobFor(
    { eventId: `evt_${randomBase62(22)}`, eventType: 'case.created', companyId, mode: 'live', createdAt: new Date().toISOString() },
    { endpointId },
  );
}
const newEndpointId = () => `we_${randomBase62(22)}`;
const ids = (jobs: readonly { deliveryId: string }[]) => jobs.map((j) => j.deliveryId).sort();
const CAP = 8;

describe.each([
  ['in memory', memorySlotsWorld],
  ['on DynamoDB Local', dynamoSlotsWorld],
])('new jobs claimed as they are listed (%s)', (_name, makeWorld) => {
  let world: SlotsWorld;
  beforeEach(() => {
    world = makeWorld();
  });

  it('lists, starts and claims every endpoint’s new jobs in one go, and answers them', async () => {
    const { slots, records } = world();
    const [a, b] = [newEndpointId(), newEndpointId()];
    const jobs = [newJob(a), newJob(a), newJob(b)];
    const at = new Date().toISOString();
    const written = await slots.startClaimed(jobs, at, CAP);
    expect(ids(written.claimed)).toEqual(ids(jobs));
    expect(written.listed).toEqual([]);
    expect(ids(await slots.holders('live', a))).toEqual(ids(jobs.slice(0, 2)));
    expect(ids(await slots.holders('live', b))).toEqual(ids(jobs.slice(2)));
    for (const job of jobs) expect(await records.get(deliveryKeyOf(job))).toMatchObject({ status: 'pending', attempts: [], updatedAt: at });
    // Listed and promoted, until the caller has queued them and calls `promoted`.
    expect(ids(await slots.stalePromotions('live', a, 0))).toEqual(ids(jobs.slice(0, 2)));
    await slots.promoted(jobs);
    expect(await slots.stalePromotions('live', a, 0)).toEqual([]);
  });

  it('an endpoint with too few free slots has its jobs listed and started without a slot, beside another endpoint’s claimed jobs, and a fill with room claims them', async () => {
    const { slots, records } = world();
    const [full, free] = [newEndpointId(), newEndpointId()];
    const held = Array.from({ length: CAP - 1 }, () => newJob(full));
    expect((await slots.startClaimed(held, new Date().toISOString(), CAP)).claimed).toHaveLength(CAP - 1);
    const two = [newJob(full), newJob(full)];
    const other = newJob(free);
    const at = new Date().toISOString();
    const written = await slots.startClaimed([...two, other], at, CAP);
    expect(ids(written.claimed)).toEqual([other.deliveryId]);
    expect(ids(written.listed)).toEqual(ids(two));
    for (const job of two) expect(await records.get(deliveryKeyOf(job))).toMatchObject({ status: 'pending', attempts: [], updatedAt: at });
    // No slot taken past the cap, and not promoted: waiting on the list, where a fill with room finds them.
    expect(ids(await slots.holders('live', full))).toEqual(ids(held));
    expect(await slots.stalePromotions('live', full, 0)).toHaveLength(CAP - 1);
    expect(ids(await slots.claimWaiting('live', full, CAP + 2))).toEqual(ids(two));
  });

  it('an endpoint with too few free slots, alone, gets nothing written: nothing to claim, nothing listed', async () => {
    const { slots, records } = world();
    const full = newEndpointId();
    expect((await slots.startClaimed([newJob(full), newJob(full)], new Date().toISOString(), 2)).claimed).toHaveLength(2);
    const two = [newJob(full), newJob(full)];
    expect(await slots.startClaimed(two, new Date().toISOString(), 2)).toEqual({ claimed: [], listed: [] });
    for (const job of two) expect(await records.get(deliveryKeyOf(job))).toBeUndefined();
    // Not on the list either: a fill with room for them finds nothing to claim.
    expect(await slots.claimWaiting('live', full, CAP)).toEqual([]);
  });

  it('a job whose record exists already (a stream record read twice) is neither claimed nor listed, and its record is left as it is', async () => {
    const { slots, records } = world();
    const [endpointId, other] = [newEndpointId(), newEndpointId()];
    const job = newJob(endpointId);
    await records.start(delivery({ ...deliveryKeyOf(job), companyId: job.companyId, eventId: job.eventId }));
    await records.recordAttempt(deliveryKeyOf(job), 0, failedAttempt(job.createdAt), { status: 'pending', nextAttemptAt: 'x1' });
    expect(await slots.startClaimed([job], new Date().toISOString(), CAP)).toEqual({ claimed: [], listed: [] });
    // Beside another endpoint's job, which is claimed.
    const beside = newJob(other);
    expect(await slots.startClaimed([job, beside], new Date().toISOString(), CAP)).toEqual({ claimed: [beside], listed: [] });
    expect((await records.get(deliveryKeyOf(job)))!.attempts).toHaveLength(1);
    expect(await slots.holders('live', endpointId)).toEqual([]);
    expect(await slots.claimWaiting('live', endpointId, CAP)).toEqual([]);
  });

  it('an endpoint asked for more jobs than its cap gets none of them claimed: alone nothing is written, beside another’s claim they are listed', async () => {
    const { slots, records } = world();
    const [endpointId, other] = [newEndpointId(), newEndpointId()];
    const jobs = Array.from({ length: CAP + 1 }, () => newJob(endpointId));
    expect(await slots.startClaimed(jobs, new Date().toISOString(), CAP)).toEqual({ claimed: [], listed: [] });
    expect(await records.get(deliveryKeyOf(jobs[0]!))).toBeUndefined();
    const beside = newJob(other);
    const written = await slots.startClaimed([...jobs, beside], new Date().toISOString(), CAP);
    expect(ids(written.claimed)).toEqual([beside.deliveryId]);
    expect(ids(written.listed)).toEqual(ids(jobs));
    expect(await slots.holders('live', endpointId)).toEqual([]);
  });

  it('an event to more endpoints than one write holds has the claims that fit written (100 actions), the rest left untouched for the usual road', async () => {
    const { slots, records } = world();
    // One endpoint asked for more jobs than its cap: listed, after every claim, while room lasts.
    const over = newEndpointId();
    const listedLast = [newJob(over), newJob(over), newJob(over)];
    // 40 endpoints with one job each: three actions a claim (waiting entry, record, slots), so 33 fit in 99.
    const endpoints = Array.from({ length: 40 }, newEndpointId);
    const jobs = endpoints.map((endpointId) => newJob(endpointId));
    const written = await slots.startClaimed([...listedLast, ...jobs], new Date().toISOString(), 2);
    expect(ids(written.claimed)).toEqual(ids(jobs.slice(0, 33)));
    expect(written.listed).toEqual([]);
    // The rest are as they were: no record, no slot, not on a waiting list; the caller lists and starts them itself.
    for (const job of [...jobs.slice(33), ...listedLast]) {
      expect(await records.get(deliveryKeyOf(job))).toBeUndefined();
      expect(await slots.holders('live', job.endpointId)).toEqual([]);
    }
    expect(await slots.claimWaiting('live', endpoints[39]!, CAP)).toEqual([]);
    expect(await slots.claimWaiting('live', over, CAP)).toEqual([]);
  });
});

describe('new jobs claimed as they are listed, on DynamoDB', () => {
  /** One new job through `slots.startClaimed`: answered as claimed, and held on its endpoint's SLOTS item. */
  async function expectOneJobClaimed(slots: DynamoWebhookDeliverySlots): Promise<void> {
    const endpointId = newEndpointId();
    const job = newJob(endpointId);
    expect(ids((await slots.startClaimed([job], new Date().toISOString(), CAP)).claimed)).toEqual([job.deliveryId]);
    expect(ids(await slots.holders('live', endpointId))).toEqual([job.deliveryId]);
  }

  /** A DocumentClient on DynamoDB Local that notes each transaction it sends: landed, or cancelled. */
  function transactionsNoted(): { client: DynamoDBDocumentClient; transactions: string[] } {
    const client = documentClient(config());
    const transactions: string[] = [];
    const noted = {
      send: async (command: { constructor: { name: string } }, options?: unknown) => {
        try {
          const answer = await client.send(command as never, options as never);
          if (command.constructor.name === 'TransactWriteCommand') transactions.push('landed');
          return answer;
        } catch (error) {
          if (command.constructor.name === 'TransactWriteCommand') transactions.push((error as Error).name);
          throw error;
        }
      },
    } as unknown as DynamoDBDocumentClient;
    return { client: noted, transactions };
  }

  it('an endpoint whose slots refused a claim is taken for full for a second: its company’s next event is one transaction, the full endpoint’s job listed beside the other’s claim', async () => {
    let clock = Date.now();
    const { client, transactions } = transactionsNoted();
    const slots = new DynamoWebhookDeliverySlots(client, config().tableName, () => new Date(clock));
    const [full, free] = [newEndpointId(), newEndpointId()];
    const held = Array.from({ length: CAP }, () => newJob(full));
    expect((await slots.startClaimed(held, new Date().toISOString(), CAP)).claimed).toHaveLength(CAP);
    // The first event finds out: its claim for the full endpoint cancels the transaction, sent again with it listed.
    const first = [newJob(full), newJob(free)];
    transactions.length = 0;
    expect(await slots.startClaimed(first, new Date().toISOString(), CAP)).toEqual({ claimed: [first[1]], listed: [first[0]] });
    expect(transactions).toEqual(['TransactionCanceledException', 'landed']);
    // The next ones, within the second, are one transaction each, with no cancellation (it was two, then a listing and a start).
    clock += KNOWN_FULL_MS - 1;
    const next = [newJob(full), newJob(free)];
    transactions.length = 0;
    expect(await slots.startClaimed(next, new Date().toISOString(), CAP)).toEqual({ claimed: [next[1]], listed: [next[0]] });
    expect(transactions).toEqual(['landed']);
    // A second later it is tried for a claim again: a slot freed meanwhile is taken as listed.
    await slots.release(held[0]!);
    clock += 2;
    const later = [newJob(full), newJob(free)];
    transactions.length = 0;
    expect(ids((await slots.startClaimed(later, new Date().toISOString(), CAP)).claimed)).toEqual(ids(later));
    expect(transactions).toEqual(['landed']);
  });

  it('a claim cancelled by a conflict on every try is answered at once as refused, its endpoint left to the usual road and the other’s claimed, not waited on as in doubt', async () => {
    // Every try of the first transaction is cancelled for a conflict on its first action (the first endpoint's
    // waiting entry): nothing written. Taken for in doubt, it waited out the settle time, read the slots back, found
    // no mark, and failed the call.
    let firstToken: unknown;
    const { client, counter } = faultyDocumentClient({
      decide: (name, input) => {
        if (name !== 'TransactWriteItemsCommand') return undefined;
        firstToken ??= input.ClientRequestToken;
        return input.ClientRequestToken === firstToken ? 'conflict' : undefined;
      },
    });
    const slots = new DynamoWebhookDeliverySlots(client, config().tableName, undefined, undefined, 60_000);
    const [a, b] = [newJob(newEndpointId()), newJob(newEndpointId())];
    expect(await slots.startClaimed([a, b], new Date().toISOString(), CAP)).toEqual({ claimed: [b], listed: [] });
    expect(counter.injected.conflict).toBeGreaterThan(1);
    const records = new DynamoWebhookDeliveryStore(documentClient(config()), config().tableName);
    expect(await records.get(deliveryKeyOf(a))).toBeUndefined();
    expect(await slots.holders('live', a.endpointId)).toEqual([]);
  }, 20_000);

  it('a claim in doubt beside a listed endpoint is read back by its own marks alone: both answered as written', async () => {
    let sent = 0;
    const { client, counter } = faultyDocumentClient(
      {
        decide: (name) => {
          if (name !== 'TransactWriteItemsCommand') return undefined;
          // The third transaction (after the one that fills the full endpoint's slot and the one that finds it full)
          // is cut off while still being applied, landing 1.5 s later; the same-token attempt 2 s after loses its answer.
          if (++sent === 3) return 'late-commit';
          return sent > 3 && counter.landed > 0 ? 'lost-response' : undefined;
        },
      },
      { lateCommitMs: 1_500 },
    );
    const slots = new DynamoWebhookDeliverySlots(client, config().tableName, undefined, undefined, 2_000);
    const [full, free] = [newEndpointId(), newEndpointId()];
    expect((await slots.startClaimed([newJob(full)], new Date().toISOString(), 1)).claimed).toHaveLength(1);
    // Found full: its claim cancelled, and a listing alone is never sent.
    expect(await slots.startClaimed([newJob(full)], new Date().toISOString(), 1)).toEqual({ claimed: [], listed: [] });
    const jobs = [newJob(full), newJob(free)];
    expect(await slots.startClaimed(jobs, new Date().toISOString(), 1)).toEqual({ claimed: [jobs[1]], listed: [jobs[0]] });
    expect(counter.injected['late-commit']).toBe(1);
    expect(counter.injected['lost-response']).toBe(1);
    expect(ids(await slots.holders('live', free))).toEqual([jobs[1]!.deliveryId]);
    const records = new DynamoWebhookDeliveryStore(documentClient(config()), config().tableName);
    for (const job of jobs) expect(await records.get(deliveryKeyOf(job))).toMatchObject({ status: 'pending', attempts: [] });
  }, 20_000);

  it('a claim in doubt whose settling attempt loses its answer too is read back: its marks on the slots answer it as claimed', async () => {
    // Cut off while still being applied (landing 1.5 s later); the same-token attempt 2 s after lands as a no-op and
    // its answer is lost: only the SLOTS item, holding this call's claim mark, can say the jobs were claimed.
    const { client, counter } = faultyDocumentClient(
      {
        decide: (name) => {
          if (name !== 'TransactWriteItemsCommand') return undefined;
          if (counter.injected['late-commit'] === 0) return 'late-commit';
          return counter.landed > 0 ? 'lost-response' : undefined;
        },
      },
      { lateCommitMs: 1_500 },
    );
    await expectOneJobClaimed(new DynamoWebhookDeliverySlots(client, config().tableName, undefined, undefined, 2_000));
    expect(counter.injected['lost-response']).toBe(1);
  }, 20_000);

  it('a claim still being applied when its retries run out is settled by one more same-token attempt, and answered as claimed', async () => {
    // The first attempt is cut off while DynamoDB goes on applying it, and lands 2.5 s later: every retry meanwhile
    // hears "in progress". Reported as failed, its jobs would hold their slots with no message for five minutes.
    const { client, counter } = faultyDocumentClient(
      { decide: (name) => (name === 'TransactWriteItemsCommand' && counter.injected['late-commit'] === 0 ? 'late-commit' : undefined) },
      { lateCommitMs: 2_500 },
    );
    await expectOneJobClaimed(new DynamoWebhookDeliverySlots(client, config().tableName, undefined, undefined, 3_000));
    expect(counter.injected['in-progress']).toBeGreaterThan(0);
  }, 20_000);

  it('a claim whose answer was lost after it landed answers its jobs as claimed, once', async () => {
    let lost = 0;
    const { client } = faultyDocumentClient({
      decide: (name) => (name === 'TransactWriteItemsCommand' && lost++ === 0 ? 'lost-response' : undefined),
    });
    await expectOneJobClaimed(new DynamoWebhookDeliverySlots(client, config().tableName));
    expect(lost).toBe(2);
  });
});
