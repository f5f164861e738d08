import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { isPast, standaloneDeadline, type Deadline } from '../deadline.js';
import { ServiceUnavailableError } from '../errors.js';

/**
 * The one retry layer for every storage and queue call (DynamoDB, S3 and SQS). The SDK clients
 * make a single attempt each (`maxAttempts: 1`), so retries never multiply: attempts here are bounded by the
 * policy, by the request's shared retry budget, and by its deadline, whose abort signal is passed
 * to every attempt so a stalled call ends when the request's time is up. Full-jitter backoff.
 *
 * A transient failure that outlasts all three becomes ServiceUnavailableError (503 with
 * Retry-After when nothing was written yet). A failed condition or any other answer is passed
 * through unchanged: it is an answer, not an outage. Three shapes of the one loop: `withRetries`
 * (the value, or throws), `attempt` (the outcome classified: answered, gave up, and whether an
 * attempt may still take effect) and `untilProcessed` (batch calls that leave keys unprocessed).
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
  // A single-item write refused because a transaction is writing the same item (the fan-out's record starts
  // meet the delivery's attempt records on a replay): nothing was applied, and the same write may succeed now.
  'TransactionConflictException',
  'NetworkingError',
  // SQS's throttling (SendMessage, SendMessageBatch, ReceiveMessage): a fault the SDK blames on the client, as
  // DynamoDB's ThrottlingException, and as worth another attempt.
  'RequestThrottled',
]);
/**
 * Socket and resolver failures (Node's error.code; the SDK's HTTP handler passes them on with the name
 * "Error"): the service was not reached, or its answer was lost. Worth another attempt, as a 5xx is.
 */
const RETRYABLE_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EHOSTDOWN',
]);
/**
 * Failures raised before a connection was made, so the request never left and nothing was applied: a
 * name not resolved, a connection refused, or any of these codes on the `connect` call itself. The
 * unreachable codes can also end a keep-alive socket that already carried the request (Linux reports
 * the ICMP error on it), so only their `syscall` tells.
 */
const NEVER_SENT_CODES = new Set(['ECONNREFUSED', 'EAI_AGAIN', 'ENOTFOUND']);
const BEFORE_SENDING_SYSCALLS = new Set(['connect', 'getaddrinfo']);
function neverSent(e: { code?: string; syscall?: string }): boolean {
  if (e.code === undefined || !RETRYABLE_CODES.has(e.code)) return false;
  return NEVER_SENT_CODES.has(e.code) || (e.syscall !== undefined && BEFORE_SENDING_SYSCALLS.has(e.syscall));
}

/** Cancellation reasons that say only "not now" (another writer, throttling): the same transaction may succeed later. */
const TRANSIENT_CANCELLATION_CODES = new Set(['TransactionConflict', 'ThrottlingError', 'ProvisionedThroughputExceeded']);

/**
 * Whether DynamoDB cancelled a transaction (its CancellationReasons say which action refused and why). By
 * name as well as by class: a client of another copy of the SDK (a bundle, a test's fake) throws an
 * equal error that is not an instance of this module's class.
 */
export function isTransactionCancelled(error: unknown): error is TransactionCanceledException {
  return error instanceof TransactionCanceledException || (error as { name?: string })?.name === 'TransactionCanceledException';
}

/**
 * Transient failures worth another attempt; a failed condition is an answer, not a failure. A
 * cancelled transaction is worth another attempt only when every reason given is transient: one
 * action refused for good (a failed condition, a ValidationError) cancels it again every time.
 */
export function isRetryable(error: unknown): boolean {
  if (isTransactionCancelled(error)) {
    const codes = (error.CancellationReasons ?? []).map((r) => r.Code).filter((code) => code !== undefined && code !== 'None');
    return codes.length > 0 && codes.every((code) => TRANSIENT_CANCELLATION_CODES.has(code!));
  }
  const e = error as { name?: string; code?: string; $metadata?: { httpStatusCode?: number } };
  if (e?.name && RETRYABLE_NAMES.has(e.name)) return true;
  if (e?.code && RETRYABLE_CODES.has(e.code)) return true;
  const status = e?.$metadata?.httpStatusCode;
  return typeof status === 'number' && status >= 500;
}

/**
 * Whether an entry a batch call refused (SQS's SendMessageBatch answers 200 with each failed entry's
 * code and whether the sender is to blame) is worth sending again: one SQS blames on itself, or a
 * throttled one, whichever side SQS blames for it.
 */
export function isRetryableEntry(failure: { Code?: string; SenderFault?: boolean }): boolean {
  return !failure.SenderFault || (failure.Code !== undefined && RETRYABLE_NAMES.has(failure.Code));
}

/**
 * Whether a failed attempt may nevertheless take effect: the request may have reached storage and
 * only its answer was lost (a timeout, a network error once connected, a 5xx, the deadline aborting
 * it in flight), or storage says an earlier attempt with the same idempotency token is still being
 * applied (TransactionInProgressException). Any other answer (a 4xx: throttled, cancelled, a
 * failed condition, invalid), or a failure before any connection (a name not resolved, a
 * connection refused), means this attempt did nothing.
 */
export function mayHaveApplied(error: unknown): boolean {
  const e = error as { name?: string; code?: string; syscall?: string; $metadata?: { httpStatusCode?: number } } | undefined;
  if (e?.name === 'AbortError' || e?.name === 'TransactionInProgressException') return true;
  if (isTransactionCancelled(error)) return false;
  if (e !== undefined && neverSent(e)) return false;
  const status = e?.$metadata?.httpStatusCode;
  return !(typeof status === 'number' && status >= 400 && status < 500);
}

