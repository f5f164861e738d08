import { DynamoRegistryProfileCache } from '../../lib/adapters/dynamodb/registry-profile-cache.js';
import { DynamoRegistryRateLimiter } from '../../lib/adapters/dynamodb/registry-rate-limiter.js';
import { documentClient } from '../../lib/adapters/dynamodb/dynamo-client.js';
import type { CachedAnswer, FetchLease, ProfileCache, RateLimiter } from '../../lib/cases/verification/ports.js';
import { companyShare, type RateLimitConfig } from '../../lib/cases/verification/rate-window.js';
import { PROFILE_REUSE_MS, verifyDebtor } from '../../lib/cases/verification/verify-debtor.js';
import { randomBase62 } from '../../lib/random-id.js';
import { config } from '../../lib/runtime/config.js';
import { MemoryProfileCache, MemoryRateLimiter, ScriptedRegistry } from '../support/memory-verification.js';

/**
 * The verification ports' contract (lib/cases/verification/ports.ts): one suite, run against the
 * in-memory implementations of the fast tier and the DynamoDB adapters on DynamoDB Local, as
 * test/integration/port-contracts.test.ts does for the case ports. Each "world" hands out several
 * workers over one shared store: the same instance in memory, a new adapter instance (a Lambda
 * instance of its own, with its own view of the item) over the same table item for DynamoDB.
 */
interface World {
  /** Another worker's cache over the same shared answers. */
  cache(): ProfileCache;
  /** Another worker's limiter over the same shared window. */
  limiter(): RateLimiter;
  /** Every permit granted, by any worker, as epoch ms of the `now` it was granted at. */
  granted(): number[];
}

type MakeWorld = (config: RateLimitConfig) => World;

const memoryWorld: MakeWorld = (rate) => {
  const cache = new MemoryProfileCache();
  const limiter = new MemoryRateLimiter(rate);
  return { cache: () => cache, limiter: () => limiter, granted: () => limiter.granted };
};

/** Records the permits a worker's limiter grants, for the rolling-window checks. */
function recording(limiter: RateLimiter, log: number[]): RateLimiter {
  return {
    take: async (now, companyId) => {
      const permit = await limiter.take(now, companyId);
      if (permit.granted) log.push(now.getTime());
      return permit;
    },
    blockUntil: (until) => limiter.blockUntil(until),
  };
}

const dynamoWorld: MakeWorld = (rate) => {
  const cfg = config();
  const client = documentClient(cfg);
  const name = `contract-${randomBase62(12)}`;
  const log: number[] = [];
  return {
    cache: () => new DynamoRegistryProfileCache(client, cfg.tableName),
    limiter: () => recording(new DynamoRegistryRateLimiter(client, cfg.tableName, { name, config: rate, random: () => 0 }), log),
    granted: () => log,
  };
};

const NOW = new Date('2026-03-01T12:00:00.000Z');
const at = (ms: number) => new Date(NOW.getTime() + ms);
const LEASE_MS = 30_000;
const SMALL: RateLimitConfig = { limit: 5, windowMs: 10_000, slots: 10 };
/** A fresh company number per test, so tests never share a cache item. */
const number = () => `SC${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}`;
const found = (companyNumber: string, companyName = 'ACME WIDGETS LIMITED') => ({
  kind: 'found' as const,
  profile: { companyNumber, companyName, companyStatus: 'active' },
});
const leaseAt = (now: Date) => ({ now, until: new Date(now.getTime() + LEASE_MS), freshSince: new Date(now.getTime() - PROFILE_REUSE_MS) });

function maxInAnyWindow(times: number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let max = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i]! - sorted[j]! >= windowMs) j++;
    max = Math.max(max, i - j + 1);
  }
  return max;
}

function token(lease: FetchLease): string {
  if (lease.kind !== 'taken') throw new Error(`expected the lease to be taken, got ${lease.kind}`);
  return lease.token;
}

