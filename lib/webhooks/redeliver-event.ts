import * as z from 'zod';
import type { Caller } from '../auth/authenticate-key.js';
import { EVENT_ID_PATTERN } from '../cases/case-lifecycle.js';
import { eventVisibleTo } from '../cases/list-events.js';
import type { EventReader } from '../cases/ports.js';
import type { Deadline } from '../deadline.js';
import { NotFoundError, WebhookEndpointDisabledError } from '../errors.js';
import type { DeliveryQueue, WebhookDeliveryStore, WebhookEndpointStore } from './ports.js';
import { deliveryView, newRedeliveryId, type DeliveryJob, type WebhookDelivery, type WebhookDeliveryView } from './webhook-delivery.js';
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
 * - The job goes on the fast lane first, then the record is written. The job alone names the whole
 *   delivery and the delivery function creates a missing record from it (`start` is create-if-absent),
 *   so a failure between the two still delivers and still logs; the other order could leave a
 *   record `pending` for ever with no job to finish it.
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
  await deps.queue.enqueue('fast', [job]);
  const delivery: WebhookDelivery = {
    mode: job.mode,
    endpointId: job.endpointId,
    createdAt,
    deliveryId: job.deliveryId,
    kind: 'redelivery',
    companyId: job.companyId,
    eventId: job.eventId,
    eventType: job.eventType,
    status: 'pending',
    attempts: [],
    updatedAt: createdAt,
  };
  return deliveryView(await deps.deliveries.start(delivery, deadline));
}
