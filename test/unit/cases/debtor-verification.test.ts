import { isSameCompanyName, normaliseCompanyName } from '../../../lib/cases/verification/registered-name.js';
import { verificationOutcome } from '../../../lib/cases/verification/verification-outcome.js';
import { sandboxRegistry } from '../../../lib/cases/verification/sandbox-registry.js';
import {
  VERIFICATION_BACKOFF_MAX_MS,
  VERIFICATION_RETRY_HORIZON_MS,
  backoffStepMs,
  nextVerificationAttempt,
} from '../../../lib/cases/verification/retry-schedule.js';
import {
  DEFAULT_REGISTRY_RATE_LIMIT,
  EMPTY_RATE_WINDOW,
  PERMIT_RETRY_SPREAD_MS,
  blockWindow,
  companyShare,
  permitRetryAt,
  planPermit,
  takePermit,
  type RateLimitConfig,
  type RateWindowState,
} from '../../../lib/cases/verification/rate-window.js';
import {
  PERMIT_HORIZON_DETAIL,
  PERMIT_HORIZON_GRACE_MS,
  PROFILE_REUSE_MS,
  SHARE_HORIZON_DETAIL,
  verifyDebtor,
  type VerifyDebtorDeps,
  type VerifyDebtorRequest,
  type VerifyDebtorResult,
} from '../../../lib/cases/verification/verify-debtor.js';
import type { DefinitiveAnswer, RegistryAnswer } from '../../../lib/cases/verification/ports.js';
import { MemoryProfileCache, MemoryRateLimiter, ScriptedRegistry } from '../../support/memory-verification.js';

const NOW = new Date('2026-03-04T10:00:00.000Z');
const at = (ms: number) => new Date(NOW.getTime() + ms);
const active = (companyNumber: string, companyName = 'ACME WIDGETS LIMITED'): DefinitiveAnswer => ({
  kind: 'found',
  profile: { companyNumber, companyName, companyStatus: 'active' },
});

describe('the debtor name matches the registered name when they differ only in', () => {
  it.each([
    ['case', 'acme widgets limited', 'ACME WIDGETS LIMITED'],
    ['punctuation', 'Acme-Widgets, Limited.', 'ACME WIDGETS LIMITED'],
    ['spacing', '  Acme   Widgets  Limited ', 'ACME WIDGETS LIMITED'],
    ['& and AND', 'Smith & Sons Ltd', 'SMITH AND SONS LIMITED'],
    ['LTD and LIMITED', 'Acme Widgets Ltd', 'ACME WIDGETS LIMITED'],
    ['LTD. with a full stop', 'Acme Widgets Ltd.', 'ACME WIDGETS LIMITED'],
    ['PLC and PUBLIC LIMITED COMPANY', 'Big Retail plc', 'BIG RETAIL PUBLIC LIMITED COMPANY'],
    ['a leading THE', 'The Acme Widgets Company Ltd', 'ACME WIDGETS COMPANY LIMITED'],
    ['a leading THE on the register side', 'Acme Widgets Ltd', 'THE ACME WIDGETS LIMITED'],
    ['an apostrophe', "O'Brien's Bakery Ltd", 'OBRIENS BAKERY LIMITED'],
    ['accents', 'Café Nero Ltd', 'CAFE NERO LIMITED'],
    ['brackets', 'Acme (Holdings) Ltd', 'ACME HOLDINGS LIMITED'],
  ])('%s', (_what, debtorName, registered) => {
    expect(isSameCompanyName(debtorName, registered)).toBe(true);
  });
});

