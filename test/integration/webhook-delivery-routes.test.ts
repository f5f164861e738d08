import { Webhook } from 'standardwebhooks';
import { buildCreateWebhookEndpointHandler } from '../../functions/create-webhook-endpoint.js';
import { buildListWebhookDeliveriesHandler } from '../../functions/list-webhook-deliveries.js';
import { buildPingWebhookEndpointHandler } from '../../functions/ping-webhook-endpoint.js';
import { buildRedeliverWebhookEventHandler } from '../../functions/redeliver-webhook-event.js';
import { buildUpdateWebhookEndpointHandler } from '../../functions/update-webhook-endpoint.js';
import { DynamoWebhookDeliverySlots } from '../../lib/adapters/dynamodb/webhook-delivery-slots.js';
import { DynamoWebhookDeliveryStore } from '../../lib/adapters/dynamodb/webhook-delivery-store.js';
import { DynamoWebhookEndpointStore } from '../../lib/adapters/dynamodb/webhook-endpoint-store.js';
import { cursorSealerOnce } from '../../lib/adapters/secrets/cursor-secret.js';
import { secretBoxOnce } from '../../lib/adapters/secrets/webhook-secret-key.js';
import { WebhookSender } from '../../lib/adapters/webhooks/webhook-sender.js';
import type { Scope } from '../../lib/auth/scopes.js';
import type { Mode } from '../../lib/mode.js';
import { config } from '../../lib/runtime/config.js';
import { webhookPingEventSchema } from '../../lib/webhooks/ping-event.js';
import type { DeliveryQueue, HostResolver } from '../../lib/webhooks/ports.js';
import {
  deliveryJobSchema,
  newRedeliveryId,
  scheduledDeliveryId,
  type DeliveryJob,
  type WebhookDelivery,
} from '../../lib/webhooks/webhook-delivery.js';
import { postCases, storedEvents, uploadInvoice, validCase } from '../support/cases.js';
import { checkedInvoke } from '../support/contract.js';
import { apiEvent, bearer, ddb, extraKey, lambdaContext, newPartner, parse, stores, type Partner } from '../support/fixtures.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * The ping, redeliver and delivery-log routes (product rules "Webhooks") through their handlers,
 * over DynamoDB Local; the ping reaches real receivers on loopback through the SSRF-safe sender.
 */

/** Names resolve where each test says: public at creation, private at delivery for the rebinding one. */
const DNS: Record<string, string[]> = {
  'hooks.partner.example': ['93.184.216.34'],
  'rebinding.partner.example': ['93.184.216.34'],
};
const creationResolver: HostResolver = async (hostname) => {
  const found = DNS[hostname];
  if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  return found;
};

const cfg = config();
const base = stores();
const plainEndpoints = new DynamoWebhookEndpointStore(ddb(), cfg.tableName);
const sealingEndpoints = new DynamoWebhookEndpointStore(ddb(), cfg.tableName, secretBoxOnce(cfg));
const now = () => new Date();
const local = { allowLocalDevelopment: true };

const createHandler = buildCreateWebhookEndpointHandler({
  keys: base.keys,
  store: sealingEndpoints,
  resolver: creationResolver,
  now,
  urlOptions: local,
});
const updateHandler = buildUpdateWebhookEndpointHandler({
  keys: base.keys,
  store: plainEndpoints,
  resolver: creationResolver,
  now,
  urlOptions: local,
});
/** npm start's sender: loopback receivers are reachable. */
const localPing = buildPingWebhookEndpointHandler({ keys: base.keys, store: sealingEndpoints, sender: new WebhookSender(local), now });

const COLLECTION = '/api/v1/webhook-endpoints';
const json = { 'Content-Type': 'application/json' };

const manager = (mode: Mode = 'live', scopes: Scope[] = ['webhooks:manage', 'cases:read', 'cases:write']) => newPartner(scopes, { mode });

async function createEndpoint(apiKey: string, url: string): Promise<{ id: string; secret: string }> {
  const res = parse(
    await checkedInvoke(
      createHandler,
      apiEvent({
        method: 'POST',
        path: COLLECTION,
        resource: COLLECTION,
        headers: { ...bearer(apiKey), ...json },
        body: JSON.stringify({ url, events: ['*'] }),
      }),
      lambdaContext(),
    ),
  );
  if (res.statusCode !== 201) throw new Error(`create failed: ${res.statusCode} ${JSON.stringify(res.body)}`);
  return { id: res.body.id as string, secret: res.body.secret as string };
}

