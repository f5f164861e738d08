/**
 * When a failed delivery is tried again, and when it is given up (product rules "Webhooks"):
 * exponential backoff with jitter, the first retry within 10 s, then growing, for at least 3 days
 * after the first attempt; then the delivery is `failed`.
 *
 * The delivery function schedules a retry as a new message delayed by DelaySeconds (≤ 15 min), a
 * longer delay as hops of ≤ 15 min each (functions/deliver-webhooks.ts): no message is held in
 * flight, so retries never count against SQS's in-flight quota. A delay is at most
 * MAX_DELAY_SECONDS (11 h), a bound kept from when retries were held by ChangeMessageVisibility
 * (12 h at most from the receipt); the schedule below has not changed since. The nominal delays grow by FACTOR from BASE_DELAY_SECONDS up to
 * CAP_DELAY_SECONDS; each is spread by ±JITTER so that deliveries that failed together (an
 * endpoint's outage) do not come back together.
 *
 * Nominal: 5 s, 15 s, 45 s, 2¼ min, 6¾ min, 20 min, 1 h, 3 h, then 9 h each until 3 days have
 * passed: 17 attempts in all at the nominal delays, 19 at most (maxAttempts(), for the queue's
 * redrive policy); the last one 3 to 3½ days after the first.
 */
export const BASE_DELAY_SECONDS = 5;
export const FACTOR = 3;
export const CAP_DELAY_SECONDS = 9 * 60 * 60;
export const JITTER = 0.2;
/** SQS's limit on a message's visibility timeout, counted from its receipt (ChangeMessageVisibility refuses more). */
export const SQS_MAX_VISIBILITY_SECONDS = 12 * 60 * 60;
/** The longest delay scheduled: an hour under SQS's limit. */
export const MAX_DELAY_SECONDS = SQS_MAX_VISIBILITY_SECONDS - 60 * 60;
/**
 * The longest delay a delivery message is sent with (SQS's DelaySeconds limit): a longer wait is
 * made of hops of at most this (functions/deliver-webhooks.ts), so no lane message is ever delayed
 * longer; the lanes' age alarms are set above it (infra/stack/webhook-delivery.ts).
 */
export const MAX_SEND_DELAY_SECONDS = 900;
/** Retries go on until at least this long after the first attempt. */
export const RETRY_WINDOW_SECONDS = 3 * 24 * 60 * 60;

export type NextStep = { kind: 'retry'; delaySeconds: number; nextAttemptAt: Date } | { kind: 'give-up' };

export interface FailedAttempts {
  /** How many attempts were made and failed, the one just made included (≥ 1). */
  attemptsMade: number;
  /** When the first attempt was made. */
  firstAttemptAt: Date;
  /** When the last attempt failed. */
  now: Date;
}

/** The nominal delay after the n-th failed attempt (n ≥ 1), before jitter. */
export function nominalDelaySeconds(attemptsMade: number): number {
  return Math.min(CAP_DELAY_SECONDS, BASE_DELAY_SECONDS * FACTOR ** Math.max(0, attemptsMade - 1));
}

/**
 * What to do after a failed attempt: retry after a jittered delay, or give up once the retry
 * window since the first attempt has passed. `random` is in [0, 1) (Math.random unless a test fixes it).
 */
export function nextStep(failed: FailedAttempts, random: () => number = Math.random): NextStep {
  const elapsedSeconds = (failed.now.getTime() - failed.firstAttemptAt.getTime()) / 1000;
  if (elapsedSeconds >= RETRY_WINDOW_SECONDS) return { kind: 'give-up' };
  const spread = 1 - JITTER + 2 * JITTER * random();
  const delaySeconds = Math.min(MAX_DELAY_SECONDS, Math.max(1, Math.round(nominalDelaySeconds(failed.attemptsMade) * spread)));
  return { kind: 'retry', delaySeconds, nextAttemptAt: new Date(failed.now.getTime() + delaySeconds * 1000) };
}

/**
 * The most attempts a delivery can make (every delay at its shortest, attempts taking no time):
 * the dead-letter queue's maxReceiveCount must be above it, or SQS would move a message that is
 * still being retried.
 */
export function maxAttempts(): number {
  const start = new Date(0);
  let now = start;
  for (let attempts = 1; ; attempts++) {
    const step = nextStep({ attemptsMade: attempts, firstAttemptAt: start, now }, () => 0);
    if (step.kind === 'give-up') return attempts;
    now = step.nextAttemptAt;
  }
}
