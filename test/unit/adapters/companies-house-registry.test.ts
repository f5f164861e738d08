import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  CompaniesHouseError,
  CompaniesHouseRegistry,
  retryAfterMs,
} from '../../../lib/adapters/companies-house/companies-house-registry.js';
import { verifyDebtor } from '../../../lib/cases/verification/verify-debtor.js';
import {
  STAND_IN_API_KEY,
  STAND_IN_FIXTURES,
  startCompaniesHouseStandIn,
  type CompaniesHouseStandIn,
} from '../../../infra/local/companies-house-stand-in.js';
import { MemoryProfileCache, MemoryRateLimiter } from '../../support/memory-verification.js';

/**
 * The adapter over real HTTP, against the local stand-in of the registry on a free loopback port.
 * The timeout is generous (a loaded machine can take over a second on loopback), except where the
 * timeout itself is tested against the stand-in's slow fixture.
 */
let standIn: CompaniesHouseStandIn;
beforeEach(async () => {
  standIn = await startCompaniesHouseStandIn({ slowMs: 2_000 });
});
afterEach(async () => {
  await standIn.close();
});

const registry = (over: { apiKey?: string; timeoutMs?: number; baseUrl?: string } = {}) =>
  new CompaniesHouseRegistry({
    baseUrl: over.baseUrl ?? standIn.url,
    apiKey: async () => over.apiKey ?? STAND_IN_API_KEY,
    timeoutMs: over.timeoutMs ?? 4_000,
  });

describe('the Companies House registry adapter', () => {
  it('reads an active company’s name and status from its profile', async () => {
    expect(await registry().lookup(STAND_IN_FIXTURES.ACTIVE)).toEqual({
      kind: 'found',
      profile: { companyNumber: '01000001', companyName: 'ACME WIDGETS LIMITED', companyStatus: 'active' },
    });
    expect(standIn.requests).toEqual(['/company/01000001']);
  });

  it('reads a dissolved company’s status', async () => {
    expect(await registry().lookup(STAND_IN_FIXTURES.DISSOLVED)).toMatchObject({ kind: 'found', profile: { companyStatus: 'dissolved' } });
  });

  it('answers not found for a 404', async () => {
    expect(await registry().lookup(STAND_IN_FIXTURES.NOT_FOUND)).toEqual({ kind: 'not-found' });
    expect(await registry().lookup('09999999')).toEqual({ kind: 'not-found' });
  });

  it('answers rate limited with the Retry-After wait for a 429, and the profile when asked again', async () => {
    expect(await registry().lookup(STAND_IN_FIXTURES.RATE_LIMITED_ONCE)).toEqual({ kind: 'rate-limited', retryAfterMs: 1_000 });
    expect(await registry().lookup(STAND_IN_FIXTURES.RATE_LIMITED_ONCE)).toMatchObject({ kind: 'found' });
  });

  it('answers unavailable for a 5xx', async () => {
    expect(await registry().lookup(STAND_IN_FIXTURES.UNAVAILABLE)).toEqual({ kind: 'unavailable', detail: 'Companies House answered 503' });
  });

  it('answers unavailable when no answer comes within its timeout', async () => {
    // The slow fixture answers (found) after 2 s: unavailable means the adapter gave up first.
    expect(await registry({ timeoutMs: 200 }).lookup(STAND_IN_FIXTURES.SLOW)).toEqual({
      kind: 'unavailable',
      detail: 'no answer within 200 ms',
    });
  });

  it('answers unavailable when nothing listens (a network failure)', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    expect(await registry({ baseUrl: `http://127.0.0.1:${port}` }).lookup(STAND_IN_FIXTURES.ACTIVE)).toEqual({
      kind: 'unavailable',
      detail: 'network failure: ECONNREFUSED',
    });
  });

  it('throws for a refused API key (401): an operator’s problem, not the case’s', async () => {
    const lookup = registry({ apiKey: 'wrong-key' }).lookup(STAND_IN_FIXTURES.ACTIVE);
    await expect(lookup).rejects.toBeInstanceOf(CompaniesHouseError);
    await expect(lookup).rejects.toMatchObject({ status: 401 });
  });

  it('throws for a 200 whose body is not a company profile', async () => {
    await expect(registry().lookup(STAND_IN_FIXTURES.UNREADABLE)).rejects.toThrow('not a company profile');
  });

  it('asks for the key on every look-up (a rotated key is used as soon as the function returns it)', async () => {
    const keys = ['wrong-key', STAND_IN_API_KEY];
    const rotating = new CompaniesHouseRegistry({ baseUrl: standIn.url, apiKey: () => keys.shift()! });
    await expect(rotating.lookup(STAND_IN_FIXTURES.ACTIVE)).rejects.toMatchObject({ status: 401 });
    expect(await rotating.lookup(STAND_IN_FIXTURES.ACTIVE)).toMatchObject({ kind: 'found' });
  });
});

