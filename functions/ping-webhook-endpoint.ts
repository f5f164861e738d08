import { webhookPingAdapters } from '../lib/adapters/production-webhook-adapters.js';
import type { ApiKeyStore } from '../lib/auth/ports.js';
import { apiHandler, jsonResponse } from '../lib/http/api-handler.js';
import { callerOf } from '../lib/http/types.js';
import { pingEndpoint, type PingEndpointDeps } from '../lib/webhooks/ping-endpoint.js';
import { endpointIdToRead } from '../lib/webhooks/webhook-endpoint.js';

/** POST /api/v1/webhook-endpoints/{id}/ping (scope webhooks:manage): one signed `webhook.ping` sent now; 200 with its outcome. */
export interface PingWebhookEndpointDeps extends PingEndpointDeps {
  keys: ApiKeyStore;
}

export function buildPingWebhookEndpointHandler(deps: PingWebhookEndpointDeps) {
  return apiHandler({ scope: 'webhooks:manage', keys: deps.keys }, async (event, context) => {
    const id = endpointIdToRead(event.pathParameters?.id);
    const result = await pingEndpoint(deps, callerOf(context), id, context.deadline);
    context.logFields.endpointId = id;
    context.logFields.delivered = result.delivered;
    return jsonResponse(200, result);
  });
}

export const handler = buildPingWebhookEndpointHandler(webhookPingAdapters());
