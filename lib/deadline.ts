import { setMaxListeners } from 'node:events';

/**
 * A request's deadline (product rules "Availability and deadlines"): every request answers before
 * its function's timeout, whatever storage does. Work, and every retry of it, must finish by
 * `workBy`; the abort signal fires then and cancels storage calls in flight. The short span between
 * `workBy` and `answerBy` is kept for clean-up that must still happen (giving an Idempotency-Key
 * back, storing the answer on it, reading back a write whose answer was lost). Retries share one
 * budget per request, so a storm of failures cannot multiply into hundreds of calls.
 *
 * Pure: the HTTP layer builds one per request from the Lambda's remaining time; the domain passes
 * it to every storage call on the request path.
 */
export interface Deadline {
  /** Epoch ms by which work and its retries must be done. */
  readonly workBy: number;
  /** Epoch ms by which the answer must have left. */
  readonly answerBy: number;
  /** Aborts at `workBy` (or at `answerBy` for the clean-up deadline). */
  readonly signal: AbortSignal;
  /** Retries left for the whole request, shared by every call made under this deadline. */
  readonly retries: { left: number };
  /** The same request's deadline for clean-up work: until `answerBy`, same retry budget. */
  forCleanUp(): Deadline;
  /**
   * For settling what the work left in doubt (a write whose answer was lost: one more attempt,
   * reading it back): clean-up that ends halfway through the clean-up span, so completing or
   * releasing the Idempotency-Key always keeps the second half. Same retry budget.
   */
  forVerification(): Deadline;
}

export interface DeadlineOptions {
  /** Epoch ms now. */
  now: number;
  /** How long the function may still run (Lambda's getRemainingTimeInMillis()). */
  remainingMs: number;
  /** Kept back for clean-up and for the answer to leave. */
  reserveMs: number;
  /** Retries allowed across all the request's storage calls. */
  retryBudget: number;
}

/** Kept back from the Lambda's remaining time: clean-up runs in the first part, the answer leaves in the rest. */
export const DEADLINE_RESERVE_MS = 2_000;
/** Of the reserve, what clean-up may use; the rest is for the answer to leave. */
const CLEAN_UP_SHARE = 0.75;
/** Of the clean-up span, what settling writes in doubt may use; the rest is the Idempotency-Key's. */
const VERIFICATION_SHARE = 0.5;
export const REQUEST_RETRY_BUDGET = 50;

/** A 100-case batch has a few hundred storage calls in flight on one signal; each adds a listener. */
const MAX_CALLS_ON_ONE_SIGNAL = 1_000;

type Span = 'work' | 'verification' | 'clean-up';

function deadline(workBy: number, answerBy: number, now: number, retries: { left: number }, span: Span): Deadline {
  const until = span === 'work' ? workBy : span === 'clean-up' ? answerBy : workBy + Math.floor((answerBy - workBy) * VERIFICATION_SHARE);
  const signal = AbortSignal.timeout(Math.max(0, until - now));
  setMaxListeners(MAX_CALLS_ON_ONE_SIGNAL, signal);
  return {
    workBy: until,
    answerBy,
    signal,
    retries,
    forCleanUp: () => deadline(workBy, answerBy, Date.now(), retries, 'clean-up'),
    forVerification: () => deadline(workBy, answerBy, Date.now(), retries, 'verification'),
  };
}

export function requestDeadline(options: DeadlineOptions): Deadline {
  const end = options.now + options.remainingMs;
  const workBy = end - options.reserveMs;
  const answerBy = end - Math.round(options.reserveMs * (1 - CLEAN_UP_SHARE));
  return deadline(workBy, answerBy, options.now, { left: options.retryBudget }, 'work');
}

/** Whether the time for work under this deadline is up (the abort signal fires on a timer, a little later). */
export function isPast(deadline: Deadline, now = Date.now()): boolean {
  return deadline.signal.aborted || now >= deadline.workBy;
}

/** For calls outside a request (operator tools, tests of an adapter): a generous bound of its own. */
export function standaloneDeadline(ms = 30_000, now = Date.now()): Deadline {
  return requestDeadline({ now, remainingMs: ms, reserveMs: 0, retryBudget: REQUEST_RETRY_BUDGET });
}
