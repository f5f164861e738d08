import { webhookEndpointAdapters } from '../lib/adapters/production-webhook-adapters.js';
import type { ApiKeyStore } from '../lib/auth/ports.js';
import { apiHandler, jsonResponse } from '../lib/http/api-handler.js';
import { callerOf } from '../lib/http/types.js';
import { validRequestBody } from '../lib/http/valid-request-body.js';
import { updateEndpoint, type EndpointManagementDeps } from '../lib/webhooks/manage-endpoints.js';
import { endpointIdToRead, parseUpdateEndpointRequest } from '../lib/webhooks/webhook-endpoint.js';

/** PATCH /api/v1/webhook-endpoints/{id} (scope webhooks:manage): url, events, description, status. */
export interface UpdateWebhookEndpointDeps extends EndpointManagementDeps {
  keys: ApiKeyStore;
}

export function buildUpdateWebhookEndpointHandler(deps: UpdateWebhookEndpointDeps) {
  return apiHandler({ scope: 'webhooks:manage', keys: deps.keys, jsonBody: true }, async (event, context) => {
    const request = validRequestBody(parseUpdateEndpointRequest(event.body as unknown), context, 'change');
    const view = await updateEndpoint(deps, callerOf(context), endpointIdToRead(event.pathParameters?.id), request, context.deadline);
    return jsonResponse(200, view);
  });
}

export const handler = buildUpdateWebhookEndpointHandler(webhookEndpointAdapters());
