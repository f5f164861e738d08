import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { Webhook } from 'standardwebhooks';
import { buildCreateWebhookEndpointHandler } from '../../functions/create-webhook-endpoint.js';
import { buildDeleteWebhookEndpointHandler } from '../../functions/delete-webhook-endpoint.js';
import { buildGetWebhookEndpointHandler } from '../../functions/get-webhook-endpoint.js';
import { buildListWebhookEndpointsHandler } from '../../functions/list-webhook-endpoints.js';
import { buildRotateWebhookEndpointSecretHandler } from '../../functions/rotate-webhook-endpoint-secret.js';
import { buildUpdateWebhookEndpointHandler } from '../../functions/update-webhook-endpoint.js';
import { DynamoWebhookEndpointStore } from '../../lib/adapters/dynamodb/webhook-endpoint-store.js';
import { keys as tableKeys } from '../../lib/adapters/dynamodb/table-keys.js';
import { DynamoTestModeItemStore } from '../../lib/adapters/dynamodb/test-mode-item-store.js';
import { secretBoxOnce } from '../../lib/adapters/secrets/webhook-secret-key.js';
import type { Scope } from '../../lib/auth/scopes.js';
import { config } from '../../lib/runtime/config.js';
import { logger } from '../../lib/runtime/logger.js';
import type { HostResolver } from '../../lib/webhooks/ports.js';
import { ROTATION_OVERLAP_MS, signingSecrets } from '../../lib/webhooks/signature.js';
import { MAX_ENDPOINTS_PER_MODE } from '../../lib/webhooks/webhook-endpoint.js';
import { checkedInvoke } from '../support/contract.js';
import { apiEvent, bearer, ddb, extraKey, lambdaContext, newPartner, parse, stores, type Partner } from '../support/fixtures.js';

/** Names resolve where each test says (the URL rules are checked against what a name resolves to). */
const DNS: Record<string, string[]> = {
  'hooks.partner.example': ['93.184.216.34'],
  'other.partner.example': ['93.184.216.35', '2606:2800:220:1:248:1893:25c8:1946'],
  'internal.partner.example': ['10.0.0.5'],
  'mixed.partner.example': ['93.184.216.34', '169.254.169.254'],
  'loopback.partner.example': ['127.0.0.1'],
};
const resolver: HostResolver = async (hostname) => {
  const found = DNS[hostname];
  if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  return found;
};

let clock = new Date('2026-03-01T09:00:00.000Z');
const now = () => clock;

function handlers(urlOptions = {}) {
  const cfg = config();
  const base = stores();
  const plain = new DynamoWebhookEndpointStore(ddb(), cfg.tableName);
  const sealing = new DynamoWebhookEndpointStore(ddb(), cfg.tableName, secretBoxOnce(cfg));
  const manage = { keys: base.keys, resolver, now, urlOptions };
  return {
    create: buildCreateWebhookEndpointHandler({ ...manage, store: sealing }),
    list: buildListWebhookEndpointsHandler({ keys: base.keys, store: plain }),
    get: buildGetWebhookEndpointHandler({ keys: base.keys, store: plain }),
    update: buildUpdateWebhookEndpointHandler({ ...manage, store: plain }),
    remove: buildDeleteWebhookEndpointHandler({ keys: base.keys, store: plain }),
    rotate: buildRotateWebhookEndpointSecretHandler({ keys: base.keys, store: sealing, now }),
  };
}

const h = handlers();
const COLLECTION = '/api/v1/webhook-endpoints';
const ONE = `${COLLECTION}/{id}`;
const json = { 'Content-Type': 'application/json' };

