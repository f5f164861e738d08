import { EVENT_RETENTION_DAYS } from '../../../lib/cases/event-retention.js';
import { DELIVERY_TIMEOUT_MS } from '../../../lib/adapters/webhooks/webhook-sender.js';
import {
  invalidRequestProblemSchema,
  notFoundProblemSchema,
  webhookEndpointDisabledProblemSchema,
  webhookEndpointLimitProblemSchema,
} from '../../../lib/http/response-schemas.js';
import { MAX_ENDPOINT_URL_LENGTH } from '../../../lib/webhooks/endpoint-url.js';
import { DELIVERY_LIST_PARAMETERS, deliveryListQuerySchema, webhookDeliveryListSchema } from '../../../lib/webhooks/list-deliveries.js';
import { WEBHOOK_PING_EVENT_TYPE, webhookPingResultSchema } from '../../../lib/webhooks/ping-event.js';
import { MAX_JOBS_PER_ENDPOINT } from '../../../lib/webhooks/delivery-slots.js';
import { redeliverRequestSchema } from '../../../lib/webhooks/redeliver-event.js';
import { DELIVERY_RETENTION_SECONDS, webhookDeliveryViewSchema } from '../../../lib/webhooks/webhook-delivery.js';
import {
  createdWebhookEndpointSchema,
  createEndpointRequestSchema,
  ENDPOINT_ID_PATTERN,
  MAX_DESCRIPTION_LENGTH,
  MAX_ENDPOINTS_PER_MODE,
  rotatedSecretSchema,
  updateEndpointRequestSchema,
  webhookEndpointListSchema,
  webhookEndpointViewSchema,
} from '../../../lib/webhooks/webhook-endpoint.js';
import { z } from 'zod';
import { CURSOR_HOURS, listBadRequest, pagingParameterDocs } from './cases.js';
import {
  BODY_PROBLEMS,
  example,
  idParameter,
  invalidRequestExample,
  json,
  problem,
  queryParameters,
  responseHeaders,
  documented,
  jsonBody,
  type OperationDoc,
} from './components.js';

const endpointRequestDocs = {
  url: {
    maxLength: MAX_ENDPOINT_URL_LENGTH,
    description:
      '`https://` only; no user info, no fragment; the host must be public (an IP literal or a name resolving to a private, loopback, link-local, CGNAT, multicast or unique-local address is refused).',
    example: 'https://hooks.partner.example/pca',
  },
  events: {
    uniqueItems: true,
    description: 'One or more of `case.created`, `case.updated`, `*` (every type), each at most once.',
    example: ['*'],
  },
  description: { maxLength: MAX_DESCRIPTION_LENGTH, description: 'Your own note.', example: 'Production receiver' },
};

export const createEndpointRequestDocSchema = createEndpointRequestSchema
  .extend(documented(createEndpointRequestSchema.shape, endpointRequestDocs))
  .meta({ id: 'CreateWebhookEndpointRequest', description: 'Exactly these members; any other is refused.' });

export const updateEndpointRequestDocSchema = z
  .strictObject({
    ...documented(createEndpointRequestSchema.shape, endpointRequestDocs),
    status: updateEndpointRequestSchema.shape.status.meta({ description: '`disabled` stops deliveries; `enabled` resumes them.' }),
  })
  .partial()
  .meta({ id: 'UpdateWebhookEndpointRequest', description: 'At least one member; the others are left as they are.' });

export const redeliverRequestDocSchema = redeliverRequestSchema.meta({
  id: 'RedeliverWebhookEventRequest',
  description: 'Exactly this member; any other is refused.',
  example: { eventId: 'evt_5Fg7Hj9Kl2Mn4Pq6Rs8Tu0' },
});

const endpointId = [idParameter('The endpoint id, as returned on creation.', ENDPOINT_ID_PATTERN, 'we_7Gk2mP9qR4sT8vW1xY3zA5')];
const invalidBody = problem(
  'The body breaks the rules, or the URL is refused (field `url`); `errors` lists every problem.',
  invalidRequestProblemSchema,
  {},
  {
    privateUrl: {
      summary: 'A URL resolving to a private address',
      value: invalidRequestExample('The webhook endpoint URL is not acceptable.', [
        {
          field: 'url',
          message:
            'url must reach a public address: hooks.example.com resolves to 10.0.0.5 is a private address, which cannot receive webhooks',
        },
      ]),
    },
  },
);
const notFound = { 404: problem('No webhook endpoint with this id exists for your company in this mode.', notFoundProblemSchema) };

