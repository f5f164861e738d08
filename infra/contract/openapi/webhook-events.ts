import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { z } from 'zod';
import { DELIVERY_TIMEOUT_MS } from '../../../lib/adapters/webhooks/webhook-sender.js';
import { caseEventSchema } from '../../../lib/cases/case-lifecycle.js';
import { WEBHOOK_PING_EVENT_TYPE, webhookPingEventSchema } from '../../../lib/webhooks/ping-event.js';
import { RETRY_WINDOW_SECONDS } from '../../../lib/webhooks/retry-schedule.js';

/**
 * The `webhooks` section (OpenAPI 3.1): what a partner's receiver is sent, with the payload schemas
 * the code builds and checks events with (lib/cases/case-lifecycle.ts, lib/webhooks/ping-event.ts).
 */
export function registerWebhookEvents(registry: OpenAPIRegistry): void {
  const header = (name: string, description: string, exampleValue: string) => ({
    name,
    in: 'header' as const,
    required: true,
    description,
    schema: { type: 'string' as const },
    example: exampleValue,
  });
  const headers = [
    header(
      'webhook-id',
      'The event id: the same on every attempt and on a redelivery. Deduplicate on it (delivery is at least once, in no guaranteed order).',
      'evt_5Fg7Hj9Kl2Mn4Pq6Rs8Tu0',
    ),
    header(
      'webhook-timestamp',
      'The attempt\u2019s time, in Unix seconds. Refuse a timestamp far from your clock (the libraries allow 5 minutes).',
      '1740821400',
    ),
    header(
      'webhook-signature',
      'Space-separated `v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">`, one per current secret (two for 24 hours after a rotation). Verify with a Standard Webhooks library and your `whsec_` secret.',
      'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
    ),
  ];
  const variant = (type: string) => {
    const found = caseEventSchema.options.find((option) => option.shape.type.value === type);
    if (!found) throw new Error(`no event schema of type ${type}`);
    return found;
  };
  const acknowledged = {
    200: {
      description: `Any 2xx within ${DELIVERY_TIMEOUT_MS / 1000} seconds acknowledges the event. Anything else, or no answer in time, is a failed attempt: a case event is retried with backoff for at least ${RETRY_WINDOW_SECONDS / 86_400} days, a ping is not. Redirects are not followed.`,
    },
  };
  const deliveredEvents: { type: string; operationId: string; summary: string; description: string; schema: z.ZodType }[] = [
    {
      type: 'case.created',
      operationId: 'caseCreatedWebhook',
      summary: 'A case was created',
      description: 'One per case created. `data.object` is the case as `GET /api/v1/cases/{id}` returned it right after.',
      schema: variant('case.created'),
    },
    {
      type: 'case.updated',
      operationId: 'caseUpdatedWebhook',
      summary: 'A case changed',
      description:
        'One per change of a case\u2019s `status`, `recoveryGate` or `debtorVerification`; `data.previousAttributes` holds the changed fields\u2019 earlier values. Compare `createdAt` to order events.',
      schema: variant('case.updated'),
    },
    {
      type: WEBHOOK_PING_EVENT_TYPE,
      operationId: 'webhookPingWebhook',
      summary: 'A ping you asked for',
      description: 'Sent only by `POST /api/v1/webhook-endpoints/{id}/ping`, once, never retried.',
      schema: webhookPingEventSchema,
    },
  ];
  for (const event of deliveredEvents) {
    registry.registerWebhook({
      method: 'post',
      path: event.type,
      operationId: event.operationId,
      tags: ['Webhooks'],
      summary: event.summary,
      description: `${event.description} Signed per Standard Webhooks; endpoints of a test key receive test events (\`livemode: false\`) only.`,
      // Your receiver's own: it authenticates us by the signature, not by a credential we send.
      security: [],
      parameters: headers,
      request: { body: { required: true, content: { 'application/json': { schema: event.schema } } } },
      responses: acknowledged,
    });
  }
}