async function create(apiKey: string, body: unknown, via = h) {
  const event = apiEvent({
    method: 'POST',
    path: COLLECTION,
    resource: COLLECTION,
    headers: { ...bearer(apiKey), ...json },
    body: JSON.stringify(body),
  });
  return parse(await checkedInvoke(via.create, event, lambdaContext()));
}
async function list(apiKey: string) {
  return parse(
    await checkedInvoke(
      h.list,
      apiEvent({ method: 'GET', path: COLLECTION, resource: COLLECTION, headers: bearer(apiKey) }),
      lambdaContext(),
    ),
  );
}
async function get(apiKey: string, id: string) {
  const event = apiEvent({ method: 'GET', path: `${COLLECTION}/${id}`, resource: ONE, pathParameters: { id }, headers: bearer(apiKey) });
  return parse(await checkedInvoke(h.get, event, lambdaContext()));
}
async function update(apiKey: string, id: string, body: unknown) {
  const event = apiEvent({
    method: 'PATCH',
    path: `${COLLECTION}/${id}`,
    resource: ONE,
    pathParameters: { id },
    headers: { ...bearer(apiKey), ...json },
    body: JSON.stringify(body),
  });
  return parse(await checkedInvoke(h.update, event, lambdaContext()));
}
async function remove(apiKey: string, id: string) {
  const event = apiEvent({ method: 'DELETE', path: `${COLLECTION}/${id}`, resource: ONE, pathParameters: { id }, headers: bearer(apiKey) });
  const result = await checkedInvoke(h.remove, event, lambdaContext());
  return { statusCode: result.statusCode, body: result.body };
}
async function rotate(apiKey: string, id: string) {
  const resource = `${ONE}/rotate-secret`;
  const event = apiEvent({
    method: 'POST',
    path: `${COLLECTION}/${id}/rotate-secret`,
    resource,
    pathParameters: { id },
    headers: bearer(apiKey),
  });
  return parse(await checkedInvoke(h.rotate, event, lambdaContext()));
}

const manager = (mode: 'live' | 'test' = 'live', scopes: Scope[] = ['webhooks:manage']) => newPartner(scopes, { mode });
const valid = { url: 'https://hooks.partner.example/pca', events: ['case.created', 'case.updated'], description: 'Production receiver' };

/** What the delivery function will read: the endpoint's secrets, unsealed. */
async function storedSecrets(partner: Partner, id: string, mode: 'live' | 'test' = 'live') {
  const store = new DynamoWebhookEndpointStore(ddb(), config().tableName, secretBoxOnce(config()));
  return (await store.getWithSecrets(mode, partner.companyId, id))!.secrets;
}

