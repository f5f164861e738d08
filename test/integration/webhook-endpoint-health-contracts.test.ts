import { DynamoWebhookEndpointStore } from '../../lib/adapters/dynamodb/webhook-endpoint-store.js';
import { secretBoxOnce } from '../../lib/adapters/secrets/webhook-secret-key.js';
import { randomBase62 } from '../../lib/random-id.js';
import { config } from '../../lib/runtime/config.js';
import type { WebhookEndpointStore } from '../../lib/webhooks/ports.js';
import { generateEndpointSecret } from '../../lib/webhooks/signature.js';
import { MAX_ENDPOINTS_PER_MODE, type WebhookEndpoint } from '../../lib/webhooks/webhook-endpoint.js';
import { ddb } from '../support/fixtures.js';
import { MemoryWebhookEndpointStore } from '../support/memory-webhooks.js';

/**
 * The endpoint health half of the endpoint store's port contract (lib/webhooks/ports.ts
 * `recordHealth`), run against the in-memory store of the fast tier and the DynamoDB adapter on
 * DynamoDB Local: what the delivery function's workers may rely on when several of them, each
 * with the endpoint as it read it at the start of its batch, record one endpoint's health at once.
 * (Endpoint management has its own tests through the routes: webhook-endpoints.test.ts.)
 */
type World = () => WebhookEndpointStore;

const memoryWorld = (): World => {
  const store = new MemoryWebhookEndpointStore();
  return () => store;
};
const dynamoWorld = (): World => {
  const cfg = config();
  return () => new DynamoWebhookEndpointStore(ddb(), cfg.tableName, secretBoxOnce(cfg));
};

const T0 = '2026-03-01T10:00:00.000Z';
const T1 = '2026-03-01T10:00:07.000Z';

async function newEndpoint(store: WebhookEndpointStore, overrides: Partial<WebhookEndpoint> = {}): Promise<WebhookEndpoint> {
  const endpoint: WebhookEndpoint = {
    endpointId: `we_${randomBase62(22)}`,
    companyId: `co_${randomBase62(12)}`,
    mode: 'live',
    url: 'https://hooks.partner.example/pca',
    events: ['*'],
    description: '',
    status: 'enabled',
    createdAt: T0,
    updatedAt: T0,
    version: 1,
    ...overrides,
  };
  await store.create(endpoint, [{ secret: generateEndpointSecret(), createdAt: T0 }], MAX_ENDPOINTS_PER_MODE);
  return endpoint;
}

describe.each([
  ['in memory', memoryWorld],
  ['on DynamoDB Local', dynamoWorld],
])('recording an endpoint’s delivery health (%s)', (_name, makeWorld) => {
  let world: World;
  beforeEach(() => {
    world = makeWorld();
  });

  it('a failing run keeps the start recorded first when another worker, which read the endpoint before, records a later one', async () => {
    const a = world();
    const b = world();
    const { mode, companyId, endpointId } = await newEndpoint(a);
    expect(await a.recordHealth(mode, companyId, endpointId, { status: 'enabled', failingSince: T0 })).toBe('recorded');
    expect(await b.recordHealth(mode, companyId, endpointId, { status: 'enabled', failingSince: T1 })).toBe('recorded');
    expect((await a.get(mode, companyId, endpointId))?.failingSince).toBe(T0);
  });

  it('a success ends the run, and the next failure starts a new one at its own time', async () => {
    const store = world();
    const { mode, companyId, endpointId } = await newEndpoint(store);
    await store.recordHealth(mode, companyId, endpointId, { status: 'enabled', failingSince: T0 });
    await store.recordHealth(mode, companyId, endpointId, { status: 'enabled' });
    expect((await store.get(mode, companyId, endpointId))?.failingSince).toBeUndefined();
    await store.recordHealth(mode, companyId, endpointId, { status: 'enabled', failingSince: T1 });
    expect((await store.get(mode, companyId, endpointId))?.failingSince).toBe(T1);
  });

  it('disables an enabled endpoint once, with its reason and a new version, keeping the run’s first start', async () => {
    const store = world();
    const { mode, companyId, endpointId } = await newEndpoint(store);
    await store.recordHealth(mode, companyId, endpointId, { status: 'enabled', failingSince: T0 });
    const disable = { disabledReason: 'Every delivery failed for 5 days.' };
    expect(await store.recordHealth(mode, companyId, endpointId, { status: 'enabled', failingSince: T1 }, disable)).toBe('recorded');
    expect(await store.recordHealth(mode, companyId, endpointId, { status: 'enabled', failingSince: T1 }, disable)).toBe('unchanged');
    expect(await store.get(mode, companyId, endpointId)).toMatchObject({
      status: 'disabled',
      disabledReason: disable.disabledReason,
      failingSince: T0,
      version: 2,
    });
  });

  it('an endpoint deleted meanwhile is gone, and is not brought back by a health write', async () => {
    const store = world();
    const { mode, companyId, endpointId } = await newEndpoint(store);
    expect(await store.delete(mode, companyId, endpointId)).toBe(true);
    expect(await store.recordHealth(mode, companyId, endpointId, { status: 'enabled', failingSince: T0 })).toBe('gone');
    expect(await store.get(mode, companyId, endpointId)).toBeUndefined();
  });
});
