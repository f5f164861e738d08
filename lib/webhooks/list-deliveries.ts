import * as z from 'zod';
import type { Caller } from '../auth/authenticate-key.js';
import {
  DEFAULT_LIST_LIMIT,
  limitParameter,
  parseQueryParameters,
  type MultiValueQueryParameters,
  type QueryParameters,
} from '../cases/list-cases.js';
import type { CursorSealer } from '../cases/list-cursor.js';
import type { ListPosition } from '../cases/ports.js';
import type { Deadline } from '../deadline.js';
import { InvalidCursorError, NotFoundError } from '../errors.js';
import type { WebhookDeliveryStore, WebhookEndpointStore } from './ports.js';
import { DELIVERY_RETENTION_SECONDS, deliveryView, webhookDeliveryViewSchema, type DeliveryKey } from './webhook-delivery.js';

/**
 * `GET /api/v1/webhook-endpoints/{id}/deliveries` (product rules "Webhooks"): an endpoint's
 * delivery log, newest first, `limit` and an opaque cursor as the case and event lists (the same
 * sealed cursors, list-cursor.ts, bound to this company, mode and endpoint). Another company's or
 * mode's endpoint is 404, as a missing one. Deliveries are kept 30 days: an older record that
 * storage still holds (TTL deletion lags) is not shown.
 */
export const DELIVERY_LIST_PARAMETERS = ['limit', 'cursor'] as const;

export const webhookDeliveryListSchema = /* @__PURE__ */ z
  .object({
    data: z.array(webhookDeliveryViewSchema).meta({ description: 'Newest first (by when the delivery was created). Kept 30 days.' }),
    nextCursor: z.string().nullable().meta({
      description: 'Pass as `cursor` for the next page; `null` on the last page. Opaque; valid for 24 hours.',
      example: null,
    }),
  })
  .meta({ id: 'WebhookDeliveryList', description: 'One page of an endpoint’s delivery log.' });
export type WebhookDeliveryList = z.infer<typeof webhookDeliveryListSchema>;

export interface DeliveryListQuery {
  limit: number;
  cursor?: string;
}

/** The delivery log's query parameters (also the source of their description in docs/openapi.json). */
export const deliveryListQuerySchema = z.strictObject({
  limit: limitParameter,
  // Any value is accepted here; whether it is a cursor we issued is decided when it is opened.
  cursor: z.string().optional(),
});

/** The delivery log's query; every bad, unknown or repeated parameter is reported at once (400 INVALID_REQUEST). */
export function parseDeliveryListQuery(single: QueryParameters, multi: MultiValueQueryParameters): DeliveryListQuery {
  const q = parseQueryParameters(single, multi, DELIVERY_LIST_PARAMETERS, deliveryListQuerySchema);
  return { limit: q.limit ?? DEFAULT_LIST_LIMIT, ...(q.cursor !== undefined ? { cursor: q.cursor } : {}) };
}

/** What a delivery log cursor is bound to: the endpoint. Never equal to a case or event list's binding. */
export function deliveryFilterBinding(endpointId: string): string {
  return JSON.stringify({ deliveries: endpointId });
}

// The sealed position of a delivery log page: the last record's createdAt and id; the log has one partition, so no shards.
const afterSchema = z.tuple([z.iso.datetime(), z.string().min(1)]);

function positionOf(key: DeliveryKey): ListPosition {
  return { after: JSON.stringify([key.createdAt, key.deliveryId]), doneShards: [] };
}

function keyOf(position: ListPosition, caller: Pick<Caller, 'mode'>, endpointId: string): DeliveryKey {
  let parsed: unknown;
  try {
    parsed = JSON.parse(position.after);
  } catch {
    throw new InvalidCursorError('unreadable');
  }
  const after = afterSchema.safeParse(parsed);
  if (!after.success) throw new InvalidCursorError('unreadable');
  return { mode: caller.mode, endpointId, createdAt: after.data[0], deliveryId: after.data[1] };
}

export interface ListDeliveriesDeps {
  endpoints: Pick<WebhookEndpointStore, 'get'>;
  deliveries: Pick<WebhookDeliveryStore, 'listPage'>;
  cursors: CursorSealer;
  now: () => Date;
}

export async function listDeliveries(
  deps: ListDeliveriesDeps,
  caller: Pick<Caller, 'companyId' | 'mode'>,
  endpointId: string | undefined,
  query: DeliveryListQuery,
  deadline?: Deadline,
): Promise<WebhookDeliveryList> {
  const now = deps.now();
  // The endpoint decides tenancy: the log's partition is named by the endpoint, whose id is the caller's only if this finds it.
  const endpoint = endpointId === undefined ? undefined : await deps.endpoints.get(caller.mode, caller.companyId, endpointId, deadline);
  if (!endpoint) throw new NotFoundError('No webhook endpoint with this id exists.');
  const binding = { companyId: caller.companyId, mode: caller.mode, filters: deliveryFilterBinding(endpoint.endpointId) };
  const after = query.cursor === undefined ? undefined : keyOf(deps.cursors.open(query.cursor, binding, now), caller, endpoint.endpointId);
  const page = await deps.deliveries.listPage(
    caller.mode,
    endpoint.endpointId,
    { limit: query.limit, ...(after ? { after } : {}) },
    deadline,
  );
  const oldest = now.getTime() - DELIVERY_RETENTION_SECONDS * 1000;
  const kept = page.deliveries.filter((d) => d.companyId === caller.companyId && Date.parse(d.createdAt) > oldest);
  // Newest first: once one record is past its 30 days, every later one is too, so the walk ends here.
  const ended = page.last === undefined || kept.length < page.deliveries.length;
  return {
    data: kept.map(deliveryView),
    nextCursor: ended ? null : deps.cursors.seal({ ...binding, position: positionOf(page.last!) }, now),
  };
}
