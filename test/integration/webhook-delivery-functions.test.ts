import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBStreamEvent, SQSEvent } from 'aws-lambda';
import { Webhook } from 'standardwebhooks';
import { buildDeliverWebhooksHandler, type DeliveryMessages } from '../../functions/deliver-webhooks.js';
import { buildFanOutWebhookEventsHandler } from '../../functions/fan-out-webhook-events.js';
import { eventItem } from '../../lib/adapters/dynamodb/event-items.js';
import { DynamoEventStore } from '../../lib/adapters/dynamodb/event-store.js';
import { keys } from '../../lib/adapters/dynamodb/table-keys.js';
import { DynamoWebhookDeliveryStore } from '../../lib/adapters/dynamodb/webhook-delivery-store.js';
import { DynamoWebhookDeliverySlots } from '../../lib/adapters/dynamodb/webhook-delivery-slots.js';
import { DynamoWebhookEndpointStore } from '../../lib/adapters/dynamodb/webhook-endpoint-store.js';
import { secretBoxOnce } from '../../lib/adapters/secrets/webhook-secret-key.js';
import { WebhookSender } from '../../lib/adapters/webhooks/webhook-sender.js';
import { buildCaseEvent } from '../../lib/cases/case-lifecycle.js';
import type { CaseView } from '../../lib/cases/case-record.js';
import type { Mode } from '../../lib/mode.js';
import { randomBase62 } from '../../lib/random-id.js';
import { config } from '../../lib/runtime/config.js';
import { metrics } from '../../lib/runtime/metrics.js';
import { DISABLED_ENDPOINT_ERROR } from '../../lib/webhooks/deliver-webhook.js';
import { DISABLE_AFTER_MS } from '../../lib/webhooks/endpoint-health.js';
import { redeliverEvent } from '../../lib/webhooks/redeliver-event.js';
import type { DeliveryLane } from '../../lib/webhooks/ports.js';
import { RETRY_WINDOW_SECONDS } from '../../lib/webhooks/retry-schedule.js';
import { generateEndpointSecret, type EndpointSecret } from '../../lib/webhooks/signature.js';
import { deliveryKeyOf, newDeliveryRecord, type DeliveryJob } from '../../lib/webhooks/webhook-delivery.js';
import { deliveryJobFor } from '../../lib/webhooks/fan-out-event.js';
import { buildSweepWebhookDeliveriesCore } from '../../functions/sweep-webhook-deliveries.js';
import type { WebhookEndpoint } from '../../lib/webhooks/webhook-endpoint.js';
import { ddb, lambdaContext } from '../support/fixtures.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * The event item as stored, but tagged so the local engines' own fan-out (which reads the table's
 * stream under every integration test) leaves it alone: these tests hand the stream record to their
 * own handler and count every request their receivers get. The delivery reads the item by its key,
 * whatever its tag.
 */
function outsideTheEngines(item: Parameters<typeof unmarshall>[0]): Record<string, unknown> {
  return { ...unmarshall(item), type: 'EVENT_OUTSIDE_THE_LOCAL_ENGINES' };
}

/**
 * The fan-out and delivery functions over DynamoDB Local, a real receiver on loopback and the
 * real sender (local-development option), with a recording stand-in for the SQS actions (the
 * engines' end-to-end tests run the real local SQS). The clock is fixed and moved by hand; the
 * sender stamps attempts with the same clock.
 */
let clock = new Date();
const now = () => clock;
const advance = (ms: number) => (clock = new Date(clock.getTime() + ms));

const FAST_ARN = 'arn:aws:sqs:eu-west-2:000000000000:webhook-deliveries';
const SLOW_ARN = 'arn:aws:sqs:eu-west-2:000000000000:webhook-deliveries-slow';

