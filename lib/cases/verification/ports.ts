import type { Mode } from '../../mode.js';

/**
 * What debtor verification (product rules "Case lifecycle") needs from the world, declared here
 * and implemented outside the domain: the registry (Companies House over HTTP,
 * lib/adapters/companies-house/; the sandbox registry of test mode, ./sandbox-registry.ts), a
 * profile cache shared by every worker and partner, and a rate limiter that holds across every
 * concurrent worker. In-memory implementations for the fast tier: test/support/memory-verification.ts.
 * Shared implementations: lib/adapters/dynamodb/registry-profile-cache.ts and
 * registry-rate-limiter.ts, held to the same contract as the in-memory ones
 * (test/integration/registry-port-contracts.test.ts).
 * The stream worker (functions/verify-debtors.ts) runs it.
 */

/** The fields of a Companies House company profile that verification reads. */
export interface CompanyProfile {
  /** As the register spells it (`company_number`). */
  companyNumber: string;
  /** `company_name`, e.g. `ACME WIDGETS LIMITED`. */
  companyName: string;
  /** `company_status`: `active`, `dissolved`, `liquidation`, … (an open list). */
  companyStatus: string;
}

/** A registry's answer about one company number. */
export type RegistryAnswer =
  | { kind: 'found'; profile: CompanyProfile }
  | { kind: 'not-found' }
  /** 429: the key's allowance is spent; `retryAfterMs` when the registry said how long to wait. */
  | { kind: 'rate-limited'; retryAfterMs?: number }
  /** 5xx, a timeout or a network failure: ask again later. */
  | { kind: 'unavailable'; detail: string };

/** The answers that settle a verification, and the only ones cached. */
export type DefinitiveAnswer = Extract<RegistryAnswer, { kind: 'found' | 'not-found' }>;

export interface CompanyRegistry {
  /**
   * One look-up of the company profile by number (normalised: 8 characters, upper case). Answers
   * the four kinds above; throws for anything else (a refused key, an answer it cannot read),
   * which is an operator's problem, not the case's.
   */
  lookup(companyNumber: string): Promise<RegistryAnswer>;
}

export interface CachedAnswer {
  answer: DefinitiveAnswer;
  /** ISO 8601: when the registry gave it. */
  fetchedAt: string;
}

export type FetchLease =
  /** This worker may ask the registry; `token` proves it when storing the answer or giving up. */
  | { kind: 'taken'; token: string }
  /** Another worker is asking right now: come back when its lease ends. */
  | { kind: 'held'; heldUntil: Date }
  /** A fresh answer arrived between the caller's read and its lease: use it. */
  | { kind: 'cached'; cached: CachedAnswer };

/**
 * The registry's answers by company number, shared across partners (one registry request per
 * number per day, product rules), with a lease so that concurrent workers missing the cache for
 * the same number send one request between them, not one each.
 */
export interface ProfileCache {
  get(companyNumber: string): Promise<CachedAnswer | undefined>;
  /**
   * Atomically: a fresh answer (fetched at or after `freshSince`) → `cached`; another worker's
   * lease that ends after `now` → `held`; otherwise the lease is this caller's until `until`.
   */
  lease(companyNumber: string, request: { now: Date; until: Date; freshSince: Date }): Promise<FetchLease>;
  /**
   * Stores the answer and ends the lease (only while `token` still holds it; an answer is stored
   * regardless, unless the one stored was fetched later).
   */
  put(companyNumber: string, cached: CachedAnswer, token: string): Promise<void>;
  /** Ends the lease without an answer (the registry failed), so the next worker need not wait for it to expire. */
  release(companyNumber: string, token: string): Promise<void>;
}

export type RatePermit =
  | { granted: true }
  /** `company`: the asking company's share is used up (the registry's window may have room for others). */
  | { granted: false; retryAt: Date; limitedBy: 'registry' | 'company' };

/**
 * Registry requests across every concurrent worker (default 500 per rolling 5 minutes, under the
 * registry's 600), and each company's share of them (at most COMPANY_SHARE_PERCENT of any window).
 * The rule is ./rate-window.ts, applied twice: the company's window first, then the registry's, so
 * a company past its share is refused without touching the registry's window. An implementation
 * keeps its state where every worker sees it and updates it atomically.
 */
export interface RateLimiter {
  /**
   * One request's permit for a case of `companyId`, or when to ask again. A company permit taken
   * when the registry's window then refuses is spent (counted against the company's share only).
   */
  take(now: Date, companyId: string): Promise<RatePermit>;
  /** The registry answered 429 anyway (another user of the key, a lower limit): no permits until `until`. */
  blockUntil(until: Date): Promise<void>;
}

/**
 * One more verification attempt for a case whose registry could not answer yet (product rules:
 * "retried with backoff for at least 24 h"): what the worker needs to pick the case up again.
 */
export interface VerificationAttempt {
  caseId: string;
  mode: Mode;
  /** ISO 8601: the first attempt, from which the 24 h horizon is counted. */
  firstAttemptAt: string;
  /** Registry failures so far (waiting for a permit or another worker's fetch does not count). */
  failures: number;
}

/** Where the worker parks a case until its next attempt (an SQS queue with a delay in AWS and locally). */
export interface VerificationRetries {
  /** Delivers `attempt` back to the worker at `at` or later (at least once: the worker is idempotent). */
  schedule(attempt: VerificationAttempt, at: Date): Promise<void>;
}