describe('the stand-in checks the request as the real API does', () => {
  it('refuses a request without Basic auth, or with the key as password instead of user name', async () => {
    expect((await fetch(`${standIn.url}/company/01000001`)).status).toBe(401);
    const asPassword = Buffer.from(`:${STAND_IN_API_KEY}`).toString('base64');
    expect((await fetch(`${standIn.url}/company/01000001`, { headers: { Authorization: `Basic ${asPassword}` } })).status).toBe(401);
  });
});

describe('the stand-in answering any number (the bench’s bursts)', () => {
  it('answers an unlisted number as an active company, and keeps the fixtures, 404 included', async () => {
    const anyNumber = await startCompaniesHouseStandIn({ unlisted: 'active' });
    try {
      const adapter = registry({ baseUrl: anyNumber.url });
      expect(await adapter.lookup('SC123456')).toMatchObject({ kind: 'found', profile: { companyName: 'ACME WIDGETS LIMITED' } });
      expect(await adapter.lookup(STAND_IN_FIXTURES.NOT_FOUND)).toEqual({ kind: 'not-found' });
      expect(await adapter.lookup(STAND_IN_FIXTURES.DISSOLVED)).toMatchObject({ profile: { companyStatus: 'dissolved' } });
      expect(await registry().lookup('SC123456')).toEqual({ kind: 'not-found' });
    } finally {
      await anyNumber.close();
    }
  });
});

describe('the wait a 429 names', () => {
  const NOW = Date.parse('2026-03-04T10:00:00Z');
  it.each([
    ['Retry-After in seconds', { 'Retry-After': '120' }, 120_000],
    ['Retry-After as an HTTP date', { 'Retry-After': 'Wed, 04 Mar 2026 10:00:30 GMT' }, 30_000],
    ['X-Ratelimit-Reset (epoch seconds) when Retry-After is absent', { 'X-Ratelimit-Reset': String(NOW / 1000 + 45) }, 45_000],
    ['nothing usable', { 'Retry-After': 'soon' }, undefined],
    ['no header', {}, undefined],
  ])('%s', (_what, headers, expected) => {
    expect(retryAfterMs(new Headers(headers), NOW)).toBe(expected);
  });
});

describe('verifying a debtor against the stand-in', () => {
  it('a registry that answers 429 then 200: the case stays PENDING, then is verified on the retry', async () => {
    const deps = { registry: registry(), cache: new MemoryProfileCache(), limiter: new MemoryRateLimiter(), random: () => 0 };
    const first = new Date('2026-03-04T10:00:00Z');
    const request = {
      mode: 'live' as const,
      companyId: 'cmp_partner',
      companyNumber: STAND_IN_FIXTURES.RATE_LIMITED_ONCE,
      debtorName: 'Acme Widgets Ltd',
      firstAttemptAt: first,
    };
    const retry = await verifyDebtor(deps, { ...request, now: first, failures: 0 });
    expect(retry).toMatchObject({ kind: 'retry', reason: 'registry-rate-limited', failures: 1 });
    if (retry.kind !== 'retry') return;
    expect(await verifyDebtor(deps, { ...request, now: retry.at, failures: 1 })).toMatchObject({
      kind: 'outcome',
      outcome: { status: 'VERIFIED' },
    });
    expect(standIn.requests).toEqual(['/company/01000429', '/company/01000429']);
  });
});
