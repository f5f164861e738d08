import { webhookDeliveryLogAdapters } from '../lib/adapters/production-webhook-adapters.js';
import type { ApiKeyStore } from '../lib/auth/ports.js';
import type { CursorSealer } from '../lib/cases/list-cursor.js';
import type { Deadline } from '../lib/deadline.js';
import { apiHandler, jsonResponse } from '../lib/http/api-handler.js';
import { callerOf } from '../lib/http/types.js';
import { listDeliveries, parseDeliveryListQuery, type ListDeliveriesDeps } from '../lib/webhooks/list-deliveries.js';
import { endpointIdToRead } from '../lib/webhooks/webhook-endpoint.js';

/** GET /api/v1/webhook-endpoints/{id}/deliveries (scope webhooks:manage): the endpoint's delivery log, newest first, a page at a time. */
export interface ListWebhookDeliveriesDeps extends Omit<ListDeliveriesDeps, 'cursors' | 'now'> {
  keys: ApiKeyStore;
  /** The cursor sealer, built once per process (its key may come from Secrets Manager). */
  cursors: (deadline?: Deadline) => Promise<CursorSealer>;
  now?: () => Date;
}

export function buildListWebhookDeliveriesHandler(deps: ListWebhookDeliveriesDeps) {
  const now = deps.now ?? (() => new Date());
  return apiHandler({ scope: 'webhooks:manage', keys: deps.keys }, async (event, context) => {
    const query = parseDeliveryListQuery(event.queryStringParameters, event.multiValueQueryStringParameters);
    const id = endpointIdToRead(event.pathParameters?.id);
    context.logFields.endpointId = id;
    const page = await listDeliveries(
      { endpoints: deps.endpoints, deliveries: deps.deliveries, cursors: await deps.cursors(context.deadline), now },
      callerOf(context),
      id,
      query,
      context.deadline,
    );
    context.logFields.returned = page.data.length;
    return jsonResponse(200, page);
  });
}

export const handler = buildListWebhookDeliveriesHandler(webhookDeliveryLogAdapters());