async function setStatus(apiKey: string, id: string, status: 'enabled' | 'disabled') {
  const res = parse(
    await checkedInvoke(
      updateHandler,
      apiEvent({
        method: 'PATCH',
        path: `${COLLECTION}/${id}`,
        resource: `${COLLECTION}/{id}`,
        pathParameters: { id },
        headers: { ...bearer(apiKey), ...json },
        body: JSON.stringify({ status }),
      }),
      lambdaContext(),
    ),
  );
  expect(res.statusCode).toBe(200);
}

async function ping(apiKey: string, id: string, handler = localPing) {
  const event = apiEvent({
    method: 'POST',
    path: `${COLLECTION}/${id}/ping`,
    resource: `${COLLECTION}/{id}/ping`,
    pathParameters: { id },
    headers: bearer(apiKey),
  });
  return parse(await checkedInvoke(handler, event, lambdaContext()));
}

describe('pinging a webhook endpoint', () => {
  let partner: Partner;
  let receiver: WebhookReceiver | undefined;
  beforeEach(async () => {
    partner = await manager();
  });
  afterEach(async () => {
    await receiver?.close();
    receiver = undefined;
  });

  it('sends a signed webhook.ping that the Standard Webhooks library verifies with the secret shown at creation, and answers 200 delivered', async () => {
    receiver = await startWebhookReceiver();
    const endpoint = await createEndpoint(partner.apiKey, `${receiver.url}/hooks`);

    const res = await ping(partner.apiKey, endpoint.id);

    expect(res.statusCode).toBe(200);
    expect(res.body).toEqual({ delivered: true, statusCode: 200, durationMs: expect.any(Number) });
    expect(receiver.received).toHaveLength(1);
    const request = receiver.received[0]!;
    expect(request.path).toBe('/hooks');
    const verified = new Webhook(endpoint.secret).verify(request.body, request.headers) as Record<string, unknown>;
    const event = webhookPingEventSchema.parse(verified);
    expect(event).toMatchObject({ type: 'webhook.ping', livemode: true, data: { object: { endpointId: endpoint.id } } });
    expect(request.headers['webhook-id']).toBe(event.id);
  });

  it('says test mode in the ping of a test endpoint (livemode false)', async () => {
    const tester = await manager('test');
    receiver = await startWebhookReceiver();
    const endpoint = await createEndpoint(tester.apiKey, `${receiver.url}/hooks`);

    expect((await ping(tester.apiKey, endpoint.id)).body.delivered).toBe(true);
    expect(JSON.parse(receiver.received[0]!.body)).toMatchObject({ livemode: false });
  });

  it("reports the receiver's failing status as not delivered, with its status code", async () => {
    receiver = await startWebhookReceiver({ handler: (_req, res) => res.writeHead(503).end('down for maintenance') });
    const endpoint = await createEndpoint(partner.apiKey, `${receiver.url}/hooks`);

    const res = await ping(partner.apiKey, endpoint.id);

    expect(res.statusCode).toBe(200);
    expect(res.body).toEqual({ delivered: false, statusCode: 503, durationMs: expect.any(Number) });
  });

  it('answers delivered false with the error when nothing listens at the URL', async () => {
    receiver = await startWebhookReceiver();
    const url = `${receiver.url}/hooks`;
    await receiver.close();
    receiver = undefined;
    const endpoint = await createEndpoint(partner.apiKey, url);

    const res = await ping(partner.apiKey, endpoint.id);

    expect(res.statusCode).toBe(200);
    expect(res.body).toEqual({ delivered: false, durationMs: expect.any(Number), error: expect.stringContaining('ECONNREFUSED') });
  });

  it('refuses to connect when the name now resolves to a private address (DNS rebinding), and says so', async () => {
    const endpoint = await createEndpoint(partner.apiKey, 'https://rebinding.partner.example/hooks');
    let asked = 0;
    // Public when the endpoint was created; the internal network's address by the time of the ping.
    const rebound: HostResolver = async () => {
      asked++;
      return ['10.0.0.5'];
    };
    const deployedPing = buildPingWebhookEndpointHandler({
      keys: base.keys,
      store: sealingEndpoints,
      sender: new WebhookSender({ resolver: rebound }),
      now,
    });

    const res = await ping(partner.apiKey, endpoint.id, deployedPing);

    expect(res.statusCode).toBe(200);
    expect(res.body).toEqual({ delivered: false, durationMs: expect.any(Number), error: expect.stringContaining('10.0.0.5') });
    expect(asked).toBe(1);
  });

  it('pings a disabled endpoint (how a partner checks a fix) and leaves it disabled, its health untouched', async () => {
    receiver = await startWebhookReceiver();
    const endpoint = await createEndpoint(partner.apiKey, `${receiver.url}/hooks`);
    await setStatus(partner.apiKey, endpoint.id, 'disabled');
    const before = await plainEndpoints.get('live', partner.companyId, endpoint.id);

    const res = await ping(partner.apiKey, endpoint.id);

    expect(res.body.delivered).toBe(true);
    expect(receiver.received).toHaveLength(1);
    expect(await plainEndpoints.get('live', partner.companyId, endpoint.id)).toEqual(before);
  });

  it("leaves a failing endpoint's health alone: a failed ping starts no failing run", async () => {
    receiver = await startWebhookReceiver({ handler: (_req, res) => res.writeHead(500).end() });
    const endpoint = await createEndpoint(partner.apiKey, `${receiver.url}/hooks`);
    const before = await plainEndpoints.get('live', partner.companyId, endpoint.id);

    expect((await ping(partner.apiKey, endpoint.id)).body.delivered).toBe(false);

    const after = await plainEndpoints.get('live', partner.companyId, endpoint.id);
    expect(after).toEqual(before);
    expect(after?.failingSince).toBeUndefined();
  });

  it("answers 404 for another company's endpoint, the other mode's endpoint and a malformed id, sending nothing", async () => {
    receiver = await startWebhookReceiver();
    const endpoint = await createEndpoint(partner.apiKey, `${receiver.url}/hooks`);
    const stranger = await manager();
    const sameCompanyTestKey = await extraKey(partner.companyId, ['webhooks:manage'], 'test');

    for (const [apiKey, id] of [
      [stranger.apiKey, endpoint.id],
      [sameCompanyTestKey, endpoint.id],
      [partner.apiKey, 'we_nope'],
    ] as const) {
      const res = await ping(apiKey, id);
      expect(res.statusCode).toBe(404);
      expect(res.body.code).toBe('NOT_FOUND');
    }
    expect(receiver.received).toHaveLength(0);
  });

  it("requires webhooks:manage (403 for the same company's cases key)", async () => {
    receiver = await startWebhookReceiver();
    const endpoint = await createEndpoint(partner.apiKey, `${receiver.url}/hooks`);
    const casesOnly = await extraKey(partner.companyId, ['cases:read', 'cases:write']);
    const res = await ping(casesOnly, endpoint.id);
    expect(res.statusCode).toBe(403);
    expect(res.body).toMatchObject({ code: 'INSUFFICIENT_SCOPE', requiredScope: 'webhooks:manage' });
    expect(receiver.received).toHaveLength(0);
  });
});

