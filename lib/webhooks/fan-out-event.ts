import type { Mode } from '../mode.js';
import type { DeliveryLane, DeliveryQueue, WebhookDeliveryStore, WebhookEndpointStore } from './ports.js';
import { newDeliveryRecord, scheduledDeliveryId, type DeliveryJob, type WebhookDelivery } from './webhook-delivery.js';
import { receivesEvent, type WebhookEndpoint } from './webhook-endpoint.js';

/**
 * The fan-out of one stored event to its company-and-mode's endpoints (product rules "Webhooks":
 * one delivery per matching event and endpoint). Called by functions/fan-out-webhook-events.ts
 * for each event item the table's stream brings.
 *
 * The fan-out starts each delivery's record (`pending`, no attempts) before it enqueues the job,
 * rather than leaving that to the delivery function:
 * - the delivery log shows the delivery at once, even while the queue has a backlog;
 * - the record's key is derived from the event and the endpoint (`scheduledDeliveryId`, createdAt
 *   = the event's) and `start` is conditional, so a stream record read twice (or a batch retried
 *   after a partial failure) finds the first copy's record: the log keeps one delivery per event
 *   and endpoint;
 * - a record found already attempted or settled is not enqueued again (its own message carries
 *   it, or it is done), so a replayed stream record sends nothing twice once the first copy's
 *   delivery has started; a replay that arrives while the first job is still queued enqueues a
 *   second copy, which the delivery record's attempt count turns into at most one attempt each
 *   time (receivers deduplicate on webhook-id anyway);
 * - start comes before enqueue: if enqueueing fails the stream record is retried and the record,
 *   found pending with no attempt, is enqueued then. A job never names a record that is missing.
 *
 * An endpoint gets only events not older than itself (webhook-endpoint.ts `receivesEvent`): the
 * stream read again after a restart, or by a consumer deployed later, sends nothing from before it.
 *
 * An endpoint with a failing run (`failingSince` set) gets its jobs on the slow lane, so its
 * timeouts never occupy the fast lane's consumers (docs/webhooks-design.md, "No head-of-line
 * blocking").
 */
export interface FanOutDeps {
  endpoints: Pick<WebhookEndpointStore, 'list'>;
  deliveries: Pick<WebhookDeliveryStore, 'startAll'>;
  queue: DeliveryQueue;
  now: () => Date;
}

/** What the fan-out needs of an event item: the stream's NEW_IMAGE carries all of it. */
export interface EventToFanOut {
  eventId: string;
  eventType: string;
  companyId: string;
  mode: Mode;
  createdAt: string;
}

export interface FanOutResult {
  /** Jobs enqueued per lane. */
  fast: number;
  slow: number;
  /** Matching endpoints whose delivery was already attempted or settled (a replayed stream record). */
  alreadyStarted: number;
}

export function deliveryJobFor(event: EventToFanOut, endpoint: Pick<WebhookEndpoint, 'endpointId'>): DeliveryJob {
  return {
    v: 1,
    kind: 'scheduled',
    deliveryId: scheduledDeliveryId(endpoint.endpointId, event.eventId),
    endpointId: endpoint.endpointId,
    eventId: event.eventId,
    eventType: event.eventType,
    companyId: event.companyId,
    mode: event.mode,
    createdAt: event.createdAt,
  };
}

/** The jobs of one event per lane, their delivery records started, not yet enqueued (planFanOut). */
export interface FanOutPlan {
  lanes: Record<DeliveryLane, DeliveryJob[]>;
  alreadyStarted: number;
}

/** The fan-out of one event, enqueued at once. */
export async function fanOutEvent(deps: FanOutDeps, event: EventToFanOut): Promise<FanOutResult> {
  const plan = await planFanOut(deps, event);
  await enqueuePlans(deps.queue, [plan]);
  return { fast: plan.lanes.fast.length, slow: plan.lanes.slow.length, alreadyStarted: plan.alreadyStarted };
}