export const WEBHOOK_ENDPOINT_OPERATIONS: Record<string, OperationDoc> = {
  CreateWebhookEndpoint: {
    tag: 'Webhooks',
    description: `Creates an endpoint and returns it with its signing \`secret\`, shown only here (and on rotation). At most ${MAX_ENDPOINTS_PER_MODE} endpoints per company and mode; an endpoint made with a test key receives test events only.`,
    request: jsonBody(createEndpointRequestDocSchema),
    responses: {
      201: json('The endpoint, with its secret.', createdWebhookEndpointSchema, {
        created: {
          summary: 'A new endpoint',
          value: { ...example(webhookEndpointViewSchema), secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw4T8dBGl2ZfM=' },
        },
      }),
    },
    problems: ['INVALID_REQUEST', 'WEBHOOK_ENDPOINT_LIMIT_REACHED', ...BODY_PROBLEMS, 'SERVICE_UNAVAILABLE'],
    problemResponses: {
      400: invalidBody,
      409: problem(`The company already has ${MAX_ENDPOINTS_PER_MODE} endpoints in this mode.`, webhookEndpointLimitProblemSchema),
    },
  },
  ListWebhookEndpoints: {
    tag: 'Webhooks',
    description: "Every endpoint of your company in the key's mode, newest first, without secrets.",
    responses: { 200: json('The endpoints.', webhookEndpointListSchema) },
    problems: ['SERVICE_UNAVAILABLE'],
  },
  GetWebhookEndpoint: {
    tag: 'Webhooks',
    description: 'One endpoint, without its secret.',
    parameters: endpointId,
    responses: { 200: json('The endpoint.', webhookEndpointViewSchema) },
    problems: ['NOT_FOUND', 'SERVICE_UNAVAILABLE'],
    problemResponses: notFound,
  },
  UpdateWebhookEndpoint: {
    tag: 'Webhooks',
    description:
      'Changes `url`, `events`, `description` or `status`; a new URL is checked as on creation. Enabling an endpoint the service disabled clears `disabledReason`.',
    parameters: endpointId,
    request: jsonBody(updateEndpointRequestDocSchema),
    responses: { 200: json('The endpoint as changed.', webhookEndpointViewSchema) },
    problems: ['INVALID_REQUEST', 'NOT_FOUND', ...BODY_PROBLEMS, 'SERVICE_UNAVAILABLE'],
    problemResponses: { 400: invalidBody, ...notFound },
  },
  DeleteWebhookEndpoint: {
    tag: 'Webhooks',
    description: 'Removes the endpoint and its secrets; no delivery follows, and it no longer counts against the limit.',
    parameters: endpointId,
    responses: { 204: { description: 'Deleted.', headers: responseHeaders() } },
    problems: ['NOT_FOUND', 'SERVICE_UNAVAILABLE'],
    problemResponses: notFound,
  },
  RotateWebhookEndpointSecret: {
    tag: 'Webhooks',
    description:
      'Makes a new signing secret and returns it (shown only here). For 24 hours every delivery carries a signature with the previous secret too, so you can switch without missing a verification.',
    parameters: endpointId,
    responses: { 200: json('The new secret.', rotatedSecretSchema) },
    problems: ['NOT_FOUND', 'SERVICE_UNAVAILABLE'],
    problemResponses: notFound,
  },
  PingWebhookEndpoint: {
    tag: 'Webhooks',
    description:
      `Sends one \`${WEBHOOK_PING_EVENT_TYPE}\` event to the endpoint now, signed like every delivery (with both secrets during a rotation), and answers with what happened: \`delivered\` is \`true\` for a 2xx within ${DELIVERY_TIMEOUT_MS / 1000} seconds. ` +
      'A ping is sent once and never retried, is not in the delivery log, and leaves the endpoint\u2019s health alone (it neither counts towards nor ends a run of failures). A disabled endpoint is pinged too: check your fix, then enable it.',
    parameters: endpointId,
    responses: {
      200: json('What the ping came to (also when your receiver failed: see `delivered`).', webhookPingResultSchema, {
        delivered: { summary: 'Your receiver answered 200', value: { delivered: true, statusCode: 200, durationMs: 84 } },
        failed: {
          summary: 'Nothing listened',
          value: { delivered: false, durationMs: 3, error: 'ECONNREFUSED: connect ECONNREFUSED 93.184.216.34:443' },
        },
      }),
    },
    problems: ['NOT_FOUND', 'SERVICE_UNAVAILABLE'],
    problemResponses: notFound,
  },
  RedeliverWebhookEvent: {
    tag: 'Webhooks',
    description:
      'Delivers one of your events to the endpoint again, as a new delivery with its own id in the delivery log, retried like any other. The event must be your company\u2019s, of the endpoint\u2019s mode, and not older than ' +
      `${EVENT_RETENTION_DAYS} days; the endpoint must be enabled. Its \`webhook-id\` is the event id, as on the first delivery, so a receiver that deduplicates sees it as a repeat. It takes its turn with the endpoint\u2019s other deliveries: at most ${MAX_JOBS_PER_ENDPOINT} of them are in flight at once (retries included), so while that many are, it waits for one to end.`,
    parameters: endpointId,
    request: jsonBody(redeliverRequestDocSchema),
    responses: {
      202: json('The new delivery, pending.', webhookDeliveryViewSchema, {
        queued: {
          summary: 'Queued',
          value: {
            id: 'wd_3Hq8LmN2pR7sT1vW5xY9zA',
            eventId: 'evt_5Fg7Hj9Kl2Mn4Pq6Rs8Tu0',
            eventType: 'case.updated',
            status: 'pending',
            attempts: [],
          },
        },
      }),
    },
    problems: ['INVALID_REQUEST', 'NOT_FOUND', 'WEBHOOK_ENDPOINT_DISABLED', ...BODY_PROBLEMS, 'SERVICE_UNAVAILABLE'],
    problemResponses: {
      404: problem(
        `No webhook endpoint with this id, or no event with this \`eventId\`, exists for your company in this mode (events are kept ${EVENT_RETENTION_DAYS} days).`,
        notFoundProblemSchema,
        {},
        {
          unknownEvent: {
            summary: 'An unknown event',
            value: {
              ...example(notFoundProblemSchema),
              detail: `No event evt_5Fg7Hj9Kl2Mn4Pq6Rs8Tu0 exists for your company in this mode (events are kept ${EVENT_RETENTION_DAYS} days).`,
            },
          },
        },
      ),
      409: problem('The endpoint is disabled: enable it first.', webhookEndpointDisabledProblemSchema),
    },
  },
  ListWebhookDeliveries: {
    tag: 'Webhooks',
    description:
      `The endpoint\u2019s delivery log, newest first, a page at a time: one delivery per event and endpoint (however often the event reached the queue), plus one per redelivery, each with its attempts (\`at\`, \`statusCode\` when one came, \`durationMs\`, \`error\`). Kept ${DELIVERY_RETENTION_SECONDS / 86_400} days. ` +
      `Paging as for \`GET /api/v1/events\`: pass \`nextCursor\` as \`cursor\`; a cursor is bound to your company, the key\u2019s mode and this endpoint and expires after ${CURSOR_HOURS} hours (else \`400 INVALID_CURSOR\`).`,
    parameters: [...endpointId, ...queryParameters(deliveryListQuerySchema, pagingParameterDocs('deliveries', false))],
    responses: { 200: json('A page of deliveries.', webhookDeliveryListSchema) },
    problems: ['INVALID_REQUEST', 'INVALID_CURSOR', 'NOT_FOUND', 'SERVICE_UNAVAILABLE'],
    problemResponses: {
      400: listBadRequest('An unknown parameter', [
        { field: 'status', message: `status is not a query parameter of this operation; use ${DELIVERY_LIST_PARAMETERS.join(', ')}` },
      ]),
      ...notFound,
    },
  },
};
