import { seededRandom } from '../../test/support/seeded-random.js';

/** One seed for every trickle: each run, alone and beside, writes on the same schedule. */
const TRICKLE_SEED = 0x7c7c;

/**
 * When each of a trickle's `events` is written, in ms from its start: gaps drawn from a seeded
 * uniform spread over 0.5–1.5, scaled to a mean of `meanSpacingMs` (the same rate as a fixed beat).
 *
 * Not a fixed beat: the stream poller reads again 100 ms (its idle pause) plus one GetRecords after
 * an empty read, and starts that cycle over after each record it hands on, so where an event 125 ms
 * after another met the cycle followed from where that one did, and a trickle's 40 latencies
 * sampled a run of phases, not the whole cycle. Run after run on one warm stack, a fixed beat's
 * p95 read 93, 112, 117, 123 and 123 ms, the spread gaps' 117–122
 * (docs/performance.md, "The trickle's schedule"): a 1.2 × bound on a lucky baseline was below what
 * the poller itself takes. Seeded, not fresh each run, so the schedule is one fact of the bench,
 * the same in every run.
 */
export function trickleSchedule(events: number, meanSpacingMs: number): number[] {
  const random = seededRandom(TRICKLE_SEED);
  const gaps = Array.from({ length: Math.max(0, events - 1) }, () => 0.5 + random());
  // Scaled so the gaps' mean is exactly `meanSpacingMs`: a few dozen draws average a little off 1.
  const scale = gaps.length > 0 ? (meanSpacingMs * gaps.length) / gaps.reduce((sum, gap) => sum + gap, 0) : 0;
  const offsets = [0];
  for (const gap of gaps) offsets.push(offsets.at(-1)! + gap * scale);
  return offsets.map(Math.round);
}