describe('the debtor name does not match the registered name when', () => {
  it.each([
    ['a word differs', 'Acme Gadgets Ltd', 'ACME WIDGETS LIMITED'],
    ['a word is missing', 'Acme Ltd', 'ACME WIDGETS LIMITED'],
    ['LIMITED and PLC are confused', 'Acme plc', 'ACME LIMITED'],
    ['THE is not leading', 'Acme The Widgets Ltd', 'ACME WIDGETS LIMITED'],
    ['the legal form is missing', 'Acme Widgets', 'ACME WIDGETS LIMITED'],
  ])('%s', (_what, debtorName, registered) => {
    expect(isSameCompanyName(debtorName, registered)).toBe(false);
  });

  it('a name that is only THE is kept as THE (not emptied into a match with anything)', () => {
    expect(normaliseCompanyName('The')).toBe('THE');
    expect(isSameCompanyName('The', '')).toBe(false);
  });
});

describe('the verification outcome from the registry', () => {
  it('is VERIFIED for an active company of the same name', () => {
    expect(verificationOutcome(active('01234567'), 'Acme Widgets Ltd', NOW)).toEqual({ status: 'VERIFIED', checkedAt: NOW.toISOString() });
  });

  it('is NAME_MISMATCH with the registered name for an active company of another name', () => {
    expect(verificationOutcome(active('01234567', 'ACME GADGETS LIMITED'), 'Acme Widgets Ltd', NOW)).toEqual({
      status: 'NAME_MISMATCH',
      registeredName: 'ACME GADGETS LIMITED',
      checkedAt: NOW.toISOString(),
    });
  });

  it.each(['dissolved', 'liquidation', 'administration', 'converted-closed', 'some-new-status'])(
    'is NOT_ACTIVE with companyStatus %s, whatever the name',
    (status) => {
      const answer: DefinitiveAnswer = {
        kind: 'found',
        profile: { companyNumber: '01234567', companyName: 'OTHER LIMITED', companyStatus: status },
      };
      expect(verificationOutcome(answer, 'Acme Widgets Ltd', NOW)).toEqual({
        status: 'NOT_ACTIVE',
        companyStatus: status,
        checkedAt: NOW.toISOString(),
      });
    },
  );

  it('is NOT_FOUND when the registry has no such company', () => {
    expect(verificationOutcome({ kind: 'not-found' }, 'Acme Widgets Ltd', NOW)).toEqual({
      status: 'NOT_FOUND',
      checkedAt: NOW.toISOString(),
    });
  });
});

describe('the sandbox registry (test mode)', () => {
  it.each([
    ['00000404', { status: 'NOT_FOUND' }],
    ['00000410', { status: 'NOT_ACTIVE', companyStatus: 'dissolved' }],
    ['00000409', { status: 'NAME_MISMATCH', registeredName: 'SANDBOX OTHER NAME LIMITED' }],
    ['409', { status: 'NAME_MISMATCH', registeredName: 'SANDBOX OTHER NAME LIMITED' }],
    ['01234567', { status: 'VERIFIED' }],
    ['SC123456', { status: 'VERIFIED' }],
  ])('answers %s with %o', (number, expected) => {
    expect(sandboxRegistry.outcome(number, NOW)).toEqual({ ...expected, checkedAt: NOW.toISOString() });
  });
});