/** The fast lane as the route sees it: what was queued, in order (the SQS adapter has its own tests). */
class RecordingQueue implements DeliveryQueue {
  readonly sent: { lane: 'fast' | 'slow'; job: DeliveryJob }[] = [];
  async enqueue(lane: 'fast' | 'slow', jobs: readonly DeliveryJob[]): Promise<void> {
    for (const job of jobs) this.sent.push({ lane, job });
  }
}

const deliveries = new DynamoWebhookDeliveryStore(ddb(), cfg.tableName);
const slots = new DynamoWebhookDeliverySlots(ddb(), cfg.tableName);

function redeliverHandler(queue: DeliveryQueue) {
  return buildRedeliverWebhookEventHandler({
    keys: base.keys,
    endpoints: plainEndpoints,
    events: base.events,
    deliveries,
    slots,
    queue,
    now,
  });
}
const listHandler = buildListWebhookDeliveriesHandler({
  keys: base.keys,
  endpoints: plainEndpoints,
  deliveries,
  cursors: cursorSealerOnce(cfg),
});

async function redeliver(apiKey: string, id: string, body: unknown, queue: DeliveryQueue) {
  const event = apiEvent({
    method: 'POST',
    path: `${COLLECTION}/${id}/redeliver`,
    resource: `${COLLECTION}/{id}/redeliver`,
    pathParameters: { id },
    headers: { ...bearer(apiKey), ...json },
    body: JSON.stringify(body),
  });
  return parse(await checkedInvoke(redeliverHandler(queue), event, lambdaContext()));
}

