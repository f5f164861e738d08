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

/**
 * The most of the registry's rate one company's cases may use in any window: 80 %, so that one
 * partner importing thousands of distinct debtors leaves at least a fifth of every window (100
 * requests per 5 minutes at the default rate) to every other company's cases, where first come,
 * first served let it hold their cases `PENDING` for as long as its import lasted. The price: a
 * company alone on the registry verifies at 80 % of the rate. Counted like the window itself, on a
 * window of the company's own (docs/lifecycle-design.md, "Each company's share of the rate").
 */
export const COMPANY_SHARE_PERCENT = 80;

/** One company's window: the registry's, with the company's share of its limit (at least 1). */
export function companyShare(config: RateLimitConfig): RateLimitConfig {
  return { ...config, limit: Math.max(1, Math.floor((config.limit * COMPANY_SHARE_PERCENT) / 100)) };
}

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

/**
 * A grant as a shared store must condition it: the permit is counted in `slot`; the store may
 * grant it only while no counted earlier slot holds more than `earlier` says, while `slot` holds
 * fewer than `slotCap` permits before it (so at most `slotCap` after), while no later slot has begun (a worker whose clock is ahead
 * started it: this caller's view is behind) and while no block is in force. Under those
 * conditions concurrent grants in the same slot need no version: each adds to the slot's count,
 * and the cap alone keeps the window within the limit.
 */
export type PermitPlan =
  { granted: true; slot: number; earlier: Record<string, number>; slotCap: number } | { granted: false; retryAtMs: number };

function checkConfig(config: RateLimitConfig): void {
  if (!(Number.isInteger(config.limit) && config.limit >= 1 && config.slots >= 1 && config.windowMs > 0)) {
    throw new Error(`Invalid rate limit: ${JSON.stringify(config)}`);
  }
}

export function slotLength(config: RateLimitConfig): number {
  return config.windowMs / config.slots;
}

export function planPermit(state: RateWindowState, nowMs: number, config: RateLimitConfig): PermitPlan {
  checkConfig(config);
  if (state.blockedUntil !== undefined && nowMs < state.blockedUntil) return { granted: false, retryAtMs: state.blockedUntil };
  const slotMs = slotLength(config);
  const current = Math.floor(nowMs / slotMs);
  // A later slot already counts permits: this caller's clock (or `now`) is behind; it waits for that slot.
  const latest = Math.max(...Object.keys(state.counts).map(Number), -Infinity);
  if (latest > current) return { granted: false, retryAtMs: latest * slotMs };
  const used = countIn(state.counts, current - config.slots, current);
  if (used < config.limit) {
    const earlier: Record<string, number> = {};
    for (let slot = current - config.slots; slot < current; slot++) earlier[slot] = state.counts[slot] ?? 0;
    return { granted: true, slot: current, earlier, slotCap: config.limit - (used - (state.counts[current] ?? 0)) };
  }
  // The first later slot at which enough of the oldest counted slots have dropped out.
  for (let slot = current + 1; ; slot++) {
    if (countIn(state.counts, slot - config.slots, slot) < config.limit) return { granted: false, retryAtMs: slot * slotMs };
  }
}

/** The plan applied to the state itself: what one process holding the state does (test/support/memory-verification.ts). */
export function takePermit(state: RateWindowState, nowMs: number, config: RateLimitConfig): RateDecision {
  const plan = planPermit(state, nowMs, config);
  if (!plan.granted) return plan;
  const counts: Record<string, number> = {};
  for (const [slot, n] of Object.entries(plan.earlier)) if (n > 0) counts[slot] = n;
  counts[plan.slot] = (state.counts[plan.slot] ?? 0) + 1;
  // A block that has ended is dropped with the slots that no longer count.
  return { granted: true, state: { counts } };
}

export function blockWindow(state: RateWindowState, untilMs: number): RateWindowState {
  return { ...state, blockedUntil: Math.max(untilMs, state.blockedUntil ?? 0) };
}

/**
 * How far past a refused permit's boundary the retries of the workers refused together are spread:
 * one slot of the default window. Every worker refused within a slot is told the same boundary (the
 * slot at which the window has room again, or the end of a 429 block); asking again exactly there
 * would send them all at the one limiter item in the same instant, and the room freed at a slot
 * boundary lasts the whole slot, so a spread of one slot costs no permit.
 */
export const PERMIT_RETRY_SPREAD_MS = slotLength(DEFAULT_REGISTRY_RATE_LIMIT);

/**
 * When a caller refused a permit asks again: at `retryAt` (the limiter's "not before") plus a jitter
 * drawn uniformly from [0, PERMIT_RETRY_SPREAD_MS), so never before the boundary and never more than
 * one slot after it. `random` is in [0, 1) (Math.random); a value outside is held inside it.
 */
export function permitRetryAt(retryAt: Date, random: () => number): Date {
  const draw = Math.min(Math.max(random(), 0), 1);
  return new Date(retryAt.getTime() + Math.min(Math.floor(draw * PERMIT_RETRY_SPREAD_MS), PERMIT_RETRY_SPREAD_MS - 1));
}
