import { Webhook } from 'standardwebhooks';
import { buildCreateWebhookEndpointHandler } from '../../functions/create-webhook-endpoint.js';
import { buildPingWebhookEndpointHandler } from '../../functions/ping-webhook-endpoint.js';
import { buildUpdateWebhookEndpointHandler } from '../../functions/update-webhook-endpoint.js';
import { DynamoWebhookEndpointStore } from '../../lib/adapters/dynamodb/webhook-endpoint-store.js';
import { secretBoxOnce } from '../../lib/adapters/secrets/webhook-secret-key.js';
import { WebhookSender } from '../../lib/adapters/webhooks/webhook-sender.js';
import type { Scope } from '../../lib/auth/scopes.js';
import type { Mode } from '../../lib/mode.js';
import { config } from '../../lib/runtime/config.js';
import { webhookPingEventSchema } from '../../lib/webhooks/ping-event.js';
import type { HostResolver } from '../../lib/webhooks/ports.js';
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
