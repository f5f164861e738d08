import type { Mode } from '../mode.js';
import type { DeliveryQueue, DeliverySlots, WebhookDeliveryStore } from './ports.js';
import { deliveryKeyOf, type DeliveryJob, type DeliveryKey } from './webhook-delivery.js';

/**
 * Fair share per endpoint (product rules "Webhook isolation and operators"; docs/webhooks-design.md,
 * "Fair share per endpoint"): each endpoint has at most MAX_JOBS_PER_ENDPOINT jobs in the shared
 * lanes at once (queued, in flight, or waiting there for a retry), whatever it and its company do.
 * Every other delivery to it waits on its waiting list in the table, outside the lanes.
 *
 * - The fan-out puts every new job on its endpoint's waiting list, then `fill`s the endpoint; a
 *   redelivery (redeliver-event.ts, the partner's route and the operator's command) does the same.
 *   Every job in the lanes holds a slot.
 * - `fill` claims the free slots for the oldest waiting jobs (one atomic write; a claimed job is
 *   promoted: its delivery holds a slot), queues them on the fast lane, then removes them from the list.
 *   The stream consumer's small slices (a company's trickle) list, start and claim in one write instead
 *   (the slots' `startClaimed`, fan-out-event.ts), when the endpoint has the slots free, and queue as a
 *   fill does (`queueClaimed`).
 * - A job keeps its slot through its retries (a retry is a new message with a delay); when it ends
 *   (delivered, given up, settled, the endpoint disabled) the delivery function `finish`es
 *   it: its slot handed to the next waiting job in one write (`fill` with `releasing`), or given
 *   back when none is waiting; the endpoint deleted, it only gives its slot back (`letGo`). Every job listed is followed by a fill of its writer, and every
 *   release is a fill: a waiting job is never left behind a free slot by a race between the two.
 * - A crash between the claim and the queueing leaves the job marked promoted on the list; one
 *   between the end of a job and its release leaves a slot held by a settled delivery: the sweeper
 *   (`sweepEndpoint`, functions/sweep-webhook-deliveries.ts, scheduled by AWS) mends both.
 *
 * So a company with 16 endpoints that never answer and a burst of 100 events has at most
 * 16 × MAX_JOBS_PER_ENDPOINT jobs in the lanes, and a healthy endpoint's first attempt is never
 * queued behind the rest of them.
 */
export const MAX_JOBS_PER_ENDPOINT = 8;

/** A job marked promoted this long ago and still on the waiting list was never queued (a crash): the sweeper queues it. */
export const STALE_PROMOTION_MS = 5 * 60 * 1000;

export interface SlotDeps {
  slots: DeliverySlots;
  queue: DeliveryQueue;
}

/**
 * Claims the endpoint's free slots for its oldest waiting jobs and queues them (first attempts: the
 * fast lane). Answers how many. `fresh`: jobs the caller has just put on the list (the fan-out),
 * which the store may claim without reading the list first. `releasing`: jobs that ended, whose
 * slots are given back in the claim's write (handed to the next waiting jobs).
 */
export async function fill(
  deps: SlotDeps,
  mode: Mode,
  endpointId: string,
  fresh?: readonly DeliveryJob[],
  releasing?: readonly DeliveryKey[],
): Promise<number> {
  const jobs = await deps.slots.claimWaiting(mode, endpointId, MAX_JOBS_PER_ENDPOINT, fresh, releasing);
  return queueClaimed(deps, jobs);
}

/**
 * Queues jobs whose slots were just claimed (by `fill`, or by the slots' `startClaimed` as they were
 * listed) on their mode's fast lane, then takes them off their waiting list. Answers how many. A send
 * that fails gives the slots back, so the jobs wait for the next fill.
 */
export async function queueClaimed(deps: SlotDeps, jobs: readonly DeliveryJob[]): Promise<number> {
  if (jobs.length === 0) return 0;
  try {
    await deps.queue.enqueue('fast', jobs);
  } catch (error) {
    // Not queued: back to waiting with their slots free, for the caller's retry (or, if this fails too, the sweeper).
    await deps.slots.abandon(jobs).catch(() => undefined);
    throw error;
  }
  try {
    await deps.slots.promoted(jobs);
  } catch (error) {
    // Queued, but still listed: the fill fails, and says so and how many it queued, which the caller counts: a retry
    // finds them holding their slots and queues them no more.
    throw new QueuedStillListedError(jobs.length, error);
  }
  return jobs.length;
}

/**
 * A failure after `queued` jobs were queued, which the caller counts (WebhookJobsEnqueued): a retry
 * finds them holding their slots and does not queue them again. The message is the cause's, after
 * `what` failed when it is given.
 */
