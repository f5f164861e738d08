import type { DebtorVerificationOutcome } from '../case-lifecycle.js';
import { normaliseCompanyNumber } from '../company-number.js';
import type { Mode } from '../../mode.js';
import type { CachedAnswer, CompanyRegistry, ProfileCache, RateLimiter } from './ports.js';
import { permitRetryAt } from './rate-window.js';
import { nextVerificationAttempt, VERIFICATION_RETRY_HORIZON_MS } from './retry-schedule.js';
import { sandboxRegistry } from './sandbox-registry.js';
import { verificationOutcome } from './verification-outcome.js';

/**
 * Verifies one case's debtor (product rules "Case lifecycle"), off the create request's path: the
 * stream worker calls it for a `PENDING` case and records the outcome with `recordVerification`
 * (lib/cases/case-lifecycle.ts), or schedules the case again at `retry.at`.
 *
 * Test mode asks the sandbox registry only. Live mode: the shared cache first (an answer is
 * reused for 24 hours, across partners), then a lease on the number (concurrent workers send one
 * request per number between them), then a permit from the shared rate limiter, then the
 * registry. Waiting for a permit or for another worker's lease is not a failure; only the
 * registry's own 429, 5xx, timeouts and network failures count towards the retry schedule. A case
 * refused permits for the whole horizon ends `exhausted` too (the operator's alarm), never waits unseen.
 */
export const PROFILE_REUSE_MS = 24 * 60 * 60 * 1000;
/** How long one worker may hold a number while it asks the registry (well above the adapter's timeout). */
export const FETCH_LEASE_MS = 30 * 1000;
/**
 * After a 429 that named no wait: the registry's whole window (5 minutes), after which its count
 * has certainly started again. Companies House often sends no Retry-After.
 */
export const REGISTRY_429_DEFAULT_BLOCK_MS = 5 * 60 * 1000;

/** Why a case that never got a registry permit in the horizon ends `exhausted` (the log's detail). */
export const PERMIT_HORIZON_DETAIL = 'no registry permit in 24 hours: the configured rate was taken by other cases';
/** The same, when what refused it last was its own company's share of the rate (the company's other cases took it). */
export const SHARE_HORIZON_DETAIL =
  "no registry permit in 24 hours: the company's share of the configured rate was taken by its other cases";
/**
 * How long past the 24 h horizon a case refused permits still waits for one: two of the default
 * limiter's 5-minute windows, so the retry schedule's last attempt, due at the horizon itself, gets
 * its permit in the next window rather than ending the case.
 */
export const PERMIT_HORIZON_GRACE_MS = 10 * 60 * 1000;

export interface VerifyDebtorDeps {
  registry: CompanyRegistry;
  cache: ProfileCache;
  limiter: RateLimiter;
  /** For the retry jitter (failures and refused permits); Math.random unless a test fixes it. */
  random?: () => number;
}

export interface VerifyDebtorRequest {
  mode: Mode;
  /** The case's company: its permits count against the company's share of the registry's rate. */
  companyId: string;
  /** The case's debtorCompanyNo as stored (it passed the create path's format check). */
  companyNumber: string;
  debtorName: string;
  now: Date;
  /** When the first attempt for this case was made (`now` on the first attempt). */
  firstAttemptAt: Date;
  /** Registry failures so far for this case (0 on the first attempt). */
  failures: number;
}

export type RetryReason = 'rate-limit' | 'fetch-in-progress' | 'registry-rate-limited' | 'registry-unavailable';

export type VerifyDebtorResult =
  | { kind: 'outcome'; outcome: DebtorVerificationOutcome; source: 'sandbox' | 'cache' | 'registry' }
  /** Still `PENDING`: try again at `at`; store `failures` with the case's schedule. */
  | { kind: 'retry'; at: Date; reason: RetryReason; failures: number; detail?: string }
  /** Still `PENDING` after retrying for the whole horizon: the operator alarm's case. */
  | { kind: 'exhausted'; failures: number; detail: string };

