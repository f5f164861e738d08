import { webhookEndpointAdapters } from '../lib/adapters/production-webhook-adapters.js';
import type { ApiKeyStore } from '../lib/auth/ports.js';
import { InvalidRequestError } from '../lib/errors.js';
import { apiHandler, jsonResponse } from '../lib/http/api-handler.js';
import { callerOf } from '../lib/http/types.js';
import { createEndpoint, type EndpointManagementDeps } from '../lib/webhooks/manage-endpoints.js';
import { parseCreateEndpointRequest } from '../lib/webhooks/webhook-endpoint.js';

/** POST /api/v1/webhook-endpoints (scope webhooks:manage): 201 with the signing secret, shown this once. */
export interface CreateWebhookEndpointDeps extends EndpointManagementDeps {
  keys: ApiKeyStore;
}

export function buildCreateWebhookEndpointHandler(deps: CreateWebhookEndpointDeps) {
  return apiHandler({ scope: 'webhooks:manage', keys: deps.keys, jsonBody: true }, async (event, context) => {
    const parsed = parseCreateEndpointRequest(event.body as unknown);
    if (!parsed.ok) {
      context.logFields.invalidFieldCount = parsed.errors.length;
      throw new InvalidRequestError('The webhook endpoint is invalid; see "errors" for every field to fix.', parsed.errors);
    }
    const created = await createEndpoint(deps, callerOf(context), parsed.value, context.deadline);
    // The id only: the secret never reaches a log line.
    context.logFields.endpointId = created.id;
    return jsonResponse(201, created);
  });
}

export const handler = buildCreateWebhookEndpointHandler(webhookEndpointAdapters(undefined, { withSecrets: true }));