/** The queue actions the functions may take: send (with a delay). There is no way to hold a message in flight, nor to dead-letter one. */
class RecordingMessages implements DeliveryMessages {
  readonly enqueued: { lane: DeliveryLane; job: DeliveryJob; delaySeconds: number }[] = [];
  /** A faulty queue: every send fails (SQS unavailable). */
  failing = false;
  async enqueue(lane: DeliveryLane, jobs: readonly DeliveryJob[], delaySeconds = 0) {
    if (this.failing) throw new Error('SQS unavailable');
    for (const job of jobs) this.enqueued.push({ lane, job, delaySeconds });
  }
}

const receivers: WebhookReceiver[] = [];
afterAll(async () => Promise.all(receivers.map((r) => r.close())));

async function receiver(statuses: number[]) {
  let n = 0;
  const r = await startWebhookReceiver({
    handler: (_req, res) => res.writeHead(statuses[Math.min(n++, statuses.length - 1)]!).end(),
  });
  receivers.push(r);
  return r;
}

function rig() {
  const cfg = config();
  const endpoints = new DynamoWebhookEndpointStore(ddb(), cfg.tableName, secretBoxOnce(cfg));
  const deliveries = new DynamoWebhookDeliveryStore(ddb(), cfg.tableName, now);
  const messages = new RecordingMessages();
  const slots = new DynamoWebhookDeliverySlots(ddb(), cfg.tableName, now);
  const fanOut = buildFanOutWebhookEventsHandler({ endpoints, deliveries, slots, queue: messages, now });
  const deliver = buildDeliverWebhooksHandler({
    delivery: {
      endpoints,
      events: new DynamoEventStore(ddb(), cfg.tableName),
      deliveries,
      sender: new WebhookSender({ allowLocalDevelopment: true, now }),
      now,
      random: () => 0.5,
    },
    messages,
    slots,
    laneOf: (arn) => (arn === FAST_ARN ? 'fast' : 'slow'),
  });
  return { endpoints, deliveries, messages, slots, fanOut, deliver };
}

async function newEndpoint(r: ReturnType<typeof rig>, url: string, overrides: Partial<WebhookEndpoint> = {}, secrets?: EndpointSecret[]) {
  const endpoint: WebhookEndpoint = {
    endpointId: `we_${randomBase62(22)}`,
    companyId: `co_${randomBase62(12)}`,
    mode: 'live',
    url,
    events: ['*'],
    description: '',
    status: 'enabled',
    createdAt: clock.toISOString(),
    updatedAt: clock.toISOString(),
    version: 1,
    ...overrides,
  };
  const sealed = secrets ?? [{ secret: generateEndpointSecret(), createdAt: clock.toISOString() }];
  await r.endpoints.create(endpoint, sealed, 16);
  return { endpoint, secrets: sealed };
}

/** A case.created event stored as the outbox stores it, and the stream record of its INSERT. */
async function storedEvent(companyId: string, mode: Mode = 'live') {
  const caseId = `case_${randomBase62(22)}`;
  const view = { id: caseId, status: 'DRAFT', createdAt: clock.toISOString(), updatedAt: clock.toISOString() } as unknown as CaseView;
  const event = buildCaseEvent(view, clock.toISOString());
  const item = eventItem(event, companyId, mode);
  await ddb().send(new PutCommand({ TableName: config().tableName, Item: outsideTheEngines(item) }));
  const record: DynamoDBStreamEvent = {
    Records: [{ eventName: 'INSERT', dynamodb: { NewImage: item as never, SequenceNumber: '1' }, eventSource: 'aws:dynamodb' }],
  };
  return { event, record, payload: JSON.stringify(event) };
}

function sqsEvent(job: DeliveryJob, arn = FAST_ARN, receiptHandle = 'rh-1'): SQSEvent {
  return {
    Records: [
      {
        messageId: `m-${randomBase62(8)}`,
        receiptHandle,
        body: JSON.stringify(job),
        attributes: {} as never,
        messageAttributes: {},
        md5OfBody: '',
        eventSource: 'aws:sqs',
        eventSourceARN: arn,
        awsRegion: 'eu-west-2',
      },
    ],
  };
}

const ctx = () => lambdaContext() as never;

