/**
 * The rate rule for registry requests (product rules: the verifier never exceeds a configured
 * rate, default 500 per 5 minutes, whatever the load; the registry itself allows 600 per 5
 * minutes per key). Pure, over a small state that a shared store keeps for every worker (updated
 * atomically, e.g. a conditional write on a version) or a process keeps in memory.
 *
 * The window is cut into `slots` equal slots and each permit is counted in its slot. A permit is
 * granted only while the current slot and the `slots` before it hold fewer than `limit`. Any
 * rolling window of `windowMs` lies within the slot of its last permit and the `slots` before it,
 * so it never holds more than `limit` permits; the price is a window effectively one slot longer.
 * A fixed window would not do: `limit` at the end of one window and `limit` at the start of the
 * next are twice the limit within 5 minutes.
 */
export interface RateLimitConfig {
  limit: number;
  windowMs: number;
  slots: number;
}

export const DEFAULT_REGISTRY_RATE_LIMIT: RateLimitConfig = { limit: 500, windowMs: 5 * 60 * 1000, slots: 10 };

export interface RateWindowState {
  /** Permits per slot (slot number = floor(epoch ms / slot length)), only the slots still counted. */
  counts: Record<string, number>;
  /** Epoch ms before which no permit is granted (the registry answered 429). */
  blockedUntil?: number;
}

export const EMPTY_RATE_WINDOW: RateWindowState = { counts: {} };

export type RateDecision = { granted: true; state: RateWindowState } | { granted: false; retryAtMs: number };

function countIn(counts: Record<string, number>, first: number, last: number): number {
  let sum = 0;
  for (let slot = first; slot <= last; slot++) sum += counts[slot] ?? 0;
  return sum;
}

export function takePermit(state: RateWindowState, nowMs: number, config: RateLimitConfig): RateDecision {
  if (!(Number.isInteger(config.limit) && config.limit >= 1 && config.slots >= 1 && config.windowMs > 0)) {
    throw new Error(`Invalid rate limit: ${JSON.stringify(config)}`);
  }
  if (state.blockedUntil !== undefined && nowMs < state.blockedUntil) return { granted: false, retryAtMs: state.blockedUntil };
  const slotMs = config.windowMs / config.slots;
  const current = Math.floor(nowMs / slotMs);
  if (countIn(state.counts, current - config.slots, current) < config.limit) {
    const counts: Record<string, number> = {};
    for (const [slot, n] of Object.entries(state.counts)) if (Number(slot) >= current - config.slots) counts[slot] = n;
    counts[current] = (counts[current] ?? 0) + 1;
    // A block that has ended is dropped with the slots that no longer count.
    return { granted: true, state: { counts } };
  }
  // The first later slot at which enough of the oldest counted slots have dropped out.
  for (let slot = current + 1; ; slot++) {
    if (countIn(state.counts, slot - config.slots, slot) < config.limit) return { granted: false, retryAtMs: slot * slotMs };
  }
}

export function blockWindow(state: RateWindowState, untilMs: number): RateWindowState {
  return { ...state, blockedUntil: Math.max(untilMs, state.blockedUntil ?? 0) };
}
