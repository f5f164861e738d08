import * as z from 'zod';
import type { Caller } from '../auth/authenticate-key.js';
import { EVENT_ID_PATTERN } from '../cases/case-lifecycle.js';
import { eventVisibleTo } from '../cases/list-events.js';
import type { EventReader } from '../cases/ports.js';
import type { Deadline } from '../deadline.js';
import { NotFoundError, WebhookEndpointDisabledError } from '../errors.js';
import { fill } from './delivery-slots.js';
import type { DeliveryQueue, DeliverySlots, WebhookDeliveryStore, WebhookEndpointStore } from './ports.js';
import { deliveryView, newDeliveryRecord, newRedeliveryId, type DeliveryJob, type WebhookDeliveryView } from './webhook-delivery.js';
import { waitAtMost } from '../wait-at-most.js';
import { parseWith, type Parsed } from './webhook-endpoint.js';

/**
 * `POST /api/v1/webhook-endpoints/{id}/redeliver` `{ eventId }` (product rules "Webhooks"): a new
 * delivery of one stored event to one endpoint, retried like any delivery (webhook-delivery.ts,
 * kind `redelivery`), answered 202 with the delivery as the log shows it.
 *
 * - The endpoint must be the caller's company's and mode's (else 404, as every endpoint route) and
 *   enabled (else 409 WEBHOOK_ENDPOINT_DISABLED: a disabled endpoint receives nothing; a ping
 *   checks a fix, enabling it comes before a redelivery).
 * - The event must be the caller's company's and the endpoint's mode's, within its 30 days (else
 *   404 naming it, the same answer for missing and foreign). Any such event may be redelivered,
 *   whether or not the endpoint subscribes to its type: the partner names it.
 * - A redelivery takes its endpoint's fair share as a scheduled delivery does (delivery-slots.ts):
 *   it goes on the endpoint's waiting list, its record is started, and a fill queues it on the fast
 *   lane when one of the endpoint's MAX_JOBS_PER_ENDPOINT slots is free, else it waits its turn
 *   outside the lanes. Straight to the lane, as it went before, a partner (or an operator replaying
 *   a day) calling redeliver in a loop against a receiver that hangs put a job in the shared lanes
 *   per call, each retried for three days: no cap on the endpoint's share of the lanes.
 * - In that order: a failure after the listing leaves the job findable by the next fill or the
 *   sweeper, and the delivery function creates a record still missing (`start` is create-if-absent),
 *   so a failure anywhere still delivers and still logs. A fill that fails after the record was
 *   started, or is still running when the request's time is up, is not the request's failure: the
 *   job is listed and started (or claimed), and the endpoint's next fill or the sweeper (every five
 *   minutes) queues it; the answer is 202, and a retry of the request would only have made a second
 *   delivery. The listing and the start stay inside the request's deadline (its retries stop there).
 * - A redelivery waits behind the endpoint's older waiting jobs (oldest first). While the endpoint is
 *   failing, its slots are held by retries up to 9 hours apart, so a redelivery asked for just after
 *   a receiver is mended can wait that long: the price of the cap, documented for partners.
 */
export const redeliverRequestSchema = z.strictObject(
  {
    eventId: z
      .string({ error: (issue) => (issue.input === undefined ? 'eventId is required' : 'eventId must be a string') })
      .regex(EVENT_ID_PATTERN, { error: 'eventId must be an event id as listed by GET /api/v1/events, such as evt_5Fg7Hj9Kl2Mn4Pq6Rs8Tu0' })
      .meta({ description: 'The event to deliver again: one of your events of the endpoint’s mode, kept 30 days.' }),
  },
  {
    error: (issue: { code?: string }) => (issue.code === 'unrecognized_keys' ? 'unknown field' : 'the request body must be a JSON object'),
  },
);
export type RedeliverRequest = z.infer<typeof redeliverRequestSchema>;

/** Validates the body of POST …/{id}/redeliver. Pure. */
export function parseRedeliverRequest(body: unknown): Parsed<RedeliverRequest> {
  return parseWith(redeliverRequestSchema, ['eventId'], body);
}

export interface RedeliverEventDeps {
  endpoints: Pick<WebhookEndpointStore, 'get'>;
  events: EventReader;
  deliveries: Pick<WebhookDeliveryStore, 'start'>;
  /** The endpoint's slots and waiting list, as for scheduled deliveries. */
  slots: DeliverySlots;
  queue: DeliveryQueue;
  now: () => Date;
}

export async function redeliverEvent(
  deps: RedeliverEventDeps,
  caller: Pick<Caller, 'companyId' | 'mode'>,
  endpointId: string | undefined,
  request: RedeliverRequest,
  deadline?: Deadline,
): Promise<WebhookDeliveryView> {
  const [endpoint, stored] = await Promise.all([
    endpointId === undefined ? undefined : deps.endpoints.get(caller.mode, caller.companyId, endpointId, deadline),
    deps.events.get(caller.mode, request.eventId, deadline),
  ]);
  if (!endpoint) throw new NotFoundError('No webhook endpoint with this id exists.');
  if (endpoint.status !== 'enabled') throw new WebhookEndpointDisabledError(endpoint.endpointId);
  const at = deps.now();
  if (!stored || !eventVisibleTo(caller, stored, at)) {
    throw new NotFoundError(`No event ${request.eventId} exists for your company in this mode (events are kept 30 days).`);
  }
  const createdAt = at.toISOString();
  const job: DeliveryJob = {
    v: 1,
    kind: 'redelivery',
    deliveryId: newRedeliveryId(),
    endpointId: endpoint.endpointId,
    eventId: stored.event.id,
    eventType: stored.event.type,
    companyId: caller.companyId,
    mode: caller.mode,
    createdAt,
  };
  await deps.slots.wait([job], deadline);
  const started = await deps.deliveries.start(newDeliveryRecord(job, createdAt), deadline);
  // Queued now when the endpoint has a slot free; else when one of its running jobs ends. Never past the
  // request's time: the answer does not wait for it (a fill cut off leaves the job listed, or promoted, for the
  // sweeper), and a fill that fails is not the request's failure.
  await waitAtMost(
    fill(deps, job.mode, job.endpointId, [job]).catch(() => undefined),
    deadline === undefined ? undefined : deadline.workBy - Date.now(),
  );
  return deliveryView(started);
}
