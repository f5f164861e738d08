import { mapAtMost } from '../map-at-most.js';
import type { Mode } from '../mode.js';
import { FailedAfterQueueingError, fill, MAX_JOBS_PER_ENDPOINT, QueuedStillListedError, queueClaimed } from './delivery-slots.js';
import type { DeliveryQueue, DeliverySlots, PlanningQueue, WebhookDeliveryStore, WebhookEndpointStore } from './ports.js';
import { MAX_EVENTS_PER_SLICE, tenantOf, type PlanningSlice } from './planning-slice.js';
import {
  deliveryKeyString,
  distinctDeliveries,
  jobsByEndpoint,
  newDeliveryRecord,
  scheduledDeliveryId,
  type DeliveryJob,
  type WebhookDelivery,
} from './webhook-delivery.js';
import { receivesEvent, type WebhookEndpoint } from './webhook-endpoint.js';

/**
 * The fan-out of one stored event to its company-and-mode's endpoints (product rules "Webhooks":
 * one delivery per matching event and endpoint; docs/webhooks-design.md, "Planning: at once or on
 * the fair queue"): the table stream's consumer (functions/fan-out-webhook-events.ts) cuts its
 * batch into per-company-and-mode slices (`slicesOf`), plans the small ones itself and forwards
 * each large one to its mode's planning queue, an SQS fair queue grouped by that tenant (`fanOutBatch`);
 * the planning worker (functions/plan-webhook-deliveries.ts) plans each forwarded slice on its own
 * (`planSlice`). So a company's burst never holds another company's events: it is one message, and
 * SQS hands a quiet tenant's message out before a noisy tenant's backlog.
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
 * Fair share per endpoint (delivery-slots.ts): every job is first put on its endpoint's waiting
 * list (before its record is started, so no record is ever `pending` with neither a message nor a
 * place on the list: a crash anywhere after leaves the job for the next fill or the sweeper), then
 * each endpoint is `fill`ed: only the jobs it has free slots for are queued, on the fast lane; the
 * rest wait outside the lanes until the endpoint's running jobs end. A job found already attempted
 * or settled (a replayed stream record) is taken off the list again. The stream consumer's own small
 * slices list, start and claim in one write (the slots' `startClaimed`) where the endpoint has the slots free,
 * and list and start in that same write the jobs of their endpoints whose slots are held (a fill claims
 * those): the same items, with no request between them, so the same holds.
 */