/**
 * DynamoDB's advice for an idempotent transaction still in progress: a retry at least 5 s after
 * the first attempt makes it complete the transaction (and answer how it ended).
 */
export const SETTLE_AFTER_MS = 5_000;

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

/** How a call under the retry layer ended, when it did not return a value. */
export interface Failure {
  ok: false;
  /** The last attempt's error; undefined when no attempt was started (the deadline had passed). */
  error: unknown;
  attempts: number;
  /** The last error is storage's answer (not transient, not cut off): retrying cannot change it. */
  answered: boolean;
  /**
   * Some attempt may still take effect (see mayHaveApplied) and no later answer settled it. What
   * settles one is the caller's to say (`settles`): for an idempotent transaction, an answer to an
   * attempt with the same token; by default nothing does.
   */
  inDoubt: boolean;
  /** Epoch ms when the first attempt was sent. */
  firstAttemptAt: number;
}

export type Attempted<T> = { ok: true; value: T; attempts: number } | Failure;

export interface AttemptOptions {
  /** An error that settles earlier attempts in doubt (it proves none of them took, or will take, effect). */
  settles?: (error: unknown) => boolean;
}

/**
 * One storage call under the retry layer, its outcome classified instead of thrown: the value, or
 * how it failed (an answer, or transient failures that outlasted the policy, the budget or the
 * deadline) and whether an attempt may still take effect. For callers that must tell a write
 * that did nothing from one that may yet land (the case writer); `withRetries` is the same loop
 * for callers that only need the value.
 */
export async function attempt<T>(
  call: (options: { abortSignal: AbortSignal }) => Promise<T>,
  deadline: Deadline = standaloneDeadline(),
  policy: RetryPolicy = DEFAULT_RETRY_POLICY,
  options: AttemptOptions = {},
): Promise<Attempted<T>> {
  const firstAttemptAt = Date.now();
  let inDoubt = false;
  for (let attempts = 1; ; attempts++) {
    // No call is started once the request's time is up: it could only answer too late.
    if (isPast(deadline)) return { ok: false, error: undefined, attempts: attempts - 1, answered: false, inDoubt, firstAttemptAt };
    try {
      return { ok: true, value: await call(sendOptions(deadline)), attempts };
    } catch (error) {
      inDoubt = mayHaveApplied(error) || (inDoubt && !(options.settles?.(error) ?? false));
      // An answer is an answer, however late it came (a failed condition, a 404, a validation error).
      const answered = !isRetryable(error) && (error as { name?: string })?.name !== 'AbortError';
      const failure: Failure = { ok: false, error, attempts, answered, inDoubt, firstAttemptAt };
      if (answered || isDeadlineAbort(error, deadline)) return failure;
      const delay = backoffMs(attempts, policy);
      if (!mayRetry(attempts, delay, deadline, policy)) return failure;
      await sleep(delay);
    }
  }
}

/** One storage call under the retry layer; see the module comment. */
export async function withRetries<T>(
  call: (options: { abortSignal: AbortSignal }) => Promise<T>,
  deadline: Deadline = standaloneDeadline(),
  policy: RetryPolicy = DEFAULT_RETRY_POLICY,
): Promise<T> {
  const outcome = await attempt(call, deadline, policy);
  if (outcome.ok) return outcome.value;
  if (outcome.answered) throw outcome.error;
  throw new ServiceUnavailableError(outcome.error);
}

/**
 * A call that may leave part of its keys unprocessed (BatchGetItem, BatchWriteItem): each call
 * under `attempt`, then the keys left unprocessed asked again after a backoff, as DynamoDB asks
 * (it sheds load that way), within the same policy, budget and deadline; one counter of rounds
 * for both. Returns the keys never processed (empty when all were) and, when a call failed for
 * good, its failure; the caller decides what unanswered keys mean.
 */
export async function untilProcessed<K>(
  keys: readonly K[],
  call: (keys: readonly K[], options: { abortSignal: AbortSignal }) => Promise<readonly K[]>,
  deadline: Deadline = standaloneDeadline(),
  policy: RetryPolicy = DEFAULT_RETRY_POLICY,
): Promise<{ unprocessed: readonly K[]; failure?: Failure }> {
  let wanted = keys;
  for (let round = 1; wanted.length > 0; round++) {
    const asked = wanted;
    const outcome = await attempt((options) => call(asked, options), deadline, policy);
    if (!outcome.ok) return { unprocessed: wanted, failure: outcome };
    wanted = outcome.value;
    if (wanted.length === 0) break;
    const delay = backoffMs(round, policy);
    if (!mayRetry(round, delay, deadline, policy)) break;
    await sleep(delay);
  }
  return { unprocessed: wanted };
}

/**
 * `untilProcessed` for callers that need every key processed (the upload-record reads, the
 * test-data clean-up): a call that failed for good rethrows as `withRetries` does, and keys still
 * unprocessed when the policy, budget or deadline run out are ServiceUnavailableError.
 */
export async function withUnprocessedRetries<K>(
  keys: readonly K[],
  call: (keys: readonly K[], options: { abortSignal: AbortSignal }) => Promise<readonly K[]>,
  deadline: Deadline = standaloneDeadline(),
  policy: RetryPolicy = DEFAULT_RETRY_POLICY,
): Promise<void> {
  const { unprocessed, failure } = await untilProcessed(keys, call, deadline, policy);
  if (failure) throw failure.answered ? failure.error : new ServiceUnavailableError(failure.error);
  if (unprocessed.length > 0) throw new ServiceUnavailableError();
}
