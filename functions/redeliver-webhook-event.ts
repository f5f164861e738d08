import { webhookRedeliveryAdapters } from '../lib/adapters/production-webhook-adapters.js';
import type { ApiKeyStore } from '../lib/auth/ports.js';
import { InvalidRequestError } from '../lib/errors.js';
import { apiHandler, jsonResponse } from '../lib/http/api-handler.js';
import { callerOf } from '../lib/http/types.js';
import { parseRedeliverRequest, redeliverEvent, type RedeliverEventDeps } from '../lib/webhooks/redeliver-event.js';
import { endpointIdToRead } from '../lib/webhooks/webhook-endpoint.js';

/** POST /api/v1/webhook-endpoints/{id}/redeliver `{ eventId }` (scope webhooks:manage): 202 with the new delivery, queued on the fast lane. */
export interface RedeliverWebhookEventDeps extends RedeliverEventDeps {
  keys: ApiKeyStore;
}

export function buildRedeliverWebhookEventHandler(deps: RedeliverWebhookEventDeps) {
  return apiHandler({ scope: 'webhooks:manage', keys: deps.keys, jsonBody: true }, async (event, context) => {
    const parsed = parseRedeliverRequest(event.body as unknown);
    if (!parsed.ok) {
      context.logFields.invalidFieldCount = parsed.errors.length;
      throw new InvalidRequestError('The redelivery request is invalid; see "errors" for every field to fix.', parsed.errors);
    }
    const id = endpointIdToRead(event.pathParameters?.id);
    context.logFields.endpointId = id;
    context.logFields.eventId = parsed.value.eventId;
    const delivery = await redeliverEvent(deps, callerOf(context), id, parsed.value, context.deadline);
    context.logFields.deliveryId = delivery.id;
    return jsonResponse(202, delivery);
  });
}

export const handler = buildRedeliverWebhookEventHandler(webhookRedeliveryAdapters());
