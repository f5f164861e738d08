import * as z from 'zod';
import { CASE_EVENT_TYPES } from '../cases/case-lifecycle.js';
import { unknownFieldErrors, type FieldError } from '../errors.js';
import type { Mode } from '../mode.js';
import { isWellFormedText } from '../text.js';
import { MAX_ENDPOINT_URL_LENGTH } from './endpoint-url.js';

/**
 * A webhook endpoint as partners manage it (product rules "Webhooks"): where a company's events of
 * one mode are delivered, which of them, and whether deliveries are on. Its signing secrets are
 * not part of it: they are stored sealed beside it and only the create and rotate use cases (and
 * the delivery function) ever hold them in the clear.
 */

/** The most endpoints a company may have in one mode. */
export const MAX_ENDPOINTS_PER_MODE = 16;
export const MAX_DESCRIPTION_LENGTH = 256;
/** The event types an endpoint can subscribe to: every case event type, and `*`, every type present and future. */
export const SUBSCRIBABLE_EVENT_TYPES = [...CASE_EVENT_TYPES, '*'] as const;
export type SubscribableEventType = (typeof SUBSCRIBABLE_EVENT_TYPES)[number];
export const ENDPOINT_STATUSES = ['enabled', 'disabled'] as const;
export type EndpointStatus = (typeof ENDPOINT_STATUSES)[number];

export const ENDPOINT_ID_PREFIX = 'we_';
export const ENDPOINT_ID_PATTERN = /^we_[0-9A-Za-z]{22}$/;

export interface WebhookEndpoint {
  endpointId: string;
  companyId: string;
  mode: Mode;
  url: string;
  events: SubscribableEventType[];
  description: string;
  status: EndpointStatus;
  /** Why the endpoint is disabled, when the service disabled it (5 days of failures); absent when enabled. */
  disabledReason?: string;
  /** When the current run of failed deliveries began (endpoint-health.ts); absent while deliveries succeed. */
  failingSince?: string;
  /** The current failing run's latest failure, to within an hour (endpoint-health.ts); absent while deliveries succeed. */
  lastFailureAt?: string;
  createdAt: string;
  updatedAt: string;
  /** Incremented by every change; updates are conditional on it, so two concurrent PATCHes cannot lose one another. */
  version: number;
}

const EXAMPLE_ID = 'we_7Gk2mP9qR4sT8vW1xY3zA5';
const EXAMPLE_AT = '2025-03-01T09:30:00.000Z';

/** What partners see of an endpoint (never a secret). Documentation metadata only; the handlers build it with endpointView. */
export const webhookEndpointViewSchema = /* @__PURE__ */ z
  .object({
    id: z.string().meta({ pattern: ENDPOINT_ID_PATTERN.source, example: EXAMPLE_ID }),
    url: z.string().meta({ description: 'Where events are delivered (normalised).', example: 'https://hooks.partner.example/pca' }),
    events: z.array(z.enum(SUBSCRIBABLE_EVENT_TYPES)).meta({ description: 'The event types delivered; `*` is every type.' }),
    description: z.string().meta({ description: 'Your own note; empty when none was given.', example: 'Production receiver' }),
    status: z.enum(ENDPOINT_STATUSES).meta({ description: 'Only `enabled` endpoints receive deliveries.' }),
    disabledReason: z
      .string()
      .optional()
      .meta({ description: 'Why the service disabled the endpoint (5 days of failed deliveries); absent otherwise.' }),
    livemode: z.boolean().meta({ description: '`false` for an endpoint made with a test key: it receives test events only.' }),
    createdAt: z.string().meta({ format: 'date-time', example: EXAMPLE_AT }),
    updatedAt: z.string().meta({ format: 'date-time', example: EXAMPLE_AT }),
  })
  .meta({
    id: 'WebhookEndpoint',
    description: 'A webhook endpoint. Its signing secret is never shown here: only on creation and rotation.',
    example: {
      id: EXAMPLE_ID,
      url: 'https://hooks.partner.example/pca',
      events: ['case.created', 'case.updated'],
      description: 'Production receiver',
      status: 'enabled',
      livemode: true,
      createdAt: EXAMPLE_AT,
      updatedAt: EXAMPLE_AT,
    },
  });
export type WebhookEndpointView = z.infer<typeof webhookEndpointViewSchema>;

const secretSchema = z.string().meta({
  description:
    'The signing secret (`whsec_` and base64 of 32 random bytes), for your Standard Webhooks library. Shown only in this response: store it now.',
  example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw4T8dBGl2ZfM=',
});

export const createdWebhookEndpointSchema = /* @__PURE__ */ webhookEndpointViewSchema
  .extend({ secret: secretSchema })
  .meta({ id: 'CreatedWebhookEndpoint', description: 'The new endpoint, with its signing secret (shown this once).' });

export const rotatedSecretSchema = /* @__PURE__ */ z
  .object({ secret: secretSchema })
  .meta({ id: 'RotatedWebhookSecret', description: 'The new signing secret. The previous one keeps signing beside it for 24 hours.' });

export const webhookEndpointListSchema = /* @__PURE__ */ z
  .object({ data: z.array(webhookEndpointViewSchema).meta({ description: `Newest first; at most ${MAX_ENDPOINTS_PER_MODE}.` }) })
  .meta({ id: 'WebhookEndpointList' });

export function endpointView(endpoint: WebhookEndpoint): WebhookEndpointView {
  return {
    id: endpoint.endpointId,
    url: endpoint.url,
    events: endpoint.events,
    description: endpoint.description,
    status: endpoint.status,
    ...(endpoint.disabledReason !== undefined ? { disabledReason: endpoint.disabledReason } : {}),
    livemode: endpoint.mode === 'live',
    createdAt: endpoint.createdAt,
    updatedAt: endpoint.updatedAt,
  };
}

