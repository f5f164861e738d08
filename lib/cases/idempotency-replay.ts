import { IdempotencyKeyReusedError } from '../errors.js';
import type { ClaimResult, StoredResponse } from './ports.js';

/**
 * The answer to a request whose Idempotency-Key is already taken (product rules "Idempotency-Key"),
 * the same for every route that takes a key: 409 naming the claim's state, whether this request is
 * the same as the first (`sameRequest`, by fingerprint), and the first request's answer once it
 * finished; while it runs, when to come back (its claim cannot outlive `claimHorizonSeconds`).
 */
export function keyReusedError(
  replay: Exclude<ClaimResult, { claimed: true }>,
  requestHash: string,
  now: Date,
  claimHorizonSeconds: number,
): IdempotencyKeyReusedError {
  const sameRequest = replay.requestHash === requestHash;
  if (replay.state === 'COMPLETED')
    return new IdempotencyKeyReusedError({ state: 'COMPLETED', sameRequest, original: originalAnswer(replay.response) });
  return new IdempotencyKeyReusedError({
    state: 'IN_PROGRESS',
    sameRequest,
    // The first request answers before its function's timeout; its claim cannot outlive the horizon.
    retryAfterSeconds: Math.max(1, replay.claimedAt + claimHorizonSeconds - Math.floor(now.getTime() / 1000)),
  });
}

/** The answer's own fields, as the first request's body carried them (a batch's `compacted` mark stays internal). */
function originalAnswer(response: StoredResponse): Record<string, unknown> {
  if ('created' in response) return { created: response.created, rejected: response.rejected };
  return { payment: response.payment, case: response.case };
}
