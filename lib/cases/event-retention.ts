/**
 * Events are kept 30 days (product rules "Events"). One rule for every reader: an event is shown
 * while it is younger than the retention period, whatever storage still holds. DynamoDB's TTL
 * deletes an expired item only eventually (often days later), so the read and the list apply the
 * rule themselves; the item's `ttl` (table-keys.ts) is set from the same constant.
 */
export const EVENT_RETENTION_DAYS = 30;
export const EVENT_RETENTION_MS = EVENT_RETENTION_DAYS * 24 * 60 * 60 * 1000;

/** The earliest `createdAt` still shown at `now` (inclusive), as ISO 8601 UTC with milliseconds, the form `createdAt` is kept in. */
export function retainedFrom(now: Date): string {
  return new Date(now.getTime() - EVENT_RETENTION_MS + 1).toISOString();
}

/** Whether an event created at `createdAt` is still shown at `now`. */
export function isRetained(createdAt: string, now: Date): boolean {
  return Date.parse(createdAt) > now.getTime() - EVENT_RETENTION_MS;
}
