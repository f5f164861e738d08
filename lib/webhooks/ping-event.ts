import * as z from 'zod';
import { EVENT_ID_PATTERN, newEventId } from '../cases/case-lifecycle.js';
import type { Mode } from '../mode.js';
import { ENDPOINT_ID_PATTERN } from './webhook-endpoint.js';

/**
 * The `webhook.ping` event (product rules "Webhooks", `POST /api/v1/webhook-endpoints/{id}/ping`):
 * shaped like a case event (id, type, createdAt, livemode, data.object) so a receiver's one
 * verification and dispatch path handles it, and signed like every delivery. It is sent once, at
 * once, and never stored: it is not in the event list, the delivery log or the endpoint's health.
 */
export const WEBHOOK_PING_EVENT_TYPE = 'webhook.ping';

const EXAMPLE_ENDPOINT_ID = 'we_7Gk2mP9qR4sT8vW1xY3zA5';

export const webhookPingEventSchema = /* @__PURE__ */ z
  .object({
    id: z
      .string()
      .regex(EVENT_ID_PATTERN)
      .meta({ description: 'A new id per ping; also its `webhook-id`.', example: 'evt_2Nf6Qb8Vd1Xk4Mz7Rc9Tw3' }),
    type: z.literal(WEBHOOK_PING_EVENT_TYPE),
    createdAt: z.iso.datetime().meta({ example: '2025-03-01T09:30:00.000Z' }),
    livemode: z.boolean().meta({ description: '`false` when the endpoint is a test-mode one.' }),
    data: z
      .object({
        object: z
          .object({ endpointId: z.string().regex(ENDPOINT_ID_PATTERN).meta({ example: EXAMPLE_ENDPOINT_ID }) })
          .strict()
          .meta({ description: 'The endpoint pinged.' }),
      })
      .strict(),
  })
  .strict()
  .meta({
    id: 'WebhookPingEvent',
    description:
      'Sent only when you ask for it (`POST /api/v1/webhook-endpoints/{id}/ping`), to check that your receiver answers and verifies signatures. Answer it 2xx like any event; it is never retried.',
  });
export type WebhookPingEvent = z.infer<typeof webhookPingEventSchema>;

export function buildPingEvent(endpoint: { endpointId: string; mode: Mode }, at: Date, id = newEventId()): WebhookPingEvent {
  return {
    id,
    type: WEBHOOK_PING_EVENT_TYPE,
    createdAt: at.toISOString(),
    livemode: endpoint.mode === 'live',
    data: { object: { endpointId: endpoint.endpointId } },
  };
}

/** The ping route's answer: the one attempt's outcome, as the delivery log shows attempts. */
export const webhookPingResultSchema = /* @__PURE__ */ z
  .object({
    delivered: z.boolean().meta({ description: '`true` when your receiver answered 2xx within 10 seconds.' }),
    statusCode: z.number().int().optional().meta({ description: "Your receiver's HTTP status; absent when none came.", example: 200 }),
    durationMs: z.number().int().meta({ description: 'From the start of the attempt to its answer or failure.', example: 84 }),
    error: z.string().optional().meta({
      description:
        'Why no status came, or why it does not count (timeout, refused address or connection, redirect not followed); absent when it was delivered or your receiver answered a non-2xx status.',
    }),
  })
  .meta({ id: 'WebhookPingResult', example: { delivered: true, statusCode: 200, durationMs: 84 } });
export type WebhookPingResult = z.infer<typeof webhookPingResultSchema>;
