/**
 * When a delivery moves to slower handling (the slow lane): only after sustained failure, never after
 * one failed or slow attempt (product rules "Webhook isolation and operators"). Sustained means at
 * least SUSTAINED_FAILURES consecutive failed attempts spanning at least SUSTAINED_FAILURE_MS, from
 * the first of them to the last. With the retry schedule (5 s, 15 s, 45 s, 2¼ min…) a delivery's
 * fifth attempt is the first that can qualify (about 3½ minutes after its first): a receiver that
 * fails once, or for a minute, stays on the fast lane.
 */
export const SUSTAINED_FAILURES = 3;
export const SUSTAINED_FAILURE_MS = 2 * 60 * 1000;

/** An attempt failed unless its receiver answered 2xx (a non-2xx answer carries its status code and no error). */
const failed = (attempt: { statusCode?: number }) =>
  attempt.statusCode === undefined || attempt.statusCode < 200 || attempt.statusCode >= 300;

/** Whether `attempts` (oldest first, as a delivery record keeps them) end in a sustained failing run. */
export function sustainedFailure(attempts: readonly { at: string; statusCode?: number }[]): boolean {
  let first: string | undefined;
  let count = 0;
  for (let i = attempts.length - 1; i >= 0 && failed(attempts[i]!); i--) {
    count++;
    first = attempts[i]!.at;
  }
  if (count < SUSTAINED_FAILURES || first === undefined) return false;
  return Date.parse(attempts[attempts.length - 1]!.at) - Date.parse(first) >= SUSTAINED_FAILURE_MS;
}
