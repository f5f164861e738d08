import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';

/**
 * Our own bounded retries for storage calls, on top of the SDK's. The SDK does not retry a
 * TransactionCanceledException caused by TransactionConflict, and a request that timed out (the
 * handler throws on timeout) needs a fresh attempt. Full-jitter exponential backoff, never past
 * the caller's deadline (the Lambda's remaining time less a margin).
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
  const e = error as { name?: string; code?: string; $metadata?: { httpStatusCode?: number }; $retryable?: unknown };
  if (e?.name && RETRYABLE_NAMES.has(e.name)) return true;
  if (e?.code && RETRYABLE_CODES.has(e.code)) return true;
  const status = e?.$metadata?.httpStatusCode;
  return typeof status === 'number' && status >= 500;
}

export function backoffMs(attempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  return Math.floor(random() * ceiling);
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
