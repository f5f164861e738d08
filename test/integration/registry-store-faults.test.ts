import { DynamoRegistryProfileCache } from '../../lib/adapters/dynamodb/registry-profile-cache.js';
import { DynamoRegistryRateLimiter } from '../../lib/adapters/dynamodb/registry-rate-limiter.js';
import type { RateLimitConfig } from '../../lib/cases/verification/rate-window.js';
import { PROFILE_REUSE_MS } from '../../lib/cases/verification/verify-debtor.js';
import { randomBase62 } from '../../lib/random-id.js';
import { config } from '../../lib/runtime/config.js';
import { faultyDocumentClient, type Fault } from '../support/faulty-client.js';

/**
 * The registry items under storage faults (DynamoDB Local never throttles or loses an answer, so
 * the faults are injected): every call goes through the one retry layer, and a write whose answer
 * was lost is recognised, or errs on the safe side.
 */
const NOW = new Date('2026-03-01T12:00:00.000Z');
const at = (ms: number) => new Date(NOW.getTime() + ms);
const SMALL: RateLimitConfig = { limit: 5, windowMs: 10_000, slots: 10 };
const number = () => `SC${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}`;
const leaseAt = (now: Date) => ({ now, until: new Date(now.getTime() + 30_000), freshSince: new Date(now.getTime() - PROFILE_REUSE_MS) });

/** Fails the first `times` UpdateItem calls with `fault` (of the registry's rate window only, with `windowOnly`: not a company's share). */
function firstUpdates(fault: Fault, times = 1, windowOnly = false) {
  let left = times;
  const aimed = (input: Record<string, unknown>) => !windowOnly || !JSON.stringify(input.Key).includes('#COMPANY#');
  return faultyDocumentClient({
    decide: (name, input) => (name === 'UpdateItemCommand' && aimed(input) && left-- > 0 ? fault : undefined),
  });
}

describe('the registry profile cache under storage faults', () => {
  it('a lease whose answer was lost is still the worker’s own: it is taken, not held by a stranger', async () => {
    const { client, counter } = firstUpdates('lost-response');
    const cache = new DynamoRegistryProfileCache(client, config().tableName);
    const n = number();
    const lease = await cache.lease(n, leaseAt(NOW));
    expect(counter.injected['lost-response']).toBe(1);
    expect(lease).toMatchObject({ kind: 'taken' });
    if (lease.kind !== 'taken') return;
    const answer = { answer: { kind: 'not-found' as const }, fetchedAt: NOW.toISOString() };
    await cache.put(n, answer, lease.token);
    expect(await cache.lease(n, leaseAt(at(1_000)))).toEqual({ kind: 'cached', cached: answer });
  });

  it('a throttled lease is retried and taken once', async () => {
    const { client, counter } = firstUpdates('throttle', 2);
    const cache = new DynamoRegistryProfileCache(client, config().tableName);
    const n = number();
    expect(await cache.lease(n, leaseAt(NOW))).toMatchObject({ kind: 'taken' });
    expect(counter.injected.throttle).toBe(2);
    expect(await new DynamoRegistryProfileCache(client, config().tableName).lease(n, leaseAt(NOW))).toMatchObject({ kind: 'held' });
  });
});

describe('the registry rate limiter under storage faults', () => {
  it('a throttled permit write is retried and counted once', async () => {
    const { client, counter } = firstUpdates('throttle', 2, true);
    const name = `faults-${randomBase62(12)}`;
    const limiter = new DynamoRegistryRateLimiter(client, config().tableName, { name, config: SMALL });
    const granted = [];
    // A company each: the registry's window is what binds.
    for (let i = 0; i < 8; i++) granted.push((await limiter.take(at(100), `cmp_${i}`)).granted);
    expect(counter.injected.throttle).toBe(2);
    expect(granted).toEqual([true, true, true, true, true, false, false, false]);
  });

  it('a worker whose view of the window already refuses answers without a write and spends no company share', async () => {
    const { client } = firstUpdates('throttle', 0);
    const name = `faults-${randomBase62(12)}`;
    const limiter = new DynamoRegistryRateLimiter(client, config().tableName, { name, config: SMALL });
    for (let i = 0; i < SMALL.limit; i++) expect(await limiter.take(at(100), `cmp_${i}`)).toEqual({ granted: true });
    const writes = limiter.writes;
    for (let i = 0; i < 10; i++) expect(await limiter.take(at(200), 'cmp_late')).toMatchObject({ granted: false, limitedBy: 'registry' });
    expect(limiter.writes).toBe(writes);
    // Its share untouched: the late company takes four permits (its share of five) once the window frees.
    for (let i = 0; i < 4; i++) expect(await limiter.take(at(11_100), 'cmp_late')).toEqual({ granted: true });
  });

  it('a throttled share write is retried and counted once', async () => {
    const { client, counter } = firstUpdates('throttle', 2);
    const name = `faults-${randomBase62(12)}`;
    const limiter = new DynamoRegistryRateLimiter(client, config().tableName, { name, config: SMALL });
    const granted = [];
    for (let i = 0; i < 6; i++) granted.push((await limiter.take(at(100), 'cmp_one')).granted);
    expect(counter.injected.throttle).toBe(2);
    // One company's share of a window of 5 is 4.
    expect(granted).toEqual([true, true, true, true, false, false]);
  });

  it('a permit write whose answer was lost never lets the window exceed the limit (it may count that permit twice)', async () => {
    const { client, counter } = firstUpdates('lost-response', 1, true);
    const name = `faults-${randomBase62(12)}`;
    const limiter = new DynamoRegistryRateLimiter(client, config().tableName, { name, config: SMALL });
    let granted = 0;
    for (let i = 0; i < 8; i++) if ((await limiter.take(at(100), `cmp_${i}`)).granted) granted++;
    expect(counter.injected['lost-response']).toBe(1);
    expect(granted).toBeGreaterThanOrEqual(SMALL.limit - 1);
    expect(granted).toBeLessThanOrEqual(SMALL.limit);
  });
});
