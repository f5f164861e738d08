import type { EventReader } from '../cases/ports.js';
import { disableDecision, healthAfterAttempt, type EndpointHealth } from './endpoint-health.js';
import type { DeliveryLane, SentWebhook, WebhookAttemptSender, WebhookDeliveryStore, WebhookEndpointStore } from './ports.js';
import { nextStep } from './retry-schedule.js';
import { signingSecrets } from './signature.js';
import { sustainedFailure } from './sustained-failure.js';
import {
  clipAttemptError,
  deliveryKeyOf,
  newDeliveryRecord,
  type DeliveryAttempt,
  type DeliveryJob,
  type WebhookDelivery,
} from './webhook-delivery.js';

/**
 * One delivery job, received from a delivery queue (functions/deliver-webhooks.ts): at most one
 * attempt, recorded in the delivery log, and what is to become of the job. Pure: SQS stays in the
 * function, which turns the result into queue actions.
 *
 * - The endpoint is read (with its secrets) before every attempt: deleted → nothing is sent and
 *   the job ends (the log went with the endpoint's routes); disabled → nothing is sent and the
 *   delivery is recorded `failed`, with an attempt that says so and was never sent. Leaving it
 *   `pending` would show a delivery "still being tried" that nothing will ever try; a partner who
 *   enables the endpoint again can ask for a redelivery.
 * - The payload is the event item's stored JSON (the bytes `GET /api/v1/events/{id}` answers).
 * - The record (normally started by the fan-out) is read, or started when missing: a settled
 *   delivery is never attempted again, and a job that arrives before the record's
 *   `nextAttemptAt` (a delay longer than SQS could hold, or a duplicate message) waits out the rest.
 * - An attempt is recorded conditionally on the attempt count it started from: when another
 *   consumer of a copy of the job recorded first (`stale`), this job ends there and the other
 *   one carries the delivery on; no attempt count is ever used for two retries.
 * - A failure is retried per retry-schedule.ts, counted from the record's first attempt and its
 *   number of attempts (never SQS's receive count, which Lambda's own failures raise too); past
 *   the retry window the delivery is `failed` and counted as given up; the job ends there (the
 *   dead-letter queue is kept for jobs the function could not process at all).
 * - Scheduled deliveries update the endpoint's health (failingSince, the 5-day disable rule),
 *   judged against the endpoint read again after the attempt; redeliveries a partner asked for do
 *   not.
 */
export interface DeliverDeps {
  endpoints: Pick<WebhookEndpointStore, 'getWithSecrets' | 'recordHealth'>;
  events: EventReader;
  deliveries: Pick<WebhookDeliveryStore, 'get' | 'start' | 'recordAttempt'>;
  sender: WebhookAttemptSender;
  now: () => Date;
  /** In [0, 1): the retry delay's jitter (Math.random unless a test fixes it). */
  random?: () => number;
}

/** A job that arrives this early (or less) before its record's nextAttemptAt is attempted now. */
const EARLY_TOLERANCE_MS = 1_000;

export const DISABLED_ENDPOINT_ERROR = 'not sent: the endpoint is disabled';
export const EVENT_GONE_ERROR = 'not sent: the event is no longer stored (kept 30 days)';

export type DeliveryResult =
  /** The job is finished: the function lets SQS delete it. */
  | {
      kind: 'done';
      reason: 'delivered' | 'settled' | 'endpoint-gone' | 'endpoint-disabled' | 'event-gone' | 'delivery-gone' | 'duplicate';
      attempt?: SentWebhook;
      endpointDisabled?: boolean;
    }
  /**
   * Try again after `delaySeconds` (the same job), on `lane`: the slow lane once the delivery's own
   * attempts show sustained failure (sustained-failure.ts), never after one failed or slow attempt.
   * `attempt` is absent when the job only came too early.
   */
  | { kind: 'retry'; delaySeconds: number; nextAttemptAt: string; lane: DeliveryLane; attempt?: SentWebhook; endpointDisabled?: boolean }
  /** Retries ended: the delivery is `failed` and counted as given up (metric `WebhookDeliveryGivenUp`); the job ends here. */
  | { kind: 'give-up'; attempt: SentWebhook; endpointDisabled?: boolean };

