import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBStreamEvent, SQSRecord } from 'aws-lambda';
import { buildFanOutWebhookEventsCore } from '../../../functions/fan-out-webhook-events.js';
import { buildPlanWebhookDeliveriesCore } from '../../../functions/plan-webhook-deliveries.js';
import { ITEM_TYPES } from '../../../lib/adapters/dynamodb/table-keys.js';
import { MAX_DELIVERIES_PER_STEP, slicesOf, type EventToFanOut } from '../../../lib/webhooks/fan-out-event.js';
import { MAX_EVENTS_PER_SLICE, tenantOf, type PlanningSlice } from '../../../lib/webhooks/planning-slice.js';
import type { WebhookEndpoint } from '../../../lib/webhooks/webhook-endpoint.js';
import {
  MemoryDeliveryQueue,
  MemoryDeliverySlots,
  MemoryWebhookDeliveryStore,
  MemoryWebhookEndpointStore,
} from '../../support/memory-webhooks.js';

/**
 * The fan-out forwards each company-and-mode's slice of a stream batch to the planning queue (a fair
 * queue grouped by that tenant), and the planning worker plans each slice on its own
 * (docs/webhooks-design.md, "Planning on a fair queue").
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
  const slots = new MemoryDeliverySlots(now);
  return { endpoints, deliveries, queue, slots, now };
}

describe('the fan-out forwards a stream batch to planning, a slice per company and mode', () => {
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

  it('reads and writes nothing itself, and fails only the records of a slice SQS did not take', async () => {
    const sent: PlanningSlice[] = [];
    const fanOut = buildFanOutWebhookEventsCore({
      planning: {
        forward: async (slices) => {
          sent.push(...slices);
          return slices.map((s) => s.companyId !== 'co_b');
        },
      },
    });
    const answer = await fanOut(stream([event('co_a', 1), event('co_b', 1), event('co_a', 2), event('co_b', 2)]));
    expect(sent.map(tenantOf)).toEqual(['live#co_a', 'live#co_b']);
    expect(answer).toEqual({ batchItemFailures: [{ itemIdentifier: '2' }, { itemIdentifier: '4' }] });
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
});
