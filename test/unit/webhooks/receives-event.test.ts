import type { EventToFanOut } from '../../../lib/webhooks/fan-out-event.js';
import { fanOutOnStream } from '../../support/fan-out-on-stream.js';
import { EVENT_CLOCK_SKEW_MS, receivesEvent, type WebhookEndpoint } from '../../../lib/webhooks/webhook-endpoint.js';
import {
  MemoryDeliveryQueue,
  MemoryDeliverySlots,
  MemoryWebhookDeliveryStore,
  MemoryWebhookEndpointStore,
} from '../../support/memory-webhooks.js';

/** An endpoint receives only events not older than itself (product rules "Webhook isolation and operators"). */
const CREATED = '2026-03-01T09:00:00.000Z';
const at = (offsetMs: number) => new Date(Date.parse(CREATED) + offsetMs).toISOString();
const endpoint = (overrides: Partial<WebhookEndpoint> = {}): WebhookEndpoint => ({
  endpointId: 'we_0000000000000000000001',
  companyId: 'co_partner',
  mode: 'live',
  url: 'https://hooks.partner.example/in',
  events: ['*'],
  description: '',
  status: 'enabled',
  createdAt: CREATED,
  updatedAt: CREATED,
  version: 1,
  ...overrides,
});
const event = (createdAt: string, eventType = 'case.created') => ({ eventType, createdAt });

describe('which events an endpoint receives', () => {
  it('receives an event created after it, and one stamped the same millisecond', () => {
    expect(receivesEvent(endpoint(), event(at(1)))).toBe(true);
    expect(receivesEvent(endpoint(), event(at(3_600_000)))).toBe(true);
    expect(receivesEvent(endpoint(), event(CREATED))).toBe(true);
  });

  it('never receives an event created before it (a stream read again after a restart)', () => {
    expect(receivesEvent(endpoint(), event(at(-3_600_000)))).toBe(false);
    expect(receivesEvent(endpoint(), event(at(-EVENT_CLOCK_SKEW_MS - 1)))).toBe(false);
  });

  it('allows for a second of skew between the two machines’ clocks, in favour of delivering', () => {
    expect(EVENT_CLOCK_SKEW_MS).toBe(1_000);
    expect(receivesEvent(endpoint(), event(at(-1)))).toBe(true);
    expect(receivesEvent(endpoint(), event(at(-EVENT_CLOCK_SKEW_MS)))).toBe(true);
  });

  it('still asks the subscription', () => {
    expect(receivesEvent(endpoint({ events: ['case.updated'] }), event(at(1), 'case.created'))).toBe(false);
    expect(receivesEvent(endpoint({ events: ['case.updated'] }), event(at(1), 'case.updated'))).toBe(true);
  });

  it('delivers an event whose timestamp cannot be read rather than dropping it', () => {
    expect(receivesEvent(endpoint(), event('not a date'))).toBe(true);
  });
});

describe('the fan-out of a replayed event', () => {
  it('sends an event only to the endpoints not newer than it, and starts no delivery record for the others', async () => {
    const endpoints = new MemoryWebhookEndpointStore();
    const deliveries = new MemoryWebhookDeliveryStore(() => new Date(at(7_200_000)));
    const queue = new MemoryDeliveryQueue();
    const older = endpoint({ endpointId: 'we_0000000000000000000001', createdAt: at(-7_200_000) });
    const newer = endpoint({ endpointId: 'we_0000000000000000000002', createdAt: at(3_600_000) });
    endpoints.put(older);
    endpoints.put(newer);
    // Created at CREATED, read again from the stream two hours later.
    const replayed: EventToFanOut = {
      eventId: 'evt_0000000000000000000001',
      eventType: 'case.created',
      companyId: 'co_partner',
      mode: 'live',
      createdAt: CREATED,
    };
    const now = () => new Date(at(7_200_000));
    await fanOutOnStream({ endpoints, deliveries, slots: new MemoryDeliverySlots(deliveries, now), queue, now }, replayed);
    expect(queue.sent.map((s) => s.job.endpointId)).toEqual([older.endpointId]);
    expect(await deliveries.listPage('live', newer.endpointId, { limit: 10 })).toEqual({ deliveries: [] });
  });
});