/** Whether an endpoint subscribed to `*` or to this type receives an event of this type. */
export function subscribesTo(endpoint: Pick<WebhookEndpoint, 'events'>, eventType: string): boolean {
  return endpoint.events.includes('*') || (endpoint.events as readonly string[]).includes(eventType);
}

/**
 * How much older than an endpoint an event may be stamped and still reach it. The endpoint's
 * createdAt and the event's come from two clocks (the API instance that created the endpoint, the
 * one that wrote the event); Lambda's are kept by Amazon Time Sync, well within a second of each
 * other. An event written after the endpoint but stamped a little earlier by a slower clock must not
 * be lost silently; one written within a second before the endpoint may as well arrive (no partner
 * can order two requests that close across machines). Anything older is never sent: a stream read
 * again after a restart, a consumer deployed later on an existing stream, a record delivered twice.
 */
export const EVENT_CLOCK_SKEW_MS = 1_000;

/**
 * Whether the fan-out sends this event to this endpoint (product rules "Webhook isolation and
 * operators"): the endpoint subscribes to the event's type, and the event is not older than the
 * endpoint (equal timestamps deliver; EVENT_CLOCK_SKEW_MS of skew is allowed for). A timestamp that
 * cannot be read delivers: at least once, never dropped for want of a date. `redeliver` (a partner
 * asking for an older event) does not ask this.
 */
export function receivesEvent(
  endpoint: Pick<WebhookEndpoint, 'events' | 'createdAt'>,
  event: { eventType: string; createdAt: string },
): boolean {
  if (!subscribesTo(endpoint, event.eventType)) return false;
  return !(Date.parse(event.createdAt) < Date.parse(endpoint.createdAt) - EVENT_CLOCK_SKEW_MS);
}

function required(field: string, kind: string) {
  return (issue: { input: unknown }) => (issue.input === undefined ? `${field} is required` : `${field} must be ${kind}`);
}

const urlField = z
  .string({ error: required('url', 'a string') })
  .max(MAX_ENDPOINT_URL_LENGTH, { error: `url must be at most ${MAX_ENDPOINT_URL_LENGTH} characters` });

const eventsField = z
  .array(z.enum(SUBSCRIBABLE_EVENT_TYPES, { error: `each entry of events must be one of ${SUBSCRIBABLE_EVENT_TYPES.join(', ')}` }), {
    error: required('events', `an array of ${SUBSCRIBABLE_EVENT_TYPES.join(', ')}`),
  })
  .min(1, { error: 'events must name at least one event type' })
  .max(SUBSCRIBABLE_EVENT_TYPES.length, { error: `events must name at most ${SUBSCRIBABLE_EVENT_TYPES.length} event types` })
  .refine((events) => new Set(events).size === events.length, { error: 'events must not name an event type twice' });

const descriptionField = z
  .string({ error: 'description must be a string' })
  .max(MAX_DESCRIPTION_LENGTH, { error: `description must be at most ${MAX_DESCRIPTION_LENGTH} characters` })
  .refine(isWellFormedText, { error: 'description must be valid Unicode text' });

const objectError = {
  error: (issue: { code?: string }) => (issue.code === 'unrecognized_keys' ? 'unknown field' : 'the request body must be a JSON object'),
};

export const createEndpointRequestSchema = z.strictObject(
  { url: urlField, events: eventsField, description: descriptionField.optional() },
  objectError,
);
export type CreateEndpointRequest = z.infer<typeof createEndpointRequestSchema>;

export const updateEndpointRequestSchema = z
  .strictObject(
    {
      url: urlField.optional(),
      events: eventsField.optional(),
      description: descriptionField.optional(),
      status: z.enum(ENDPOINT_STATUSES, { error: `status must be one of ${ENDPOINT_STATUSES.join(', ')}` }).optional(),
    },
    objectError,
  )
  .refine((body) => Object.keys(body).length > 0, { error: 'name at least one of url, events, description, status to change' });
export type UpdateEndpointRequest = z.infer<typeof updateEndpointRequestSchema>;

export type Parsed<T> = { ok: true; value: T } | { ok: false; errors: FieldError[] };

/** A body checked against a strict schema: every problem as a field error, unknown fields named with the allowed ones. */
export function parseWith<T>(schema: z.ZodType<T>, fields: readonly string[], body: unknown): Parsed<T> {
  const result = schema.safeParse(body);
  if (result.success) return { ok: true, value: result.data };
  const errors: FieldError[] = [];
  for (const issue of result.error.issues) {
    if (issue.code === 'unrecognized_keys') {
      errors.push(...unknownFieldErrors(issue.keys, () => `unknown field; the allowed fields are ${fields.join(', ')}`));
    } else {
      errors.push({ field: issue.path.map(String).join('.') || '(body)', message: issue.message });
    }
  }
  return { ok: false, errors };
}

/** Validates the body of POST /api/v1/webhook-endpoints (shape only; the URL rules are the use case's). Pure. */
export function parseCreateEndpointRequest(body: unknown): Parsed<CreateEndpointRequest> {
  return parseWith(createEndpointRequestSchema, ['url', 'events', 'description'], body);
}

/** Validates the body of PATCH /api/v1/webhook-endpoints/{id}. Pure. */
export function parseUpdateEndpointRequest(body: unknown): Parsed<UpdateEndpointRequest> {
  return parseWith(updateEndpointRequestSchema, ['url', 'events', 'description', 'status'], body);
}

/** A path id worth looking up: anything else is answered 404 without a read. */
export function endpointIdToRead(id: string | undefined): string | undefined {
  return id !== undefined && ENDPOINT_ID_PATTERN.test(id) ? id : undefined;
}