describe('managing webhook endpoints', () => {
  let partner: Partner;
  beforeEach(async () => {
    partner = await manager();
  });

  it('creates an endpoint and shows its secret once, in the 201 only', async () => {
    const res = await create(partner.apiKey, valid);
    expect(res.statusCode).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^we_[0-9A-Za-z]{22}$/),
      url: 'https://hooks.partner.example/pca',
      events: ['case.created', 'case.updated'],
      description: 'Production receiver',
      status: 'enabled',
      livemode: true,
      createdAt: clock.toISOString(),
      updatedAt: clock.toISOString(),
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    const id = res.body.id as string;
    const secret = res.body.secret as string;

    const read = await get(partner.apiKey, id);
    expect(read.statusCode).toBe(200);
    const { secret: _shownOnce, ...view } = res.body;
    expect(read.body).toEqual(view);
    const listed = await list(partner.apiKey);
    expect(listed.body).toEqual({ data: [view] });
    expect(JSON.stringify([read.body, listed.body])).not.toContain(secret.slice(6));
    expect(await storedSecrets(partner, id)).toEqual([{ secret, createdAt: clock.toISOString() }]);
  });

  it('never stores a secret in plain text: the item holds it sealed, and the seal opens only for its own endpoint', async () => {
    const res = await create(partner.apiKey, valid);
    const secret = res.body.secret as string;
    const key = tableKeys.webhookEndpoint('live', partner.companyId, res.body.id as string);
    const item = (await ddb().send(new GetCommand({ TableName: config().tableName, Key: key }))).Item!;
    const raw = JSON.stringify(item);
    expect(raw).not.toContain(secret);
    expect(raw).not.toContain(secret.slice(6));
    expect(raw).not.toContain(Buffer.from(secret.slice(6), 'base64').toString('hex'));
    expect(item.sealedSecrets).toEqual({ v: 1, wrappedKey: expect.any(String), ciphertext: expect.any(String) });

    // The same sealed value under another endpoint's key does not open (the item key is authenticated data).
    const other = await create(partner.apiKey, valid);
    const otherKey = tableKeys.webhookEndpoint('live', partner.companyId, other.body.id as string);
    const { UpdateCommand } = await import('@aws-sdk/lib-dynamodb');
    await ddb().send(
      new UpdateCommand({
        TableName: config().tableName,
        Key: otherKey,
        UpdateExpression: 'SET sealedSecrets = :s',
        ExpressionAttributeValues: { ':s': item.sealedSecrets },
      }),
    );
    await expect(storedSecrets(partner, other.body.id as string)).rejects.toThrow();
  });

  it('lists endpoints newest first', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      clock = new Date(clock.getTime() + 1000);
      ids.push((await create(partner.apiKey, valid)).body.id as string);
    }
    const listed = await list(partner.apiKey);
    expect((listed.body.data as { id: string }[]).map((e) => e.id)).toEqual(ids.reverse());
  });

  it('changes url, events, description and status, and answers the endpoint as changed', async () => {
    const { id } = (await create(partner.apiKey, valid)).body as { id: string };
    clock = new Date(clock.getTime() + 60_000);
    const res = await update(partner.apiKey, id, {
      url: 'https://other.partner.example/v2',
      events: ['*'],
      description: '',
      status: 'disabled',
    });
    expect(res.statusCode).toBe(200);
    expect(res.body).toMatchObject({
      id,
      url: 'https://other.partner.example/v2',
      events: ['*'],
      description: '',
      status: 'disabled',
      updatedAt: clock.toISOString(),
    });
    expect((await get(partner.apiKey, id)).body).toEqual(res.body);
    // The secret is untouched by a change of settings.
    expect(await storedSecrets(partner, id)).toHaveLength(1);
  });

  it('enabling an endpoint the service disabled clears the reason and the failure run', async () => {
    const { id } = (await create(partner.apiKey, valid)).body as { id: string };
    const { UpdateCommand } = await import('@aws-sdk/lib-dynamodb');
    await ddb().send(
      new UpdateCommand({
        TableName: config().tableName,
        Key: tableKeys.webhookEndpoint('live', partner.companyId, id),
        UpdateExpression: 'SET #s = :d, disabledReason = :r, failingSince = :f',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':d': 'disabled', ':r': 'every delivery failed for 5 days', ':f': '2026-02-20T00:00:00.000Z' },
      }),
    );
    expect((await get(partner.apiKey, id)).body).toMatchObject({ status: 'disabled', disabledReason: 'every delivery failed for 5 days' });
    const res = await update(partner.apiKey, id, { status: 'enabled' });
    expect(res.body.status).toBe('enabled');
    expect(res.body).not.toHaveProperty('disabledReason');
    const item = (
      await ddb().send(new GetCommand({ TableName: config().tableName, Key: tableKeys.webhookEndpoint('live', partner.companyId, id) }))
    ).Item!;
    expect(item.failingSince).toBeUndefined();
  });

  it('deletes an endpoint: 204, then 404, gone from the list, and its slot free again', async () => {
    const { id } = (await create(partner.apiKey, valid)).body as { id: string };
    const res = await remove(partner.apiKey, id);
    expect(res).toEqual({ statusCode: 204, body: '' });
    expect((await get(partner.apiKey, id)).statusCode).toBe(404);
    expect((await remove(partner.apiKey, id)).statusCode).toBe(404);
    expect((await rotate(partner.apiKey, id)).statusCode).toBe(404);
    expect((await update(partner.apiKey, id, { status: 'enabled' })).statusCode).toBe(404);
    expect((await list(partner.apiKey)).body).toEqual({ data: [] });
    const counter = await ddb().send(
      new GetCommand({ TableName: config().tableName, Key: tableKeys.webhookEndpointCounter('live', partner.companyId) }),
    );
    expect(counter.Item?.endpointCount).toBe(0);
  });

  it('rotates the secret: the new one is returned once, and the previous one keeps signing for 24 hours', async () => {
    const created = await create(partner.apiKey, valid);
    const id = created.body.id as string;
    const first = created.body.secret as string;
    clock = new Date(clock.getTime() + 3_600_000);
    const rotatedAt = clock;
    const res = await rotate(partner.apiKey, id);
    expect(res.statusCode).toBe(200);
    expect(res.body).toEqual({ secret: expect.stringMatching(/^whsec_/) });
    const second = res.body.secret as string;
    expect(second).not.toBe(first);

    const secrets = await storedSecrets(partner, id);
    expect(signingSecrets(secrets, new Date(rotatedAt.getTime() + ROTATION_OVERLAP_MS - 1))).toEqual([second, first]);
    expect(signingSecrets(secrets, new Date(rotatedAt.getTime() + ROTATION_OVERLAP_MS))).toEqual([second]);
    // A receiver holding either secret verifies a delivery signed during the overlap.
    const payload = '{"type":"case.created"}';
    // Signed now (the library refuses timestamps more than 5 minutes off), with the secrets that sign just after the rotation.
    const sentAt = new Date();
    const signature = signingSecrets(secrets, rotatedAt)
      .map((s) => new Webhook(s).sign('evt_1', sentAt, payload))
      .join(' ');
    for (const secret of [first, second]) {
      const headers = {
        'webhook-id': 'evt_1',
        'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
        'webhook-signature': signature,
      };
      expect(() => new Webhook(secret).verify(payload, headers)).not.toThrow();
    }
    expect(JSON.stringify((await get(partner.apiKey, id)).body)).not.toContain(second.slice(6));
  });

  it('never writes a secret to the logs, at any level', async () => {
    const lines: string[] = [];
    const capture = (chunk: unknown) => {
      lines.push(String(chunk));
      return true;
    };
    const spies = [
      jest.spyOn(process.stdout, 'write').mockImplementation(capture),
      jest.spyOn(process.stderr, 'write').mockImplementation(capture),
      ...(['log', 'info', 'warn', 'error', 'debug'] as const).map((m) =>
        jest.spyOn(console, m).mockImplementation((...a) => void lines.push(a.map(String).join(' '))),
      ),
    ];
    const level = logger.getLevelName();
    logger.setLogLevel('DEBUG');
    try {
      const created = await create(partner.apiKey, valid);
      const rotated = await rotate(partner.apiKey, created.body.id as string);
      await list(partner.apiKey);
      await get(partner.apiKey, created.body.id as string);
      expect(lines.length).toBeGreaterThan(0);
      const text = lines.join('\n');
      expect(text).toContain(created.body.id as string);
      for (const secret of [created.body.secret as string, rotated.body.secret as string]) expect(text).not.toContain(secret.slice(6, 20));
    } finally {
      logger.setLogLevel(level);
      for (const spy of spies) spy.mockRestore();
    }
  });

  it('answers 404 for an id that is not an endpoint id, without a read', async () => {
    expect((await get(partner.apiKey, 'case_7Gk2mP9qR4sT8vW1xY3zA5')).statusCode).toBe(404);
    expect((await get(partner.apiKey, 'we_0000000000000000000000')).statusCode).toBe(404);
  });
});