describe.each([
  ['in-memory implementations', memoryWorld],
  ['DynamoDB adapters on DynamoDB Local', dynamoWorld],
] as const)('verification port contract: %s', (_name, makeWorld) => {
  describe('the shared profile cache', () => {
    it('knows nothing of a number never asked about, and gives the first worker the lease', async () => {
      const world = makeWorld(SMALL);
      const n = number();
      expect(await world.cache().get(n)).toBeUndefined();
      expect(await world.cache().lease(n, leaseAt(NOW))).toMatchObject({ kind: 'taken', token: expect.any(String) });
    });

    it('gives concurrent leases of one number to exactly one worker; the others wait for the end of its lease', async () => {
      const world = makeWorld(SMALL);
      const n = number();
      const leases = await Promise.all(Array.from({ length: 25 }, () => world.cache().lease(n, leaseAt(NOW))));
      expect(leases.filter((l) => l.kind === 'taken')).toHaveLength(1);
      expect(leases.filter((l) => l.kind === 'held')).toEqual(
        Array.from({ length: 24 }, () => ({ kind: 'held', heldUntil: at(LEASE_MS) })),
      );
    });

    it('stores the answer and ends the lease: a later lease finds the answer, found or not found, exactly as stored', async () => {
      const world = makeWorld(SMALL);
      for (const kind of ['found', 'not-found'] as const) {
        const n = number();
        const stored: CachedAnswer = { answer: kind === 'found' ? found(n) : { kind }, fetchedAt: NOW.toISOString() };
        await world.cache().put(n, stored, token(await world.cache().lease(n, leaseAt(NOW))));
        expect(await world.cache().get(n)).toEqual(stored);
        expect(await world.cache().lease(n, leaseAt(at(1_000)))).toEqual({ kind: 'cached', cached: stored });
      }
    });

    it('lets an expired lease be taken over, and then only the new holder ends it', async () => {
      const world = makeWorld(SMALL);
      const n = number();
      const first = token(await world.cache().lease(n, leaseAt(NOW)));
      expect(await world.cache().lease(n, leaseAt(at(LEASE_MS - 1)))).toEqual({ kind: 'held', heldUntil: at(LEASE_MS) });
      const second = token(await world.cache().lease(n, leaseAt(at(LEASE_MS))));
      expect(second).not.toBe(first);
      await world.cache().release(n, first);
      expect(await world.cache().lease(n, leaseAt(at(LEASE_MS + 1)))).toEqual({ kind: 'held', heldUntil: at(2 * LEASE_MS) });
      await world.cache().release(n, second);
      expect(await world.cache().lease(n, leaseAt(at(LEASE_MS + 2)))).toMatchObject({ kind: 'taken' });
    });

    it('stores the answer of a worker whose lease was taken over, leaving the new holder its lease', async () => {
      const world = makeWorld(SMALL);
      const n = number();
      const slow = token(await world.cache().lease(n, leaseAt(NOW)));
      token(await world.cache().lease(n, leaseAt(at(LEASE_MS + 1))));
      const late: CachedAnswer = { answer: found(n), fetchedAt: NOW.toISOString() };
      await world.cache().put(n, late, slow);
      expect(await world.cache().get(n)).toEqual(late);
      // Fresh answers are served whoever holds the lease.
      expect(await world.cache().lease(n, leaseAt(at(LEASE_MS + 2)))).toEqual({ kind: 'cached', cached: late });
      // A lease asked for with a freshness the answer does not meet still waits for the holder.
      const strict = { ...leaseAt(at(LEASE_MS + 2)), freshSince: at(1) };
      expect(await world.cache().lease(n, strict)).toEqual({ kind: 'held', heldUntil: at(2 * LEASE_MS + 1) });
    });

    it('never replaces an answer with an older one', async () => {
      const world = makeWorld(SMALL);
      const n = number();
      const newer: CachedAnswer = { answer: found(n, 'NEW NAME LIMITED'), fetchedAt: at(5_000).toISOString() };
      const older: CachedAnswer = { answer: found(n, 'OLD NAME LIMITED'), fetchedAt: NOW.toISOString() };
      await world.cache().put(n, newer, token(await world.cache().lease(n, leaseAt(at(5_000)))));
      await world.cache().put(n, older, 'a-lease-long-gone');
      expect(await world.cache().get(n)).toEqual(newer);
    });

    it('does not reuse an answer fetched more than 24 hours ago: the next worker leases the number and asks again', async () => {
      const world = makeWorld(SMALL);
      const n = number();
      const old: CachedAnswer = { answer: found(n), fetchedAt: NOW.toISOString() };
      await world.cache().put(n, old, token(await world.cache().lease(n, leaseAt(NOW))));
      expect(await world.cache().lease(n, leaseAt(at(PROFILE_REUSE_MS)))).toEqual({ kind: 'cached', cached: old });
      expect(await world.cache().lease(n, leaseAt(at(PROFILE_REUSE_MS + 1)))).toMatchObject({ kind: 'taken' });

      // Through the use case: the stale answer is not reused, the registry is asked once more.
      const m = number();
      await world.cache().put(m, { answer: found(m), fetchedAt: NOW.toISOString() }, token(await world.cache().lease(m, leaseAt(NOW))));
      const registry = new ScriptedRegistry((companyNumber) => ({ kind: 'found', profile: found(companyNumber).profile }));
      const deps = { registry, cache: world.cache(), limiter: new MemoryRateLimiter(), random: () => 0 };
      const request = { mode: 'live' as const, companyId: 'cmp_partner', companyNumber: m, debtorName: 'Acme Widgets Ltd', failures: 0 };
      expect(await verifyDebtor(deps, { ...request, now: at(PROFILE_REUSE_MS), firstAttemptAt: at(PROFILE_REUSE_MS) })).toMatchObject({
        source: 'cache',
      });
      const later = at(PROFILE_REUSE_MS + 60_000);
      expect(await verifyDebtor(deps, { ...request, now: later, firstAttemptAt: later })).toMatchObject({ source: 'registry' });
      expect(registry.requests).toEqual([m]);
      expect((await world.cache().get(m))?.fetchedAt).toBe(later.toISOString());
    });

    it('releases only with the holder’s token, and a release of a number never leased changes nothing', async () => {
      const world = makeWorld(SMALL);
      const n = number();
      await world.cache().release(n, 'nobody');
      expect(await world.cache().get(n)).toBeUndefined();
      token(await world.cache().lease(n, leaseAt(NOW)));
      await world.cache().release(n, 'someone-else');
      expect(await world.cache().lease(n, leaseAt(at(1)))).toMatchObject({ kind: 'held' });
    });
  });

  describe('the shared rate limiter', () => {
    it('hands out no more than the limit to concurrent takes from many workers, and says when the next permit comes', async () => {
      const world = makeWorld(SMALL);
      const workers = Array.from({ length: 8 }, () => world.limiter());
      // From ten companies, so that the registry's window binds before any company's share.
      const permits = await Promise.all(
        Array.from({ length: 40 }, (_, i) => workers[i % workers.length]!.take(at(1_000), `cmp_${i % 10}`)),
      );
      expect(permits.filter((p) => p.granted)).toHaveLength(SMALL.limit);
      // The burst was counted in the slot of 1 s; it drops out of the window at 12 s (10 s and one 1-s slot later).
      expect(new Set(permits.filter((p) => !p.granted).map((p) => (p.granted ? 0 : p.retryAt.getTime())))).toEqual(
        new Set([at(12_000).getTime()]),
      );
      expect(await world.limiter().take(at(11_999), 'cmp_late')).toEqual({ granted: false, retryAt: at(12_000), limitedBy: 'registry' });
      expect((await world.limiter().take(at(12_000), 'cmp_late')).granted).toBe(true);
    });

    it('never grants more than the limit within any rolling window to workers taking concurrently over time', async () => {
      const world = makeWorld(SMALL);
      const workers = Array.from({ length: 6 }, () => world.limiter());
      // Rounds of 12 concurrent takes every 700 ms for 60 s: demand far above the limit, across many window boundaries.
      for (let t = 0; t < 60_000; t += 700) {
        // A company of its own each: this is the registry's window alone (shares: the tests below).
        await Promise.all(Array.from({ length: 12 }, (_, i) => workers[i % workers.length]!.take(at(t), `cmp_${t}_${i}`)));
      }
      const granted = world.granted();
      expect(maxInAnyWindow(granted, SMALL.windowMs)).toBeLessThanOrEqual(SMALL.limit);
      // It ran at the limit, not idle: about `limit` per window of the minute (one slot's delay per window aside).
      expect(granted.length).toBeGreaterThanOrEqual(25);
    }, 30_000);

    it('grants nothing while a 429 block holds, to any worker, then resumes; a shorter block does not lift a longer one', async () => {
      const world = makeWorld(SMALL);
      await world.limiter().blockUntil(at(5_000));
      await world.limiter().blockUntil(at(2_000));
      expect(await world.limiter().take(at(4_999), 'cmp_a')).toEqual({ granted: false, retryAt: at(5_000), limitedBy: 'registry' });
      expect(await world.limiter().take(at(5_000), 'cmp_a')).toEqual({ granted: true });
    });

    it('refuses a worker that last saw an empty window once others have filled it', async () => {
      const world = makeWorld(SMALL);
      const idle = world.limiter();
      expect(await idle.take(at(0), 'cmp_idle')).toEqual({ granted: true });
      const busy = world.limiter();
      for (let i = 1; i < SMALL.limit; i++) expect(await busy.take(at(500), `cmp_busy_${i}`)).toEqual({ granted: true });
      expect(await idle.take(at(600), 'cmp_idle')).toEqual({ granted: false, retryAt: at(11_000), limitedBy: 'registry' });
    });

    it('keeps one company to its share of the window, so another company still gets a permit', async () => {
      const world = makeWorld(SMALL);
      const share = companyShare(SMALL).limit;
      expect(share).toBe(4);
      const workers = Array.from({ length: 4 }, () => world.limiter());
      const importer = await Promise.all(
        Array.from({ length: 20 }, (_, i) => workers[i % workers.length]!.take(at(1_000), 'cmp_importer')),
      );
      expect(importer.filter((p) => p.granted)).toHaveLength(share);
      // Refused by its share, told when the share's burst drops out of the window (12 s), as the registry's window would say.
      expect(new Set(importer.filter((p) => !p.granted).map((p) => JSON.stringify(p)))).toEqual(
        new Set([JSON.stringify({ granted: false, retryAt: at(12_000), limitedBy: 'company' })]),
      );
      expect(await world.limiter().take(at(1_500), 'cmp_other')).toEqual({ granted: true });
      // The registry's window is the limit, as before: a third company finds it full.
      expect(await world.limiter().take(at(1_500), 'cmp_third')).toEqual({ granted: false, retryAt: at(12_000), limitedBy: 'registry' });
      expect(maxInAnyWindow(world.granted(), SMALL.windowMs)).toBe(SMALL.limit);
    });

    it('a company refused by a full window takes nothing from the other companies’ room when it frees', async () => {
      const world = makeWorld(SMALL);
      for (let i = 0; i < SMALL.limit; i++) expect(await world.limiter().take(at(1_000), `cmp_${i}`)).toEqual({ granted: true });
      for (let i = 0; i < 4; i++) expect(await world.limiter().take(at(2_000), 'cmp_late')).toMatchObject({ limitedBy: 'registry' });
      // Whatever the late company's asks spent of its own share, the window's room at 12 s is the others' in full.
      for (let i = 0; i < SMALL.limit; i++) expect(await world.limiter().take(at(12_000), `cmp_next_${i}`)).toEqual({ granted: true });
    });
  });
});