async function listDeliveries(apiKey: string, id: string, query: Record<string, string> = {}) {
  const event = apiEvent({
    method: 'GET',
    path: `${COLLECTION}/${id}/deliveries`,
    resource: `${COLLECTION}/{id}/deliveries`,
    pathParameters: { id },
    query,
    headers: bearer(apiKey),
  });
  return parse(await checkedInvoke(listHandler, event, lambdaContext()));
}

/**
 * The log without the deliveries the local engines schedule by themselves: the table's stream runs
 * the fan-out under every integration test, so a case created here is also delivered to the
 * endpoint (its scheduled delivery's id is derived from endpoint and event).
 */
function withoutScheduled(endpointId: string, data: unknown): unknown[] {
  return (data as { id: string; eventId: string }[]).filter((d) => d.id !== scheduledDeliveryId(endpointId, d.eventId));
}

/** Creates one case with the key and answers the id of its case.created event. */
async function caseCreatedEventId(apiKey: string, companyId: string, livemode: boolean): Promise<string> {
  const before = new Set((await storedEvents(companyId)).map((e) => e.event.id));
  const res = await postCases(apiKey, { cases: [validCase(await uploadInvoice(apiKey))] });
  if (res.statusCode !== 201) throw new Error(`case creation failed: ${res.statusCode} ${JSON.stringify(res.body)}`);
  const created = (await storedEvents(companyId)).find((e) => !before.has(e.event.id) && e.event.livemode === livemode);
  if (!created) throw new Error('no case.created event was stored');
  return created.event.id;
}

const HOOK_URL = 'https://hooks.partner.example/pca';

