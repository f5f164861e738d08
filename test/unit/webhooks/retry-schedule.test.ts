import fc from 'fast-check';
import {
  DISABLE_AFTER_MS,
  LAST_FAILURE_MARK_MS,
  QUIET_GAP_MS,
  disableDecision,
  failureRecord,
  healthAfterAttempt,
  runContinuesAt,
  type EndpointHealth,
} from '../../../lib/webhooks/endpoint-health.js';
import {
  MAX_DELAY_SECONDS,
  maxAttempts,
  nextStep,
  nominalDelaySeconds,
  RETRY_WINDOW_SECONDS,
  SQS_MAX_VISIBILITY_SECONDS,
} from '../../../lib/webhooks/retry-schedule.js';

const t0 = new Date('2025-03-01T00:00:00.000Z');
const DAY_S = 24 * 3600;

/** Every attempt of one delivery that never succeeds, attempts taking no time, with the given jitter source. */
function failForever(random: () => number): { attempts: number; delays: number[]; totalSeconds: number } {
  const delays: number[] = [];
  let now = t0;
  for (let attempts = 1; ; attempts++) {
    const step = nextStep({ attemptsMade: attempts, firstAttemptAt: t0, now }, random);
    if (step.kind === 'give-up') return { attempts, delays, totalSeconds: (now.getTime() - t0.getTime()) / 1000 };
    delays.push(step.delaySeconds);
    now = step.nextAttemptAt;
  }
}

describe('the webhook retry schedule', () => {
  it('retries a first failure within 10 seconds, whatever the jitter', () => {
    for (const r of [0, 0.5, 0.999999]) {
      const step = nextStep({ attemptsMade: 1, firstAttemptAt: t0, now: t0 }, () => r);
      expect(step).toMatchObject({ kind: 'retry' });
      if (step.kind === 'retry') {
        expect(step.delaySeconds).toBeGreaterThanOrEqual(1);
        expect(step.delaySeconds).toBeLessThanOrEqual(10);
      }
    }
  });

  it('grows its nominal delays until the cap', () => {
    const nominal = Array.from({ length: 12 }, (_, i) => nominalDelaySeconds(i + 1));
    for (let i = 1; i < nominal.length; i++) expect(nominal[i]).toBeGreaterThanOrEqual(nominal[i - 1]!);
    expect(nominal[1]).toBeGreaterThan(nominal[0]!);
  });

  it('keeps trying for at least 3 days and gives up within a day more, for any jitter', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 0.999999, noNaN: true }), { minLength: 1, maxLength: 40 }), (rolls) => {
        let i = 0;
        const { totalSeconds, delays } = failForever(() => rolls[i++ % rolls.length]!);
        expect(totalSeconds).toBeGreaterThanOrEqual(RETRY_WINDOW_SECONDS);
        expect(totalSeconds).toBeLessThan(RETRY_WINDOW_SECONDS + DAY_S);
        // Every delay is a visibility timeout SQS accepts, with an hour to spare for the attempt before it is set.
        for (const d of delays) expect(d).toBeLessThanOrEqual(SQS_MAX_VISIBILITY_SECONDS - 3600);
      }),
      { numRuns: 200 },
    );
  });

  it('spreads deliveries that failed together (jitter)', () => {
    const delays = new Set(
      Array.from({ length: 20 }, (_, k) => {
        const step = nextStep({ attemptsMade: 6, firstAttemptAt: t0, now: t0 }, () => k / 20);
        return step.kind === 'retry' ? step.delaySeconds : undefined;
      }),
    );
    expect(delays.size).toBeGreaterThan(10);
  });

  it('bounds the attempts a delivery can make, for the dead-letter queue’s maxReceiveCount', () => {
    const bound = maxAttempts();
    for (const r of [0, 0.3, 0.7, 0.999999]) expect(failForever(() => r).attempts).toBeLessThanOrEqual(bound);
    expect(failForever(() => 0).attempts).toBe(bound);
    expect(bound).toBe(19);
  });
});