export class FailedAfterQueueingError extends Error {
  constructor(
    readonly queued: number,
    cause: unknown,
    what?: string,
  ) {
    const message = cause instanceof Error ? cause.message : String(cause);
    super(what === undefined ? message : `${what}: ${message}`, { cause });
    this.name = 'FailedAfterQueueingError';
  }
}

/**
 * A fill sent its jobs to the lane but could not take them off their waiting list. The entries left
 * listed are what the sweeper finds after 5 minutes (`stalePromotions`) and sends a copy of: a copy
 * is admitted as no second recorded attempt, though it may send the receiver the request again.
 * Its message says so, for the operator who reads it in the log.
 */
export class QueuedStillListedError extends FailedAfterQueueingError {
  // Named here, not from the class: the bundles are minified.
  override name = 'QueuedStillListedError';

  constructor(queued: number, cause: unknown) {
    super(queued, cause, `${queued} job(s) queued but still on their waiting list`);
  }
}

/**
 * A job whose endpoint is gone (deleted): its slot given back, and nothing queued after it. Handing
 * the slot on would claim the endpoint's next waiting jobs only for each to find the endpoint gone in
 * turn: a deleted endpoint with a long waiting list drained through the shared lanes, eight at a
 * time, beside every other endpoint's attempts. Its waiting jobs expire with their records instead,
 * as the sweeper, which visits only endpoints that exist, leaves them.
 */
export async function letGo(deps: Pick<SlotDeps, 'slots'>, job: DeliveryJob): Promise<void> {
  await deps.slots.release(deliveryKeyOf(job));
}

/** A job ended (delivered, given up, settled): its slot handed to the next waiting job, which is queued. */
export async function finish(deps: SlotDeps, job: DeliveryJob): Promise<void> {
  await fill(deps, job.mode, job.endpointId, undefined, [deliveryKeyOf(job)]);
}

/**
 * `finish` for the jobs of one batch: one fill per endpoint at a time, handing on the slots of every
 * job of the endpoint that ended, run again once if more jobs ended meanwhile. Several jobs of one
 * endpoint ending together would otherwise race for the same waiting jobs (each a Query and a
 * write, the losers retried), which is most of a burst's cost per delivery. A job waits for the
 * fill that hands its slot on: its message is deleted only once the slot is given back.
 */
export function batchFinisher(deps: SlotDeps): (job: DeliveryJob) => Promise<void> {
  // `ended`: jobs that ended since the running fill started, whose slots the next round hands on.
  const fills = new Map<string, { ended: DeliveryKey[]; done: Promise<void> }>();
  const fillSoon = (key: DeliveryKey): Promise<void> => {
    const endpoint = `${key.mode}\u0000${key.endpointId}`;
    const running = fills.get(endpoint);
    if (running) {
      running.ended.push(key);
      return running.done;
    }
    const entry = { ended: [key], done: Promise.resolve() };
    entry.done = (async () => {
      try {
        do {
          const ended = entry.ended;
          entry.ended = [];
          await fill(deps, key.mode, key.endpointId, undefined, ended);
        } while (entry.ended.length > 0);
      } finally {
        fills.delete(endpoint);
      }
    })();
    fills.set(endpoint, entry);
    return entry.done;
  };
  return (job) => fillSoon(deliveryKeyOf(job));
}

export interface SweepResult {
  /** Slots given back: held by deliveries that are settled or gone. */
  released: number;
  /** Jobs marked promoted long ago and queued again (their first queueing may have been lost). */
  requeued: number;
  /** Waiting jobs queued into free slots. */
  filled: number;
}

/**
 * The sweeper's repair of one endpoint: slots held by deliveries that ended without giving them
 * back are released, jobs promoted but never queued are queued (a copy of one that was queued is
 * harmless: the delivery record admits one attempt per attempt count), then the free slots filled.
 */
export async function sweepEndpoint(
  deps: SlotDeps & { deliveries: Pick<WebhookDeliveryStore, 'get'> },
  mode: Mode,
  endpointId: string,
): Promise<SweepResult> {
  const held = await deps.slots.holders(mode, endpointId);
  const records = await Promise.all(held.map((key: DeliveryKey) => deps.deliveries.get(key)));
  const ended = held.filter((_, i) => records[i]?.status !== 'pending');
  for (const key of ended) await deps.slots.release(key);
  const stale = await deps.slots.stalePromotions(mode, endpointId, STALE_PROMOTION_MS);
  if (stale.length > 0) {
    await deps.queue.enqueue('fast', stale);
    await deps.slots.promoted(stale);
  }
  const filled = await fill(deps, mode, endpointId);
  return { released: ended.length, requeued: stale.length, filled };
}
