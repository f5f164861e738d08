import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBStreamEvent, SQSRecord } from 'aws-lambda';
import { buildFanOutWebhookEventsCore } from '../../../functions/fan-out-webhook-events.js';
import { buildPlanWebhookDeliveriesCore, MIN_TIME_FOR_A_RETRY_MS } from '../../../functions/plan-webhook-deliveries.js';
import { ITEM_TYPES } from '../../../lib/adapters/dynamodb/table-keys.js';
import { logger } from '../../../lib/runtime/logger.js';
import { metrics } from '../../../lib/runtime/metrics.js';
import {
  deliveryJobFor,
  INLINE_DELIVERIES_PER_BATCH,
  INLINE_DELIVERIES_PER_SLICE,
  MAX_DELIVERIES_PER_STEP,
  MIN_TIME_FOR_A_STEP_MS,
  planSlice,
  slicesOf,
  type EventToFanOut,
} from '../../../lib/webhooks/fan-out-event.js';
import { MAX_EVENTS_PER_SLICE, tenantOf, type PlanningSlice } from '../../../lib/webhooks/planning-slice.js';
import { newDeliveryRecord } from '../../../lib/webhooks/webhook-delivery.js';
import type { WebhookEndpoint } from '../../../lib/webhooks/webhook-endpoint.js';
import {
  MemoryDeliveryQueue,
  MemoryDeliverySlots,
  MemoryWebhookDeliveryStore,
  MemoryWebhookEndpointStore,
} from '../../support/memory-webhooks.js';

/**
 * The fan-out plans each company-and-mode's small slice of a stream batch itself and forwards the
 * large ones to the planning queue (a fair queue grouped by that tenant), where the planning worker
 * plans each slice on its own (docs/webhooks-design.md, "Planning: at once or on the fair queue").
 */
const AT = '2026-03-01T09:00:00.000Z';
const event = (companyId: string, n: number, mode: 'live' | 'test' = 'live'): EventToFanOut => ({
  eventId: `evt_${companyId}_${String(n).padStart(4, '0')}`,
  eventType: 'case.created',
  companyId,
  mode,
  createdAt: AT,
});
const endpoint = (companyId: string, n: number): WebhookEndpoint => ({
  endpointId: `we_${companyId}_${String(n).padStart(2, '0')}`,
  companyId,
  mode: 'live',
  url: 'https://example.com/hook',
  events: ['*'],
  description: '',
  status: 'enabled',
  createdAt: '2026-02-01T09:00:00.000Z',
  updatedAt: '2026-02-01T09:00:00.000Z',
  version: 1,
});
const stream = (events: EventToFanOut[]): DynamoDBStreamEvent => ({
  Records: events.map((e, i) => ({
    eventName: 'INSERT',
    eventSource: 'aws:dynamodb',
    dynamodb: { NewImage: marshall({ type: ITEM_TYPES.event, ...e }) as never, SequenceNumber: String(i + 1) },
  })),
});
const message = (id: string, body: unknown): SQSRecord =>
  ({ messageId: id, receiptHandle: id, body: typeof body === 'string' ? body : JSON.stringify(body), attributes: {} }) as SQSRecord;

function world() {
  const now = () => new Date('2026-03-01T09:00:01.000Z');
  const endpoints = new MemoryWebhookEndpointStore();
  const deliveries = new MemoryWebhookDeliveryStore(now);
  const queue = new MemoryDeliveryQueue();
  const slots = new MemoryDeliverySlots(deliveries, now);
  return { endpoints, deliveries, queue, slots, now };
}