describe('a verification that met a transient failure is retried', () => {
  it('with a growing step (30 s, 1 min, 2 min, …) up to one hour', () => {
    expect([1, 2, 3, 4, 7, 8, 30].map(backoffStepMs)).toEqual([30_000, 60_000, 120_000, 240_000, 1_920_000, 3_600_000, 3_600_000]);
    expect(VERIFICATION_BACKOFF_MAX_MS).toBe(3_600_000);
  });

  it('between half and the whole step later (jitter)', () => {
    const low = nextVerificationAttempt({ firstAttemptAt: NOW, failures: 3, now: NOW, random: () => 0 });
    const high = nextVerificationAttempt({ firstAttemptAt: NOW, failures: 3, now: NOW, random: () => 0.999999 });
    expect(low).toEqual({ kind: 'retry', at: at(60_000) });
    expect(high.kind === 'retry' && high.at.getTime() - NOW.getTime()).toBeGreaterThan(119_000);
    expect(high.kind === 'retry' && high.at.getTime() - NOW.getTime()).toBeLessThanOrEqual(120_000);
  });

  it("no sooner than the registry's Retry-After", () => {
    expect(nextVerificationAttempt({ firstAttemptAt: NOW, failures: 1, now: NOW, retryAfterMs: 300_000, random: () => 0 })).toEqual({
      kind: 'retry',
      at: at(300_000),
    });
  });

  it('for at least 24 hours: the last retry is at the horizon, and only a failure then ends it', () => {
    let now = NOW;
    let failures = 0;
    const attempts: number[] = [];
    for (;;) {
      failures++;
      const next = nextVerificationAttempt({ firstAttemptAt: NOW, failures, now, random: () => 0.5 });
      if (next.kind === 'exhausted') break;
      expect(next.at.getTime()).toBeGreaterThan(now.getTime());
      now = next.at;
      attempts.push(now.getTime());
    }
    expect(attempts.at(-1)).toBe(NOW.getTime() + VERIFICATION_RETRY_HORIZON_MS);
    expect(now.getTime() - NOW.getTime()).toBe(VERIFICATION_RETRY_HORIZON_MS);
    expect(attempts.length).toBeGreaterThan(20);
    expect(attempts.length).toBeLessThan(60);
  });
});