describe('an endpoint whose deliveries fail', () => {
  const enabled: EndpointHealth = { status: 'enabled' };
  const HOUR = 60 * 60 * 1000;
  const DAY = 24 * HOUR;
  const at = (ms: number) => new Date(t0.getTime() + ms);

  it('is disabled once every delivery has failed for 5 days, with a reason', () => {
    let health = healthAfterAttempt(enabled, false, t0);
    // Retries every 9 hours at most (retry-schedule.ts): the run goes on.
    for (let ms = HOUR * 9; ms < DISABLE_AFTER_MS; ms += HOUR * 9) health = healthAfterAttempt(health, false, at(ms));
    expect(health.failingSince).toBe(t0.toISOString());
    expect(disableDecision(health, at(DISABLE_AFTER_MS - 1))).toEqual({ disable: false });
    const decision = disableDecision(health, at(DISABLE_AFTER_MS));
    expect(decision).toEqual({
      disable: true,
      disabledReason: expect.stringContaining('Every delivery failed from 2025-03-01T00:00:00.000Z'),
    });
  });

  it('is not disabled when one delivery succeeded in those 5 days', () => {
    let health = healthAfterAttempt(enabled, false, t0);
    health = healthAfterAttempt(health, true, at(DISABLE_AFTER_MS - 60_000));
    health = healthAfterAttempt(health, false, at(DISABLE_AFTER_MS - 30_000));
    expect(disableDecision(health, at(DISABLE_AFTER_MS + 1))).toEqual({ disable: false });
    expect(disableDecision(health, at(2 * DISABLE_AFTER_MS - 30_000))).toMatchObject({ disable: true });
  });

  it('after a quiet gap longer than 24 hours, a failure starts a new run: an old run is not counted, and one failure disables nothing', () => {
    // Failing for 2 days, then nothing to deliver for a week.
    let health = healthAfterAttempt(enabled, false, t0);
    for (let ms = HOUR * 9; ms <= 2 * DAY; ms += HOUR * 9) health = healthAfterAttempt(health, false, at(ms));
    const after = at(9 * DAY);
    health = healthAfterAttempt(health, false, after);
    expect(health).toEqual({ status: 'enabled', failingSince: after.toISOString(), lastFailureAt: after.toISOString() });
    expect(disableDecision(health, after)).toEqual({ disable: false });
  });

  it('a gap of up to 24 hours keeps the run (and its 5-day count); a gap just over it starts a new one', () => {
    const start = healthAfterAttempt(enabled, false, t0);
    expect(healthAfterAttempt(start, false, at(QUIET_GAP_MS)).failingSince).toBe(t0.toISOString());
    expect(healthAfterAttempt(start, false, at(QUIET_GAP_MS + 1)).failingSince).toBe(at(QUIET_GAP_MS + 1).toISOString());
    // The gap is more than twice the longest retry delay: a delivery still being retried never leaves one that long.
    expect(QUIET_GAP_MS).toBeGreaterThan(2 * MAX_DELAY_SECONDS * 1000);
  });

  it('records the last failure to within an hour (no write per failure), and never moves it back', () => {
    const start = healthAfterAttempt(enabled, false, t0);
    expect(healthAfterAttempt(start, false, at(LAST_FAILURE_MARK_MS - 1))).toEqual(start);
    expect(healthAfterAttempt(start, false, at(LAST_FAILURE_MARK_MS)).lastFailureAt).toBe(at(LAST_FAILURE_MARK_MS).toISOString());
    expect(healthAfterAttempt(start, false, at(-HOUR * 2))).toEqual(start);
  });

  it('a run recorded without its last failure is judged from its start', () => {
    const old = { status: 'enabled' as const, failingSince: t0.toISOString() };
    expect(runContinuesAt(old, at(QUIET_GAP_MS))).toBe(true);
    expect(runContinuesAt(old, at(QUIET_GAP_MS + 1))).toBe(false);
    expect(runContinuesAt(enabled, t0)).toBe(false);
  });

  it('a store records a failure by the run it holds: a new run after a gap replaces the old one, a live run keeps its start', () => {
    const stored = { status: 'enabled' as const, failingSince: t0.toISOString(), lastFailureAt: at(HOUR).toISOString() };
    const failure = (ms: number) => ({
      status: 'enabled' as const,
      failingSince: at(ms).toISOString(),
      lastFailureAt: at(ms).toISOString(),
    });
    expect(failureRecord(enabled, failure(0))).toBe('start');
    expect(failureRecord(stored, failure(HOUR + QUIET_GAP_MS + 1))).toBe('start');
    expect(failureRecord(stored, failure(2 * HOUR))).toBe('continue');
    expect(failureRecord(stored, failure(HOUR))).toBe('keep');
    expect(failureRecord(stored, failure(30 * 60 * 1000))).toBe('keep');
  });

  it('is not disabled again when it already is, nor when nothing failed', () => {
    expect(disableDecision({ status: 'disabled', failingSince: t0.toISOString() }, at(10 * DISABLE_AFTER_MS))).toEqual({ disable: false });
    expect(disableDecision(enabled, at(10 * DISABLE_AFTER_MS))).toEqual({ disable: false });
  });
});