describe('the webhook fan-out and delivery functions', () => {
  // Each test makes a few dozen requests to DynamoDB Local (the slots and waiting lists among them); on a
  // machine shared with other suites the first one, run while the local stores warm up, can pass 5 s.
  jest.setTimeout(20_000);
  beforeEach(() => {
    clock = new Date(Math.floor(Date.now() / 1000) * 1000);
  });

  it('a receiver failing then succeeding: the same webhook-id twice, two attempts in the log, one failure keeps the retry on the fast lane', async () => {
    const r = rig();
    const target = await receiver([503, 200]);
    const { endpoint, secrets } = await newEndpoint(r, target.url);
    const { event, record, payload } = await storedEvent(endpoint.companyId);

    expect(await r.fanOut(record, ctx())).toEqual({ batchItemFailures: [] });
    expect(r.messages.enqueued).toHaveLength(1);
    const { job, lane } = r.messages.enqueued[0]!;
    expect(lane).toBe('fast');
    expect(await r.deliveries.get(deliveryKeyOf(job))).toMatchObject({ status: 'pending', attempts: [] });

    expect(await r.deliver(sqsEvent(job), ctx())).toEqual({ batchItemFailures: [] });
    expect(r.messages.enqueued[1]).toEqual({ lane: 'fast', job, delaySeconds: 5 });
    expect(await r.deliveries.get(deliveryKeyOf(job))).toMatchObject({ status: 'pending', attempts: [{ statusCode: 503 }] });

    advance(5000);
    expect(await r.deliver(sqsEvent(job), ctx())).toEqual({ batchItemFailures: [] });
    expect(target.received.map((q) => q.headers['webhook-id'])).toEqual([event.id, event.id]);
    expect(target.received.map((q) => q.body)).toEqual([payload, payload]);
    const stored = (await r.deliveries.get(deliveryKeyOf(job)))!;
    expect(stored.status).toBe('delivered');
    expect(stored.attempts.map((a) => a.statusCode)).toEqual([503, 200]);
    // Verified by the Standard Webhooks library as a partner would.
    expect(new Webhook(secrets[0]!.secret).verify(target.received[1]!.body, target.received[1]!.headers)).toEqual(event);
  });

  it('signs with both secrets during a rotation: each verifies on its own with the library', async () => {
    const r = rig();
    const target = await receiver([200]);
    const previous = {
      secret: generateEndpointSecret(),
      createdAt: new Date(clock.getTime() - 86_400_000).toISOString(),
      retiredAt: new Date(clock.getTime() - 3_600_000).toISOString(),
    };
    const current = { secret: generateEndpointSecret(), createdAt: previous.retiredAt };
    const { endpoint } = await newEndpoint(r, target.url, {}, [current, previous]);
    const { record } = await storedEvent(endpoint.companyId);
    await r.fanOut(record, ctx());
    await r.deliver(sqsEvent(r.messages.enqueued[0]!.job), ctx());
    const [got] = target.received;
    expect(got!.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    for (const secret of [current.secret, previous.secret]) expect(() => new Webhook(secret).verify(got!.body, got!.headers)).not.toThrow();
    expect(() => new Webhook(generateEndpointSecret()).verify(got!.body, got!.headers)).toThrow();
  });

  it('the same job twice: one delivery, one attempt, one request', async () => {
    const r = rig();
    const target = await receiver([200]);
    const { endpoint } = await newEndpoint(r, target.url);
    const { record } = await storedEvent(endpoint.companyId);
    await r.fanOut(record, ctx());
    // The job delivered, then the stream record replayed and the same message received again.
    const job = r.messages.enqueued[0]!.job;
    await r.deliver(sqsEvent(job), ctx());
    await r.fanOut(record, ctx());
    await r.deliver(sqsEvent(job), ctx());
    expect(r.messages.enqueued).toHaveLength(1);
    expect(target.received).toHaveLength(1);
    const log = await r.deliveries.listPage('live', endpoint.endpointId, { limit: 10 });
    expect(log.deliveries).toEqual([
      expect.objectContaining({ status: 'delivered', attempts: [expect.objectContaining({ statusCode: 200 })] }),
    ]);
  });

  it('a deleted endpoint is sent nothing; a disabled one is sent nothing and its delivery is failed with the reason', async () => {
    const r = rig();
    const target = await receiver([200]);
    const deleted = await newEndpoint(r, target.url);
    const disabled = await newEndpoint(r, target.url);
    const first = await storedEvent(deleted.endpoint.companyId);
    const second = await storedEvent(disabled.endpoint.companyId);
    await r.fanOut(first.record, ctx());
    await r.fanOut(second.record, ctx());
    const [deletedJob, disabledJob] = r.messages.enqueued.map((e) => e.job);
    await r.endpoints.delete('live', deleted.endpoint.companyId, deleted.endpoint.endpointId);
    await r.endpoints.update({ ...disabled.endpoint, status: 'disabled', version: 2 }, 1, undefined);

    expect(await r.deliver(sqsEvent(deletedJob!), ctx())).toEqual({ batchItemFailures: [] });
    expect(await r.deliver(sqsEvent(disabledJob!), ctx())).toEqual({ batchItemFailures: [] });
    expect(target.received).toEqual([]);
    expect(await r.deliveries.get(deliveryKeyOf(disabledJob!))).toMatchObject({
      status: 'failed',
      attempts: [{ durationMs: 0, error: DISABLED_ENDPOINT_ERROR }],
    });
  });

  it('gives up after 3 days of failures: the delivery is failed, counted as given up, and nothing is sent, so a faulty queue loses nothing', async () => {
    const r = rig();
    const target = await receiver([500]);
    const { endpoint } = await newEndpoint(r, target.url);
    const { record } = await storedEvent(endpoint.companyId);
    await r.fanOut(record, ctx());
    const job = r.messages.enqueued[0]!.job;
    await r.deliver(sqsEvent(job), ctx());
    // A retry is a new message with a delay; the one received succeeds (nothing is kept in flight).
    advance(5000);
    expect(await r.deliver(sqsEvent(job), ctx())).toEqual({ batchItemFailures: [] });
    expect(r.messages.enqueued.at(-1)).toEqual({ lane: 'fast', job, delaySeconds: 15 });

    advance(RETRY_WINDOW_SECONDS * 1000);
    // The give-up needs no queue: with every send failing, the message is still settled, once.
    r.messages.failing = true;
    const sent = r.messages.enqueued.length;
    const counted = jest.spyOn(metrics, 'addMetric');
    try {
      expect(await r.deliver(sqsEvent(job, SLOW_ARN), ctx())).toEqual({ batchItemFailures: [] });
      // Counted apart from processing failures (the dead-letter queue holds only those).
      expect(counted.mock.calls.map(([name]) => name)).toEqual(['WebhookAttemptFailed', 'WebhookDeliveryGivenUp']);
    } finally {
      counted.mockRestore();
    }
    expect(r.messages.enqueued).toHaveLength(sent);
    const stored = (await r.deliveries.get(deliveryKeyOf(job)))!;
    expect(stored.status).toBe('failed');
    expect(stored.attempts).toHaveLength(3);
    // Given up: its slot is free again.
    expect(await r.slots.holders('live', endpoint.endpointId)).toEqual([]);
  });

  it('a retry longer than 15 minutes is never held in flight: it hops as new messages of at most 900 s until due, nothing sent between', async () => {
    const r = rig();
    const target = await receiver([500]);
    const { endpoint } = await newEndpoint(r, target.url);
    const { record } = await storedEvent(endpoint.companyId);
    await r.fanOut(record, ctx());
    const job = r.messages.enqueued[0]!.job;
    // Failures at the schedule's delays (5 s, 15 s, 45 s, 135 s, 405 s) until the next one is 1,215 s away.
    let received = { lane: 'fast' as DeliveryLane, job, delaySeconds: 0 };
    for (let attempt = 1; attempt <= 6; attempt++) {
      advance(received.delaySeconds * 1000);
      expect(await r.deliver(sqsEvent(received.job, received.lane === 'fast' ? FAST_ARN : SLOW_ARN), ctx())).toEqual({
        batchItemFailures: [],
      });
      received = r.messages.enqueued.at(-1)!;
    }
    expect(target.received).toHaveLength(6);
    const due = (await r.deliveries.get(deliveryKeyOf(job)))!.nextAttemptAt!;
    expect(Date.parse(due) - clock.getTime()).toBe(1_215_000);
    // Past sustained failure: the slow lane, SQS's longest delay, and the job carries its due time.
    expect(received).toEqual({ lane: 'slow', job: { ...job, dueAt: due }, delaySeconds: 900 });

    // Received after 900 s: a hop, re-sent for the rest, nothing read or sent.
    advance(900_000);
    expect(await r.deliver(sqsEvent(received.job, SLOW_ARN), ctx())).toEqual({ batchItemFailures: [] });
    expect(r.messages.enqueued.at(-1)).toEqual({ lane: 'slow', job: { ...job, dueAt: due }, delaySeconds: 315 });
    expect(target.received).toHaveLength(6);

    advance(315_000);
    await r.deliver(sqsEvent(r.messages.enqueued.at(-1)!.job, SLOW_ARN), ctx());
    expect(target.received).toHaveLength(7);
    expect(r.messages.enqueued.every((m) => m.delaySeconds <= 900)).toBe(true);
  });

  it('endpoint health: failingSince set by a failure and cleared by a success; disabled after 5 days of failures', async () => {
    const r = rig();
    const flaky = await receiver([500, 200]);
    const { endpoint } = await newEndpoint(r, flaky.url);
    const read = async (e: WebhookEndpoint) =>
      (await ddb().send(new GetCommand({ TableName: config().tableName, Key: keys.webhookEndpoint(e.mode, e.companyId, e.endpointId) })))
        .Item!;
    const first = await storedEvent(endpoint.companyId);
    await r.fanOut(first.record, ctx());
    const job = r.messages.enqueued[0]!.job;
    const failedAt = clock.toISOString();
    await r.deliver(sqsEvent(job), ctx());
    expect((await read(endpoint)).failingSince).toBe(failedAt);
    // A new event for an endpoint with one failure is a first attempt on the fast lane like any other.
    const second = await storedEvent(endpoint.companyId);
    await r.fanOut(second.record, ctx());
    expect(r.messages.enqueued.at(-1)).toMatchObject({ lane: 'fast', delaySeconds: 0 });
    advance(5000);
    await r.deliver(sqsEvent(job), ctx());
    expect((await read(endpoint)).failingSince).toBeUndefined();

    const dead = await receiver([500]);
    // Failing for nearly 5 days, its last failure 9 hours ago (a retry's delay: the run goes on).
    const failing = await newEndpoint(r, dead.url, {
      failingSince: new Date(clock.getTime() - DISABLE_AFTER_MS + 1000).toISOString(),
      lastFailureAt: new Date(clock.getTime() - 9 * 3600_000).toISOString(),
    });
    const third = await storedEvent(failing.endpoint.companyId);
    await r.fanOut(third.record, ctx());
    const deadJob = r.messages.enqueued.at(-1)!.job;
    await r.deliver(sqsEvent(deadJob, SLOW_ARN), ctx());
    expect((await read(failing.endpoint)).status).toBe('enabled');
    advance(5000);
    await r.deliver(sqsEvent(deadJob, SLOW_ARN), ctx());
    expect(await read(failing.endpoint)).toMatchObject({ status: 'disabled', disabledReason: expect.stringContaining('5 days') });
  });

  it('a batch of deliveries reads each endpoint and each event once, and a receiver that answers slowly but well writes nothing to its health', async () => {
    const cfg = config();
    const r = rig();
    // Answers every delivery after 300 ms: slow, well within the timeout.
    const slow = await startWebhookReceiver({ handler: (_req, res) => void setTimeout(() => res.writeHead(200).end(), 300) });
    receivers.push(slow);
    const fast = await receiver([200]);
    const first = await newEndpoint(r, slow.url);
    await newEndpoint(r, fast.url, { companyId: first.endpoint.companyId });
    const events = await Promise.all([1, 2, 3].map(() => storedEvent(first.endpoint.companyId)));
    for (const e of events) await r.fanOut(e.record, ctx());
    const jobs = r.messages.enqueued.map((e) => e.job);
    expect(jobs).toHaveLength(6);

    const endpointStore = new DynamoWebhookEndpointStore(ddb(), cfg.tableName, secretBoxOnce(cfg));
    const eventStore = new DynamoEventStore(ddb(), cfg.tableName);
    const reads = { endpoints: 0, events: 0 };
    const healthWrites: { endpointId: string; failingSince?: string }[] = [];
    const deliver = buildDeliverWebhooksHandler({
      delivery: {
        endpoints: {
          getWithSecrets: (...args) => (reads.endpoints++, endpointStore.getWithSecrets(...args)),
          recordHealth: (...args) => (
            healthWrites.push({ endpointId: args[2], failingSince: args[3].failingSince }),
            endpointStore.recordHealth(...args)
          ),
        },
        events: { get: (...args) => (reads.events++, eventStore.get(...args)) },
        deliveries: r.deliveries,
        sender: new WebhookSender({ allowLocalDevelopment: true, now }),
        now,
        random: () => 0.5,
      },
      messages: r.messages,
      slots: r.slots,
      laneOf: () => 'fast',
    });
    const batch: SQSEvent = { Records: jobs.map((job, i) => sqsEvent(job, FAST_ARN, `rh-${i}`).Records[0]!) };
    expect(await deliver(batch, ctx())).toEqual({ batchItemFailures: [] });

    expect(slow.received).toHaveLength(3);
    expect(fast.received).toHaveLength(3);
    expect(reads).toEqual({ endpoints: 2, events: 3 });
    // A slow answer is not a failure: no failing run started (nor a lane changed) for either endpoint.
    expect(healthWrites).toEqual([]);
    const stored = await endpointStore.get('live', first.endpoint.companyId, first.endpoint.endpointId);
    expect(stored?.failingSince).toBeUndefined();
  });

  it('a failure and then a success to one endpoint in one batch leave it healthy, even when the failure’s write is the slower one', async () => {
    const cfg = config();
    const r = rig();
    // The first request to arrive is refused at once; the second is answered 200 a little later.
    let arrivals = 0;
    const flaky = await startWebhookReceiver({
      handler: (_req, res) => (arrivals++ === 0 ? res.writeHead(500).end() : void setTimeout(() => res.writeHead(200).end(), 100)),
    });
    receivers.push(flaky);
    const { endpoint } = await newEndpoint(r, flaky.url);
    const events = await Promise.all([1, 2].map(() => storedEvent(endpoint.companyId)));
    for (const e of events) await r.fanOut(e.record, ctx());
    const jobs = r.messages.enqueued.map((e) => e.job);
    expect(jobs).toHaveLength(2);

    // The store takes 300 ms to start a failing run and none to end one: the writes must still land in the order asked.
    const endpointStore = new DynamoWebhookEndpointStore(ddb(), cfg.tableName, secretBoxOnce(cfg));
    const healthWrites: (string | undefined)[] = [];
    const deliver = buildDeliverWebhooksHandler({
      delivery: {
        endpoints: {
          getWithSecrets: (...args) => endpointStore.getWithSecrets(...args),
          recordHealth: async (...args) => {
            healthWrites.push(args[3].failingSince);
            if (args[3].failingSince !== undefined) await new Promise((resolve) => setTimeout(resolve, 300));
            return endpointStore.recordHealth(...args);
          },
        },
        events: new DynamoEventStore(ddb(), cfg.tableName),
        deliveries: r.deliveries,
        sender: new WebhookSender({ allowLocalDevelopment: true, now }),
        now,
        random: () => 0.5,
      },
      messages: r.messages,
      slots: r.slots,
      laneOf: () => 'fast',
    });
    const batch: SQSEvent = { Records: jobs.map((job, i) => sqsEvent(job, FAST_ARN, `rh-${i}`).Records[0]!) };
    expect(await deliver(batch, ctx())).toEqual({ batchItemFailures: [] });

    expect(flaky.received).toHaveLength(2);
    expect(healthWrites).toStrictEqual([clock.toISOString(), undefined]);
    const stored = await endpointStore.get('live', endpoint.companyId, endpoint.endpointId);
    expect(stored).toMatchObject({ status: 'enabled' });
    expect(stored?.failingSince).toBeUndefined();
  });

  it('a stream record replayed after an endpoint was created sends it nothing older than itself; redeliver still can', async () => {
    const r = rig();
    const target = await receiver([200]);
    const earlier = await receiver([200]);
    const before = await newEndpoint(r, earlier.url);
    // The event is written, then an hour later the company adds an endpoint, and the stream is read again (a restart).
    const { event, record } = await storedEvent(before.endpoint.companyId);
    advance(3_600_000);
    const after = await newEndpoint(r, target.url, { companyId: before.endpoint.companyId });
    expect(await r.fanOut(record, ctx())).toEqual({ batchItemFailures: [] });
    expect(r.messages.enqueued.map((e) => e.job.endpointId)).toEqual([before.endpoint.endpointId]);
    expect((await r.deliveries.listPage('live', after.endpoint.endpointId, { limit: 10 })).deliveries).toEqual([]);

    // A partner who wants it asks for it: the redelivery goes out to the newer endpoint.
    const caller = { companyId: after.endpoint.companyId, mode: 'live' as const };
    const events = new DynamoEventStore(ddb(), config().tableName);
    const queued = await redeliverEvent(
      { endpoints: r.endpoints, events, deliveries: r.deliveries, queue: r.messages, now },
      caller,
      after.endpoint.endpointId,
      {
        eventId: event.id,
      },
    );
    const job = r.messages.enqueued.at(-1)!.job;
    expect(job).toMatchObject({ kind: 'redelivery', endpointId: after.endpoint.endpointId, eventId: event.id });
    expect(await r.deliver(sqsEvent(job), ctx())).toEqual({ batchItemFailures: [] });
    expect(target.received.map((q) => q.headers['webhook-id'])).toEqual([event.id]);
    expect(await r.deliveries.get(deliveryKeyOf(job))).toMatchObject({ deliveryId: queued.id, status: 'delivered' });
  });

  it('a fan-out to an endpoint with free slots queues its job without reading the waiting list: four table requests before the send', async () => {
    const cfg = config();
    const r = rig();
    const target = await receiver([200]);
    const { endpoint } = await newEndpoint(r, target.url);
    const { record } = await storedEvent(endpoint.companyId);
    // The fan-out's table requests, in the order sent, up to the SendMessageBatch.
    const sent: string[] = [];
    const client = ddb();
    const counting = {
      send: (command: { constructor: { name: string } }, options?: unknown) => {
        if (r.messages.enqueued.length === 0) sent.push(command.constructor.name);
        return client.send(command as never, options as never);
      },
    } as unknown as typeof client;
    const fanOut = buildFanOutWebhookEventsHandler({
      endpoints: new DynamoWebhookEndpointStore(counting, cfg.tableName),
      deliveries: new DynamoWebhookDeliveryStore(counting, cfg.tableName, now),
      slots: new DynamoWebhookDeliverySlots(counting, cfg.tableName, now),
      queue: r.messages,
      now,
    });
    expect(await fanOut(record, ctx())).toEqual({ batchItemFailures: [] });
    expect(r.messages.enqueued).toHaveLength(1);
    // The endpoints, the job listed, its record started, its slot claimed: no Query of the waiting list.
    expect(sent).toEqual(['QueryCommand', 'PutCommand', 'PutCommand', 'TransactWriteCommand']);
  });

  it('a stream batch of twelve events to one endpoint lists its twelve waiting jobs in one request, not one write per job', async () => {
    const cfg = config();
    const r = rig();
    const target = await receiver([200]);
    const { endpoint } = await newEndpoint(r, target.url);
    const events = [];
    for (let i = 0; i < 12; i++) events.push(await storedEvent(endpoint.companyId));
    const sent: string[] = [];
    const client = ddb();
    const counting = {
      send: (command: { constructor: { name: string } }, options?: unknown) => {
        if (r.messages.enqueued.length === 0) sent.push(command.constructor.name);
        return client.send(command as never, options as never);
      },
    } as unknown as typeof client;
    const fanOut = buildFanOutWebhookEventsHandler({
      endpoints: new DynamoWebhookEndpointStore(counting, cfg.tableName),
      deliveries: new DynamoWebhookDeliveryStore(counting, cfg.tableName, now),
      slots: new DynamoWebhookDeliverySlots(counting, cfg.tableName, now),
      queue: r.messages,
      now,
    });
    expect(await fanOut({ Records: events.flatMap((e) => e.record.Records) }, ctx())).toEqual({ batchItemFailures: [] });
    // The endpoints; the 12 jobs listed (one transaction; it was 12 PutItems); their records started; the cap's 8 claimed.
    expect(sent).toEqual(['QueryCommand', 'TransactWriteCommand', 'TransactWriteCommand', 'TransactWriteCommand']);
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

  it('a burst’s ended jobs are followed by the oldest waiting ones, the endpoint’s waiting list read once for all eight, never past its cap', async () => {
    const cfg = config();
    const r = rig();
    const target = await receiver([200]);
    const { endpoint } = await newEndpoint(r, target.url);
    const events = [];
    for (let i = 0; i < 30; i++) events.push(await storedEvent(endpoint.companyId));
    expect(await r.fanOut({ Records: events.flatMap((e) => e.record.Records) }, ctx())).toEqual({ batchItemFailures: [] });
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
    // The delivery function's reads of the waiting list (the slots' Queries), each job in a batch of its own.
    const queries: string[] = [];
    const client = ddb();
    const counting = {
      send: (command: { constructor: { name: string } }, options?: unknown) => {
        if (command.constructor.name === 'QueryCommand') queries.push(command.constructor.name);
        return client.send(command as never, options as never);
      },
    } as unknown as typeof client;
    const deliver = buildDeliverWebhooksHandler({
      delivery: {
        endpoints: r.endpoints,
        events: new DynamoEventStore(ddb(), cfg.tableName),
        deliveries: r.deliveries,
        sender: new WebhookSender({ allowLocalDevelopment: true, now }),
        now,
      },
      messages: r.messages,
      slots: new DynamoWebhookDeliverySlots(counting, cfg.tableName, now),
      laneOf: () => 'fast',
    });
    for (const job of first) expect(await deliver(sqsEvent(job), ctx())).toEqual({ batchItemFailures: [] });
    expect(target.received).toHaveLength(8);
    // Each ended job's slot went to the oldest waiting job, in order; one read served all eight (it was one per job).
    expect(r.messages.enqueued.slice(8).map((e) => e.job.deliveryId)).toEqual(oldest);
    expect(queries).toHaveLength(1);
    const holders = (await r.slots.holders('live', endpoint.endpointId)).map((k) => k.deliveryId);
    expect(holders.sort()).toEqual([...oldest].sort());
  });

  it('the sweeper queues a delivery started but never queued, and gives back a slot its delivered job never released', async () => {
    const r = rig();
    const target = await receiver([200]);
    const { endpoint } = await newEndpoint(r, target.url);
    // A fan-out that stopped after starting the record: the job on the waiting list, its record pending, no message.
    const { event } = await storedEvent(endpoint.companyId);
    const stranded = deliveryJobFor(
      { eventId: event.id, eventType: event.type, companyId: endpoint.companyId, mode: 'live', createdAt: event.createdAt },
      endpoint,
    );
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
    const fanOut = buildFanOutWebhookEventsHandler({
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