describe('the registry rate rule', () => {
  const small: RateLimitConfig = { limit: 5, windowMs: 10_000, slots: 10 };

  function takeAll(config: RateLimitConfig, times: number[]): { granted: number[]; state: RateWindowState } {
    let state = EMPTY_RATE_WINDOW;
    const granted: number[] = [];
    for (const t of times) {
      const d = takePermit(state, t, config);
      if (d.granted) {
        state = d.state;
        granted.push(t);
      }
    }
    return { granted, state };
  }

  function maxInAnyWindow(times: number[], windowMs: number): number {
    const sorted = [...times].sort((a, b) => a - b);
    let max = 0;
    for (let i = 0, j = 0; i < sorted.length; i++) {
      while (sorted[i]! - sorted[j]! >= windowMs) j++;
      max = Math.max(max, i - j + 1);
    }
    return max;
  }

  it('grants the limit in a burst, then says when the next permit comes', () => {
    let state = EMPTY_RATE_WINDOW;
    for (let i = 0; i < 5; i++) {
      const d = takePermit(state, 1_000, small);
      if (!d.granted) throw new Error('refused too early');
      state = d.state;
    }
    const refused = takePermit(state, 1_000, small);
    expect(refused).toEqual({ granted: false, retryAtMs: 12_000 });
    expect(takePermit(state, 11_999, small).granted).toBe(false);
    expect(takePermit(state, 12_000, small).granted).toBe(true);
  });

  it('never grants more than the limit within any rolling window, even across a window boundary', () => {
    // A full burst at the end of one window and another at the start of the next: a fixed window would grant both.
    const times = [
      ...Array.from({ length: 50 }, () => 9_999),
      ...Array.from({ length: 50 }, () => 10_000),
      ...Array.from({ length: 2000 }, (_, i) => i * 37),
    ].sort((a, b) => a - b);
    const { granted } = takeAll(small, times);
    expect(maxInAnyWindow(granted, small.windowMs)).toBeLessThanOrEqual(small.limit);
    expect(granted.length).toBeGreaterThan(0);
  });

  it('the default is 500 requests per 5 minutes, below the registry’s 600', () => {
    expect(DEFAULT_REGISTRY_RATE_LIMIT).toMatchObject({ limit: 500, windowMs: 300_000 });
    const times = Array.from({ length: 5000 }, (_, i) => i * 100); // 10 a second for 500 s
    const { granted } = takeAll(DEFAULT_REGISTRY_RATE_LIMIT, times);
    expect(maxInAnyWindow(granted, 300_000)).toBeLessThanOrEqual(500);
    expect(granted.length).toBeGreaterThanOrEqual(500);
  });

  it('keeps only the slots that still count', () => {
    const { state } = takeAll(
      small,
      Array.from({ length: 100 }, (_, i) => i * 1_000),
    );
    expect(Object.keys(state.counts).length).toBeLessThanOrEqual(small.slots + 1);
  });

  it('grants nothing while blocked after a 429, then resumes', () => {
    const blocked = blockWindow(EMPTY_RATE_WINDOW, 5_000);
    expect(takePermit(blocked, 4_999, small)).toEqual({ granted: false, retryAtMs: 5_000 });
    expect(takePermit(blocked, 5_000, small).granted).toBe(true);
    expect(blockWindow(blocked, 1_000).blockedUntil).toBe(5_000);
  });

  it('makes a caller whose clock is behind a slot already counted wait for that slot, so no permit is counted in the past', () => {
    const { state } = takeAll(small, [5_000]);
    expect(takePermit(state, 3_500, small)).toEqual({ granted: false, retryAtMs: 5_000 });
    expect(takePermit(state, 5_000, small).granted).toBe(true);
  });

  it('plans a grant as a shared store conditions it: the slot, the earlier counts as seen, and the slot’s cap', () => {
    const { state } = takeAll(small, [1_000, 1_000, 3_000]);
    expect(planPermit(state, 3_200, small)).toEqual({
      granted: true,
      slot: 3,
      earlier: { '-7': 0, '-6': 0, '-5': 0, '-4': 0, '-3': 0, '-2': 0, '-1': 0, '0': 0, '1': 2, '2': 0 },
      slotCap: 3,
    });
  });

  it('a refused caller asks again after the boundary, jittered over at most one slot, never before it', () => {
    const boundary = at(30_000);
    expect(PERMIT_RETRY_SPREAD_MS).toBe(DEFAULT_REGISTRY_RATE_LIMIT.windowMs / DEFAULT_REGISTRY_RATE_LIMIT.slots);
    expect(permitRetryAt(boundary, () => 0)).toEqual(boundary);
    expect(permitRetryAt(boundary, () => 0.5)).toEqual(new Date(boundary.getTime() + PERMIT_RETRY_SPREAD_MS / 2));
    expect(permitRetryAt(boundary, () => 0.999_999_999)).toEqual(new Date(boundary.getTime() + PERMIT_RETRY_SPREAD_MS - 1));
    // A random source out of its range is held inside the bounds.
    expect(permitRetryAt(boundary, () => -1)).toEqual(boundary);
    expect(permitRetryAt(boundary, () => 1)).toEqual(new Date(boundary.getTime() + PERMIT_RETRY_SPREAD_MS - 1));
  });

  it('gives one company four fifths of the window, never less than one permit', () => {
    expect(companyShare(DEFAULT_REGISTRY_RATE_LIMIT)).toEqual({ ...DEFAULT_REGISTRY_RATE_LIMIT, limit: 400 });
    expect(companyShare({ ...small, limit: 5 }).limit).toBe(4);
    expect(companyShare({ ...small, limit: 1 }).limit).toBe(1);
  });

  it('spends no company’s share on a request the full registry window refuses anyway', async () => {
    const limiter = new MemoryRateLimiter(small);
    for (let i = 0; i < small.limit; i++) expect(await limiter.take(new Date(1_000), `cmp_${i}`)).toEqual({ granted: true });
    for (let i = 0; i < 10; i++) expect(await limiter.take(new Date(2_000), 'cmp_late')).toMatchObject({ limitedBy: 'registry' });
    expect(limiter.companies.has('cmp_late')).toBe(false);
  });

  it('refuses a configuration that could grant nothing', () => {
    expect(() => takePermit(EMPTY_RATE_WINDOW, 0, { ...small, limit: 0 })).toThrow('Invalid rate limit');
  });
});