/**
 * Several events' jobs in as few queue requests as the lanes allow (the stream function plans a
 * whole batch of events, then enqueues once: 3 endpoints × 100 events are 30 SendMessageBatch
 * requests, not 100). A failure leaves every plan's records started and pending, which the stream
 * record's retry finds and enqueues.
 */
export async function enqueuePlans(queue: DeliveryQueue, plans: readonly FanOutPlan[]): Promise<void> {
  const fast = plans.flatMap((p) => p.lanes.fast);
  const slow = plans.flatMap((p) => p.lanes.slow);
  await Promise.all([fast.length > 0 ? queue.enqueue('fast', fast) : undefined, slow.length > 0 ? queue.enqueue('slow', slow) : undefined]);
}

/** The deliveries of one event: the matching endpoints' jobs, each delivery's record started. */
export async function planFanOut(deps: Omit<FanOutDeps, 'queue'>, event: EventToFanOut): Promise<FanOutPlan> {
  const [planned] = await planFanOuts(deps, [event]);
  if (!planned!.ok) throw planned!.error;
  return planned!.plan;
}

export type PlannedFanOut = { ok: true; plan: FanOutPlan } | { ok: false; error: unknown };

/**
 * The deliveries of several events (a stream batch), each event's result on its own: the endpoint
 * list of each company-and-mode is read once for all its events, and every delivery's record is
 * started in one call to the store (`startAll`: a few requests for the whole batch). An event whose
 * endpoints could not be read fails alone; a failed start fails every event that had deliveries to
 * start (their records, started or not, are found by the retry).
 */
export async function planFanOuts(deps: Omit<FanOutDeps, 'queue'>, events: readonly EventToFanOut[]): Promise<PlannedFanOut[]> {
  const lists = new Map<string, Promise<WebhookEndpoint[]>>();
  const listOf = (event: EventToFanOut) => {
    const key = `${event.mode}\u0000${event.companyId}`;
    let list = lists.get(key);
    if (!list) lists.set(key, (list = deps.endpoints.list(event.mode, event.companyId)));
    return list;
  };
  const matched = await Promise.allSettled(
    events.map(async (event) =>
      (await listOf(event)).filter(
        // The store answers only this company-and-mode's endpoints; checked again, as a tenancy line is never crossed.
        // receivesEvent: subscribed, and the event not older than the endpoint (a replayed stream sends it nothing from before it).
        (e) => e.status === 'enabled' && e.mode === event.mode && e.companyId === event.companyId && receivesEvent(e, event),
      ),
    ),
  );
  const startedAt = deps.now().toISOString();
  const wanted = matched.map((outcome, i) =>
    outcome.status === 'fulfilled' ? outcome.value.map((endpoint) => ({ endpoint, job: deliveryJobFor(events[i]!, endpoint) })) : [],
  );
  const records = wanted.flat().map(({ job }) => newDeliveryRecord(job, startedAt));
  let stored: WebhookDelivery[] = [];
  let startError: unknown;
  try {
    stored = records.length > 0 ? await deps.deliveries.startAll(records) : [];
  } catch (error) {
    startError = error;
  }
  let next = 0;
  return matched.map((outcome, i): PlannedFanOut => {
    if (outcome.status === 'rejected') return { ok: false, error: outcome.reason };
    const deliveries = wanted[i]!;
    if (deliveries.length === 0) return { ok: true, plan: { lanes: { fast: [], slow: [] }, alreadyStarted: 0 } };
    if (startError !== undefined) return { ok: false, error: startError };
    const lanes: Record<DeliveryLane, DeliveryJob[]> = { fast: [], slow: [] };
    let alreadyStarted = 0;
    for (const { endpoint, job } of deliveries) {
      const record = stored[next++]!;
      if (record.status !== 'pending' || record.attempts.length > 0) alreadyStarted++;
      else lanes[endpoint.failingSince === undefined ? 'fast' : 'slow'].push(job);
    }
    return { ok: true, plan: { lanes, alreadyStarted } };
  });
}
