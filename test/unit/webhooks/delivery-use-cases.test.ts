import type { EventReader, StoredEvent } from '../../../lib/cases/ports.js';
import { deliverWebhook, DISABLED_ENDPOINT_ERROR, EVENT_GONE_ERROR, type DeliverDeps } from '../../../lib/webhooks/deliver-webhook.js';
import { DISABLE_AFTER_MS } from '../../../lib/webhooks/endpoint-health.js';
import { deliveryJobFor, type EventToFanOut } from '../../../lib/webhooks/fan-out-event.js';
import type { OutgoingWebhook, SentWebhook } from '../../../lib/webhooks/ports.js';
import { RETRY_WINDOW_SECONDS } from '../../../lib/webhooks/retry-schedule.js';
import { deliveryKeyOf, MAX_ATTEMPT_ERROR_CHARS } from '../../../lib/webhooks/webhook-delivery.js';
import type { WebhookEndpoint } from '../../../lib/webhooks/webhook-endpoint.js';
import { fill, finish, MAX_JOBS_PER_ENDPOINT, STALE_PROMOTION_MS, sweepEndpoint } from '../../../lib/webhooks/delivery-slots.js';
import {
  MemoryDeliveryQueue,
  MemoryDeliverySlots,
  MemoryWebhookDeliveryStore,
  MemoryWebhookEndpointStore,
} from '../../support/memory-webhooks.js';
import { fanOutOnStream } from '../../support/fan-out-on-stream.js';

/** The delivery use cases over the memory ports (the same contract as the DynamoDB adapters), with a fixed clock. */
let clock = new Date('2026-03-01T09:00:00.000Z');
const now = () => clock;
const advance = (ms: number) => (clock = new Date(clock.getTime() + ms));

const COMPANY = 'co_partner';
let seq = 0;
function endpoint(overrides: Partial<WebhookEndpoint> = {}): WebhookEndpoint {
  seq++;
  return {
    endpointId: `we_${String(seq).padStart(22, '0')}`,
    companyId: COMPANY,
    mode: 'live',
    url: `https://hooks${seq}.partner.example/in`,
    events: ['*'],
    description: '',
    status: 'enabled',
    // Before the event, whatever the clock says now: the fan-out sends an endpoint nothing older than itself.
    createdAt: '2026-03-01T08:00:00.000Z',
    updatedAt: clock.toISOString(),
    version: 1,
    ...overrides,
  };
}

const event: EventToFanOut = {
  eventId: 'evt_0000000000000000000001',
  eventType: 'case.created',
  companyId: COMPANY,
  mode: 'live',
  createdAt: '2026-03-01T08:59:59.000Z',
};
const PAYLOAD = '{"id":"evt_0000000000000000000001","type":"case.created","data":{"object":{"id":"case_1"}}}';

class Events implements EventReader {
  readonly stored = new Map<string, StoredEvent>([
    [event.eventId, { event: JSON.parse(PAYLOAD) as StoredEvent['event'], payload: PAYLOAD, companyId: COMPANY, mode: 'live' }],
  ]);
  async get(mode: string, eventId: string) {
    const found = this.stored.get(eventId);
    return found && found.mode === mode ? found : undefined;
  }
}

/** A receiver answering each attempt with the next scripted status (the last one repeats). */
class ScriptedSender {
  readonly sent: OutgoingWebhook[] = [];
  constructor(private readonly statuses: number[]) {}
  async send(attempt: OutgoingWebhook): Promise<SentWebhook> {
    this.sent.push(attempt);
    const statusCode = this.statuses[Math.min(this.sent.length - 1, this.statuses.length - 1)]!;
    const delivered = statusCode >= 200 && statusCode < 300;
    return { at: clock.toISOString(), delivered, statusCode, durationMs: 12, ...(delivered ? {} : { error: `status ${statusCode}` }) };
  }
}

