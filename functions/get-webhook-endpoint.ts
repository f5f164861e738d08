import { webhookEndpointAdapters } from '../lib/adapters/production-webhook-adapters.js';
import type { ApiKeyStore } from '../lib/auth/ports.js';
import { apiHandler, jsonResponse } from '../lib/http/api-handler.js';
import { callerOf } from '../lib/http/types.js';
import { getEndpoint } from '../lib/webhooks/manage-endpoints.js';
import type { WebhookEndpointStore } from '../lib/webhooks/ports.js';
import { endpointIdToRead } from '../lib/webhooks/webhook-endpoint.js';

/** GET /api/v1/webhook-endpoints/{id} (scope webhooks:manage): one endpoint of the caller's company and mode, no secret. */
export interface GetWebhookEndpointDeps {
  keys: ApiKeyStore;
  store: WebhookEndpointStore;
}

export function buildGetWebhookEndpointHandler(deps: GetWebhookEndpointDeps) {
  return apiHandler({ scope: 'webhooks:manage', keys: deps.keys }, async (event, context) => {
    const view = await getEndpoint(deps, callerOf(context), endpointIdToRead(event.pathParameters?.id), context.deadline);
    return jsonResponse(200, view);
  });
}

export const handler = buildGetWebhookEndpointHandler(webhookEndpointAdapters());
