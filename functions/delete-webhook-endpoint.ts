import { webhookEndpointAdapters } from '../lib/adapters/production-webhook-adapters.js';
import type { ApiKeyStore } from '../lib/auth/ports.js';
import { apiHandler } from '../lib/http/api-handler.js';
import { callerOf } from '../lib/http/types.js';
import { deleteEndpoint } from '../lib/webhooks/manage-endpoints.js';
import type { WebhookEndpointStore } from '../lib/webhooks/ports.js';
import { endpointIdToRead } from '../lib/webhooks/webhook-endpoint.js';

/**
 * DELETE /api/v1/webhook-endpoints/{id} (scope webhooks:manage): 204. The endpoint and its sealed
 * secrets are removed, not marked: the delivery function reads the endpoint before each attempt,
 * so none follows; the slot counts no more against the limit of 16; and no secret is kept for an
 * endpoint that can never use it.
 */
export interface DeleteWebhookEndpointDeps {
  keys: ApiKeyStore;
  store: WebhookEndpointStore;
}

export function buildDeleteWebhookEndpointHandler(deps: DeleteWebhookEndpointDeps) {
  return apiHandler({ scope: 'webhooks:manage', keys: deps.keys }, async (event, context) => {
    await deleteEndpoint(deps, callerOf(context), endpointIdToRead(event.pathParameters?.id), context.deadline);
    return { statusCode: 204, headers: { 'Cache-Control': 'no-store' }, body: '' };
  });
}

export const handler = buildDeleteWebhookEndpointHandler(webhookEndpointAdapters());