describe('redelivering an event', () => {
  let partner: Partner;
  let endpointId: string;
  let eventId: string;
  let queue: RecordingQueue;
  beforeEach(async () => {
    partner = await manager();
    endpointId = (await createEndpoint(partner.apiKey, HOOK_URL)).id;
    eventId = await caseCreatedEventId(partner.apiKey, partner.companyId, true);
    queue = new RecordingQueue();
  });

  it('answers 202 with the new pending delivery, stores it in the log and queues its job on the fast lane', async () => {
    const res = await redeliver(partner.apiKey, endpointId, { eventId }, queue);

    expect(res.statusCode).toBe(202);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^wd_[0-9A-Za-z]{22}$/),
      eventId,
      eventType: 'case.created',
      status: 'pending',
      attempts: [],
    });
    expect(queue.sent).toHaveLength(1);
    const { lane, job } = queue.sent[0]!;
    expect(lane).toBe('fast');
    expect(deliveryJobSchema.parse(job)).toEqual({
      v: 1,
      kind: 'redelivery',
      deliveryId: res.body.id,
      endpointId,
      eventId,
      eventType: 'case.created',
      companyId: partner.companyId,
      mode: 'live',
      createdAt: expect.any(String),
    });
    const stored = await deliveries.get({ mode: 'live', endpointId, createdAt: job.createdAt, deliveryId: job.deliveryId });
    expect(stored).toMatchObject({ kind: 'redelivery', status: 'pending', attempts: [], eventId, companyId: partner.companyId });
  });

  it('answers 202 within its time even when the queue does not answer: the delivery is started and its job claimed, for the sweeper to queue', async () => {
    const hanging: DeliveryQueue = { enqueue: () => new Promise<void>(() => undefined) };
    const event = apiEvent({
      method: 'POST',
      path: `${COLLECTION}/${endpointId}/redeliver`,
      resource: `${COLLECTION}/{id}/redeliver`,
      pathParameters: { id: endpointId },
      headers: { ...bearer(partner.apiKey), ...json },
      body: JSON.stringify({ eventId }),
    });
    const started = Date.now();
    // An invocation with 4 s left, as the route's Lambda would be near its timeout.
    const res = parse(await checkedInvoke(redeliverHandler(hanging), event, lambdaContext(4_000)));
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(res.statusCode).toBe(202);
    const log = await deliveries.listPage('live', endpointId, { limit: 10 });
    expect(log.deliveries.find((d) => d.deliveryId === res.body.id)).toMatchObject({ status: 'pending', kind: 'redelivery' });
  });

  it('makes a new delivery each time it is asked (two redeliveries, two ids, two jobs)', async () => {
    const first = await redeliver(partner.apiKey, endpointId, { eventId }, queue);
    const second = await redeliver(partner.apiKey, endpointId, { eventId }, queue);
    expect(first.body.id).not.toBe(second.body.id);
    expect(queue.sent.map((s) => s.job.deliveryId)).toEqual([first.body.id, second.body.id]);
  });

  it('answers 404 naming an unknown event, and queues nothing', async () => {
    const unknown = 'evt_0000000000000000000000';
    const res = await redeliver(partner.apiKey, endpointId, { eventId: unknown }, queue);
    expect(res.statusCode).toBe(404);
    expect(res.body).toMatchObject({ code: 'NOT_FOUND', detail: expect.stringContaining(unknown) });
    expect(queue.sent).toHaveLength(0);
  });

  it("answers 404 for the company's own test-mode event redelivered to a live endpoint, and for another company's event", async () => {
    const testKey = await extraKey(partner.companyId, ['cases:read', 'cases:write'], 'test');
    const testEventId = await caseCreatedEventId(testKey, partner.companyId, false);
    const stranger = await manager();
    const strangersEventId = await caseCreatedEventId(stranger.apiKey, stranger.companyId, true);

    for (const foreign of [testEventId, strangersEventId]) {
      const res = await redeliver(partner.apiKey, endpointId, { eventId: foreign }, queue);
      expect(res.statusCode).toBe(404);
      expect(res.body).toMatchObject({ code: 'NOT_FOUND', detail: expect.stringContaining(foreign) });
    }
    expect(queue.sent).toHaveLength(0);
  });

  it('answers 409 WEBHOOK_ENDPOINT_DISABLED for a disabled endpoint, and queues nothing', async () => {
    await setStatus(partner.apiKey, endpointId, 'disabled');
    const res = await redeliver(partner.apiKey, endpointId, { eventId }, queue);
    expect(res.statusCode).toBe(409);
    expect(res.body).toMatchObject({ code: 'WEBHOOK_ENDPOINT_DISABLED', status: 409 });
    expect(queue.sent).toHaveLength(0);
    expect(withoutScheduled(endpointId, (await listDeliveries(partner.apiKey, endpointId)).body.data)).toEqual([]);
  });

  it("answers 404 for another company's endpoint and the other mode's", async () => {
    const stranger = await manager();
    const testKey = await extraKey(partner.companyId, ['webhooks:manage'], 'test');
    for (const apiKey of [stranger.apiKey, testKey]) {
      const res = await redeliver(apiKey, endpointId, { eventId }, queue);
      expect(res.statusCode).toBe(404);
    }
    expect(queue.sent).toHaveLength(0);
  });

  it('refuses a body without a well-formed eventId, naming every field (400)', async () => {
    const missing = await redeliver(partner.apiKey, endpointId, {}, queue);
    expect(missing.statusCode).toBe(400);
    expect(missing.body.errors).toEqual([{ field: 'eventId', message: 'eventId is required' }]);

    const bad = await redeliver(partner.apiKey, endpointId, { eventId: 'case_1', also: true }, queue);
    expect(bad.statusCode).toBe(400);
    expect(bad.body.errors).toEqual(
      expect.arrayContaining([
        { field: 'eventId', message: expect.stringContaining('eventId must be an event id') },
        { field: 'also', message: 'unknown field; the allowed fields are eventId' },
      ]),
    );
    expect(queue.sent).toHaveLength(0);
  });

  it("requires webhooks:manage (403 for the same company's cases key)", async () => {
    const res = await redeliver(await extraKey(partner.companyId, ['cases:read', 'cases:write']), endpointId, { eventId }, queue);
    expect(res.statusCode).toBe(403);
    expect(queue.sent).toHaveLength(0);
  });
});