describe('the fan-out plans a company’s trickle at once and forwards a burst to the planning queue', () => {
  it('cuts a batch into one slice per company and mode, in the events’ order, none longer than a stream batch', () => {
    const events = [event('co_a', 1), event('co_b', 1), event('co_a', 2), event('co_a', 3, 'test'), event('co_b', 2)];
    const slices = slicesOf(events);
    expect(slices.map((s) => [tenantOf(s.slice), s.indexes])).toEqual([
      ['live#co_a', [0, 2]],
      ['live#co_b', [1, 4]],
      ['test#co_a', [3]],
    ]);
    const many = Array.from({ length: MAX_EVENTS_PER_SLICE + 1 }, (_, i) => event('co_a', i));
    expect(slicesOf(many).map((s) => s.slice.events.length)).toEqual([MAX_EVENTS_PER_SLICE, 1]);
  });

  it('plans a company’s trickle itself: its event queued at once, nothing forwarded', async () => {
    const w = world();
    w.endpoints.put(endpoint('co_quiet', 1));
    const sent: PlanningSlice[] = [];
    const fanOut = buildFanOutWebhookEventsCore({
      ...w,
      planning: { forward: async (slices) => (sent.push(...slices), slices.map(() => true)) },
    });
    expect(await fanOut(stream([event('co_quiet', 1), event('co_quiet', 2)]))).toEqual({ batchItemFailures: [] });
    expect(sent).toEqual([]);
    expect(w.queue.sent.map((m) => m.job.eventId).sort()).toEqual([event('co_quiet', 1).eventId, event('co_quiet', 2).eventId]);
  });

  it('forwards a burst to many endpoints to the planning queue, and plans the quiet company beside it at once', async () => {
    const w = world();
    for (let n = 1; n <= 16; n++) w.endpoints.put(endpoint('co_noisy', n));
    w.endpoints.put(endpoint('co_quiet', 1));
    const sent: PlanningSlice[] = [];
    const fanOut = buildFanOutWebhookEventsCore({
      ...w,
      planning: { forward: async (slices) => (sent.push(...slices), slices.map(() => true)) },
    });
    const noisy = Array.from({ length: 2 }, (_, i) => event('co_noisy', i));
    expect(await fanOut(stream([...noisy, event('co_quiet', 1)]))).toEqual({ batchItemFailures: [] });
    // 2 events × 16 endpoints: over INLINE_DELIVERIES_PER_SLICE, so not one of its records is started by the stream's consumer.
    expect(sent.map((s) => [tenantOf(s), s.events.length])).toEqual([['live#co_noisy', 2]]);
    expect((await w.deliveries.listPage('live', endpoint('co_noisy', 1).endpointId, { limit: 10 })).deliveries).toEqual([]);
    expect(w.queue.sent.map((m) => m.job.eventId)).toEqual([event('co_quiet', 1).eventId]);
  });

  it('plans small slices itself, smallest first, only up to a batch’s budget; the rest are forwarded', async () => {
    const w = world();
    const companies = ['co_a', 'co_b', 'co_c', 'co_d', 'co_e'];
    for (const c of companies) for (let n = 1; n <= INLINE_DELIVERIES_PER_SLICE; n++) w.endpoints.put(endpoint(c, n));
    w.endpoints.put(endpoint('co_small', 1));
    const sent: PlanningSlice[] = [];
    const fanOut = buildFanOutWebhookEventsCore({
      ...w,
      planning: { forward: async (slices) => (sent.push(...slices), slices.map(() => true)) },
    });
    // Five slices of INLINE_DELIVERIES_PER_SLICE deliveries each and one of one delivery, the small one last in the stream.
    await fanOut(stream([...companies.map((c) => event(c, 1)), event('co_small', 1)]));
    const inline = Math.floor((INLINE_DELIVERIES_PER_BATCH - 1) / INLINE_DELIVERIES_PER_SLICE);
    expect(sent).toHaveLength(companies.length - inline);
    expect(new Set(w.queue.sent.map((m) => m.job.companyId))).toEqual(new Set(['co_small', ...companies.slice(0, inline)]));
  });

  it('gives the batch’s budget to live slices before test ones, so a test key’s trickles never send a live one to the queue', async () => {
    const w = world();
    const live = ['co_l1', 'co_l2', 'co_l3', 'co_l4'];
    for (const c of live) for (let n = 1; n <= INLINE_DELIVERIES_PER_SLICE; n++) w.endpoints.put(endpoint(c, n));
    const testEndpoint = (c: string): WebhookEndpoint => ({ ...endpoint(c, 1), mode: 'test' });
    const tests = Array.from({ length: 10 }, (_, i) => `co_t${i}`);
    for (const c of tests) w.endpoints.put(testEndpoint(c));
    const sent: PlanningSlice[] = [];
    const fanOut = buildFanOutWebhookEventsCore({
      ...w,
      planning: { forward: async (slices) => (sent.push(...slices), slices.map(() => true)) },
    });
    // Ten one-delivery test slices first in the stream, then four live slices of INLINE_DELIVERIES_PER_SLICE each.
    await fanOut(stream([...tests.map((c) => event(c, 1, 'test')), ...live.map((c) => event(c, 1))]));
    const inlineLive = Math.floor(INLINE_DELIVERIES_PER_BATCH / INLINE_DELIVERIES_PER_SLICE);
    expect(sent.filter((s) => s.mode === 'live')).toHaveLength(live.length - inlineLive);
    expect(new Set(w.queue.sent.filter((m) => m.job.mode === 'live').map((m) => m.job.companyId)).size).toBe(inlineLive);
  });

  it('fails only the records of a slice SQS did not take, or whose endpoints could not be read', async () => {
    const w = world();
    for (const c of ['co_a', 'co_b']) for (let n = 1; n <= 16; n++) w.endpoints.put(endpoint(c, n));
    w.endpoints.put(endpoint('co_c', 1));
    const failing = {
      list: async (mode: 'live' | 'test', companyId: string) => {
        if (companyId === 'co_d') throw new Error('storage unavailable');
        return w.endpoints.list(mode, companyId);
      },
    };
    const fanOut = buildFanOutWebhookEventsCore({
      ...w,
      endpoints: failing,
      planning: { forward: async (slices) => slices.map((s) => s.companyId !== 'co_b') },
    });
    // co_a and co_b: 2 events × 16 endpoints each, forwarded; co_c: one delivery, planned here; co_d: unreadable.
    const answer = await fanOut(
      stream([event('co_a', 1), event('co_b', 1), event('co_c', 1), event('co_b', 2), event('co_d', 1), event('co_a', 2)]),
    );
    expect(answer).toEqual({ batchItemFailures: [{ itemIdentifier: '2' }, { itemIdentifier: '4' }, { itemIdentifier: '5' }] });
    expect(w.queue.sent.map((m) => m.job.companyId)).toEqual(['co_c']);
  });
});