describe('verifying a debtor', () => {
  function rig(script: (n: string, nth: number) => RegistryAnswer | Error = (n) => active(n)) {
    const registry = new ScriptedRegistry(script);
    const cache = new MemoryProfileCache();
    const limiter = new MemoryRateLimiter();
    const deps: VerifyDebtorDeps = { registry, cache, limiter, random: () => 0 };
    return { registry, cache, limiter, deps };
  }
  const request = (over: Partial<VerifyDebtorRequest> = {}): VerifyDebtorRequest => ({
    mode: 'live',
    companyId: 'cmp_partner',
    companyNumber: '01234567',
    debtorName: 'Acme Widgets Ltd',
    now: NOW,
    firstAttemptAt: NOW,
    failures: 0,
    ...over,
  });

  it('asks the registry once and records its answer in the shared cache', async () => {
    const { registry, cache, deps } = rig();
    expect(await verifyDebtor(deps, request())).toEqual({
      kind: 'outcome',
      outcome: { status: 'VERIFIED', checkedAt: NOW.toISOString() },
      source: 'registry',
    });
    expect(registry.requests).toEqual(['01234567']);
    expect(cache.answers.get('01234567')?.fetchedAt).toBe(NOW.toISOString());
    expect(cache.leases.size).toBe(0);
  });

  it('normalises the number as the create path does (1234567 is 01234567)', async () => {
    const { registry, deps } = rig();
    await verifyDebtor(deps, request({ companyNumber: '1234567' }));
    expect(registry.requests).toEqual(['01234567']);
  });

  it('reuses an answer for 24 hours, for another partner’s debtor of another name too', async () => {
    const { registry, deps } = rig();
    await verifyDebtor(deps, request());
    const again = await verifyDebtor(deps, request({ now: at(PROFILE_REUSE_MS - 1), debtorName: 'Someone Else Ltd' }));
    expect(again).toEqual({
      kind: 'outcome',
      outcome: { status: 'NAME_MISMATCH', registeredName: 'ACME WIDGETS LIMITED', checkedAt: NOW.toISOString() },
      source: 'cache',
    });
    expect(registry.requests).toHaveLength(1);
    await verifyDebtor(deps, request({ now: at(PROFILE_REUSE_MS + 1) }));
    expect(registry.requests).toHaveLength(2);
  });

  it('caches NOT_FOUND too: a second case citing an unknown number asks nobody', async () => {
    const { registry, deps } = rig(() => ({ kind: 'not-found' }));
    await verifyDebtor(deps, request());
    expect(await verifyDebtor(deps, request({ now: at(1000) }))).toMatchObject({
      kind: 'outcome',
      outcome: { status: 'NOT_FOUND' },
      source: 'cache',
    });
    expect(registry.requests).toHaveLength(1);
  });

  it('in test mode answers from the sandbox and never touches the registry, cache or limiter', async () => {
    const { registry, cache, limiter, deps } = rig();
    for (const number of ['00000404', '00000410', '00000409', '01234567']) {
      expect(await verifyDebtor(deps, request({ mode: 'test', companyNumber: number }))).toMatchObject({
        kind: 'outcome',
        source: 'sandbox',
      });
    }
    expect(registry.requests).toEqual([]);
    expect(cache.answers.size + cache.leases.size).toBe(0);
    expect(limiter.granted).toEqual([]);
  });

  it('a registry that answers 429 then 200: PENDING with a retry no sooner than Retry-After, then verified', async () => {
    const { registry, limiter, cache, deps } = rig((n, nth) => (nth === 0 ? { kind: 'rate-limited', retryAfterMs: 120_000 } : active(n)));
    const first = await verifyDebtor(deps, request());
    expect(first).toMatchObject({ kind: 'retry', reason: 'registry-rate-limited', failures: 1, at: at(120_000) });
    expect(cache.leases.size).toBe(0);
    // Every worker holds off until then, not just this case.
    expect(await limiter.take(at(60_000), 'cmp_another')).toEqual({ granted: false, retryAt: at(120_000), limitedBy: 'registry' });
    const second = await verifyDebtor(deps, request({ now: at(120_000), failures: 1 }));
    expect(second).toMatchObject({ kind: 'outcome', outcome: { status: 'VERIFIED' }, source: 'registry' });
    expect(registry.requests).toHaveLength(2);
  });

  it('a 429 without Retry-After holds every worker off for the registry’s whole window', async () => {
    const { limiter, deps } = rig(() => ({ kind: 'rate-limited' }));
    await verifyDebtor(deps, request());
    expect(await limiter.take(at(299_999), 'cmp_another')).toMatchObject({ granted: false });
    expect(await limiter.take(at(300_000), 'cmp_another')).toEqual({ granted: true });
  });

  it('a 5xx or timeout keeps the case PENDING with a backoff retry, and gives the number back at once', async () => {
    const { cache, deps } = rig(() => ({ kind: 'unavailable', detail: 'registry answered 503' }));
    expect(await verifyDebtor(deps, request({ failures: 2 }))).toEqual({
      kind: 'retry',
      at: at(60_000),
      reason: 'registry-unavailable',
      failures: 3,
      detail: 'registry answered 503',
    });
    expect(cache.leases.size).toBe(0);
  });

  it('after failing for 24 hours is exhausted (still PENDING: the operator alarm)', async () => {
    const { deps } = rig(() => ({ kind: 'unavailable', detail: 'timeout after 5000 ms' }));
    expect(await verifyDebtor(deps, request({ now: at(VERIFICATION_RETRY_HORIZON_MS), failures: 30 }))).toEqual({
      kind: 'exhausted',
      failures: 31,
      detail: 'timeout after 5000 ms',
    });
  });

  it('a registry that throws (a refused key) propagates and leaves the number free for the next worker', async () => {
    const { cache, deps } = rig(() => new Error('registry refused the API key (401)'));
    await expect(verifyDebtor(deps, request())).rejects.toThrow('401');
    expect(cache.leases.size).toBe(0);
  });

  it('waits for a permit without counting a failure when the rate limit is spent', async () => {
    const { registry, deps, limiter } = rig();
    limiter.state = blockWindow(limiter.state, at(5_000).getTime());
    expect(await verifyDebtor(deps, request({ failures: 1 }))).toEqual({ kind: 'retry', at: at(5_000), reason: 'rate-limit', failures: 1 });
    expect(registry.requests).toEqual([]);
  });

  it('a case refused permits for a whole day (the registry rate taken by other cases) ends exhausted for the operator, never waits unseen', async () => {
    const { registry, deps, limiter } = rig();
    limiter.state = blockWindow(limiter.state, at(5_000).getTime());
    const pastGrace = new Date(NOW.getTime() - VERIFICATION_RETRY_HORIZON_MS - PERMIT_HORIZON_GRACE_MS);
    expect(await verifyDebtor(deps, request({ firstAttemptAt: pastGrace, failures: 0 }))).toEqual({
      kind: 'exhausted',
      failures: 0,
      detail: PERMIT_HORIZON_DETAIL,
    });
    expect(await verifyDebtor(deps, request({ firstAttemptAt: pastGrace, failures: 3 }))).toMatchObject({
      kind: 'exhausted',
      detail: `${PERMIT_HORIZON_DETAIL}, after 3 registry failures`,
    });
    // The retry schedule's last attempt, at the horizon itself, refused a permit: it waits for the next window.
    const dayAgo = new Date(NOW.getTime() - VERIFICATION_RETRY_HORIZON_MS);
    expect(await verifyDebtor(deps, request({ firstAttemptAt: dayAgo, failures: 5 }))).toMatchObject({
      kind: 'retry',
      reason: 'rate-limit',
    });
    expect(registry.requests).toEqual([]);
  });

  it('a hundred workers refused a permit at once ask again spread over the slot after the boundary, not all at it', async () => {
    const { registry, deps, limiter } = rig();
    limiter.state = blockWindow(limiter.state, at(5_000).getTime());
    let draw = 0;
    const spread: VerifyDebtorDeps = { ...deps, random: () => (draw++ % 100) / 100 };
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) => verifyDebtor(spread, request({ companyNumber: String(30_000_000 + i) }))),
    );
    const retries = results.map((r) => (r.kind === 'retry' && r.reason === 'rate-limit' ? r.at.getTime() : Number.NaN));
    expect(Math.min(...retries)).toBe(at(5_000).getTime());
    expect(Math.max(...retries)).toBeLessThan(at(5_000).getTime() + PERMIT_RETRY_SPREAD_MS);
    expect(new Set(retries).size).toBe(100);
    expect(registry.requests).toEqual([]);
  });

  it('waits for another worker that is asking about the same number, then uses its answer', async () => {
    const { registry, cache, deps } = rig();
    const held = await cache.lease('01234567', { now: NOW, until: at(30_000), freshSince: at(-PROFILE_REUSE_MS) });
    expect(await verifyDebtor(deps, request())).toEqual({ kind: 'retry', at: at(30_000), reason: 'fetch-in-progress', failures: 0 });
    if (held.kind !== 'taken') throw new Error('lease not taken');
    await cache.put('01234567', { answer: active('01234567'), fetchedAt: NOW.toISOString() }, held.token);
    expect(await verifyDebtor(deps, request({ now: at(1_000) }))).toMatchObject({ kind: 'outcome', source: 'cache' });
    expect(registry.requests).toEqual([]);
  });

  it('1,000 cases citing 50 company numbers, verified by concurrent workers, send at most 50 registry requests', async () => {
    const { registry, deps } = rig();
    const numbers = Array.from({ length: 50 }, (_, i) => String(10_000_000 + i));
    const pending = Array.from({ length: 1000 }, (_, i) => ({ companyNumber: numbers[i % 50]!, due: NOW, failures: 0 }));
    const outcomes: VerifyDebtorResult[] = [];
    let now = NOW;
    // Workers take due cases 100 at a time, all at once (each number twice in every round); a retried case comes back when it is due.
    while (pending.length > 0) {
      pending.sort((a, b) => a.due.getTime() - b.due.getTime());
      now = new Date(Math.max(now.getTime(), pending[0]!.due.getTime()));
      const batch = pending.filter((c) => c.due <= now).slice(0, 100);
      for (const c of batch) pending.splice(pending.indexOf(c), 1);
      const results = await Promise.all(
        batch.map((c) => verifyDebtor(deps, request({ companyNumber: c.companyNumber, now, failures: c.failures }))),
      );
      results.forEach((r, i) => {
        if (r.kind === 'retry') pending.push({ ...batch[i]!, due: r.at, failures: r.failures });
        else outcomes.push(r);
      });
    }
    expect(outcomes).toHaveLength(1000);
    expect(outcomes.every((o) => o.kind === 'outcome' && o.outcome.status === 'VERIFIED')).toBe(true);
    expect(new Set(registry.requests).size).toBe(50);
    expect(registry.requests).toHaveLength(50);
    // CPU-bound simulations: about a second alone, far longer on a machine shared under load.
  }, 30_000);

  interface Due {
    companyId: string;
    companyNumber: string;
    due: Date;
    failures: number;
  }
  /** Cases verified 200 at a time on a simulated clock, each retry when it falls due: when each case got its outcome. */
  async function runToOutcome(deps: VerifyDebtorDeps, pending: Due[], clock: { now: Date }): Promise<{ companyId: string; at: number }[]> {
    const outcomes: { companyId: string; at: number }[] = [];
    while (pending.length > 0) {
      pending.sort((a, b) => a.due.getTime() - b.due.getTime());
      const now = new Date(Math.max(clock.now.getTime(), pending[0]!.due.getTime()));
      clock.now = now;
      const due = pending.filter((c) => c.due <= now).slice(0, 200);
      for (const c of due) pending.splice(pending.indexOf(c), 1);
      const results = await Promise.all(
        due.map((c) => verifyDebtor(deps, request({ companyId: c.companyId, companyNumber: c.companyNumber, now, failures: c.failures }))),
      );
      results.forEach((r, i) => {
        if (r.kind === 'retry') pending.push({ ...due[i]!, due: r.at, failures: r.failures });
        else outcomes.push({ companyId: due[i]!.companyId, at: now.getTime() });
      });
    }
    return outcomes;
  }
  function maxInFiveMinutes(times: number[]): number {
    const sorted = [...times].sort((a, b) => a - b);
    let max = 0;
    for (let i = 0, j = 0; i < sorted.length; i++) {
      while (sorted[i]! - sorted[j]! >= 300_000) j++;
      max = Math.max(max, i - j + 1);
    }
    return max;
  }

  it('a burst of 2,000 cases with distinct numbers never sends more registry requests in any 5 minutes than the limit', async () => {
    const { registry, limiter, deps } = rig();
    const requestTimes: number[] = [];
    const clock = { now: NOW };
    const timed: VerifyDebtorDeps = {
      ...deps,
      registry: { lookup: (n) => (requestTimes.push(clock.now.getTime()), registry.lookup(n)) },
    };
    // From five companies, so that the registry's window binds, not one company's share of it.
    const pending = Array.from({ length: 2000 }, (_, i) => ({
      companyId: `cmp_${i % 5}`,
      companyNumber: String(20_000_000 + i),
      due: NOW,
      failures: 0,
    }));
    expect(await runToOutcome(timed, pending, clock)).toHaveLength(2000);
    expect(registry.requests).toHaveLength(2000);
    expect(limiter.granted).toHaveLength(2000);
    const max = maxInFiveMinutes(requestTimes);
    expect(max).toBeLessThanOrEqual(500);
    expect(max).toBeGreaterThan(400); // it did run near the limit, not idle
  }, 30_000);

  it('one company importing a thousand distinct debtors leaves a fifth of every window to another company’s cases', async () => {
    const { limiter, deps } = rig();
    // The importer's thousand cases are all due at once; another company's ten arrive a second later.
    const pending = [
      ...Array.from({ length: 1000 }, (_, i) => ({ companyId: 'cmp_importer', companyNumber: String(30_000_000 + i), due: NOW })),
      ...Array.from({ length: 10 }, (_, i) => ({ companyId: 'cmp_other', companyNumber: String(40_000_000 + i), due: at(1_000) })),
    ].map((c) => ({ ...c, failures: 0 }));
    const outcomes = await runToOutcome(deps, pending, { now: NOW });
    expect(outcomes.filter((o) => o.companyId === 'cmp_importer')).toHaveLength(1000);
    // Verified as they arrive: first come, first served, they queued behind the importer's retries.
    expect(outcomes.filter((o) => o.companyId === 'cmp_other').map((o) => o.at)).toEqual(
      Array.from({ length: 10 }, () => at(1_000).getTime()),
    );
    const share = companyShare(DEFAULT_REGISTRY_RATE_LIMIT).limit;
    expect(share).toBe(400);
    expect(maxInFiveMinutes(limiter.granted.filter((_, i) => limiter.grantedTo[i] === 'cmp_importer'))).toBe(share);
  }, 30_000);

  it('a case its own company’s other cases kept from a permit for a whole day ends exhausted, saying so', async () => {
    const { registry, deps, limiter } = rig();
    limiter.companies.set('cmp_partner', { counts: { [Math.floor(NOW.getTime() / 30_000)]: 400 } });
    const pastGrace = new Date(NOW.getTime() - VERIFICATION_RETRY_HORIZON_MS - PERMIT_HORIZON_GRACE_MS);
    expect(await verifyDebtor(deps, request({ firstAttemptAt: pastGrace, failures: 2 }))).toEqual({
      kind: 'exhausted',
      failures: 2,
      detail: `${SHARE_HORIZON_DETAIL}, after 2 registry failures`,
    });
    expect(await verifyDebtor(deps, request({ companyId: 'cmp_another' }))).toMatchObject({ kind: 'outcome', source: 'registry' });
    expect(registry.requests).toEqual(['01234567']);
  });
});
