/**
 * "After 5 days in which every delivery to an endpoint failed, it is `disabled` with
 * `disabledReason`" (product rules "Webhooks"), over the facts the endpoint store keeps:
 * `failingSince`, the time of the first failed attempt of the current failing run (absent while
 * deliveries succeed), `lastFailureAt`, the run's latest failure (kept to within
 * LAST_FAILURE_MARK_MS), and the endpoint's status. A success clears both; so an endpoint with
 * `failingSince` five days back has had no successful attempt in those five days.
 *
 * A run ends with a success, or with a quiet gap: a failure more than QUIET_GAP_MS after the run's
 * last one starts a new run ("a failing run older than the quiet gap before it does not count
 * toward the 5-day disable", product rules "Webhook isolation and operators"). Without it, an
 * endpoint that failed for a while, then had nothing to deliver for a week, was disabled by the
 * next single failure: its run looked 7 days old.
 *
 * Only scheduled deliveries count: a ping or a redelivery a partner asks for answers them directly
 * and leaves the endpoint's health alone (the delivery function does not call these for them).
 */
export const DISABLE_AFTER_MS = 5 * 24 * 60 * 60 * 1000;

/**
 * The quiet gap that ends a failing run: 24 hours. While any delivery to an endpoint is being
 * retried, it is attempted at least every MAX_DELAY_SECONDS (11 h, retry-schedule.ts), so a
 * continuous outage never leaves a gap this long between two failures (more than twice the longest
 * retry delay: one retry delayed at its longest, and the next one too, still fit). A gap this long
 * means nothing was pending for most of a day: no evidence the endpoint was down, so the old run
 * is not counted. Short enough that a run cannot bridge days of silence; long enough (far above
 * the hourly mark) that the lag of `lastFailureAt` cannot split a real run.
 */
export const QUIET_GAP_MS = 24 * 60 * 60 * 1000;

/**
 * How stale `lastFailureAt` may be: a failure within this long of the recorded one asks for no
 * write (a down endpoint's failures then cost one health write an hour, not one per attempt). So a
 * gap is measured up to an hour long: a failure 23 h after the true last one may start a new run,
 * which errs towards not disabling.
 */
export const LAST_FAILURE_MARK_MS = 60 * 60 * 1000;

export type EndpointStatus = 'enabled' | 'disabled';

export interface EndpointHealth {
  status: EndpointStatus;
  /** ISO 8601: the first failed attempt of the current run; absent when the last attempt succeeded. */
  failingSince?: string;
  /**
   * ISO 8601: the run's latest failure, to within LAST_FAILURE_MARK_MS; absent with failingSince. A
   * run recorded before this was kept has none: its start stands in for it (lastFailureOf).
   */
  lastFailureAt?: string;
}

/** The run's latest recorded failure (its start for a run recorded without one); undefined when no run is going. */
export function lastFailureOf(health: EndpointHealth): string | undefined {
  return health.failingSince === undefined ? undefined : (health.lastFailureAt ?? health.failingSince);
}

/** Whether the failing run of `health` still runs at `at`: there is one, and its last failure is at most QUIET_GAP_MS before. */
export function runContinuesAt(health: EndpointHealth, at: Date): boolean {
  const last = lastFailureOf(health);
  return last !== undefined && at.getTime() - Date.parse(last) <= QUIET_GAP_MS;
}

/**
 * The health after one scheduled attempt at `at`: a success clears the run; a failure continues a
 * run that still runs at `at` (its start kept, `lastFailureAt` moved on once it is
 * LAST_FAILURE_MARK_MS old), or else starts a new one at `at`.
 */
export function healthAfterAttempt(health: EndpointHealth, succeeded: boolean, at: Date): EndpointHealth {
  if (succeeded) return { status: health.status };
  if (!runContinuesAt(health, at)) return { status: health.status, failingSince: at.toISOString(), lastFailureAt: at.toISOString() };
  const last = lastFailureOf(health)!;
  const lastFailureAt = at.getTime() - Date.parse(last) >= LAST_FAILURE_MARK_MS ? at.toISOString() : last;
  return { status: health.status, failingSince: health.failingSince!, lastFailureAt };
}

/**
 * How a store records a failure's health (`incoming`: healthAfterAttempt's answer, or a slow
 * attempt's early mark) over the health it holds, whatever the caller read before: `start` (no run
 * stored, or the stored run's last failure is more than the quiet gap before this one) writes
 * incoming's start and failure; `continue` keeps the stored start and moves `lastFailureAt` on to
 * this failure; `keep` (the stored run already has a later failure) changes neither. So a worker
 * whose reading predates another's mark never moves a run's start later, and a new run after a gap
 * replaces the old one.
 */
export function failureRecord(stored: EndpointHealth, incoming: EndpointHealth & { failingSince: string }): 'start' | 'continue' | 'keep' {
  const failedAt = incoming.lastFailureAt ?? incoming.failingSince;
  if (!runContinuesAt(stored, new Date(failedAt))) return 'start';
  return Date.parse(lastFailureOf(stored)!) < Date.parse(failedAt) ? 'continue' : 'keep';
}

export type DisableDecision = { disable: false } | { disable: true; disabledReason: string };

/** Whether an endpoint is to be disabled at `now`: enabled, and every attempt failed for DISABLE_AFTER_MS. */
export function disableDecision(health: EndpointHealth, now: Date): DisableDecision {
  if (health.status !== 'enabled' || health.failingSince === undefined) return { disable: false };
  if (now.getTime() - Date.parse(health.failingSince) < DISABLE_AFTER_MS) return { disable: false };
  return {
    disable: true,
    disabledReason:
      `Every delivery failed from ${health.failingSince} to ${now.toISOString()} (5 days). ` +
      'Fix the receiver, then set status to "enabled" to resume deliveries.',
  };
}
