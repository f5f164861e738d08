import { webhookEndpointAdapters } from '../lib/adapters/production-webhook-adapters.js';
import type { ApiKeyStore } from '../lib/auth/ports.js';
import { apiHandler, jsonResponse } from '../lib/http/api-handler.js';
import { callerOf } from '../lib/http/types.js';
import { rotateEndpointSecret } from '../lib/webhooks/manage-endpoints.js';
import type { WebhookEndpointStore } from '../lib/webhooks/ports.js';
import { endpointIdToRead } from '../lib/webhooks/webhook-endpoint.js';

/** POST /api/v1/webhook-endpoints/{id}/rotate-secret (scope webhooks:manage): 200 `{ secret }`; the previous one signs for 24 h more. */
export interface RotateWebhookEndpointSecretDeps {
  keys: ApiKeyStore;
  store: WebhookEndpointStore;
  now: () => Date;
}

export function buildRotateWebhookEndpointSecretHandler(deps: RotateWebhookEndpointSecretDeps) {
  return apiHandler({ scope: 'webhooks:manage', keys: deps.keys }, async (event, context) => {
    const id = endpointIdToRead(event.pathParameters?.id);
    const rotated = await rotateEndpointSecret(deps, callerOf(context), id, context.deadline);
    context.logFields.endpointId = id;
    return jsonResponse(200, rotated);
  });
}

export const handler = buildRotateWebhookEndpointSecretHandler(webhookEndpointAdapters(undefined, { withSecrets: true }));
