import { webhookEndpointAdapters } from '../lib/adapters/production-webhook-adapters.js';
import type { ApiKeyStore } from '../lib/auth/ports.js';
import { apiHandler, jsonResponse } from '../lib/http/api-handler.js';
import { callerOf } from '../lib/http/types.js';
import { listEndpoints } from '../lib/webhooks/manage-endpoints.js';
import type { WebhookEndpointStore } from '../lib/webhooks/ports.js';

/** GET /api/v1/webhook-endpoints (scope webhooks:manage): every endpoint of the caller's mode, newest first, no secrets. */
export interface ListWebhookEndpointsDeps {
  keys: ApiKeyStore;
  store: WebhookEndpointStore;
}

export function buildListWebhookEndpointsHandler(deps: ListWebhookEndpointsDeps) {
  return apiHandler({ scope: 'webhooks:manage', keys: deps.keys }, async (_event, context) => {
    const page = await listEndpoints(deps, callerOf(context), context.deadline);
    context.logFields.returned = page.data.length;
    return jsonResponse(200, page);
  });
}

export const handler = buildListWebhookEndpointsHandler(webhookEndpointAdapters());