describe('the limit of 16 endpoints per company and mode', () => {
  it('refuses the 17th endpoint with WEBHOOK_ENDPOINT_LIMIT_REACHED, and accepts one again after a delete', async () => {
    const partner = await manager();
    const ids: string[] = [];
    for (let i = 0; i < MAX_ENDPOINTS_PER_MODE; i++) {
      const res = await create(partner.apiKey, valid);
      expect(res.statusCode).toBe(201);
      ids.push(res.body.id as string);
    }
    const refused = await create(partner.apiKey, valid);
    expect(refused.statusCode).toBe(409);
    expect(refused.body).toMatchObject({ code: 'WEBHOOK_ENDPOINT_LIMIT_REACHED', maxEndpoints: 16 });
    expect((await list(partner.apiKey)).body.data).toHaveLength(16);

    // The other mode has a limit of its own.
    const testKey = await extraKey(partner.companyId, ['webhooks:manage'], 'test');
    expect((await create(testKey, valid)).statusCode).toBe(201);

    expect((await remove(partner.apiKey, ids[0]!)).statusCode).toBe(204);
    expect((await create(partner.apiKey, valid)).statusCode).toBe(201);
    expect((await create(partner.apiKey, valid)).statusCode).toBe(409);
  }, 60_000);

  it('holds under 20 concurrent creates: exactly 16 are created, the rest refused', async () => {
    const partner = await manager();
    const results = await Promise.all(Array.from({ length: 20 }, () => create(partner.apiKey, valid)));
    const statuses = results.map((r) => r.statusCode).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(16);
    expect(statuses.filter((s) => s === 409)).toHaveLength(4);
    const stored = await ddb().send(
      new QueryCommand({
        TableName: config().tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :ep)',
        ExpressionAttributeValues: { ':pk': tableKeys.webhookEndpointPartition('live', partner.companyId), ':ep': 'EP#' },
      }),
    );
    expect(stored.Items).toHaveLength(16);
  }, 60_000);
});