describe('the fan-out’s small slices fail on their own', () => {
  it('a slice whose jobs could not be queued fails its own records only: another company’s, and the same company’s other mode, go on', async () => {
    const w = world();
    w.endpoints.put(endpoint('co_a', 1));
    w.endpoints.put(endpoint('co_b', 1));
    w.endpoints.put({ ...endpoint('co_b', 2), mode: 'test' });
    const enqueue = w.queue.enqueue.bind(w.queue);
    w.queue.enqueue = async (lane, jobs, delay) => {
      if (jobs.some((j) => j.companyId === 'co_a')) throw new Error('SQS unavailable');
      return enqueue(lane, jobs, delay);
    };
    const fanOut = buildFanOutWebhookEventsCore({ ...w, planning: { forward: async (slices) => slices.map(() => true) } });
    const answer = await fanOut(stream([event('co_b', 1), event('co_a', 1), event('co_b', 2, 'test')]));
    expect(answer).toEqual({ batchItemFailures: [{ itemIdentifier: '2' }] });
    expect(w.queue.sent.map((m) => `${m.job.companyId} ${m.job.mode}`).sort()).toEqual(['co_b live', 'co_b test']);
  });

  it('a planning queue that throws fails the forwarded records only, never the slices planned at once', async () => {
    const w = world();
    for (let n = 1; n <= 16; n++) w.endpoints.put(endpoint('co_noisy', n));
    w.endpoints.put(endpoint('co_quiet', 1));
    const fanOut = buildFanOutWebhookEventsCore({
      ...w,
      planning: {
        forward: async () => {
          throw new Error('network down');
        },
      },
    });
    const answer = await fanOut(stream([event('co_noisy', 1), event('co_quiet', 1), event('co_noisy', 2)]));
    expect(answer).toEqual({ batchItemFailures: [{ itemIdentifier: '1' }, { itemIdentifier: '3' }] });
    expect(w.queue.sent.map((m) => m.job.companyId)).toEqual(['co_quiet']);
  });
});

