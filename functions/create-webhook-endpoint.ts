import { webhookEndpointAdapters } from '../lib/adapters/production-webhook-adapters.js';
import type { ApiKeyStore } from '../lib/auth/ports.js';
import { apiHandler, jsonResponse } from '../lib/http/api-handler.js';
import { callerOf } from '../lib/http/types.js';
import { validRequestBody } from '../lib/http/valid-request-body.js';
import { createEndpoint, type EndpointManagementDeps } from '../lib/webhooks/manage-endpoints.js';
import { parseCreateEndpointRequest } from '../lib/webhooks/webhook-endpoint.js';

/** POST /api/v1/webhook-endpoints (scope webhooks:manage): 201 with the signing secret, shown this once. */
export interface CreateWebhookEndpointDeps extends EndpointManagementDeps {
  keys: ApiKeyStore;
}

export function buildCreateWebhookEndpointHandler(deps: CreateWebhookEndpointDeps) {
  return apiHandler({ scope: 'webhooks:manage', keys: deps.keys, jsonBody: true }, async (event, context) => {
    const request = validRequestBody(parseCreateEndpointRequest(event.body as unknown), context, 'webhook endpoint');
    const created = await createEndpoint(deps, callerOf(context), request, context.deadline);
    // The id only: the secret never reaches a log line.
    context.logFields.endpointId = created.id;
    return jsonResponse(201, created);
  });
}

export const handler = buildCreateWebhookEndpointHandler(webhookEndpointAdapters(undefined, { withSecrets: true }));
