import { webhookRedeliveryAdapters } from '../lib/adapters/production-webhook-adapters.js';
import type { ApiKeyStore } from '../lib/auth/ports.js';
import { apiHandler, jsonResponse } from '../lib/http/api-handler.js';
import { callerOf } from '../lib/http/types.js';
import { validRequestBody } from '../lib/http/valid-request-body.js';
import { parseRedeliverRequest, redeliverEvent, type RedeliverEventDeps } from '../lib/webhooks/redeliver-event.js';
import { endpointIdToRead } from '../lib/webhooks/webhook-endpoint.js';

/** POST /api/v1/webhook-endpoints/{id}/redeliver `{ eventId }` (scope webhooks:manage): 202 with the new delivery, queued in its turn with the endpoint's others. */
export interface RedeliverWebhookEventDeps extends RedeliverEventDeps {
  keys: ApiKeyStore;
}

export function buildRedeliverWebhookEventHandler(deps: RedeliverWebhookEventDeps) {
  return apiHandler({ scope: 'webhooks:manage', keys: deps.keys, jsonBody: true }, async (event, context) => {
    const request = validRequestBody(parseRedeliverRequest(event.body as unknown), context, 'redelivery request');
    const id = endpointIdToRead(event.pathParameters?.id);
    context.logFields.endpointId = id;
    context.logFields.eventId = request.eventId;
    const delivery = await redeliverEvent(deps, callerOf(context), id, request, context.deadline);
    context.logFields.deliveryId = delivery.id;
    return jsonResponse(202, delivery);
  });
}

export const handler = buildRedeliverWebhookEventHandler(webhookRedeliveryAdapters());
