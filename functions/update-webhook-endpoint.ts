import { webhookEndpointAdapters } from '../lib/adapters/production-webhook-adapters.js';
import type { ApiKeyStore } from '../lib/auth/ports.js';
import { InvalidRequestError } from '../lib/errors.js';
import { apiHandler, jsonResponse } from '../lib/http/api-handler.js';
import { callerOf } from '../lib/http/types.js';
import { updateEndpoint, type EndpointManagementDeps } from '../lib/webhooks/manage-endpoints.js';
import { endpointIdToRead, parseUpdateEndpointRequest } from '../lib/webhooks/webhook-endpoint.js';

/** PATCH /api/v1/webhook-endpoints/{id} (scope webhooks:manage): url, events, description, status. */
export interface UpdateWebhookEndpointDeps extends EndpointManagementDeps {
  keys: ApiKeyStore;
}

export function buildUpdateWebhookEndpointHandler(deps: UpdateWebhookEndpointDeps) {
  return apiHandler({ scope: 'webhooks:manage', keys: deps.keys, jsonBody: true }, async (event, context) => {
    const parsed = parseUpdateEndpointRequest(event.body as unknown);
    if (!parsed.ok) {
      context.logFields.invalidFieldCount = parsed.errors.length;
      throw new InvalidRequestError('The change is invalid; see "errors" for every field to fix.', parsed.errors);
    }
    const view = await updateEndpoint(deps, callerOf(context), endpointIdToRead(event.pathParameters?.id), parsed.value, context.deadline);
    return jsonResponse(200, view);
  });
}

export const handler = buildUpdateWebhookEndpointHandler(webhookEndpointAdapters());