describe('the URL rules at creation and change', () => {
  let partner: Partner;
  beforeAll(async () => {
    partner = await manager();
  });

  const refused: [string, string, RegExp][] = [
    ['plain http', 'http://hooks.partner.example/pca', /https:\/\//],
    ['user info', 'https://user:pw@hooks.partner.example/pca', /user info/],
    ['a fragment', 'https://hooks.partner.example/pca#x', /fragment/],
    ['too long', `https://hooks.partner.example/${'a'.repeat(2_048)}`, /at most 2048 characters/],
    ['a private IP literal', 'https://10.1.2.3/pca', /10\.1\.2\.3 is a private address/],
    ['the metadata service', 'https://169.254.169.254/latest', /link-local/],
    ['a loopback IPv6 literal', 'https://[::1]/pca', /loopback/],
    [
      'a name resolving to a private address',
      'https://internal.partner.example/pca',
      /internal\.partner\.example resolves to 10\.0\.0\.5 is a private address/,
    ],
    ['a name with a private address among public ones', 'https://mixed.partner.example/pca', /169\.254\.169\.254/],
    ['a name resolving to loopback', 'https://loopback.partner.example/pca', /loopback/],
    ['a name that does not resolve', 'https://nowhere.partner.example/pca', /does not resolve/],
    ['localhost', 'https://localhost:8443/pca', /localhost/],
  ];

  it.each(refused)('refuses %s with 400 INVALID_REQUEST on field url', async (_name, url, message) => {
    const res = await create(partner.apiKey, { ...valid, url });
    expect(res.statusCode).toBe(400);
    expect(res.body.code).toBe('INVALID_REQUEST');
    expect(res.body.errors).toEqual([{ field: 'url', message: expect.stringMatching(message) }]);
  });

  it('checks a changed URL with the same rules, and leaves the endpoint as it was', async () => {
    const { id } = (await create(partner.apiKey, valid)).body as { id: string };
    const res = await update(partner.apiKey, id, { url: 'https://internal.partner.example/pca' });
    expect(res.statusCode).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'url', message: expect.stringMatching(/private address/) }]);
    expect((await get(partner.apiKey, id)).body.url).toBe(valid.url);
  });

  it('accepts http://localhost:<port> and 127.0.0.1 only under the local-development option (npm start)', async () => {
    const local = handlers({ allowLocalDevelopment: true });
    for (const url of ['http://localhost:4000/hooks', 'http://127.0.0.1:4000/hooks']) {
      expect((await create(partner.apiKey, { ...valid, url }, local)).statusCode).toBe(201);
      expect((await create(partner.apiKey, { ...valid, url })).statusCode).toBe(400);
    }
    expect((await create(partner.apiKey, { ...valid, url: 'http://10.0.0.1:4000/hooks' }, local)).statusCode).toBe(400);
  });

  it('names every invalid field of the body at once', async () => {
    const res = await create(partner.apiKey, { url: 42, events: ['case.deleted', 'case.created', 'case.created'], colour: 'red' });
    expect(res.statusCode).toBe(400);
    expect(res.body.errors).toEqual(
      expect.arrayContaining([
        { field: 'url', message: 'url must be a string' },
        { field: 'events.0', message: 'each entry of events must be one of case.created, case.updated, *' },
        { field: 'colour', message: expect.stringMatching(/unknown field/) },
      ]),
    );
    const empty = await create(partner.apiKey, { url: valid.url, events: [] });
    expect(empty.body.errors).toEqual([{ field: 'events', message: 'events must name at least one event type' }]);
    const twice = await create(partner.apiKey, { url: valid.url, events: ['*', '*'] });
    expect(twice.body.errors).toEqual([{ field: 'events', message: 'events must not name an event type twice' }]);
    const { id } = (await create(partner.apiKey, valid)).body as { id: string };
    const nothing = await update(partner.apiKey, id, {});
    expect(nothing.statusCode).toBe(400);
    const badStatus = await update(partner.apiKey, id, { status: 'paused' });
    expect(badStatus.body.errors).toEqual([{ field: 'status', message: 'status must be one of enabled, disabled' }]);
  });
});

