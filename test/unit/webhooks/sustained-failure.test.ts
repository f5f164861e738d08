import { SUSTAINED_FAILURE_MS, SUSTAINED_FAILURES, sustainedFailure } from '../../../lib/webhooks/sustained-failure.js';

const at = (ms: number) => new Date(Date.UTC(2026, 2, 1) + ms).toISOString();
const failed = (ms: number) => ({ at: at(ms), statusCode: 503 });
const timedOut = (ms: number) => ({ at: at(ms), error: 'no answer within 10000 ms' });
const delivered = (ms: number) => ({ at: at(ms), statusCode: 204 });

describe('sustained failure: when a delivery moves to the slow lane', () => {
  it('never after one failed attempt, however long ago it was', () => {
    expect(sustainedFailure([failed(0)])).toBe(false);
    expect(sustainedFailure([failed(0), failed(10 * 60_000)])).toBe(false);
  });

  it(`not after ${SUSTAINED_FAILURES} failures within ${SUSTAINED_FAILURE_MS / 60_000} minutes`, () => {
    expect(sustainedFailure([failed(0), failed(5_000), failed(20_000), failed(65_000)])).toBe(false);
  });

  it(`after ${SUSTAINED_FAILURES} consecutive failures spanning ${SUSTAINED_FAILURE_MS / 60_000} minutes`, () => {
    expect(sustainedFailure([failed(0), failed(60_000), failed(SUSTAINED_FAILURE_MS)])).toBe(true);
    expect(sustainedFailure([timedOut(0), failed(60_000), timedOut(SUSTAINED_FAILURE_MS)])).toBe(true);
  });

  it('a success ends the run: only the failures after it count', () => {
    expect(sustainedFailure([failed(0), failed(60_000), delivered(90_000), failed(100_000), failed(SUSTAINED_FAILURE_MS + 1)])).toBe(false);
  });
});