export interface FanOutDeps {
  endpoints: Pick<WebhookEndpointStore, 'list'>;
  deliveries: Pick<WebhookDeliveryStore, 'startAll'>;
  slots: DeliverySlots;
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

/**
 * Whether the event is delivered to the endpoint. The store answers only the event's company-and-
 * mode's endpoints; checked again, as a tenancy line is never crossed. receivesEvent: subscribed,
 * and the event not older than the endpoint (a replayed stream sends it nothing from before it).
 */
function deliversTo(endpoint: WebhookEndpoint, event: EventToFanOut): boolean {
  return (
    endpoint.status === 'enabled' &&
    endpoint.mode === event.mode &&
    endpoint.companyId === event.companyId &&
    receivesEvent(endpoint, event)
  );
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

/** The jobs of one event, each on its endpoint's waiting list with its delivery's record started (planFanOuts). */
export interface FanOutPlan {
  /** The jobs to queue: those in `claimed` hold their slots already (`startClaimed`), the others wait for a fill. */
  jobs: DeliveryJob[];
  /** The jobs listed, started and given their slots in one write: they are queued without a fill's claim. */
  claimed: DeliveryJob[];
  alreadyStarted: number;
}

/**
 * Endpoints filled at once by the planning worker's slices (a burst), at most. A fill is a few
 * table requests one after another (the claim, the read when the claim's conditions fail, the
 * waiting entries' removal) around one SendMessageBatch; a burst to 16 endpoints filled all at once
 * put 16 claims and their follow-ups in the table's queue together, and on DynamoDB Local, one store
 * for every company, another company's write waited behind all of them (bench 7c). Two at a time:
 * on AWS a fill is tens of milliseconds, so a burst's 16 endpoints take a few hundred. The stream
 * consumer's own small slices (a company's trickle, at most INLINE_DELIVERIES_PER_SLICE deliveries)
 * fill all their endpoints at once: there the wait would be on every first attempt of a company
 * with many endpoints, for little load.
 */
export const FILLS_AT_ONCE = 2;

/**
 * Fills every endpoint the plans put jobs on (delivery-slots.ts `fill`), each once, `atOnce` at a
 * time: the stream function plans a whole batch of events, then fills once per endpoint (3
 * endpoints × 100 events are 3 fills, each queueing what the endpoint has slots for in one
 * SendMessageBatch). A failed fill leaves its jobs on their waiting list, which the stream record's
 * retry (or the sweeper) fills; the other endpoints are still filled. Answers the jobs the fills
 * that succeeded queued, also when another fill failed (then with the first failure): those jobs
 * hold their slots, and no retry queues them again, so a count lost here would be lost from
 * WebhookJobsEnqueued for good. A fill that fails after its send (its jobs' waiting entries not
 * removed: QueuedStillListedError) counts what it sent too.
 */
async function fillPlans(
  deps: Pick<FanOutDeps, 'slots' | 'queue'>,
  plans: readonly FanOutPlan[],
  atOnce: number,
): Promise<{ queued: number; failure?: { error: unknown } }> {
  let queued = 0;
  const claimed = new Set(plans.flatMap((p) => p.claimed).map(deliveryKeyString));
  const counted = (error: unknown) => {
    if (error instanceof QueuedStillListedError) queued += error.queued;
    throw error;
  };
  try {
    await mapAtMost(jobsByEndpoint(plans.flatMap((p) => p.jobs)), atOnce, async (jobs) => {
      // The jobs that hold their slots already are queued first; the others are filled from the list.
      const held = distinctDeliveries(jobs.filter((job) => claimed.has(deliveryKeyString(job))));
      const fresh = jobs.filter((job) => !claimed.has(deliveryKeyString(job)));
      // Awaited first, then added: `queued += await …` would read `queued` before the wait, and lose the other fills' counts.
      const sent = await queueClaimed(deps, held).catch(counted);
      queued += sent;
      if (fresh.length === 0) return;
      const n = await fill(deps, jobs[0]!.mode, jobs[0]!.endpointId, fresh).catch(counted);
      queued += n;
    });
    return { queued };
  } catch (error) {
    return { queued, failure: { error } };
  }
}

/**
 * A slice not wholly planned (its endpoints unreadable, a write or a fill failed, too little time
 * left): it is planned again, harmlessly. `queued` is how many jobs its fills did queue before that,
 * a QueuedStillListedError's among them: its `cause` is not to be counted again.
 */
export class SliceNotPlannedError extends FailedAfterQueueingError {
  override name = 'SliceNotPlannedError';
}

export type PlannedFanOut = { ok: true; plan: FanOutPlan } | { ok: false; error: unknown };

/**
 * The deliveries of several events (a stream batch), each event's result on its own: the endpoint
 * list of each company-and-mode is read once for all its events, and every delivery's record is
 * started in one call to the store (`startAll`: a few requests for the whole batch). An event whose
 * endpoints could not be read fails alone; a failed start fails every event that had deliveries to
 * start (their records, started or not, are found by the retry).
 */
export async function planFanOuts(
  deps: Omit<FanOutDeps, 'queue'>,
  events: readonly EventToFanOut[],
  { claimAsListed = false }: Pick<SlicePlanning, 'claimAsListed'> = {},
): Promise<PlannedFanOut[]> {
  const lists = new Map<string, Promise<WebhookEndpoint[]>>();
  const listOf = (event: EventToFanOut) => {
    const key = `${event.mode}\u0000${event.companyId}`;
    let list = lists.get(key);
    if (!list) lists.set(key, (list = deps.endpoints.list(event.mode, event.companyId)));
    return list;
  };
  const matched = await Promise.allSettled(events.map(async (event) => (await listOf(event)).filter((e) => deliversTo(e, event))));
  const startedAt = deps.now().toISOString();
  const wanted = matched.map((outcome, i) =>
    outcome.status === 'fulfilled' ? outcome.value.map((endpoint) => ({ endpoint, job: deliveryJobFor(events[i]!, endpoint) })) : [],
  );
  const all = wanted.flat().map(({ job }) => job);
  const stored: WebhookDelivery[] = [];
  // The deliveries whose slots were claimed as they were listed and started, and those listed and started in the
  // same write without a slot (their endpoints' slots held): their records are new and pending.
  const claimedKeys = new Set<string>();
  const writtenKeys = new Set<string>();
  let claimedJobs: DeliveryJob[] = [];
  let startError: unknown;
  try {
    if (all.length > 0) {
      if (claimAsListed) {
        const { claimed, listed } = await deps.slots.startClaimed(all, startedAt, MAX_JOBS_PER_ENDPOINT);
        claimedJobs = claimed;
        for (const job of claimed) claimedKeys.add(deliveryKeyString(job));
        for (const job of [...claimed, ...listed]) writtenKeys.add(deliveryKeyString(job));
      }
      const written = (job: DeliveryJob) => writtenKeys.has(deliveryKeyString(job));
      const rest = all.filter((job) => !written(job));
      // On the waiting lists first: a crash after this leaves each job findable by a fill or the sweeper.
      if (rest.length > 0) await deps.slots.wait(rest);
      const started = rest.length > 0 ? await deps.deliveries.startAll(rest.map((job) => newDeliveryRecord(job, startedAt))) : [];
      let r = 0;
      for (const job of all) stored.push(written(job) ? newDeliveryRecord(job, startedAt) : started[r++]!);
      const attempted = all.filter((_, k) => stored[k]!.status !== 'pending' || stored[k]!.attempts.length > 0);
      if (attempted.length > 0) await deps.slots.forget(attempted);
    }
  } catch (error) {
    startError = error;
    // The slice fails, so nothing queues the jobs claimed as they were listed: their slots are given back, and the
    // retry's fill claims them (they are listed and started). Held and never sent, they would wait for the sweeper.
    if (claimedJobs.length > 0) await deps.slots.abandon(claimedJobs).catch(() => undefined);
  }
  let next = 0;
  return matched.map((outcome, i): PlannedFanOut => {
    if (outcome.status === 'rejected') return { ok: false, error: outcome.reason };
    const deliveries = wanted[i]!;
    if (deliveries.length === 0) return { ok: true, plan: { jobs: [], claimed: [], alreadyStarted: 0 } };
    if (startError !== undefined) return { ok: false, error: startError };
    const jobs: DeliveryJob[] = [];
    const claimed: DeliveryJob[] = [];
    let alreadyStarted = 0;
    for (const { job } of deliveries) {
      const record = stored[next++]!;
      if (record.status !== 'pending' || record.attempts.length > 0) alreadyStarted++;
      else jobs.push(job);
      if (claimedKeys.has(deliveryKeyString(job))) claimed.push(job);
    }
    return { ok: true, plan: { jobs, claimed, alreadyStarted } };
  });
}

/** The slices of a stream batch's events: one per company and mode (in their order), at most MAX_EVENTS_PER_SLICE events each; `indexes` are the events' places in the batch. */
export function slicesOf(events: readonly EventToFanOut[]): { slice: PlanningSlice; indexes: number[] }[] {
  const byTenant = new Map<string, { slice: PlanningSlice; indexes: number[] }[]>();
  events.forEach((event, i) => {
    const tenant = tenantOf(event);
    const chunks = byTenant.get(tenant) ?? [];
    let last = chunks.at(-1);
    if (!last || last.slice.events.length >= MAX_EVENTS_PER_SLICE) {
      last = { slice: { mode: event.mode, companyId: event.companyId, events: [] }, indexes: [] };
      chunks.push(last);
      byTenant.set(tenant, chunks);
    }
    last.slice.events.push({ eventId: event.eventId, eventType: event.eventType, createdAt: event.createdAt });
    last.indexes.push(i);
  });
  return [...byTenant.values()].flat();
}

/** What planning a slice did: deliveries planned (jobs on waiting lists, records started), queued at once, and found already started. */
export interface PlannedSlice {
  jobs: number;
  queued: number;
  alreadyStarted: number;
}

/**
 * Deliveries planned in one step of a slice, at most (a step's waiting entries go in BatchWriteItems
 * of 25 one after another, its records in transactions of 25 one after another): a company with 16
 * endpoints and a 100-event slice (1,600 deliveries) is planned in 17 steps (16 of six events, then
 * one of four) one after another, so one tenant's burst never has more than
 * a transaction or two in flight on the table at once, while a trickle's slice is one step. On AWS a
 * step (four listing requests and four transactions, one after another) is under a hundred
 * milliseconds; on DynamoDB Local, which serialises transactions, it bounds how long another
 * company's write waits behind the burst (three such slices at once, unstepped,
 * timed out there; stepped by 200, a victim's planning still took 2–7 s beside the bench's hostile
 * tenant, by 100 about half that).
 */
export const MAX_DELIVERIES_PER_STEP = 100;

/**
 * The time a planning try must have left to read its endpoints or start another step (`planSlice`'s
 * `timeLeftMs`): the step, and the fills after it (sixteen endpoints, two at a time), are well
 * inside it on AWS, where a step is tens of milliseconds. A try cut off by the worker's timeout
 * loses the answer for every message of the batch (all of them come back after the visibility
 * timeout, planned or not); one stopped here fills what it planned and fails its own message only.
 * It bounds starting, not finishing: on a table slow enough to exhaust a request's retries, a step
 * or fill already started can still outrun the invocation.
 */
export const MIN_TIME_FOR_A_STEP_MS = 5_000;

/** How `planSlice` plans: the planning worker's way by default. */
export interface SlicePlanning {
  /** Endpoints filled at once (FILLS_AT_ONCE). */
  fillsAtOnce?: number;
  /** The invocation's time left (none: unbounded). */
  timeLeftMs?: () => number;
  /**
   * Each endpoint's jobs listed, started and given their slots in one write when the endpoint has
   * the slots free (the slots' `startClaimed`), instead of listing, starting, then filling: one
   * request before the send where there were three one after another.
   */
  claimAsListed?: boolean;
}

/**
 * The stream consumer's own small slices (a company's trickle): no first attempt waits for another
 * endpoint's fill (a company with 16 endpoints would wait eight fills for its last), and each
 * endpoint's jobs are claimed as they are listed, since an event's wait before its send is what a
 * trickle's latency is made of. The planning worker's bursts keep the stepped road: their endpoints'
 * slots are soon all held, where a claim as listed would be refused and cost a request more.
 */
export const ON_THE_STREAM: SlicePlanning = { fillsAtOnce: Number.POSITIVE_INFINITY, claimAsListed: true };

/**
 * Plans one slice (one company-and-mode's events): its endpoints read once, then, step by step
 * (MAX_DELIVERIES_PER_STEP), every matching delivery put on its endpoint's waiting list and its
 * record started; each endpoint filled once after the first step (its first attempts start while the
 * rest is planned) and once at the end for the later steps' jobs, `fillsAtOnce` endpoints at a time
 * (FILLS_AT_ONCE). Throws SliceNotPlannedError (with the jobs it queued) when any of it failed, or
 * when `timeLeftMs` (the invocation's) fell below MIN_TIME_FOR_A_STEP_MS before a step, after
 * filling what was planned: the message comes back and is planned again, which is harmless
 * (records started are found started, jobs listed stay listed, a fill claims only free slots).
 */
export async function planSlice(deps: FanOutDeps, slice: PlanningSlice, how: SlicePlanning = {}): Promise<PlannedSlice> {
  const { fillsAtOnce = FILLS_AT_ONCE, timeLeftMs = () => Number.POSITIVE_INFINITY, claimAsListed = false } = how;
  const events = slice.events.map((e): EventToFanOut => ({ ...e, mode: slice.mode, companyId: slice.companyId }));
  const outOfTime = (planned: number) =>
    new Error(`planning stopped after ${planned} of ${events.length} events: too little of the invocation left for another step`);
  if (timeLeftMs() < MIN_TIME_FOR_A_STEP_MS) throw new SliceNotPlannedError(0, outOfTime(0));
  const endpoints = await deps.endpoints.list(slice.mode, slice.companyId).catch((error: unknown) => {
    throw new SliceNotPlannedError(0, error);
  });
  const once: FanOutDeps = { ...deps, endpoints: { list: async () => endpoints } };
  const perStep = Math.max(1, Math.floor(MAX_DELIVERIES_PER_STEP / Math.max(1, endpoints.length)));
  const plans: FanOutPlan[] = [];
  let failed: { error: unknown } | undefined;
  let queued = 0;
  let filled = 0;
  const fillFrom = async (from: number) => {
    const done = await fillPlans(deps, plans.slice(from), fillsAtOnce);
    queued += done.queued;
    failed ??= done.failure;
    filled = plans.length;
  };
  for (let i = 0; i < events.length && failed === undefined; i += perStep) {
    // Checked again before each later step: a step or fill already started is not cut short.
    if (i > 0 && timeLeftMs() < MIN_TIME_FOR_A_STEP_MS) {
      failed = { error: outOfTime(i) };
      break;
    }
    try {
      for (const outcome of await planFanOuts(once, events.slice(i, i + perStep), { claimAsListed })) {
        if (outcome.ok) plans.push(outcome.plan);
        else failed ??= { error: outcome.error };
      }
    } catch (error) {
      failed ??= { error };
    }
    // The first step's jobs are queued at once: the endpoints' first attempts do not wait for the rest of the
    // slice to be planned (a 300-delivery slice is three steps). The later steps' jobs wait for the fill below.
    if (i === 0) await fillFrom(0);
  }
  // The events that were planned are filled even when one failed: their jobs are listed, and a fill now spares them the retry's wait.
  if (plans.length > filled) await fillFrom(filled);
  if (failed !== undefined) throw new SliceNotPlannedError(queued, failed.error);
  return {
    jobs: plans.reduce((n, p) => n + p.jobs.length, 0),
    queued,
    alreadyStarted: plans.reduce((n, p) => n + p.alreadyStarted, 0),
  };
}

/**
 * Deliveries of one company-and-mode's slice the stream consumer plans itself, at most; and of all
 * the slices of one stream batch it plans itself. What is within both is planned at once, with no
 * queue between the event and its first attempt (a company's trickle: its events to its endpoints);
 * a larger slice (a burst to many endpoints: 100 events × 16 endpoints are 1,600 records) goes to the
 * planning queue of its mode, where it is planned beside every other tenant's. So the stream, which is read in
 * order, never waits behind one tenant's burst for more than a few small writes, and a quiet
 * company's event never queues behind it (docs/webhooks-design.md, "Planning: at once or on the
 * fair queue").
 */
export const INLINE_DELIVERIES_PER_SLICE = 25;
export const INLINE_DELIVERIES_PER_BATCH = 100;

export interface FanOutBatchDeps extends FanOutDeps {
  planning: PlanningQueue;
}

/** What the stream consumer did with a batch: the indexes of the events to retry (and why), and what it queued, planned and forwarded. */
export interface FannedOutBatch {
  failed: number[];
  /** Why events failed, one entry per cause (for the log: operators read the cause there). */
  errors: string[];
  /** Jobs queued into the lanes by the fills of the slices planned at once. */
  queued: number;
  /** Slices planned at once, and slices forwarded to the planning queues. */
  planned: number;
  forwarded: number;
}

/**
 * A stream batch's events: cut into one slice per company and mode (`slicesOf`), each slice's
 * endpoints read once; the small slices (INLINE_DELIVERIES_PER_SLICE; live before test, then
 * smallest first, while the batch's INLINE_DELIVERIES_PER_BATCH lasts) planned and filled here, each on its own, the others
 * forwarded to their mode's planning queue, all at once. A slice fails on its own (its endpoints unreadable,
 * its planning or its fill failed, SQS did not take it): another company's, or the same company's
 * other mode, is never failed with it. Retrying any of it is harmless.
 */
export async function fanOutBatch(deps: FanOutBatchDeps, events: readonly EventToFanOut[]): Promise<FannedOutBatch> {
  const slices = slicesOf(events);
  const lists = await Promise.allSettled(slices.map(({ slice }) => deps.endpoints.list(slice.mode, slice.companyId)));
  const failed: number[] = [];
  const errors: string[] = [];
  const sized: { slice: PlanningSlice; indexes: number[]; endpoints: WebhookEndpoint[]; deliveries: number }[] = [];
  slices.forEach((s, k) => {
    const listed = lists[k]!;
    if (listed.status === 'rejected') {
      failed.push(...s.indexes);
      errors.push(`endpoints of ${tenantOf(s.slice)} unreadable: ${messageOf(listed.reason)}`);
      return;
    }
    const deliveries = s.indexes.reduce((n, i) => n + listed.value.filter((e) => deliversTo(e, events[i]!)).length, 0);
    sized.push({ ...s, endpoints: listed.value, deliveries });
  });
  let budget = INLINE_DELIVERIES_PER_BATCH;
  const inline: typeof sized = [];
  const forward: typeof sized = [];
  // Live slices before test ones (test mode never delays live: a test slice never takes the budget a live one
  // needed), then the smallest first (a trickle before a larger slice).
  const order = (x: (typeof sized)[number]) => (x.slice.mode === 'live' ? 0 : 1);
  for (const s of [...sized].sort((x, y) => order(x) - order(y) || x.deliveries - y.deliveries)) {
    if (s.deliveries <= INLINE_DELIVERIES_PER_SLICE && s.deliveries <= budget) {
      budget -= s.deliveries;
      inline.push(s);
    } else forward.push(s);
  }
  // Each small slice planned and filled on its own, as the planning worker plans a forwarded one (`planSlice`,
  // given the endpoints already read): one slice's failed write or fill fails that slice's records only.
  const planOne = async (s: (typeof sized)[number]): Promise<{ failed: number[]; queued: number }> => {
    try {
      // All its endpoints filled at once, and its jobs claimed as they are listed (ON_THE_STREAM says why).
      const planned = await planSlice({ ...deps, endpoints: { list: async () => s.endpoints } }, s.slice, ON_THE_STREAM);
      return { failed: [], queued: planned.queued };
    } catch (error) {
      errors.push(`planning ${tenantOf(s.slice)} failed: ${messageOf(error)}`);
      // What its fills queued before the failure is counted: the record's retry does not queue those jobs again.
      return { failed: s.indexes, queued: error instanceof SliceNotPlannedError ? error.queued : 0 };
    }
  };
  const forwardRest = async (): Promise<number[]> => {
    if (forward.length === 0) return [];
    const accepted = await deps.planning.forward(forward.map((s) => s.slice)).catch((error: unknown) => {
      errors.push(`forwarding to the planning queues failed: ${messageOf(error)}`);
      return forward.map(() => false);
    });
    const refused = forward.filter((_, k) => !accepted[k]);
    if (refused.length > 0) errors.push(`the planning queues did not take ${refused.length} slice(s)`);
    return refused.flatMap((s) => s.indexes);
  };
  const [planned, refused] = await Promise.all([Promise.all(inline.map(planOne)), forwardRest()]);
  return {
    failed: [...failed, ...planned.flatMap((p) => p.failed), ...refused].sort((a, b) => a - b),
    errors: [...new Set(errors)],
    queued: planned.reduce((n, p) => n + p.queued, 0),
    planned: inline.length,
    forwarded: forward.length,
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