describe('test and live endpoints, companies and scopes', () => {
  it('keys of one mode never see the other mode’s endpoints', async () => {
    const partner = await manager();
    const testKey = await extraKey(partner.companyId, ['webhooks:manage'], 'test');
    const live = await create(partner.apiKey, valid);
    const test = await create(testKey, valid);
    expect(live.body.livemode).toBe(true);
    expect(test.body.livemode).toBe(false);
    const liveId = live.body.id as string;
    const testId = test.body.id as string;

    expect((await list(partner.apiKey)).body.data).toEqual([expect.objectContaining({ id: liveId })]);
    expect((await list(testKey)).body.data).toEqual([expect.objectContaining({ id: testId })]);
    for (const [key, id] of [
      [partner.apiKey, testId],
      [testKey, liveId],
    ] as const) {
      expect((await get(key, id)).statusCode).toBe(404);
      expect((await update(key, id, { status: 'disabled' })).statusCode).toBe(404);
      expect((await rotate(key, id)).statusCode).toBe(404);
      expect((await remove(key, id)).statusCode).toBe(404);
    }
  });

  it('another company’s endpoint answers exactly like a missing one', async () => {
    const owner = await manager();
    const stranger = await manager();
    const { id } = (await create(owner.apiKey, valid)).body as { id: string };
    const missing = await get(stranger.apiKey, 'we_0000000000000000000000');
    const foreign = await get(stranger.apiKey, id);
    expect(foreign.statusCode).toBe(404);
    expect({ ...foreign.body, requestId: '' }).toEqual({ ...missing.body, requestId: '' });
    expect((await remove(stranger.apiKey, id)).statusCode).toBe(404);
    expect((await get(owner.apiKey, id)).statusCode).toBe(200);
  });

  it('requires the webhooks:manage scope on every route', async () => {
    const owner = await manager();
    const { id } = (await create(owner.apiKey, valid)).body as { id: string };
    const casesOnly = await extraKey(owner.companyId, ['cases:read', 'cases:write']);
    for (const res of [
      await create(casesOnly, valid),
      await list(casesOnly),
      await get(casesOnly, id),
      await update(casesOnly, id, { status: 'disabled' }),
      await rotate(casesOnly, id),
    ]) {
      expect(res.statusCode).toBe(403);
      expect(res.body).toMatchObject({ code: 'INSUFFICIENT_SCOPE', requiredScope: 'webhooks:manage' });
    }
    expect((await remove(casesOnly, id)).statusCode).toBe(403);
    expect((await get(owner.apiKey, id)).body.status).toBe('enabled');
  });

  it('company clear-test-data removes test endpoints and their counter, and leaves live ones', async () => {
    const partner = await manager();
    const testKey = await extraKey(partner.companyId, ['webhooks:manage'], 'test');
    const live = await create(partner.apiKey, valid);
    await create(testKey, valid);
    await create(testKey, valid);
    await new DynamoTestModeItemStore(ddb(), config().tableName).clearTestItems(partner.companyId);
    expect((await list(testKey)).body.data).toEqual([]);
    const counter = await ddb().send(
      new GetCommand({ TableName: config().tableName, Key: tableKeys.webhookEndpointCounter('test', partner.companyId) }),
    );
    expect(counter.Item).toBeUndefined();
    expect((await list(partner.apiKey)).body.data).toEqual([expect.objectContaining({ id: live.body.id })]);
    // With the counter gone too, the test world starts afresh: 16 may be created again.
    expect((await create(testKey, valid)).statusCode).toBe(201);
  });
});
