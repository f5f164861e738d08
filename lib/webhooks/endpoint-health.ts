/**
 * "After 5 days in which every delivery to an endpoint failed, it is `disabled` with
 * `disabledReason`" (product rules "Webhooks"), over the two facts the endpoint store keeps:
 * `failingSince`, the time of the first failed attempt since the last successful one (absent while
 * deliveries succeed), and the endpoint's status. A success clears `failingSince`; so an endpoint
 * with `failingSince` five days back has had no successful attempt in those five days.
 *
 * Only scheduled deliveries count: a ping or a redelivery a partner asks for answers them directly
 * and leaves the endpoint's health alone (the delivery function does not call these for them).
 */
export const DISABLE_AFTER_MS = 5 * 24 * 60 * 60 * 1000;

export type EndpointStatus = 'enabled' | 'disabled';

export interface EndpointHealth {
  status: EndpointStatus;
  /** ISO 8601: the first failed attempt since the last success; absent when the last attempt succeeded. */
  failingSince?: string;
}

/** The health after one scheduled attempt at `at`: a success clears failingSince, a failure starts it if it is not running. */
export function healthAfterAttempt(health: EndpointHealth, succeeded: boolean, at: Date): EndpointHealth {
  if (succeeded) return { status: health.status };
  return { ...health, failingSince: health.failingSince ?? at.toISOString() };
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
