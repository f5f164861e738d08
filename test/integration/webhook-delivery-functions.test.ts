import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSEvent } from 'aws-lambda';
import { Webhook } from 'standardwebhooks';
import { ANSWER_BEFORE_TIMEOUT_MS, buildDeliverWebhooksHandler } from '../../functions/deliver-webhooks.js';
import { DynamoEventStore } from '../../lib/adapters/dynamodb/event-store.js';
import { keys } from '../../lib/adapters/dynamodb/table-keys.js';
import { DynamoWebhookEndpointStore } from '../../lib/adapters/dynamodb/webhook-endpoint-store.js';
import { secretBoxOnce } from '../../lib/adapters/secrets/webhook-secret-key.js';
import { WebhookSender } from '../../lib/adapters/webhooks/webhook-sender.js';
import { config } from '../../lib/runtime/config.js';
import { metrics } from '../../lib/runtime/metrics.js';
import { DISABLED_ENDPOINT_ERROR } from '../../lib/webhooks/deliver-webhook.js';
import { DISABLE_AFTER_MS } from '../../lib/webhooks/endpoint-health.js';
import { MAX_JOBS_PER_ENDPOINT } from '../../lib/webhooks/delivery-slots.js';
import { redeliverEvent } from '../../lib/webhooks/redeliver-event.js';
import type { DeliveryLane } from '../../lib/webhooks/ports.js';
import { RETRY_WINDOW_SECONDS } from '../../lib/webhooks/retry-schedule.js';
import { generateEndpointSecret } from '../../lib/webhooks/signature.js';
import { deliveryKeyOf } from '../../lib/webhooks/webhook-delivery.js';
import type { WebhookEndpoint } from '../../lib/webhooks/webhook-endpoint.js';
import { ddb } from '../support/fixtures.js';
import { ctx, FAST_ARN, SLOW_ARN, sqsEvent, webhookDeliveryRig } from '../support/webhook-delivery-rig.js';
import { startWebhookReceiver } from '../support/webhook-receiver.js';
import { lambdaContext } from '../../infra/local/lambda-events.js';

/**
 * The fan-out and delivery functions' behaviour: deliveries, retries, signatures, endpoint health,
 * replays (the rig: test/support/webhook-delivery-rig.ts). Their table requests, fair share and
 * sweeper: webhook-delivery-requests.test.ts. The clock is fixed and moved by hand.
 */
let clock = new Date();
const now = () => clock;
const advance = (ms: number) => (clock = new Date(clock.getTime() + ms));
const { receivers, receiver, rig, newEndpoint, storedEvent } = webhookDeliveryRig(now);

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

  it('a deleted endpoint with jobs waiting beyond its slots: each job that ends gives its slot back and queues nothing more, so its waiting list is never drained through the lanes', async () => {
    const r = rig();
    const target = await receiver([200]);
    const { endpoint } = await newEndpoint(r, target.url);
    for (let i = 0; i < MAX_JOBS_PER_ENDPOINT + 4; i++) await r.fanOut((await storedEvent(endpoint.companyId)).record, ctx());
    // Eight queued holding the endpoint's slots, four waiting outside the lanes.
    expect(r.messages.enqueued).toHaveLength(MAX_JOBS_PER_ENDPOINT);
    const queued = r.messages.enqueued.map((e) => e.job);
    await r.endpoints.delete('live', endpoint.companyId, endpoint.endpointId);

    const batch = { Records: queued.slice(0, 3).flatMap((job) => sqsEvent(job).Records) };
    expect(await r.deliver(batch, ctx())).toEqual({ batchItemFailures: [] });
    expect(target.received).toEqual([]);
    expect(r.messages.enqueued).toHaveLength(MAX_JOBS_PER_ENDPOINT);
    expect(await r.slots.holders('live', endpoint.endpointId)).toHaveLength(MAX_JOBS_PER_ENDPOINT - 3);
  });

  it('a batch answers before the function times out: a job still waiting on a slow receiver is retried, the job beside it that was delivered is not', async () => {
    const r = rig();
    const quick = await receiver([200]);
    // Holds its answer until the test lets it go: far past this invocation's time.
    let answerSlow!: () => void;
    const held = new Promise<void>((resolve) => (answerSlow = resolve));
    const slow = await startWebhookReceiver({ handler: (_req, res) => void held.then(() => res.writeHead(200).end()) });
    receivers.push(slow);
    const a = await newEndpoint(r, quick.url);
    const b = await newEndpoint(r, slow.url);
    await r.fanOut((await storedEvent(a.endpoint.companyId)).record, ctx());
    await r.fanOut((await storedEvent(b.endpoint.companyId)).record, ctx());
    const [jobA, jobB] = r.messages.enqueued.map((e) => e.job);
    const batch = { Records: [jobA!, jobB!].flatMap((job) => sqsEvent(job).Records) };
    const timeoutMs = 8_000;
    const started = Date.now();
    // It answers ANSWER_BEFORE_TIMEOUT_MS before its timeout, never at Lambda's timeout (an error: the whole batch back).
    const answer = await r.deliver(batch, lambdaContext({ timeoutMs }) as never);
    expect(Date.now() - started).toBeLessThan(timeoutMs - ANSWER_BEFORE_TIMEOUT_MS / 2);
    expect(answer).toEqual({ batchItemFailures: [{ itemIdentifier: batch.Records[1]!.messageId }] });
    expect(await r.deliveries.get(deliveryKeyOf(jobA!))).toMatchObject({ status: 'delivered' });
    // The slow one goes on and is recorded; its message, reported failed, comes back and finds it settled.
    answerSlow();
    const settledB = async () => (await r.deliveries.get(deliveryKeyOf(jobB!)))?.status === 'delivered';
    const until = Date.now() + 10_000;
    while (!(await settledB()) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await settledB()).toBe(true);
    // And hands its slot on (nothing waits: given back) before the test ends.
    while ((await r.slots.holders('live', b.endpoint.endpointId)).length > 0 && Date.now() < until)
      await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await r.slots.holders('live', b.endpoint.endpointId)).toEqual([]);
  });

  it('counts a test endpoint’s attempts apart from live ones, on metrics no alarm reads', async () => {
    const r = rig();
    const failing = await receiver([500]);
    const healthy = await receiver([204]);
    const test = await newEndpoint(r, failing.url, { mode: 'test' });
    const live = await newEndpoint(r, healthy.url);
    await r.fanOut((await storedEvent(test.endpoint.companyId, 'test')).record, ctx());
    await r.fanOut((await storedEvent(live.endpoint.companyId)).record, ctx());
    const jobs = r.messages.enqueued.map((m) => m.job);
    expect(jobs.map((j) => j.mode).sort()).toEqual(['live', 'test']);
    const counted = jest.spyOn(metrics, 'addMetric');
    try {
      for (const job of jobs) await r.deliver(sqsEvent(job), ctx());
      // The test endpoint's failure never reaches WebhookAttemptFailed, which the failure-rate alarm reads.
      expect(counted.mock.calls.map(([name]) => name).sort()).toEqual(['WebhookDelivered', 'WebhookTestAttemptFailed']);
    } finally {
      counted.mockRestore();
    }
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
      { endpoints: r.endpoints, events, deliveries: r.deliveries, slots: r.slots, queue: r.messages, now },
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
});