function world(statuses: number[] = [200]) {
  const endpoints = new MemoryWebhookEndpointStore();
  const deliveries = new MemoryWebhookDeliveryStore(now);
  const queue = new MemoryDeliveryQueue();
  const slots = new MemoryDeliverySlots(deliveries, now);
  const sender = new ScriptedSender(statuses);
  const deps: DeliverDeps = { endpoints, events: new Events(), deliveries, sender, now, random: () => 0.5 };
  return {
    endpoints,
    deliveries,
    queue,
    slots,
    sender,
    deps,
    fanOut: (e: EventToFanOut = event) => fanOutOnStream({ endpoints, deliveries, slots, queue, now }, e),
  };
}

const secret = { secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw4T8dBGl2ZfM=', createdAt: '2026-01-01T00:00:00.000Z' };

describe('fanning an event out to endpoints', () => {
  it('makes one job per enabled endpoint subscribed to the type, each a first attempt on the fast lane, even an endpoint with a failing run', async () => {
    const w = world();
    const healthy = endpoint({ events: ['case.created'] });
    const failing = endpoint({ failingSince: '2026-02-28T00:00:00.000Z' });
    w.endpoints.put(healthy);
    w.endpoints.put(failing);
    w.endpoints.put(endpoint({ events: ['case.updated'] }));
    w.endpoints.put(endpoint({ status: 'disabled' }));
    w.endpoints.put(endpoint({ mode: 'test' }));
    w.endpoints.put(endpoint({ companyId: 'co_other' }));
    await w.fanOut();
    expect(w.queue.sent.map((s) => [s.lane, s.job.endpointId])).toEqual([
      ['fast', healthy.endpointId],
      ['fast', failing.endpointId],
    ]);
    expect(w.queue.sent[0]!.job).toEqual(deliveryJobFor(event, healthy));
    expect(w.queue.sent[0]!.job).toMatchObject({ kind: 'scheduled', createdAt: event.createdAt });
    // The log shows both deliveries pending at once.
    const logged = await w.deliveries.listPage('live', healthy.endpointId, { limit: 10 });
    expect(logged.deliveries).toEqual([expect.objectContaining({ eventId: event.eventId, status: 'pending', attempts: [] })]);
  });

  it('a stream record seen twice keeps one delivery per endpoint, and is not enqueued again once its delivery was attempted', async () => {
    const w = world();
    const ep = endpoint();
    w.endpoints.put(ep, [secret]);
    await w.fanOut();
    await deliverWebhook(w.deps, w.queue.sent[0]!.job);
    await w.fanOut();
    expect(w.queue.sent).toHaveLength(1);
    // Taken off the waiting list again: nothing is left for a fill or the sweeper to queue.
    expect(await w.slots.claimWaiting('live', ep.endpointId, 100)).toEqual([]);
    expect((await w.deliveries.listPage('live', ep.endpointId, { limit: 10 })).deliveries).toHaveLength(1);
  });
});

describe('delivering one job', () => {
  async function started(w: ReturnType<typeof world>, ep = endpoint()) {
    w.endpoints.put(ep, [secret]);
    await w.fanOut();
    return w.queue.sent.at(-1)!.job;
  }

  it('sends the stored payload signed with the signing secrets, and records the delivery delivered', async () => {
    const w = world([204]);
    const job = await started(w);
    expect(await deliverWebhook(w.deps, job)).toMatchObject({ kind: 'done', reason: 'delivered' });
    expect(w.sender.sent).toEqual([{ url: expect.any(String), eventId: event.eventId, payload: PAYLOAD, secrets: [secret.secret] }]);
    expect(await w.deliveries.get(deliveryKeyOf(job))).toMatchObject({ status: 'delivered', attempts: [{ statusCode: 204 }] });
    // The same job again (SQS delivers at least once): nothing more is sent.
    expect(await deliverWebhook(w.deps, job)).toEqual({ kind: 'done', reason: 'settled' });
    expect(w.sender.sent).toHaveLength(1);
  });

  it('retries a failure after the schedule’s first delay, counted from the record, and sets failingSince on the endpoint', async () => {
    const w = world([503, 200]);
    const job = await started(w);
    const first = await deliverWebhook(w.deps, job);
    expect(first).toMatchObject({ kind: 'retry', delaySeconds: 5, lane: 'fast' });
    const stored = await w.deliveries.get(deliveryKeyOf(job));
    expect(stored).toMatchObject({ status: 'pending', nextAttemptAt: new Date(clock.getTime() + 5000).toISOString() });
    expect(w.endpoints.healthWrites).toEqual([
      { endpointId: job.endpointId, health: { status: 'enabled', failingSince: clock.toISOString(), lastFailureAt: clock.toISOString() } },
    ]);

    // Arriving early (a duplicate, or a delay SQS could not hold): it waits out the rest, nothing sent.
    advance(2000);
    expect(await deliverWebhook(w.deps, job)).toMatchObject({ kind: 'retry', delaySeconds: 3 });
    expect(w.sender.sent).toHaveLength(1);

    advance(3000);
    expect(await deliverWebhook(w.deps, job)).toMatchObject({ kind: 'done', reason: 'delivered' });
    expect(w.sender.sent.map((s) => s.eventId)).toEqual([event.eventId, event.eventId]);
    expect((await w.deliveries.get(deliveryKeyOf(job)))!.attempts.map((a) => a.statusCode)).toEqual([503, 200]);
    expect(w.endpoints.healthWrites.at(-1)!.health).toEqual({ status: 'enabled' });
  });

  it('a receiver whose failure is described at length (a certificate naming a hundred hosts) has it kept to 500 characters in the log and the result, so its retries never outgrow the record', async () => {
    const w = world([503]);
    const job = await started(w);
    const names = Array.from({ length: 100 }, (_, i) => `DNS:host-${i}.a-very-long-subdomain-name.partner-certificates.example`).join(', ');
    const long = `ERR_TLS_CERT_ALTNAME_INVALID: Hostname/IP does not match certificate's altnames: Host: hooks.partner.example. is not in the cert's altnames: ${names} 🔒`;
    expect(long.length).toBeGreaterThan(7_000);
    jest.spyOn(w.sender, 'send').mockResolvedValue({ at: clock.toISOString(), delivered: false, durationMs: 40, error: long });
    const result = await deliverWebhook(w.deps, job);
    const [attempt] = (await w.deliveries.get(deliveryKeyOf(job)))!.attempts;
    expect(Array.from(attempt!.error!)).toHaveLength(MAX_ATTEMPT_ERROR_CHARS);
    expect(attempt!.error).toBe(`${long.slice(0, MAX_ATTEMPT_ERROR_CHARS - 1)}…`);
    expect(result.attempt!.error).toBe(attempt!.error);
  });

  it('gives up after the retry window: the delivery is failed and the job is for the dead-letter queue', async () => {
    const w = world([500]);
    const job = await started(w);
    let result = await deliverWebhook(w.deps, job);
    for (let i = 0; i < 40 && result.kind === 'retry'; i++) {
      advance(result.delaySeconds * 1000);
      result = await deliverWebhook(w.deps, job);
    }
    expect(result.kind).toBe('give-up');
    const stored = (await w.deliveries.get(deliveryKeyOf(job)))!;
    expect(stored.status).toBe('failed');
    expect(stored.nextAttemptAt).toBeUndefined();
    const span = Date.parse(stored.attempts.at(-1)!.at) - Date.parse(stored.attempts[0]!.at);
    expect(span).toBeGreaterThanOrEqual(RETRY_WINDOW_SECONDS * 1000);
    expect(stored.attempts.length).toBe(17);
  });

  it('disables an endpoint whose every delivery failed for 5 days, once', async () => {
    const w = world([500]);
    // Its last failure 9 hours ago (a retry's delay): the run goes on.
    const ep = endpoint({
      failingSince: new Date(clock.getTime() - DISABLE_AFTER_MS).toISOString(),
      lastFailureAt: new Date(clock.getTime() - 9 * 3600_000).toISOString(),
    });
    const job = await started(w, ep);
    const result = await deliverWebhook(w.deps, job);
    expect(result).toMatchObject({ kind: 'retry', endpointDisabled: true });
    expect((await w.endpoints.get('live', COMPANY, ep.endpointId))!).toMatchObject({
      status: 'disabled',
      disabledReason: expect.any(String),
    });
  });

  it('one failed attempt, or one slow one, keeps the delivery on the fast lane; it moves to the slow lane only after sustained failure', async () => {
    const w = world([503]);
    const job = await started(w);
    const lanes: string[] = [];
    let result = await deliverWebhook(w.deps, job, 'fast');
    for (let i = 0; i < 6 && result.kind === 'retry'; i++) {
      lanes.push(result.lane);
      advance(result.delaySeconds * 1000);
      result = await deliverWebhook(w.deps, job, result.lane);
    }
    // Attempts at 0 s, 5 s, 20 s, 65 s (three or more failures, but within 2 minutes): fast; from 200 s on: slow.
    expect(lanes).toEqual(['fast', 'fast', 'fast', 'fast', 'slow', 'slow']);
  });

  it('an attempt that answers slowly but succeeds leaves the endpoint healthy and writes nothing to its health', async () => {
    const w = world();
    const job = await started(w);
    const slow = {
      send: async (): Promise<SentWebhook> => ({ at: clock.toISOString(), delivered: true, statusCode: 200, durationMs: 9_500 }),
    };
    expect(await deliverWebhook({ ...w.deps, sender: slow }, job, 'fast')).toMatchObject({ kind: 'done', reason: 'delivered' });
    expect(w.endpoints.healthWrites).toEqual([]);
    expect((await w.endpoints.get('live', COMPANY, job.endpointId))?.failingSince).toBeUndefined();
  });

  it('a redelivery leaves the endpoint’s health alone', async () => {
    const w = world([500]);
    const job = { ...(await started(w)), kind: 'redelivery' as const };
    await deliverWebhook(w.deps, job);
    expect(w.endpoints.healthWrites).toEqual([]);
  });

  it('a deleted endpoint gets nothing; a disabled one gets nothing and its delivery is failed with the reason', async () => {
    const w = world();
    const gone = await started(w);
    await w.endpoints.delete('live', COMPANY, gone.endpointId);
    expect(await deliverWebhook(w.deps, gone)).toEqual({ kind: 'done', reason: 'endpoint-gone' });

    const disabled = endpoint();
    const job = await started(w, disabled);
    w.endpoints.put({ ...disabled, status: 'disabled' }, [secret]);
    expect(await deliverWebhook(w.deps, job)).toEqual({ kind: 'done', reason: 'endpoint-disabled' });
    expect(w.sender.sent).toEqual([]);
    expect(await w.deliveries.get(deliveryKeyOf(job))).toMatchObject({
      status: 'failed',
      attempts: [{ durationMs: 0, error: DISABLED_ENDPOINT_ERROR }],
    });
  });

  it('never sends another company’s event, whatever the job says', async () => {
    const w = world();
    const ep = endpoint({ companyId: 'co_other' });
    w.endpoints.put(ep, [secret]);
    const job = { ...deliveryJobFor({ ...event, companyId: 'co_other' }, ep) };
    expect(await deliverWebhook(w.deps, job)).toEqual({ kind: 'done', reason: 'event-gone' });
    expect(w.sender.sent).toEqual([]);
    expect(await w.deliveries.get(deliveryKeyOf(job))).toMatchObject({ status: 'failed', attempts: [{ error: EVENT_GONE_ERROR }] });
  });

  it('two copies of one job handled at once: each may send, but one attempt is recorded and only one copy carries on', async () => {
    const w = world([503]);
    const job = await started(w);
    const results = await Promise.all([deliverWebhook(w.deps, job), deliverWebhook(w.deps, job)]);
    expect(results.map((r) => r.kind).sort()).toEqual(['done', 'retry']);
    expect(results.find((r) => r.kind === 'done')).toMatchObject({ reason: 'duplicate' });
    expect((await w.deliveries.get(deliveryKeyOf(job)))!.attempts).toHaveLength(1);
  });
});

describe('a fair share per endpoint', () => {
  const burst = (n: number, companyId = COMPANY): EventToFanOut[] =>
    Array.from({ length: n }, (_, i) => ({
      ...event,
      companyId,
      eventId: `evt_${String(i).padStart(22, '0')}`,
      createdAt: new Date(Date.parse(event.createdAt) + i).toISOString(),
    }));

  it(`a burst to one endpoint queues at most ${MAX_JOBS_PER_ENDPOINT} jobs; the rest wait outside the lanes, oldest first, each queued as one ends`, async () => {
    const w = world();
    const ep = endpoint();
    w.endpoints.put(ep, [secret]);
    for (const e of burst(20)) await w.fanOut(e);
    expect(w.queue.sent).toHaveLength(MAX_JOBS_PER_ENDPOINT);
    expect(w.queue.sent.map((s) => s.job.eventId)).toEqual(burst(MAX_JOBS_PER_ENDPOINT).map((e) => e.eventId));
    // Every delivery is in the log, pending, at once.
    expect((await w.deliveries.listPage('live', ep.endpointId, { limit: 50 })).deliveries).toHaveLength(20);

    // A job ends (delivered): its slot goes to the oldest waiting one, never beyond the cap.
    await finish({ slots: w.slots, queue: w.queue }, w.queue.sent[0]!.job);
    expect(w.queue.sent).toHaveLength(MAX_JOBS_PER_ENDPOINT + 1);
    expect(w.queue.sent.at(-1)!.job.eventId).toBe(burst(MAX_JOBS_PER_ENDPOINT + 1).at(-1)!.eventId);
    expect(await fill({ slots: w.slots, queue: w.queue }, 'live', ep.endpointId)).toBe(0);
  });

  it('a company with sixteen endpoints and a burst of 100 events holds at most sixteen times the cap in the lanes; another company’s first attempt is queued at once', async () => {
    const w = world();
    for (let i = 0; i < 16; i++) w.endpoints.put(endpoint(), [secret]);
    for (const e of burst(100)) await w.fanOut(e);
    expect(w.queue.sent).toHaveLength(16 * MAX_JOBS_PER_ENDPOINT);

    const other = endpoint({ companyId: 'co_other' });
    w.endpoints.put(other, [secret]);
    await w.fanOut({ ...event, companyId: 'co_other', eventId: 'evt_other000000000000000001' });
    expect(w.queue.sent.at(-1)!.job.endpointId).toBe(other.endpointId);
    expect(w.queue.sent).toHaveLength(16 * MAX_JOBS_PER_ENDPOINT + 1);
  });

  it('the sweeper releases a slot its ended delivery never gave back, queues a job promoted but never queued, and fills the free slots', async () => {
    const w = world();
    const ep = endpoint();
    w.endpoints.put(ep, [secret]);
    for (const e of burst(MAX_JOBS_PER_ENDPOINT + 2)) await w.fanOut(e);
    const first = w.queue.sent[0]!.job;
    // Settled (its event is not stored here: failed unsent), then the process stopped before it gave its slot back.
    expect(await deliverWebhook(w.deps, first)).toMatchObject({ kind: 'done' });
    // A fill that claimed a slot and stopped before queueing: the job is promoted on the list, never sent.
    await w.slots.release(deliveryKeyOf(w.queue.sent[1]!.job));
    const lost = await w.slots.claimWaiting('live', ep.endpointId, MAX_JOBS_PER_ENDPOINT);
    expect(lost).toHaveLength(1);
    const sentBefore = w.queue.sent.length;
    advance(STALE_PROMOTION_MS);
    expect(await sweepEndpoint({ slots: w.slots, queue: w.queue, deliveries: w.deliveries }, 'live', ep.endpointId)).toEqual({
      released: 1,
      requeued: 1,
      filled: 1,
    });
    expect(w.queue.sent.slice(sentBefore).map((s) => s.job.eventId)).toEqual([
      lost[0]!.eventId,
      burst(MAX_JOBS_PER_ENDPOINT + 2).at(-1)!.eventId,
    ]);
    // Nothing left waiting: every started record is queued.
    expect(await w.slots.claimWaiting('live', ep.endpointId, 100)).toEqual([]);
  });
});