/** `lane` is the queue the job came from (a job that came too early goes back to it). */
export async function deliverWebhook(deps: DeliverDeps, job: DeliveryJob, lane: DeliveryLane = 'fast'): Promise<DeliveryResult> {
  const key = deliveryKeyOf(job);
  // The three reads are independent: one round trip instead of three before the attempt.
  const [found, existing, stored] = await Promise.all([
    deps.endpoints.getWithSecrets(job.mode, job.companyId, job.endpointId),
    deps.deliveries.get(key),
    deps.events.get(job.mode, job.eventId),
  ]);
  if (!found) return { kind: 'done', reason: 'endpoint-gone' };
  const { endpoint, secrets } = found;

  const record = existing ?? (await deps.deliveries.start(newDeliveryRecord(job, deps.now().toISOString())));
  if (record.status !== 'pending') return { kind: 'done', reason: 'settled' };

  if (endpoint.status !== 'enabled') {
    const settled = await settleUnsent(deps, record, DISABLED_ENDPOINT_ERROR);
    return { kind: 'done', reason: settled ? 'endpoint-disabled' : 'duplicate' };
  }

  // Another company's event never goes out, whatever a job says.
  if (!stored || stored.companyId !== job.companyId) {
    const settled = await settleUnsent(deps, record, EVENT_GONE_ERROR);
    return { kind: 'done', reason: settled ? 'event-gone' : 'duplicate' };
  }

  const now = deps.now();
  if (record.nextAttemptAt !== undefined && Date.parse(record.nextAttemptAt) - now.getTime() > EARLY_TOLERANCE_MS) {
    return {
      kind: 'retry',
      delaySeconds: Math.ceil((Date.parse(record.nextAttemptAt) - now.getTime()) / 1000),
      nextAttemptAt: record.nextAttemptAt,
      lane,
    };
  }

  const attemptsBefore = record.attempts.length;
  const answer = await deps.sender.send({
    url: endpoint.url,
    eventId: job.eventId,
    payload: stored.payload,
    secrets: signingSecrets(secrets, now),
  });
  // Clipped before it is recorded or logged: the receiver's side chooses how long it is.
  const sent = answer.error === undefined ? answer : { ...answer, error: clipAttemptError(answer.error) };
  const attempt = attemptOf(sent);
  const after = deps.now();

  let result: DeliveryResult;
  let next: { status: WebhookDelivery['status']; nextAttemptAt?: string };
  if (sent.delivered) {
    next = { status: 'delivered' };
    result = { kind: 'done', reason: 'delivered', attempt: sent };
  } else {
    const firstAttemptAt = new Date(record.attempts[0]?.at ?? sent.at);
    const step = nextStep({ attemptsMade: attemptsBefore + 1, firstAttemptAt, now: after }, deps.random);
    if (step.kind === 'retry') {
      next = { status: 'pending', nextAttemptAt: step.nextAttemptAt.toISOString() };
      const retryLane = sustainedFailure([...record.attempts, attempt]) ? 'slow' : 'fast';
      result = { kind: 'retry', delaySeconds: step.delaySeconds, nextAttemptAt: next.nextAttemptAt!, lane: retryLane, attempt: sent };
    } else {
      next = { status: 'failed' };
      result = { kind: 'give-up', attempt: sent };
    }
  }

  const recorded = await deps.deliveries.recordAttempt(key, attemptsBefore, attempt, next);
  if (recorded === 'gone') return { kind: 'done', reason: 'delivery-gone', attempt: sent };
  // Another copy of this job recorded this attempt count first: it carries the delivery on from here.
  if (recorded === 'stale') return { kind: 'done', reason: 'duplicate', attempt: sent };

  if (job.kind === 'scheduled') {
    // The health as it stands after the attempt, not as read before it: meanwhile another attempt to
    // the endpoint may have started or ended its failing run
    // (the function's batch keeps its own health writes in the reading it shares: a failure and then
    // a success in one batch leave the endpoint healthy).
    const current = await deps.endpoints.getWithSecrets(job.mode, job.companyId, job.endpointId);
    if (current) result.endpointDisabled = await updateHealth(deps, job, current.endpoint, sent.delivered, new Date(sent.at), after);
  }
  return result;
}

/** The attempt as the log shows it (the connected address is for operators' logs only). */
function attemptOf(sent: SentWebhook): DeliveryAttempt {
  return {
    at: sent.at,
    ...(sent.statusCode !== undefined ? { statusCode: sent.statusCode } : {}),
    durationMs: Math.round(sent.durationMs),
    ...(sent.error !== undefined ? { error: sent.error } : {}),
  };
}

/** A pending delivery that can never be sent ends `failed`, with an attempt that says why and was not sent. */
async function settleUnsent(deps: DeliverDeps, record: WebhookDelivery, error: string): Promise<boolean> {
  const attempt: DeliveryAttempt = { at: deps.now().toISOString(), durationMs: 0, error };
  return (await deps.deliveries.recordAttempt(deliveryKeyOf(record), record.attempts.length, attempt, { status: 'failed' })) === 'recorded';
}

/**
 * failingSince set by a failure (when no run is going, or after a quiet gap), lastFailureAt kept
 * to within an hour, both cleared by a success, and the endpoint disabled after 5 days of failures
 * (endpoint-health.ts). Writes only a change. True when this attempt disabled it.
 */
async function updateHealth(
  deps: DeliverDeps,
  job: DeliveryJob,
  endpoint: EndpointHealth,
  delivered: boolean,
  at: Date,
  now: Date,
): Promise<boolean> {
  const before: EndpointHealth = {
    status: endpoint.status,
    ...(endpoint.failingSince !== undefined ? { failingSince: endpoint.failingSince } : {}),
    ...(endpoint.lastFailureAt !== undefined ? { lastFailureAt: endpoint.lastFailureAt } : {}),
  };
  const health = healthAfterAttempt(before, delivered, at);
  const decision = disableDecision(health, now);
  if (health.failingSince === before.failingSince && health.lastFailureAt === before.lastFailureAt && !decision.disable) return false;
  const outcome = await deps.endpoints.recordHealth(
    job.mode,
    job.companyId,
    job.endpointId,
    health,
    decision.disable ? { disabledReason: decision.disabledReason } : undefined,
  );
  return decision.disable && outcome === 'recorded';
}