export async function verifyDebtor(deps: VerifyDebtorDeps, request: VerifyDebtorRequest): Promise<VerifyDebtorResult> {
  const { now, debtorName } = request;
  if (request.mode === 'test') return { kind: 'outcome', outcome: sandboxRegistry.outcome(request.companyNumber, now), source: 'sandbox' };

  const companyNumber = normaliseCompanyNumber(request.companyNumber);
  if (companyNumber === undefined)
    throw new Error(`verifyDebtor: "${request.companyNumber}" is not a UK company number (the create path checks it)`);
  const freshSince = new Date(now.getTime() - PROFILE_REUSE_MS);
  const fromCache = (cached: CachedAnswer): VerifyDebtorResult => ({
    kind: 'outcome',
    outcome: verificationOutcome(cached.answer, debtorName, new Date(cached.fetchedAt)),
    source: 'cache',
  });

  const cached = await deps.cache.get(companyNumber);
  if (cached && new Date(cached.fetchedAt) >= freshSince) return fromCache(cached);

  const lease = await deps.cache.lease(companyNumber, { now, until: new Date(now.getTime() + FETCH_LEASE_MS), freshSince });
  if (lease.kind === 'cached') return fromCache(lease.cached);
  if (lease.kind === 'held') return { kind: 'retry', at: lease.heldUntil, reason: 'fetch-in-progress', failures: request.failures };

  let handedBack = false;
  const giveBack = async () => {
    handedBack = true;
    await deps.cache.release(companyNumber, lease.token);
  };
  try {
    const permit = await deps.limiter.take(now, request.companyId);
    if (!permit.granted) {
      await giveBack();
      // Refused permits are not registry failures, but they are not waited on for ever either: a case
      // still without one a whole horizon after its first attempt (the registry's rate taken by
      // other work all day) is the operator's, as a case the registry failed for that long is. With a
      // grace past the horizon, so the last attempt the retry schedule makes (at the horizon itself)
      // is not lost to one refused permit.
      if (now.getTime() >= request.firstAttemptAt.getTime() + VERIFICATION_RETRY_HORIZON_MS + PERMIT_HORIZON_GRACE_MS) {
        const why = permit.limitedBy === 'company' ? SHARE_HORIZON_DETAIL : PERMIT_HORIZON_DETAIL;
        return {
          kind: 'exhausted',
          failures: request.failures,
          detail: request.failures === 0 ? why : `${why}, after ${request.failures} registry failure${request.failures === 1 ? '' : 's'}`,
        };
      }
      // Jittered past the limiter's boundary: the workers refused together do not come back together.
      return {
        kind: 'retry',
        at: permitRetryAt(permit.retryAt, deps.random ?? Math.random),
        reason: 'rate-limit',
        failures: request.failures,
      };
    }
    const answer = await deps.registry.lookup(companyNumber);
    if (answer.kind === 'found' || answer.kind === 'not-found') {
      const fetched: CachedAnswer = { answer, fetchedAt: now.toISOString() };
      handedBack = true;
      await deps.cache.put(companyNumber, fetched, lease.token);
      return { kind: 'outcome', outcome: verificationOutcome(answer, debtorName, now), source: 'registry' };
    }
    await giveBack();
    const failures = request.failures + 1;
    const retryAfterMs = answer.kind === 'rate-limited' ? answer.retryAfterMs : undefined;
    const detail =
      answer.kind === 'rate-limited'
        ? `registry answered 429${retryAfterMs !== undefined ? ` (Retry-After ${retryAfterMs} ms)` : ''}`
        : answer.detail;
    const next = nextVerificationAttempt({ firstAttemptAt: request.firstAttemptAt, failures, now, retryAfterMs, random: deps.random });
    if (answer.kind === 'rate-limited') {
      // Our count and the registry's disagree (another user of the key?): every worker holds off.
      await deps.limiter.blockUntil(new Date(now.getTime() + (retryAfterMs ?? REGISTRY_429_DEFAULT_BLOCK_MS)));
    }
    if (next.kind === 'exhausted') return { kind: 'exhausted', failures, detail };
    return {
      kind: 'retry',
      at: next.at,
      reason: answer.kind === 'rate-limited' ? 'registry-rate-limited' : 'registry-unavailable',
      failures,
      detail,
    };
  } finally {
    // A registry that threw (a refused key, an unreadable answer) must not keep the number leased.
    if (!handedBack) await deps.cache.release(companyNumber, lease.token);
  }
}
