import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { isPast, standaloneDeadline, type Deadline } from '../deadline.js';
import { ServiceUnavailableError } from '../errors.js';

/**
 * The one retry layer for every storage call (DynamoDB and S3). The SDK clients make a single
 * attempt each (`maxAttempts: 1`), so retries never multiply: attempts here are bounded by the
 * policy, by the request's shared retry budget, and by its deadline, whose abort signal is passed
 * to every attempt so a stalled call ends when the request's time is up. Full-jitter backoff.
 *
 * A transient failure that outlasts all three becomes ServiceUnavailableError (503 with
 * Retry-After when nothing was written yet). A failed condition or any other answer is passed
 * through unchanged: it is an answer, not an outage.
 */
export interface RetryPolicy {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 5, baseDelayMs: 20, maxDelayMs: 500 };

const RETRYABLE_NAMES = new Set([
  'ThrottlingException',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
  'SlowDown',
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
  'TransactionInProgressException',
  'NetworkingError',
]);
const RETRYABLE_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN']);

/** Transient failures worth another attempt; a failed condition is an answer, not a failure. */
export function isRetryable(error: unknown): boolean {
  if (error instanceof TransactionCanceledException || (error as { name?: string })?.name === 'TransactionCanceledException') {
    const reasons = (error as TransactionCanceledException).CancellationReasons ?? [];
    if (reasons.some((r) => r.Code === 'ConditionalCheckFailed')) return false;
    return reasons.some((r) => r.Code === 'TransactionConflict' || r.Code === 'ThrottlingError' || r.Code === 'ProvisionedThroughputExceeded');
  }
  const e = error as { name?: string; code?: string; $metadata?: { httpStatusCode?: number } };
  if (e?.name && RETRYABLE_NAMES.has(e.name)) return true;
  if (e?.code && RETRYABLE_CODES.has(e.code)) return true;
  const status = e?.$metadata?.httpStatusCode;
  return typeof status === 'number' && status >= 500;
}

/** The request's time ran out while the call was in flight (the SDK rejects with AbortError). */
export function isDeadlineAbort(error: unknown, deadline: Deadline): boolean {
  return isPast(deadline) || (error as { name?: string })?.name === 'AbortError';
}

export function backoffMs(attempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  return Math.floor(random() * ceiling);
}

/**
 * Whether attempt `attempt` (1-based, just failed) may be followed by another after `delayMs`:
 * within the policy, the request's budget and its deadline. Takes one retry from the budget.
 */
export function mayRetry(attempt: number, delayMs: number, deadline: Deadline, policy: RetryPolicy): boolean {
  if (attempt >= policy.maxAttempts || deadline.retries.left <= 0 || isPast(deadline)) return false;
  if (Date.now() + delayMs >= deadline.workBy) return false;
  deadline.retries.left--;
  return true;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The signal to hand the SDK: the deadline's, so an attempt in flight is cancelled when time is up. */
export function sendOptions(deadline: Deadline): { abortSignal: AbortSignal } {
  return { abortSignal: deadline.signal };
}

/** One storage call under the retry layer; see the module comment. */
export async function withRetries<T>(call: (options: { abortSignal: AbortSignal }) => Promise<T>, deadline: Deadline = standaloneDeadline(), policy: RetryPolicy = DEFAULT_RETRY_POLICY): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    // No call is started once the request's time is up: it could only answer too late.
    if (isPast(deadline)) throw new ServiceUnavailableError();
    try {
      return await call(sendOptions(deadline));
    } catch (error) {
      // An answer is an answer, however late it came (a failed condition, a 404, a validation error).
      if (!isRetryable(error) && (error as { name?: string })?.name !== 'AbortError') throw error;
      if (isDeadlineAbort(error, deadline)) throw new ServiceUnavailableError(error);
      const delay = backoffMs(attempt, policy);
      if (!mayRetry(attempt, delay, deadline, policy)) throw new ServiceUnavailableError(error);
      await sleep(delay);
    }
  }
}

/**
 * "Ask again for what was left unprocessed": a DynamoDB batch call (BatchGetItem's
 * UnprocessedKeys, BatchWriteItem's UnprocessedItems) may answer with part of the work undone,
 * which is DynamoDB shedding load. `send` makes one batch call for `pending` (each call under
 * withRetries, so its own failures are retried as any call's) and returns what is still left.
 * The leftovers are sent again after the same full-jitter backoff as any retry, within the
 * policy's attempts, the request's retry budget and its deadline; when those run out with work
 * still left, ServiceUnavailableError.
 */
export async function withUnprocessedRetries<T>(
  pending: readonly T[],
  send: (pending: readonly T[], options: { abortSignal: AbortSignal }) => Promise<readonly T[]>,
  deadline: Deadline = standaloneDeadline(),
  policy: RetryPolicy = DEFAULT_RETRY_POLICY,
): Promise<void> {
  for (let round = 1; pending.length > 0; round++) {
    const left = pending;
    pending = await withRetries((options) => send(left, options), deadline, policy);
    if (pending.length === 0) return;
    const delay = backoffMs(round, policy);
    if (!mayRetry(round, delay, deadline, policy)) throw new ServiceUnavailableError();
    await sleep(delay);
  }
}