describe('reading the delivery log', () => {
  let partner: Partner;
  let endpointId: string;
  beforeEach(async () => {
    partner = await manager();
    endpointId = (await createEndpoint(partner.apiKey, HOOK_URL)).id;
  });

  async function seed(count: number): Promise<WebhookDelivery[]> {
    const start = Date.now() - 60 * 60 * 1000;
    const seeded: WebhookDelivery[] = [];
    for (let i = 0; i < count; i++) {
      // Two share each createdAt, so the id must break the tie.
      const createdAt = new Date(start + Math.floor(i / 2) * 1000).toISOString();
      const delivery: WebhookDelivery = {
        mode: 'live',
        endpointId,
        createdAt,
        deliveryId: newRedeliveryId(),
        kind: 'redelivery',
        companyId: partner.companyId,
        eventId: `evt_${String(i).padStart(22, '0')}`,
        eventType: 'case.updated',
        status: 'pending',
        attempts: [],
        updatedAt: createdAt,
      };
      seeded.push(await deliveries.start(delivery));
    }
    return seeded;
  }

  it('pages newest first with limit and cursor, every delivery once', async () => {
    const seeded = await seed(7);
    // Storage's order: the sort key `<createdAt>#<id>` compared byte by byte, descending.
    const sortKey = (d: WebhookDelivery) => `${d.createdAt}#${d.deliveryId}`;
    const expected = [...seeded].sort((a, b) => (sortKey(a) < sortKey(b) ? 1 : -1)).map((d) => d.deliveryId);

    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await listDeliveries(partner.apiKey, endpointId, { limit: '3', ...(cursor ? { cursor } : {}) });
      expect(res.statusCode).toBe(200);
      const data = res.body.data as { id: string; status: string; attempts: unknown[] }[];
      expect(data.length).toBeLessThanOrEqual(3);
      seen.push(...data.map((d) => d.id));
      cursor = (res.body.nextCursor as string | null) ?? undefined;
      pages++;
    } while (cursor && pages < 10);
    expect(seen).toEqual(expected);
    expect(pages).toBe(3);
  });

  it('shows a redelivery as pending with its attempts, once the route made it', async () => {
    const eventId = await caseCreatedEventId(partner.apiKey, partner.companyId, true);
    const made = await redeliver(partner.apiKey, endpointId, { eventId }, new RecordingQueue());
    const res = await listDeliveries(partner.apiKey, endpointId);
    expect({ ...res.body, data: withoutScheduled(endpointId, res.body.data) }).toEqual({ data: [made.body], nextCursor: null });
  });

  it("answers 404 for another company's endpoint and for the other mode's, whatever the log holds", async () => {
    await seed(1);
    const stranger = await manager();
    const testKey = await extraKey(partner.companyId, ['webhooks:manage'], 'test');
    for (const apiKey of [stranger.apiKey, testKey]) {
      const res = await listDeliveries(apiKey, endpointId);
      expect(res.statusCode).toBe(404);
      expect(res.body.code).toBe('NOT_FOUND');
    }
  });

  it("refuses another endpoint's cursor with INVALID_CURSOR", async () => {
    await seed(3);
    const first = await listDeliveries(partner.apiKey, endpointId, { limit: '1' });
    const other = (await createEndpoint(partner.apiKey, HOOK_URL)).id;
    const res = await listDeliveries(partner.apiKey, other, { cursor: first.body.nextCursor as string });
    expect(res.statusCode).toBe(400);
    expect(res.body.code).toBe('INVALID_CURSOR');
  });

  it('refuses an unknown query parameter and a bad limit (400 naming both)', async () => {
    const res = await listDeliveries(partner.apiKey, endpointId, { limit: '0', status: 'failed' });
    expect(res.statusCode).toBe(400);
    expect((res.body.errors as { field: string }[]).map((e) => e.field).sort()).toEqual(['limit', 'status']);
  });

  it("requires webhooks:manage (403 for the same company's cases key)", async () => {
    const res = await listDeliveries(await extraKey(partner.companyId, ['cases:read']), endpointId);
    expect(res.statusCode).toBe(403);
  });
});
