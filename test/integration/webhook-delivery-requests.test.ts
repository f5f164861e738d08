import { PutCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { buildDeliverWebhooksHandler } from '../../functions/deliver-webhooks.js';
import { fanOutAndPlan } from '../support/fan-out-on-stream.js';
import { buildSweepWebhookDeliveriesCore } from '../../functions/sweep-webhook-deliveries.js';
import { DynamoEventStore } from '../../lib/adapters/dynamodb/event-store.js';
import { ITEM_TYPES, keys } from '../../lib/adapters/dynamodb/table-keys.js';
import { DynamoWebhookDeliveryStore } from '../../lib/adapters/dynamodb/webhook-delivery-store.js';
import { DynamoWebhookDeliveryReads } from '../../lib/adapters/dynamodb/webhook-delivery-reads.js';
import { DynamoWebhookDeliverySlots } from '../../lib/adapters/dynamodb/webhook-delivery-slots.js';
import { DynamoWebhookEndpointStore } from '../../lib/adapters/dynamodb/webhook-endpoint-store.js';
import { secretBoxOnce } from '../../lib/adapters/secrets/webhook-secret-key.js';
import { WebhookSender } from '../../lib/adapters/webhooks/webhook-sender.js';
import { config } from '../../lib/runtime/config.js';
import { deliveryJobFor, planSlice } from '../../lib/webhooks/fan-out-event.js';
import type { PlanningSlice } from '../../lib/webhooks/planning-slice.js';
import { randomBase62 } from '../../lib/random-id.js';
import type { DeliveryLane } from '../../lib/webhooks/ports.js';
import type { WebhookEndpoint } from '../../lib/webhooks/webhook-endpoint.js';
import { redeliverEvent } from '../../lib/webhooks/redeliver-event.js';
import { fill, finish, STALE_PROMOTION_MS } from '../../lib/webhooks/delivery-slots.js';
import { deliveryKeyOf, newDeliveryRecord, type DeliveryJob } from '../../lib/webhooks/webhook-delivery.js';
import { ddb } from '../support/fixtures.js';
import { ctx, sqsEvent, webhookDeliveryRig } from '../support/webhook-delivery-rig.js';
import { faultyDocumentClient } from '../support/faulty-client.js';

/**
 * The fan-out and delivery functions' table requests and fair share: the requests an event costs on
 * its way to the lane, the waiting lists and slots, the sweeper's repairs, the fan-out's batching
 * and filtering (the rig: test/support/webhook-delivery-rig.ts; the delivery behaviour:
 * webhook-delivery-functions.test.ts). The clock is fixed unless a test moves it (a promotion's age).
 */
let clock = new Date();
const now = () => clock;
const { receiver, rig, newEndpoint, storedEvent } = webhookDeliveryRig(now);

/**
 * A DocumentClient on DynamoDB Local that tells `watch` each command's name and input before sending it; what
 * `watch` answers, if anything, is called once the answer is in (to count requests in flight).
 */
function watchedClient(
  watch: (command: string, input: Record<string, unknown>) => void | (() => void) | Promise<void | (() => void)>,
): DynamoDBDocumentClient {
  const client = ddb();
  return {
    send: async (command: { constructor: { name: string }; input: Record<string, unknown> }, options?: unknown) => {
      const done = await watch(command.constructor.name, command.input);
      try {
        return await client.send(command as never, options as never);
      } finally {
        if (done) done();
      }
    },
  } as unknown as DynamoDBDocumentClient;
}

/** The fan-out and planning on the rig's queue, its stores on `client` (the requests a test counts). */
function fanOutWithStoresOn(r: ReturnType<typeof rig>, client: DynamoDBDocumentClient) {
  const cfg = config();
  return fanOutAndPlan({
    endpoints: new DynamoWebhookEndpointStore(client, cfg.tableName),
    deliveries: new DynamoWebhookDeliveryStore(client, cfg.tableName, now),
    slots: new DynamoWebhookDeliverySlots(client, cfg.tableName, now),
    queue: r.messages,
    now,
  });
}

/** `count` new events of the endpoint's company, stored, then fanned out in one stream batch that fails no record. */
async function fannedOutEvents(r: ReturnType<typeof rig>, endpoint: WebhookEndpoint, count: number) {
  const events = [];
  for (let i = 0; i < count; i++) events.push(await storedEvent(endpoint.companyId));
  expect(await r.fanOut({ Records: events.flatMap((e) => e.record.Records) }, ctx())).toEqual({ batchItemFailures: [] });
  return events;
}

/** The delivery job of a new event of the endpoint's company, the event stored as the create path stores it (the job not yet listed). */
async function jobOfNewEvent(endpoint: WebhookEndpoint): Promise<DeliveryJob> {
  const { event } = await storedEvent(endpoint.companyId);
  return deliveryJobFor(
    { eventId: event.id, eventType: event.type, companyId: endpoint.companyId, mode: 'live', createdAt: event.createdAt },
    endpoint,
  );
}

/** A planning step's worth of new delivery records (96, as six events to sixteen endpoints), here to one new endpoint. */
async function aPlanningStepsRecords() {
  const target = await receiver([200]);
  const { endpoint } = await newEndpoint(rig(), target.url);
  return Array.from({ length: 96 }, () => {
    const event = { eventId: `evt_${randomBase62(22)}`, eventType: 'case.created', companyId: endpoint.companyId, mode: 'live' as const };
    return newDeliveryRecord(deliveryJobFor({ ...event, createdAt: now().toISOString() }, endpoint), now().toISOString());
  });
}

/** The delivery function on the rig's stores, its slots on `client` (the requests a test counts). */
function deliverWithSlotsOn(r: ReturnType<typeof rig>, client: DynamoDBDocumentClient) {
  const cfg = config();
  return buildDeliverWebhooksHandler({
    delivery: {
      endpoints: r.endpoints,
      events: new DynamoEventStore(ddb(), cfg.tableName),
      deliveries: r.deliveries,
      sender: new WebhookSender({ allowLocalDevelopment: true, now }),
      now,
    },
    messages: r.messages,
    slots: new DynamoWebhookDeliverySlots(client, cfg.tableName, now),
    laneOf: () => 'fast',
  });
}

describe('the webhook fan-out and delivery functions', () => {
  // Each test makes a few dozen requests to DynamoDB Local (the slots and waiting lists among them); on a
  // machine shared with other suites the first one, run while the local stores warm up, can pass 5 s.
  jest.setTimeout(20_000);
  beforeEach(() => {
    clock = new Date(Math.floor(Date.now() / 1000) * 1000);
  });

  it('a fan-out to an endpoint with free slots lists, starts and claims its job in one request: two table requests before the send', async () => {
    const r = rig();
    const target = await receiver([200]);
    const { endpoint } = await newEndpoint(r, target.url);
    const { record } = await storedEvent(endpoint.companyId);
    // The fan-out's table requests, in the order sent, up to the SendMessageBatch.
    const sent: string[] = [];
    const counting = watchedClient((command) => {
      if (r.messages.enqueued.length === 0) sent.push(command);
    });
    const fanOut = fanOutWithStoresOn(r, counting);
    expect(await fanOut(record, ctx())).toEqual({ batchItemFailures: [] });
    expect(r.messages.enqueued).toHaveLength(1);
    // The endpoints, then the job listed, its record started and its slot claimed in one transaction (they were a
    // PutItem, a PutItem and an UpdateItem one after another): no Query of the waiting list.
    expect(sent).toEqual(['QueryCommand', 'TransactWriteCommand']);
    const stored = await r.deliveries.get(deliveryKeyOf(r.messages.enqueued[0]!.job));
    expect(stored).toMatchObject({ status: 'pending', attempts: [] });
    expect((await r.slots.holders('live', endpoint.endpointId)).map((k) => k.deliveryId)).toEqual([r.messages.enqueued[0]!.job.deliveryId]);
  });

  it('a company’s event to an endpoint with every slot held waits on its list, while its other endpoint’s copy is queued at once', async () => {
    const r = rig();
    const target = await receiver([200]);
    const { endpoint: full } = await newEndpoint(r, target.url);
    await fannedOutEvents(r, full, 8);
    expect(r.messages.enqueued).toHaveLength(8);
    clock = new Date(clock.getTime() + 1000);
    const { endpoint: free } = await newEndpoint(r, target.url, { companyId: full.companyId });
    const { event } = (await fannedOutEvents(r, free, 1))[0]!;
    // The full endpoint refuses the transaction that would claim both (the port's contract suite shows it sent again
    // with the full one's job listed, not claimed): the free endpoint's copy is queued, the full one's waits.
    expect(r.messages.enqueued.slice(8).map((e) => e.job.endpointId)).toEqual([free.endpointId]);
    const waiting = deliveryJobFor(
      { eventId: event.id, eventType: event.type, companyId: full.companyId, mode: 'live', createdAt: event.createdAt },
      full,
    );
    expect(await r.deliveries.get(deliveryKeyOf(waiting))).toMatchObject({ status: 'pending', attempts: [] });
    expect(await r.slots.holders('live', full.endpointId)).toHaveLength(8);
    // Listed: the next slot given back goes to it.
    await finish({ slots: r.slots, queue: r.messages }, r.messages.enqueued[0]!.job);
    expect(r.messages.enqueued.slice(9).map((e) => e.job.deliveryId)).toEqual([waiting.deliveryId]);
  });

  it('a company’s endpoint with every slot held costs its other endpoint no request: after the first event finds it full, each event is the endpoints’ Query and one transaction before the send', async () => {
    const r = rig();
    const target = await receiver([200]);
    const { endpoint: full } = await newEndpoint(r, target.url);
    await fannedOutEvents(r, full, 8);
    clock = new Date(clock.getTime() + 1000);
    const { endpoint: free } = await newEndpoint(r, target.url, { companyId: full.companyId });
    // The fan-out's table requests for each event, in the order sent, up to its SendMessageBatch.
    let sent: string[] = [];
    const counting = watchedClient((command) => {
      if (r.messages.enqueued.length === 8 + perEvent.length) sent.push(command);
    });
    const perEvent: string[][] = [];
    const fanOut = fanOutWithStoresOn(r, counting);
    const waiting: DeliveryJob[] = [];
    for (let i = 0; i < 3; i++) {
      // 10 ms apart (well inside the second the full endpoint is taken for full), so the list's order is theirs.
      clock = new Date(clock.getTime() + 10);
      const { event, record } = await storedEvent(full.companyId);
      sent = [];
      expect(await fanOut(record, ctx())).toEqual({ batchItemFailures: [] });
      perEvent.push(sent);
      waiting.push(
        deliveryJobFor(
          { eventId: event.id, eventType: event.type, companyId: full.companyId, mode: 'live', createdAt: event.createdAt },
          full,
        ),
      );
    }
    expect(r.messages.enqueued.slice(8).map((e) => e.job.endpointId)).toEqual([free.endpointId, free.endpointId, free.endpointId]);
    // The first finds the full endpoint refusing the claim, and sends the transaction again with its job listed, not
    // claimed (it was then listed and started in two more requests, on every event); the next ones know it is full.
    expect(perEvent).toEqual([
      ['QueryCommand', 'TransactWriteCommand', 'TransactWriteCommand'],
      ['QueryCommand', 'TransactWriteCommand'],
      ['QueryCommand', 'TransactWriteCommand'],
    ]);
    // The full endpoint's jobs are started and wait on its list.
    for (const job of waiting) expect(await r.deliveries.get(deliveryKeyOf(job))).toMatchObject({ status: 'pending', attempts: [] });
    expect(await r.slots.holders('live', full.endpointId)).toHaveLength(8);
    // A slot given back meanwhile by a process that found nothing waiting: the next event, within the second, still
    // lists the full endpoint's job (taken for full), and the fill that follows every listing queues a waiting job
    // into the free slot (its own new one, claimed first as a fill's fresh jobs are: deliveries keep no order).
    // Without that fill every one of them would wait for the sweeper.
    await r.slots.release(deliveryKeyOf(r.messages.enqueued[0]!.job));
    clock = new Date(clock.getTime() + 10);
    const { event, record } = await storedEvent(full.companyId);
    expect(await fanOut(record, ctx())).toEqual({ batchItemFailures: [] });
    const queued = r.messages.enqueued.slice(11).map((e) => e.job);
    const listed = [
      ...waiting,
      deliveryJobFor(
        { eventId: event.id, eventType: event.type, companyId: full.companyId, mode: 'live', createdAt: event.createdAt },
        full,
      ),
    ];
    const toFull = queued.filter((job) => job.endpointId === full.endpointId);
    expect(toFull).toHaveLength(1);
    expect(listed.map((job) => job.deliveryId)).toContain(toFull[0]!.deliveryId);
    expect(queued.filter((job) => job.endpointId === free.endpointId)).toHaveLength(1);
    expect(await r.slots.holders('live', full.endpointId)).toHaveLength(8);
  });

  it('a stream batch of twelve events to one endpoint lists its twelve waiting jobs in one request, not one write per job', async () => {
    const cfg = config();
    const r = rig();
    const target = await receiver([200]);
    const { endpoint } = await newEndpoint(r, target.url);
    const events = [];
    for (let i = 0; i < 12; i++) events.push(await storedEvent(endpoint.companyId));
    const sent: string[] = [];
    const counting = watchedClient((command) => {
      if (r.messages.enqueued.length === 0) sent.push(command);
    });
    const fanOut = fanOutWithStoresOn(r, counting);
    expect(await fanOut({ Records: events.flatMap((e) => e.record.Records) }, ctx())).toEqual({ batchItemFailures: [] });
    // The endpoints; the 12 jobs listed (one BatchWriteItem; it was 12 PutItems, then a transaction); their records
    // started; the cap's 8 claimed (one UpdateItem).
    expect(sent).toEqual(['QueryCommand', 'BatchWriteCommand', 'TransactWriteCommand', 'UpdateCommand']);
    expect(r.messages.enqueued).toHaveLength(8);
    const waiting = await ddb().send(
      new QueryCommand({
        TableName: cfg.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :w)',
        ExpressionAttributeValues: { ':pk': keys.webhookDeliverySlotPartition('live', endpoint.endpointId), ':w': 'W#' },
        ConsistentRead: true,
      }),
    );
    expect(waiting.Items ?? []).toHaveLength(4);
  });

  it('a company’s burst to sixteen endpoints is planned with at most two table requests in flight at a time, and planned again with at most ten', async () => {
    const cfg = config();
    const r = rig();
    const target = await receiver([200]);
    const { endpoint: first } = await newEndpoint(r, target.url);
    for (let i = 1; i < 16; i++) await newEndpoint(r, target.url, { companyId: first.companyId });
    let inFlight = 0;
    let most = 0;
    const measuring = watchedClient(() => {
      most = Math.max(most, ++inFlight);
      return () => inFlight--;
    });
    const slice: PlanningSlice = {
      mode: 'live',
      companyId: first.companyId,
      events: Array.from({ length: 13 }, () => ({
        eventId: `evt_${randomBase62(22)}`,
        eventType: 'case.created',
        createdAt: now().toISOString(),
      })),
    };
    const deps = {
      endpoints: new DynamoWebhookEndpointStore(measuring, cfg.tableName),
      deliveries: new DynamoWebhookDeliveryStore(measuring, cfg.tableName, now),
      slots: new DynamoWebhookDeliverySlots(measuring, cfg.tableName, now),
      queue: r.messages,
      now,
    };
    const planned = await planSlice(deps, slice);
    // 208 deliveries in three steps (6, 6 and 1 events to 16 endpoints), each listed and started; every endpoint filled to its cap.
    expect(planned).toEqual({ jobs: 208, queued: 16 * 8, alreadyStarted: 0 });
    // One listing request at a time and two endpoints filled at once: it was the sixteen claims of the fill, or a
    // step's four listing requests, together in the table's queue.
    expect(most).toBeLessThanOrEqual(2);

    // Planned again (the worker's retry of a slice that failed halfway, or a replayed stream record): every step's
    // transaction is cancelled, as its records exist, and they are started one by one, ten at a time (it was the
    // step's 96 puts and their reads at once). The jobs are found waiting, and the full slots take none.
    most = 0;
    clock = new Date(clock.getTime() + 1_000);
    expect(await planSlice(deps, slice)).toEqual({ jobs: 208, queued: 0, alreadyStarted: 0 });
    expect(most).toBeLessThanOrEqual(10);
  });

  it('a burst’s records are started 25 to a transaction, one transaction after another: another company’s request never waits behind a hundred', async () => {
    const records = await aPlanningStepsRecords();
    const sizes: number[] = [];
    const sent: string[] = [];
    // A request resent by the retry layer is the same command (its input object): counted once among the requests
    // sent, but in flight again each time it is sent.
    const seen = new Set<object>();
    let inFlight = 0;
    let most = 0;
    const measuring = watchedClient((command, input) => {
      if (!seen.has(input)) {
        seen.add(input);
        sent.push(command);
        if (command === 'TransactWriteCommand') sizes.push((input.TransactItems as unknown[]).length);
      }
      if (command !== 'TransactWriteCommand') return;
      most = Math.max(most, ++inFlight);
      return () => inFlight--;
    });
    const store = new DynamoWebhookDeliveryStore(measuring, config().tableName, now);
    expect((await store.startAll(records)).map((d) => d.status)).toEqual(records.map(() => 'pending'));
    // A planning step's 96 records (six events to sixteen endpoints) were one transaction of 96 puts: on DynamoDB
    // Local every other request to the store waited for all of it (docs/performance.md, "A burst's records in
    // transactions of 25").
    expect(sizes).toEqual([25, 25, 25, 21]);
    expect(most).toBe(1);
    // Started again (a replayed step), each group's transaction is cancelled, as its records exist, and each record
    // is found as stored by its conditional put and a read, one group after another: nothing is started twice.
    sizes.length = 0;
    sent.length = 0;
    most = 0;
    expect(await store.startAll(records)).toEqual(records.map((d) => ({ ...d, status: 'pending', attempts: [] })));
    expect(sizes).toEqual([25, 25, 25, 21]);
    expect(most).toBe(1);
    expect(sent.filter((c) => c === 'PutCommand')).toHaveLength(96);
    expect(sent.filter((c) => c === 'GetCommand')).toHaveLength(96);
  });

  it('a burst’s record transaction refused stops the step there: the groups after it are not sent, for the retry to send them fresh', async () => {
    const records = await aPlanningStepsRecords();
    let transactions = 0;
    const refusingTheSecond = watchedClient((command) => {
      if (command === 'TransactWriteCommand' && ++transactions === 2)
        throw Object.assign(new Error('refused for the test'), { name: 'ValidationException', $metadata: { httpStatusCode: 400 } });
    });
    const store = new DynamoWebhookDeliveryStore(refusingTheSecond, config().tableName, now);
    await expect(store.startAll(records)).rejects.toThrow('refused for the test');
    // Sent on after the failure, the third and fourth groups would only have made the retry's transactions cancel.
    expect(transactions).toBe(2);
    const retried = await new DynamoWebhookDeliveryStore(ddb(), config().tableName, now).startAll(records);
    expect(retried.map((d) => d.status)).toEqual(records.map(() => 'pending'));
  });

  it('a company’s single event to sixteen endpoints is filled at once by the stream consumer: no first attempt waits for another endpoint’s fill', async () => {
    const r = rig();
    const target = await receiver([200]);
    const { endpoint: first } = await newEndpoint(r, target.url);
    for (let i = 1; i < 16; i++) await newEndpoint(r, target.url, { companyId: first.companyId });
    const { record } = await storedEvent(first.companyId);
    // Every request before the first send, and how many removals of queued jobs from their lists run at once.
    const before: string[] = [];
    let removing = 0;
    let most = 0;
    const measuring = watchedClient((command) => {
      if (r.messages.enqueued.length === 0) before.push(command);
      if (command !== 'DeleteCommand') return;
      most = Math.max(most, ++removing);
      return () => removing--;
    });
    const fanOut = fanOutWithStoresOn(r, measuring);
    expect(await fanOut(record, ctx())).toEqual({ batchItemFailures: [] });
    expect(r.messages.enqueued).toHaveLength(16);
    // Sixteen deliveries: the consumer's own slice (at most 25), all sixteen claimed in one transaction, then queued
    // and taken off their lists together, not two endpoints at a time.
    expect(before).toEqual(['QueryCommand', 'TransactWriteCommand']);
    expect(most).toBe(16);
  });

  it('a redelivery asked for while the endpoint’s eight slots are held waits outside the lanes behind the jobs before it, and is queued when a slot is handed on', async () => {
    const cfg = config();
    const r = rig();
    const target = await receiver([200]);
    const { endpoint } = await newEndpoint(r, target.url);
    const events = await fannedOutEvents(r, endpoint, 10);
    // Eight jobs hold the endpoint's slots, two wait; the partner asks for the first event again, twice.
    expect(r.messages.enqueued).toHaveLength(8);
    const deps = {
      endpoints: r.endpoints,
      events: new DynamoEventStore(ddb(), cfg.tableName),
      deliveries: r.deliveries,
      slots: r.slots,
      queue: r.messages,
      now,
    };
    const caller = { companyId: endpoint.companyId, mode: 'live' as const };
    // Asked for after the events were written (the test's clock is otherwise the second they were).
    clock = new Date(Date.now() + 1_000);
    const asked = [];
    for (let i = 0; i < 2; i++) asked.push(await redeliverEvent(deps, caller, endpoint.endpointId, { eventId: events[0]!.event.id }));
    // Started and logged, not in the lanes (it went straight to the fast lane, a job per call with no cap).
    expect(asked.map((d) => d.status)).toEqual(['pending', 'pending']);
    expect(r.messages.enqueued).toHaveLength(8);
    expect(await r.slots.holders('live', endpoint.endpointId)).toHaveLength(8);
    // Four jobs end: their slots go to the two scheduled jobs waiting, then to the two redeliveries, oldest first.
    const deliver = deliverWithSlotsOn(r, ddb());
    for (const { job } of r.messages.enqueued.slice(0, 4)) expect(await deliver(sqsEvent(job), ctx())).toEqual({ batchItemFailures: [] });
    const handedOn = r.messages.enqueued.slice(8).map((e) => e.job);
    expect(handedOn.map((job) => job.kind)).toEqual(['scheduled', 'scheduled', 'redelivery', 'redelivery']);
    expect(
      handedOn
        .slice(2)
        .map((job) => job.deliveryId)
        .sort(),
    ).toEqual(asked.map((d) => d.id).sort());
    // A redelivery ends as any job does: delivered, its slot handed on (nothing waits now: given back).
    expect(await deliver(sqsEvent(handedOn[2]!), ctx())).toEqual({ batchItemFailures: [] });
    expect(target.received.at(-1)!.headers['webhook-id']).toBe(events[0]!.event.id);
    expect(await r.slots.holders('live', endpoint.endpointId)).toHaveLength(7);
  });

  it('a burst’s ended jobs are followed by the oldest waiting ones, each slot handed on in one write, the endpoint’s waiting list read once for all eight, never past its cap', async () => {
    const cfg = config();
    const r = rig();
    const target = await receiver([200]);
    const { endpoint } = await newEndpoint(r, target.url);
    await fannedOutEvents(r, endpoint, 30);
    const first = r.messages.enqueued.map((e) => e.job);
    expect(first).toHaveLength(8);
    const waitingBefore = await ddb().send(
      new QueryCommand({
        TableName: cfg.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :w)',
        ExpressionAttributeValues: { ':pk': keys.webhookDeliverySlotPartition('live', endpoint.endpointId), ':w': 'W#' },
        ConsistentRead: true,
      }),
    );
    const oldest = (waitingBefore.Items ?? []).slice(0, 8).map((i) => (i.job as DeliveryJob).deliveryId);
    // The delivery function's requests for the slots and waiting lists, each job in a batch of its own.
    const requests: string[] = [];
    const counting = watchedClient((command) => {
      requests.push(command);
    });
    const deliver = deliverWithSlotsOn(r, counting);
    for (const job of first) expect(await deliver(sqsEvent(job), ctx())).toEqual({ batchItemFailures: [] });
    expect(target.received).toHaveLength(8);
    // Each ended job's slot went to the oldest waiting job, in order; one read served all eight (it was one per job).
    expect(r.messages.enqueued.slice(8).map((e) => e.job.deliveryId)).toEqual(oldest);
    // Per ended job, its slot handed to the next waiting job (one UpdateItem) and that job taken off the list once
    // queued (one DeleteItem); it was a release, a two-item transaction and the delete. The first ended job's
    // process knew nothing of the list yet: its slot given back first, then the list read and the next job claimed.
    const count = (name: string) => requests.filter((r) => r === name).length;
    expect(count('QueryCommand')).toBe(1);
    expect({ updates: count('UpdateCommand'), deletes: count('DeleteCommand'), other: requests.length - 1 - 17 }).toEqual({
      updates: 1 + 8,
      deletes: 8,
      other: 0,
    });
    const holders = (await r.slots.holders('live', endpoint.endpointId)).map((k) => k.deliveryId);
    expect(holders.sort()).toEqual([...oldest].sort());
  });

  it('a batch of eight deliveries reads its endpoint, records and events in one request, not one read each; when that read fails, each job reads its own', async () => {
    const cfg = config();
    const r = rig();
    const target = await receiver([200]);
    const { endpoint } = await newEndpoint(r, target.url);
    await fannedOutEvents(r, endpoint, 8);
    const jobs = r.messages.enqueued.map((e) => e.job);
    expect(jobs).toHaveLength(8);
    const reads: string[] = [];
    const counting = watchedClient((command) => {
      if (['GetCommand', 'BatchGetCommand'].includes(command)) reads.push(command);
    });
    const endpoints = new DynamoWebhookEndpointStore(counting, cfg.tableName, secretBoxOnce(cfg));
    const deliveries = new DynamoWebhookDeliveryStore(counting, cfg.tableName, now);
    const deliver = buildDeliverWebhooksHandler({
      delivery: {
        endpoints,
        events: new DynamoEventStore(counting, cfg.tableName),
        deliveries,
        sender: new WebhookSender({ allowLocalDevelopment: true, now }),
        now,
      },
      messages: r.messages,
      slots: new DynamoWebhookDeliverySlots(counting, cfg.tableName, now),
      laneOf: () => 'fast',
      reads: new DynamoWebhookDeliveryReads(counting, cfg.tableName, { endpoints, deliveries }),
    });
    expect(await deliver({ Records: jobs.flatMap((job) => sqsEvent(job).Records) }, ctx())).toEqual({ batchItemFailures: [] });
    expect(target.received).toHaveLength(8);
    // One BatchGetItem: it was a GetItem per record and per event, and one for the endpoint (17). The endpoint read
    // again after each attempt is the batch's reading.
    expect(reads).toEqual(['BatchGetCommand']);
    expect((await r.deliveries.get(deliveryKeyOf(jobs[0]!)))?.status).toBe('delivered');

    // When the batch read fails, each job reads its own and is delivered all the same.
    const more = [];
    for (let i = 0; i < 2; i++) more.push(await storedEvent(endpoint.companyId));
    const queuedBefore = r.messages.enqueued.length;
    await r.fanOut({ Records: more.flatMap((e) => e.record.Records) }, ctx());
    const fallback = buildDeliverWebhooksHandler({
      delivery: {
        endpoints,
        events: new DynamoEventStore(counting, cfg.tableName),
        deliveries,
        sender: new WebhookSender({ allowLocalDevelopment: true, now }),
        now,
      },
      messages: r.messages,
      slots: r.slots,
      laneOf: () => 'fast',
      reads: {
        read: async () => {
          throw new Error('BatchGetItem unavailable');
        },
      },
    });
    reads.length = 0;
    const later = r.messages.enqueued.slice(queuedBefore).map((e) => e.job);
    expect(await fallback({ Records: later.flatMap((job) => sqsEvent(job).Records) }, ctx())).toEqual({ batchItemFailures: [] });
    expect(target.received).toHaveLength(10);
    expect(reads.filter((name) => name === 'GetCommand').length).toBeGreaterThanOrEqual(2 * later.length);
  });

  it('a job listed while an ended job gives its slot back is queued by one of the two fills, never left behind the free slot', async () => {
    const r = rig();
    const target = await receiver([200]);
    const { endpoint } = await newEndpoint(r, target.url);
    // Eight jobs hold the eight slots; nothing waits.
    await fannedOutEvents(r, endpoint, 8);
    expect(r.messages.enqueued).toHaveLength(8);
    const ended = r.messages.enqueued[0]!.job;
    // The endpoint's next event, listed and filled by the fan-out just before the ending job's first write (while
    // all eight slots are still held, so its own fill finds none free).
    const late = await jobOfNewEvent(endpoint);
    let interleaved = false;
    const interleaving = watchedClient(async (command) => {
      if (!interleaved && command === 'UpdateCommand') {
        interleaved = true;
        await r.slots.wait([late]);
        expect(await fill({ slots: r.slots, queue: r.messages }, 'live', endpoint.endpointId, [late])).toBe(0);
      }
    });
    const finishing = new DynamoWebhookDeliverySlots(interleaving, config().tableName, now);
    await finish({ slots: finishing, queue: r.messages }, ended);
    expect(interleaved).toBe(true);
    expect(r.messages.enqueued.map((e) => e.job.deliveryId)).toContain(late.deliveryId);
    expect((await r.slots.holders('live', endpoint.endpointId)).map((k) => k.deliveryId)).toContain(late.deliveryId);
  });

  it('a claim whose answer was lost after it landed still queues its job, rather than leaving it held and never sent', async () => {
    const r = rig();
    const target = await receiver([200]);
    const { endpoint } = await newEndpoint(r, target.url);
    await fannedOutEvents(r, endpoint, 10);
    expect(r.messages.enqueued).toHaveLength(8);
    const queued = new Set(r.messages.enqueued.map((e) => e.job.deliveryId));
    // The next claim's UpdateItem lands, and its answer is lost (a timeout): the retry then fails its conditions.
    let armed = true;
    const { client } = faultyDocumentClient({
      decide: (name, input) => {
        const claims = name.startsWith('Update') && ':at' in ((input.ExpressionAttributeValues as object | undefined) ?? {});
        if (!armed || !claims) return undefined;
        armed = false;
        return 'lost-response';
      },
    });
    const slots = new DynamoWebhookDeliverySlots(client, config().tableName, now);
    await finish({ slots, queue: r.messages }, r.messages.enqueued[0]!.job);
    expect(armed).toBe(false);
    const next = r.messages.enqueued.slice(8).map((e) => e.job.deliveryId);
    expect(next).toHaveLength(1);
    expect(queued.has(next[0]!)).toBe(false);
    // Every slot is held by a job that was queued: none held and never sent.
    const holders = (await r.slots.holders('live', endpoint.endpointId)).map((k) => k.deliveryId);
    expect(holders).toHaveLength(8);
    for (const holder of holders) expect(r.messages.enqueued.map((e) => e.job.deliveryId)).toContain(holder);
  });

  it('a fill whose send fails gives its jobs’ slots back in one request, and the jobs wait for the next fill', async () => {
    const r = rig();
    const target = await receiver([200]);
    const { endpoint } = await newEndpoint(r, target.url);
    const jobs: DeliveryJob[] = [];
    for (let i = 0; i < 8; i++) jobs.push(await jobOfNewEvent(endpoint));
    await r.slots.wait(jobs);
    const requests: string[] = [];
    const slots = new DynamoWebhookDeliverySlots(
      watchedClient((command) => {
        requests.push(command);
      }),
      config().tableName,
      now,
    );
    r.messages.failing = true;
    try {
      await expect(fill({ slots, queue: r.messages }, 'live', endpoint.endpointId, jobs)).rejects.toThrow();
    } finally {
      r.messages.failing = false;
    }
    // The claim, then the eight slots given back together: two writes of the SLOTS item, not nine.
    expect(requests).toEqual(['UpdateCommand', 'UpdateCommand']);
    expect(await r.slots.holders('live', endpoint.endpointId)).toEqual([]);
    expect(await fill({ slots: r.slots, queue: r.messages }, 'live', endpoint.endpointId)).toBe(8);
  });

  it('a second fill that claims the same job in the same millisecond does not take the first fill’s claim for its own, and queues nothing', async () => {
    const r = rig();
    const target = await receiver([200]);
    const { endpoint } = await newEndpoint(r, target.url);
    const job = await jobOfNewEvent(endpoint);
    await r.slots.wait([job]);
    // Two processes (a replayed stream record beside the first copy) fill with the job they have just listed; the
    // clock does not move between them. The second's condition fails on the first's claim, which it must not read
    // as its own write landed with a lost answer.
    expect(await r.slots.claimWaiting('live', endpoint.endpointId, 8, [job])).toEqual([job]);
    const otherProcess = new DynamoWebhookDeliverySlots(ddb(), config().tableName, now);
    expect(await otherProcess.claimWaiting('live', endpoint.endpointId, 8, [job])).toEqual([]);
    expect((await r.slots.holders('live', endpoint.endpointId)).map((k) => k.deliveryId)).toEqual([job.deliveryId]);
    // The claim's mark still tells the sweeper how old it is.
    expect(await r.slots.stalePromotions('live', endpoint.endpointId, STALE_PROMOTION_MS)).toEqual([]);
    clock = new Date(clock.getTime() + STALE_PROMOTION_MS);
    expect(await r.slots.stalePromotions('live', endpoint.endpointId, STALE_PROMOTION_MS)).toEqual([job]);
  });

  it('a job whose slot was claimed but whose queueing was lost is found after five minutes, and a queued one is not', async () => {
    const r = rig();
    const target = await receiver([200]);
    const { endpoint } = await newEndpoint(r, target.url);
    const { record } = await storedEvent(endpoint.companyId);
    await r.fanOut(record, ctx());
    const queued = r.messages.enqueued[0]!.job;
    // A fill that claimed a slot and stopped before queueing: its job still on the list, its delivery holding a slot.
    const lost = await jobOfNewEvent(endpoint);
    await r.slots.wait([lost]);
    expect(await r.slots.claimWaiting('live', endpoint.endpointId, 8)).toEqual([lost]);
    expect(await r.slots.stalePromotions('live', endpoint.endpointId, STALE_PROMOTION_MS)).toEqual([]);
    clock = new Date(clock.getTime() + STALE_PROMOTION_MS);
    expect(await r.slots.stalePromotions('live', endpoint.endpointId, STALE_PROMOTION_MS)).toEqual([lost]);
    // Neither is claimed again by a fill: both hold their slots.
    expect(await r.slots.claimWaiting('live', endpoint.endpointId, 8)).toEqual([]);
    expect((await r.slots.holders('live', endpoint.endpointId)).map((k) => k.deliveryId).sort()).toEqual(
      [queued.deliveryId, lost.deliveryId].sort(),
    );
  });

  it('a slot held in the earlier form (a string set) is still given back and shown to the sweeper', async () => {
    const r = rig();
    const target = await receiver([200]);
    const { endpoint } = await newEndpoint(r, target.url);
    const job = await jobOfNewEvent(endpoint);
    const cfg = config();
    await ddb().send(
      new PutCommand({
        TableName: cfg.tableName,
        Item: {
          ...keys.webhookDeliverySlots('live', endpoint.endpointId),
          type: ITEM_TYPES.webhookDeliverySlots,
          holders: new Set([`${job.createdAt}#${job.deliveryId}`]),
        },
      }),
    );
    expect((await r.slots.holders('live', endpoint.endpointId)).map((k) => k.deliveryId)).toEqual([job.deliveryId]);
    await r.slots.release(deliveryKeyOf(job));
    expect(await r.slots.holders('live', endpoint.endpointId)).toEqual([]);
    // Given back twice: nothing changes, nothing is created.
    await r.slots.release(deliveryKeyOf(job));
    expect(await r.slots.holders('live', endpoint.endpointId)).toEqual([]);
  });

  it('the sweeper queues a delivery started but never queued, and gives back a slot its delivered job never released', async () => {
    const r = rig();
    const target = await receiver([200]);
    const { endpoint } = await newEndpoint(r, target.url);
    // A fan-out that stopped after starting the record: the job on the waiting list, its record pending, no message.
    const stranded = await jobOfNewEvent(endpoint);
    await r.slots.wait([stranded]);
    await r.deliveries.start(newDeliveryRecord(stranded, clock.toISOString()));
    // And a delivered job whose function stopped before it gave its slot back.
    const { record } = await storedEvent(endpoint.companyId);
    await r.fanOut(record, ctx());
    const delivered = r.messages.enqueued.find((m) => m.job.deliveryId !== stranded.deliveryId)!.job;
    await r.deliveries.recordAttempt(
      deliveryKeyOf(delivered),
      0,
      { at: clock.toISOString(), statusCode: 200, durationMs: 5 },
      { status: 'delivered' },
    );
    const queuedBefore = r.messages.enqueued.length;
    // The fan-out's own fill queued the stranded job too (it was the oldest waiting): take it back to "never queued".
    await r.slots.release(deliveryKeyOf(stranded));
    await r.slots.wait([stranded]);

    const sweep = buildSweepWebhookDeliveriesCore({
      companies: { list: async () => [{ companyId: endpoint.companyId }] },
      endpoints: r.endpoints,
      deliveries: r.deliveries,
      slots: r.slots,
      queue: r.messages,
    });
    expect(await sweep()).toEqual({ endpoints: 1, failed: 0, released: 1, requeued: 0, filled: 1 });
    expect(r.messages.enqueued.slice(queuedBefore)).toEqual([{ lane: 'fast', job: stranded, delaySeconds: 0 }]);
    expect((await r.slots.holders('live', endpoint.endpointId)).map((k) => k.deliveryId)).toEqual([stranded.deliveryId]);
    // Swept again: nothing left to mend.
    expect(await sweep()).toEqual({ endpoints: 1, failed: 0, released: 0, requeued: 0, filled: 0 });
  });

  it('an endpoint the sweeper cannot sweep is counted and named with its error, and the other endpoints are still swept', async () => {
    const r = rig();
    const target = await receiver([200]);
    const broken = await newEndpoint(r, target.url);
    await newEndpoint(r, target.url, { companyId: broken.endpoint.companyId });
    const failures: { mode: string; endpointId: string; error: unknown }[] = [];
    const slots = Object.create(r.slots) as typeof r.slots;
    slots.holders = async (mode, endpointId) => {
      if (endpointId === broken.endpoint.endpointId) throw new Error('storage unavailable');
      return r.slots.holders(mode, endpointId);
    };
    const sweep = buildSweepWebhookDeliveriesCore({
      companies: { list: async () => [{ companyId: broken.endpoint.companyId }] },
      endpoints: r.endpoints,
      deliveries: r.deliveries,
      slots,
      queue: r.messages,
      onEndpointFailed: (failure) => failures.push(failure),
    });
    expect(await sweep()).toMatchObject({ endpoints: 2, failed: 1 });
    expect(failures).toEqual([{ mode: 'live', endpointId: broken.endpoint.endpointId, error: new Error('storage unavailable') }]);
  });

  it('the fan-out ignores what is not an inserted event item, and a test event reaches test endpoints only', async () => {
    const r = rig();
    const target = await receiver([200]);
    const live = await newEndpoint(r, target.url);
    const test = await newEndpoint(r, target.url, { companyId: live.endpoint.companyId, mode: 'test' });
    const { record } = await storedEvent(live.endpoint.companyId, 'test');
    const image = record.Records[0]!.dynamodb!.NewImage!;
    await r.fanOut({ Records: [{ ...record.Records[0]!, eventName: 'MODIFY' }] }, ctx());
    await r.fanOut(
      { Records: [{ eventName: 'INSERT', dynamodb: { NewImage: marshall({ ...unmarshall(image as never), type: 'CASE' }) as never } }] },
      ctx(),
    );
    expect(r.messages.enqueued).toEqual([]);
    await r.fanOut(record, ctx());
    expect(r.messages.enqueued.map((e) => e.job.endpointId)).toEqual([test.endpoint.endpointId]);
  });

  it("the fan-out queues a batch's jobs in one request per endpoint, and when that fails every record with deliveries is retried and queued again", async () => {
    const cfg = config();
    const target = await receiver([200]);
    const r = rig();
    const first = await newEndpoint(r, target.url);
    await newEndpoint(r, target.url, { companyId: first.endpoint.companyId });
    const records = await Promise.all([1, 2, 3].map(() => storedEvent(first.endpoint.companyId)));
    const batch: DynamoDBStreamEvent = {
      Records: records.map((e, i) => ({
        ...e.record.Records[0]!,
        dynamodb: { ...e.record.Records[0]!.dynamodb!, SequenceNumber: String(i + 1) },
      })),
    };
    const calls: number[] = [];
    let failing = true;
    const queue = {
      enqueue: async (_lane: DeliveryLane, jobs: readonly DeliveryJob[]) => {
        if (failing) throw new Error('SQS unavailable');
        calls.push(jobs.length);
      },
    };
    const fanOut = fanOutAndPlan({
      endpoints: new DynamoWebhookEndpointStore(ddb(), cfg.tableName),
      deliveries: new DynamoWebhookDeliveryStore(ddb(), cfg.tableName, now),
      slots: r.slots,
      queue,
      now,
    });
    expect(await fanOut(batch, ctx())).toEqual({
      batchItemFailures: [{ itemIdentifier: '1' }, { itemIdentifier: '2' }, { itemIdentifier: '3' }],
    });
    failing = false;
    expect(await fanOut(batch, ctx())).toEqual({ batchItemFailures: [] });
    expect(calls).toEqual([3, 3]);
  });
});
