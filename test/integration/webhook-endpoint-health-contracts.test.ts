import { DynamoWebhookEndpointStore } from '../../lib/adapters/dynamodb/webhook-endpoint-store.js';
import { secretBoxOnce } from '../../lib/adapters/secrets/webhook-secret-key.js';
import { randomBase62 } from '../../lib/random-id.js';
import { config } from '../../lib/runtime/config.js';
import type { Caller } from '../../lib/auth/authenticate-key.js';
import { rotateEndpointSecret, updateEndpoint } from '../../lib/webhooks/manage-endpoints.js';
import type { WebhookEndpointStore } from '../../lib/webhooks/ports.js';
import { generateEndpointSecret } from '../../lib/webhooks/signature.js';
import { MAX_ENDPOINTS_PER_MODE, type WebhookEndpoint } from '../../lib/webhooks/webhook-endpoint.js';
import { ddb } from '../support/fixtures.js';
import { MemoryWebhookEndpointStore } from '../support/memory-webhooks.js';

/**
 * The endpoint health half of the endpoint store's port contract (lib/webhooks/ports.ts
 * `recordHealth`), run against the in-memory store of the fast tier and the DynamoDB adapter on
 * DynamoDB Local: what the delivery function's workers may rely on when several of them, each
 * with the endpoint as it read it at the start of its batch, record one endpoint's health at once;
 * and that a change of the endpoint's settings (PATCH, rotate-secret), which reads the endpoint
 * before it writes, never writes back the health it read. (Endpoint management has its own tests
 * through the routes: webhook-endpoints.test.ts.)
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

  describe('a failing run after a quiet gap (more than 24 hours without a failure)', () => {
    const OLD_START = '2026-02-20T10:00:00.000Z';
    const OLD_LAST = '2026-02-22T10:00:00.000Z';
    const AFTER_GAP = '2026-03-01T10:00:00.000Z';
    const failure = (at: string, start = at) => ({ status: 'enabled' as const, failingSince: start, lastFailureAt: at });

    it('replaces the old run: the next failure starts a new one at its own time', async () => {
      const store = world();
      const { mode, companyId, endpointId } = await newEndpoint(store);
      await store.recordHealth(mode, companyId, endpointId, failure(OLD_START));
      await store.recordHealth(mode, companyId, endpointId, failure(OLD_LAST, OLD_START));
      expect(await store.get(mode, companyId, endpointId)).toMatchObject({ failingSince: OLD_START, lastFailureAt: OLD_LAST });
      expect(await store.recordHealth(mode, companyId, endpointId, failure(AFTER_GAP))).toBe('recorded');
      expect(await store.get(mode, companyId, endpointId)).toMatchObject({ failingSince: AFTER_GAP, lastFailureAt: AFTER_GAP });
    });

    it('a run recorded without its last failure is judged from its start', async () => {
      const store = world();
      const { mode, companyId, endpointId } = await newEndpoint(store);
      await store.recordHealth(mode, companyId, endpointId, { status: 'enabled', failingSince: OLD_START });
      await store.recordHealth(mode, companyId, endpointId, failure(AFTER_GAP));
      expect((await store.get(mode, companyId, endpointId))?.failingSince).toBe(AFTER_GAP);
    });

    it('two workers that both read the old run start one new run: the first start stands, the later failure moves the last one on', async () => {
      const a = world();
      const b = world();
      const { mode, companyId, endpointId } = await newEndpoint(a);
      await a.recordHealth(mode, companyId, endpointId, failure(OLD_LAST, OLD_START));
      await a.recordHealth(mode, companyId, endpointId, failure(AFTER_GAP));
      await b.recordHealth(mode, companyId, endpointId, failure('2026-03-01T11:30:00.000Z'));
      expect(await a.get(mode, companyId, endpointId)).toMatchObject({
        failingSince: AFTER_GAP,
        lastFailureAt: '2026-03-01T11:30:00.000Z',
      });
    });

    it('a failure within the gap keeps the run’s start; an older failure does not move its last failure back; a success clears both', async () => {
      const store = world();
      const { mode, companyId, endpointId } = await newEndpoint(store);
      await store.recordHealth(mode, companyId, endpointId, failure(OLD_START));
      await store.recordHealth(mode, companyId, endpointId, failure('2026-02-21T09:00:00.000Z', OLD_START));
      await store.recordHealth(mode, companyId, endpointId, failure('2026-02-21T08:00:00.000Z', '2026-02-21T08:00:00.000Z'));
      expect(await store.get(mode, companyId, endpointId)).toMatchObject({
        failingSince: OLD_START,
        lastFailureAt: '2026-02-21T09:00:00.000Z',
      });
      await store.recordHealth(mode, companyId, endpointId, { status: 'enabled' });
      const cleared = await store.get(mode, companyId, endpointId);
      expect([cleared?.failingSince, cleared?.lastFailureAt]).toEqual([undefined, undefined]);
    });
  });

  it('an endpoint deleted meanwhile is gone, and is not brought back by a health write', async () => {
    const store = world();
    const { mode, companyId, endpointId } = await newEndpoint(store);
    expect(await store.delete(mode, companyId, endpointId)).toBe(true);
    expect(await store.recordHealth(mode, companyId, endpointId, { status: 'enabled', failingSince: T0 })).toBe('gone');
    expect(await store.get(mode, companyId, endpointId)).toBeUndefined();
  });

  describe('a change of the endpoint’s settings never writes back the health it read', () => {
    const T_OLD = '2026-02-22T10:00:00.000Z';
    const callerOf = (e: WebhookEndpoint): Caller => ({
      companyId: e.companyId,
      keyId: 'key_1',
      scopes: ['webhooks:manage'],
      mode: e.mode,
    });
    const now = () => new Date('2026-03-01T11:00:00.000Z');
    const resolver = async () => ['93.184.216.34'];

    /** The real store, with `write` run right after each read of the endpoint: a delivery's health write racing the change. */
    function racing(store: WebhookEndpointStore, write: () => Promise<unknown>): WebhookEndpointStore {
      const afterRead = async <T>(read: Promise<T>): Promise<T> => {
        const found = await read;
        await write();
        return found;
      };
      return Object.assign(Object.create(store) as WebhookEndpointStore, {
        get: (...args: Parameters<WebhookEndpointStore['get']>) => afterRead(store.get(...args)),
        getWithSecrets: (...args: Parameters<WebhookEndpointStore['getWithSecrets']>) => afterRead(store.getWithSecrets(...args)),
      });
    }

    it('a success recorded between a PATCH’s read and its write ends the failing run for good (the PATCH does not restore it)', async () => {
      const store = world();
      const endpoint = await newEndpoint(store);
      const { mode, companyId, endpointId } = endpoint;
      await store.recordHealth(mode, companyId, endpointId, { status: 'enabled', failingSince: T_OLD });
      const success = () => world().recordHealth(mode, companyId, endpointId, { status: 'enabled' });
      const deps = { store: racing(store, success), resolver, now };
      expect(await updateEndpoint(deps, callerOf(endpoint), endpointId, { description: 'changed' })).toMatchObject({
        description: 'changed',
      });
      const stored = await store.get(mode, companyId, endpointId);
      expect(stored).toMatchObject({ description: 'changed', version: 2 });
      expect(stored?.failingSince).toBeUndefined();
    });

    it('a failing run started between a rotation’s read and its write stands, beside the new secret', async () => {
      const store = world();
      const endpoint = await newEndpoint(store);
      const { mode, companyId, endpointId } = endpoint;
      const failure = () => world().recordHealth(mode, companyId, endpointId, { status: 'enabled', failingSince: T1 });
      const { secret } = await rotateEndpointSecret({ store: racing(store, failure), now }, callerOf(endpoint), endpointId);
      const stored = await store.getWithSecrets(mode, companyId, endpointId);
      expect(stored?.secrets.map((s) => s.secret)).toContain(secret);
      expect(stored?.endpoint).toMatchObject({ failingSince: T1, version: 2 });
    });

    it('a PATCH of status enabled on an endpoint already enabled keeps its failing run', async () => {
      const store = world();
      const endpoint = await newEndpoint(store);
      const { mode, companyId, endpointId } = endpoint;
      await store.recordHealth(mode, companyId, endpointId, { status: 'enabled', failingSince: T0 });
      await updateEndpoint({ store, resolver, now }, callerOf(endpoint), endpointId, { status: 'enabled', description: 'again' });
      expect(await store.get(mode, companyId, endpointId)).toMatchObject({ status: 'enabled', description: 'again', failingSince: T0 });
    });

    it('enabling an endpoint the service disabled clears its reason and its failing run', async () => {
      const store = world();
      const endpoint = await newEndpoint(store);
      const { mode, companyId, endpointId } = endpoint;
      await store.recordHealth(
        mode,
        companyId,
        endpointId,
        { status: 'enabled', failingSince: T0 },
        { disabledReason: 'Every delivery failed.' },
      );
      const view = await updateEndpoint({ store, resolver, now }, callerOf(endpoint), endpointId, { status: 'enabled' });
      expect(view).not.toHaveProperty('disabledReason');
      const stored = await store.get(mode, companyId, endpointId);
      expect(stored).toMatchObject({ status: 'enabled', version: 3 });
      expect(stored?.failingSince).toBeUndefined();
      expect(stored?.disabledReason).toBeUndefined();
    });

    it('a reset of health is refused (stale) when the endpoint is no longer stored disabled', async () => {
      const store = world();
      const endpoint = await newEndpoint(store);
      const { mode, companyId, endpointId } = endpoint;
      await store.recordHealth(mode, companyId, endpointId, { status: 'enabled', failingSince: T0 });
      const next = { ...endpoint, updatedAt: T1, version: 2 };
      expect(await store.update(next, 1, undefined, undefined, { resetHealth: true })).toBe('stale');
      expect((await store.get(mode, companyId, endpointId))?.failingSince).toBe(T0);
    });
  });
});
