/**
 * When a verification that met a transient failure (the registry's 429, 5xx, a timeout) is tried
 * again (product rules: it stays `PENDING` and is retried with backoff for at least 24 hours).
 * Exponential backoff with equal jitter (never sooner than half the step, so a herd of cases that
 * failed together spreads out without retrying at once), at least the registry's `Retry-After`,
 * and a last attempt exactly at the horizon: only a failure at or after it ends the retries, and
 * the case then stays `PENDING` for the operator alarm.
 */
export const VERIFICATION_RETRY_HORIZON_MS = 24 * 60 * 60 * 1000;
export const VERIFICATION_BACKOFF_BASE_MS = 30 * 1000;
export const VERIFICATION_BACKOFF_MAX_MS = 60 * 60 * 1000;

export interface RetryRequest {
  /** When the first attempt for this case was made. */
  firstAttemptAt: Date;
  /** Failed attempts so far, this one included (1 after the first failure). */
  failures: number;
  now: Date;
  /** The registry's `Retry-After`, when it gave one. */
  retryAfterMs?: number;
  /** [0, 1); Math.random in production, fixed in tests. */
  random?: () => number;
}

export type RetryDecision = { kind: 'retry'; at: Date } | { kind: 'exhausted' };

export function backoffStepMs(failures: number): number {
  return Math.min(VERIFICATION_BACKOFF_MAX_MS, VERIFICATION_BACKOFF_BASE_MS * 2 ** Math.max(0, failures - 1));
}

export function nextVerificationAttempt(request: RetryRequest): RetryDecision {
  const { firstAttemptAt, failures, now, retryAfterMs = 0, random = Math.random } = request;
  const horizon = firstAttemptAt.getTime() + VERIFICATION_RETRY_HORIZON_MS;
  if (now.getTime() >= horizon) return { kind: 'exhausted' };
  const step = backoffStepMs(failures);
  const delay = Math.max(retryAfterMs, Math.ceil(step / 2 + random() * (step / 2)));
  return { kind: 'retry', at: new Date(Math.min(now.getTime() + delay, horizon)) };
}