describe('the planning worker', () => {
  it('plans each slice on its own: one company’s failing slice does not fail another company’s in the same batch', async () => {
    const w = world();
    w.endpoints.put(endpoint('co_quiet', 1));
    w.endpoints.put(endpoint('co_noisy', 1));
    const failing = {
      ...w.endpoints,
      list: async (mode: 'live' | 'test', companyId: string) => {
        if (companyId === 'co_noisy') throw new Error('storage unavailable');
        return w.endpoints.list(mode, companyId);
      },
    };
    const plan = buildPlanWebhookDeliveriesCore({ ...w, endpoints: failing as MemoryWebhookEndpointStore }, [1, 1]);
    const answer = await plan({
      Records: [
        message('m1', { v: 1, mode: 'live', companyId: 'co_noisy', events: [event('co_noisy', 1)] }),
        message('m2', { v: 1, mode: 'live', companyId: 'co_quiet', events: [event('co_quiet', 1)] }),
      ],
    });
    expect(answer).toEqual({ batchItemFailures: [{ itemIdentifier: 'm1' }] });
    expect(w.queue.sent.map((s) => s.job.eventId)).toEqual([event('co_quiet', 1).eventId]);
  });

  it('plans a slice again at once when the table failed it, rather than leaving it for the visibility timeout', async () => {
    const w = world();
    w.endpoints.put(endpoint('co_a', 1));
    let failures = 2;
    const flaky = {
      ...w.endpoints,
      list: async (mode: 'live' | 'test', companyId: string) => {
        if (failures-- > 0) throw new Error('storage unavailable');
        return w.endpoints.list(mode, companyId);
      },
    };
    const plan = buildPlanWebhookDeliveriesCore({ ...w, endpoints: flaky as MemoryWebhookEndpointStore }, [1, 1]);
    const answer = await plan({ Records: [message('m', { v: 1, mode: 'live', companyId: 'co_a', events: [event('co_a', 1)] })] });
    expect(answer).toEqual({ batchItemFailures: [] });
    expect(w.queue.sent).toHaveLength(1);
  });

  it('plans a slice SQS delivers twice once: one delivery record per event and endpoint, no job queued beyond the endpoint’s cap', async () => {
    const w = world();
    for (let n = 1; n <= 4; n++) w.endpoints.put(endpoint('co_a', n));
    const plan = buildPlanWebhookDeliveriesCore(w);
    const events = Array.from({ length: 10 }, (_, i) => event('co_a', i));
    const body = { v: 1, mode: 'live', companyId: 'co_a', events };
    expect(await plan({ Records: [message('m', body)] })).toEqual({ batchItemFailures: [] });
    expect(await plan({ Records: [message('m-again', body)] })).toEqual({ batchItemFailures: [] });
    for (let n = 1; n <= 4; n++) {
      const page = await w.deliveries.listPage('live', endpoint('co_a', n).endpointId, { limit: 100 });
      expect(page.deliveries.map((d) => d.eventId).sort()).toEqual(events.map((e) => e.eventId).sort());
    }
    // Each endpoint's cap (8) in the lanes, whichever copy queued it: the copy's fill found the slots taken.
    const perEndpoint = new Map<string, Set<string>>();
    for (const m of w.queue.sent) perEndpoint.set(m.job.endpointId, (perEndpoint.get(m.job.endpointId) ?? new Set()).add(m.job.eventId));
    for (const ids of perEndpoint.values()) expect(ids.size).toBeLessThanOrEqual(8);
  });

  it('keeps an unreadable message for the dead-letter queue rather than dropping it', async () => {
    const w = world();
    const plan = buildPlanWebhookDeliveriesCore(w);
    const answer = await plan({
      Records: [
        message('bad-json', '{'),
        message('no-events', { v: 1, mode: 'live', companyId: 'co_a', events: [] }),
        message('wrong-mode', { v: 1, mode: 'sandbox', companyId: 'co_a', events: [event('co_a', 1)] }),
      ],
    });
    expect(answer.batchItemFailures.map((f) => f.itemIdentifier)).toEqual(['bad-json', 'no-events', 'wrong-mode']);
  });

  it('plans a 16-endpoint company’s 100-event slice in steps, every delivery started and listed, and queues each endpoint’s fair share', async () => {
    const w = world();
    for (let n = 1; n <= 16; n++) w.endpoints.put(endpoint('co_burst', n));
    let largestStart = 0;
    const startAll = w.deliveries.startAll.bind(w.deliveries);
    w.deliveries.startAll = async (records) => {
      largestStart = Math.max(largestStart, records.length);
      return startAll(records);
    };
    const plan = buildPlanWebhookDeliveriesCore(w);
    const events = Array.from({ length: 100 }, (_, i) => event('co_burst', i));
    expect(await plan({ Records: [message('m', { v: 1, mode: 'live', companyId: 'co_burst', events })] })).toEqual({
      batchItemFailures: [],
    });
    expect(largestStart).toBeLessThanOrEqual(MAX_DELIVERIES_PER_STEP);
    for (let n = 1; n <= 16; n++) {
      const id = endpoint('co_burst', n).endpointId;
      expect((await w.deliveries.listPage('live', id, { limit: 100 })).deliveries).toHaveLength(100);
    }
    // The cap per endpoint (8) queued; the rest wait on their lists.
    expect(w.queue.sent).toHaveLength(16 * 8);
  });

  it('queues a large slice’s first jobs once its first step is planned, before the rest of the slice', async () => {
    const w = world();
    for (let n = 1; n <= 3; n++) w.endpoints.put(endpoint('co_burst', n));
    const order: string[] = [];
    const startAll = w.deliveries.startAll.bind(w.deliveries);
    w.deliveries.startAll = async (records) => {
      order.push(`start ${records.length}`);
      return startAll(records);
    };
    const enqueue = w.queue.enqueue.bind(w.queue);
    w.queue.enqueue = async (lane, jobs, delay) => {
      order.push(`queue ${jobs.length}`);
      return enqueue(lane, jobs, delay);
    };
    const plan = buildPlanWebhookDeliveriesCore(w);
    const events = Array.from({ length: 100 }, (_, i) => event('co_burst', i));
    expect(await plan({ Records: [message('m', { v: 1, mode: 'live', companyId: 'co_burst', events })] })).toEqual({
      batchItemFailures: [],
    });
    // 300 deliveries in steps of 99: each endpoint's 8 queued after the first step (it was after the fourth).
    expect(order.slice(0, 4)).toEqual(['start 99', 'queue 8', 'queue 8', 'queue 8']);
    expect(order.filter((o) => o.startsWith('start'))).toHaveLength(4);
    expect(w.queue.sent).toHaveLength(3 * 8);
  });

  it('fills a slice’s other endpoints when one endpoint’s fill fails, then reports the slice failed so that it is planned again', async () => {
    const w = world();
    for (let n = 1; n <= 5; n++) w.endpoints.put(endpoint('co_burst', n));
    const broken = endpoint('co_burst', 2).endpointId;
    const claimWaiting = w.slots.claimWaiting.bind(w.slots);
    w.slots.claimWaiting = async (mode, endpointId, ...rest) => {
      if (endpointId === broken) throw new Error('UpdateItem unavailable');
      return claimWaiting(mode, endpointId, ...rest);
    };
    const events = Array.from({ length: 30 }, (_, i) => event('co_burst', i));
    await expect(planSlice(w, { mode: 'live', companyId: 'co_burst', events })).rejects.toThrow('UpdateItem unavailable');
    // Two at a time, every endpoint's fill ran: the four healthy ones queued their 8 each, the broken one's jobs wait.
    const queued = new Set(w.queue.sent.map((m) => m.job.endpointId));
    expect([...queued].sort()).toEqual([1, 3, 4, 5].map((n) => endpoint('co_burst', n).endpointId));
    expect(w.queue.sent).toHaveLength(4 * 8);
  });

  it('does not try a failing slice again with too little of the invocation left, and keeps the batch’s other answers', async () => {
    const w = world();
    w.endpoints.put(endpoint('co_ok', 1));
    w.endpoints.put(endpoint('co_down', 1));
    let tries = 0;
    const list = w.endpoints.list.bind(w.endpoints);
    w.endpoints.list = async (mode, companyId) => {
      if (companyId === 'co_down') {
        tries++;
        throw new Error('Query timed out');
      }
      return list(mode, companyId);
    };
    const plan = buildPlanWebhookDeliveriesCore(w, [0, 0]);
    const batch = {
      Records: [
        message('ok', { v: 1, mode: 'live', companyId: 'co_ok', events: [event('co_ok', 1)] }),
        message('down', { v: 1, mode: 'live', companyId: 'co_down', events: [event('co_down', 1)] }),
      ],
    };
    // Plenty of time: the failing slice is tried three times in the invocation.
    expect(await plan(batch, { getRemainingTimeInMillis: () => 25_000 })).toEqual({ batchItemFailures: [{ itemIdentifier: 'down' }] });
    expect(tries).toBe(3);
    // Less than MIN_TIME_FOR_A_RETRY_MS left: tried once, reported, and the other slice's answer kept.
    tries = 0;
    expect(await plan(batch, { getRemainingTimeInMillis: () => MIN_TIME_FOR_A_RETRY_MS - 1 })).toEqual({
      batchItemFailures: [{ itemIdentifier: 'down' }],
    });
    expect(tries).toBe(1);
    expect(w.queue.sent.filter((m) => m.job.companyId === 'co_ok')).toHaveLength(1);
  });

  it('stops a burst’s planning between steps when the invocation is nearly over: what it planned is filled, and its message alone is retried', async () => {
    const w = world();
    for (let n = 1; n <= 16; n++) w.endpoints.put(endpoint('co_burst', n));
    w.endpoints.put(endpoint('co_quiet', 1));
    const startAll = w.deliveries.startAll.bind(w.deliveries);
    let started = 0;
    w.deliveries.startAll = async (deliveries, ...rest) => {
      started += deliveries.length;
      return startAll(deliveries, ...rest);
    };
    // The invocation has time for the quiet slice and two of the burst's steps; then less than a step needs.
    let asked = 0;
    const context = { getRemainingTimeInMillis: () => (++asked <= 3 ? 25_000 : MIN_TIME_FOR_A_STEP_MS - 1) };
    const plan = buildPlanWebhookDeliveriesCore(w, [0, 0]);
    const burst = Array.from({ length: 100 }, (_, i) => event('co_burst', i));
    const answer = await plan(
      {
        Records: [
          message('quiet', { v: 1, mode: 'live', companyId: 'co_quiet', events: [event('co_quiet', 1)] }),
          message('burst', { v: 1, mode: 'live', companyId: 'co_burst', events: burst }),
        ],
      },
      context,
    );
    expect(answer).toEqual({ batchItemFailures: [{ itemIdentifier: 'burst' }] });
    // One delivery for the quiet company; two steps of six events to sixteen endpoints, of the burst's seventeen.
    const perStep = Math.floor(MAX_DELIVERIES_PER_STEP / 16);
    expect(started).toBe(1 + 2 * perStep * 16);
    // What was planned was filled: each endpoint's eight slots, and the quiet company's one.
    expect(w.queue.sent.filter((m) => m.job.companyId === 'co_burst')).toHaveLength(16 * 8);
    expect(w.queue.sent.filter((m) => m.job.companyId === 'co_quiet')).toHaveLength(1);
  });

  it('counts the jobs a fill did queue when it could not take them off their waiting lists, and logs that it could not', async () => {
    const w = world();
    for (let n = 1; n <= 3; n++) w.endpoints.put(endpoint('co_burst', n));
    w.slots.promoted = async () => {
      throw new Error('DeleteItem unavailable');
    };
    const counted = jest.spyOn(metrics, 'addMetric');
    const warned = jest.spyOn(logger, 'warn').mockImplementation(() => undefined);
    try {
      const plan = buildPlanWebhookDeliveriesCore(w, [0, 0]);
      const events = Array.from({ length: 20 }, (_, i) => event('co_burst', i));
      // The second try finds the jobs holding their slots: nothing to queue, nothing more to remove, so it succeeds.
      expect(await plan({ Records: [message('m', { v: 1, mode: 'live', companyId: 'co_burst', events })] })).toEqual({
        batchItemFailures: [],
      });
      expect(w.queue.sent).toHaveLength(3 * 8);
      // Counted by the try that sent them: the one after queues them no more.
      expect(counted.mock.calls.filter(([name]) => name === 'WebhookJobsEnqueued').map(([, , value]) => value)).toEqual([3 * 8]);
      // And the first try's failure is in the log, though the second succeeded.
      expect(warned.mock.calls.map(([, extra]) => String((extra as { error?: unknown }).error))).toEqual([
        expect.stringMatching(/job\(s\) queued but still on their waiting list: DeleteItem unavailable/),
      ]);
    } finally {
      counted.mockRestore();
      warned.mockRestore();
    }
  });

  it('a trickle whose other endpoint could not be listed gives back the slot it claimed as listed, and its retry queues the job at once', async () => {
    const w = world();
    const [free, other] = [endpoint('co_quiet', 1), endpoint('co_quiet', 2)];
    w.endpoints.put(free);
    w.endpoints.put(other);
    // The other endpoint's record was started by an earlier read of the stream record (one that failed before its
    // fill), so its job takes the usual road, where listing it fails once.
    await w.deliveries.start(newDeliveryRecord(deliveryJobFor(event('co_quiet', 1), other), w.now().toISOString()));
    const wait = w.slots.wait.bind(w.slots);
    let failures = 1;
    w.slots.wait = async (jobs) => {
      if (failures-- > 0) throw new Error('BatchWriteItem unavailable');
      return wait(jobs);
    };
    const fanOut = buildFanOutWebhookEventsCore({ ...w, planning: { forward: async (slices) => slices.map(() => true) } });
    const record = stream([event('co_quiet', 1)]);
    expect(await fanOut(record)).toEqual({ batchItemFailures: [{ itemIdentifier: '1' }] });
    expect(w.queue.sent).toEqual([]);
    // The free endpoint's slot is given back (its job listed and started): the stream record's retry queues it.
    expect(await w.slots.holders('live', free.endpointId)).toEqual([]);
    expect(await fanOut(record)).toEqual({ batchItemFailures: [] });
    expect(w.queue.sent.map((s) => s.job.endpointId).sort()).toEqual([free.endpointId, other.endpointId].sort());
  });

  it('counts the jobs a failed slice did queue, in the planning worker and in the stream consumer, as the retry queues them no more', async () => {
    const brokenFill = (w: ReturnType<typeof world>, broken: string) => {
      const claimWaiting = w.slots.claimWaiting.bind(w.slots);
      w.slots.claimWaiting = async (mode, endpointId, ...rest) => {
        if (endpointId === broken) throw new Error('UpdateItem unavailable');
        return claimWaiting(mode, endpointId, ...rest);
      };
      // The stream consumer's claim as listed finds the broken endpoint's slots taken: its jobs go to its fill.
      const startClaimed = w.slots.startClaimed.bind(w.slots);
      w.slots.startClaimed = async (jobs, ...rest) =>
        startClaimed(
          jobs.filter((job) => job.endpointId !== broken),
          ...rest,
        );
    };
    const enqueuedCounts = async (run: () => Promise<unknown>) => {
      const counted = jest.spyOn(metrics, 'addMetric');
      try {
        await run();
        return counted.mock.calls.filter(([name]) => name === 'WebhookJobsEnqueued').map(([, , value]) => value);
      } finally {
        counted.mockRestore();
      }
    };

    // The planning worker: five endpoints, one whose fill fails on every try (three tries in the invocation).
    const w = world();
    for (let n = 1; n <= 5; n++) w.endpoints.put(endpoint('co_burst', n));
    brokenFill(w, endpoint('co_burst', 2).endpointId);
    const plan = buildPlanWebhookDeliveriesCore(w, [0, 0]);
    const events = Array.from({ length: 30 }, (_, i) => event('co_burst', i));
    const counts = await enqueuedCounts(async () => {
      expect(await plan({ Records: [message('m', { v: 1, mode: 'live', companyId: 'co_burst', events })] })).toEqual({
        batchItemFailures: [{ itemIdentifier: 'm' }],
      });
    });
    // The first try queued the four healthy endpoints' 8 each; the next two found their slots taken and queued nothing.
    expect(w.queue.sent).toHaveLength(4 * 8);
    expect(counts).toEqual([4 * 8]);

    // The stream consumer: a trickle to two endpoints, one whose fill fails.
    const t = world();
    for (let n = 1; n <= 2; n++) t.endpoints.put(endpoint('co_quiet', n));
    brokenFill(t, endpoint('co_quiet', 2).endpointId);
    const fanOut = buildFanOutWebhookEventsCore({ ...t, planning: { forward: async (slices) => slices.map(() => true) } });
    const streamed = await enqueuedCounts(async () => {
      expect(await fanOut(stream([event('co_quiet', 1)]))).toEqual({ batchItemFailures: [{ itemIdentifier: '1' }] });
    });
    expect(t.queue.sent).toHaveLength(1);
    expect(streamed).toEqual([1]);
  });
});
