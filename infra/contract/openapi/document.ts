import { OpenAPIRegistry, OpenApiGeneratorV31, type ResponseConfig, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { createCasesResponseSchema } from '../../../lib/cases/batch-result.js';
import {
  CASE_ID_PATTERN,
  CASE_STATUSES,
  caseViewSchema,
  MAX_WITHDRAW_REASON_LENGTH,
  RECOVERY_GATES,
} from '../../../lib/cases/case-record.js';
import { withdrawRequestSchema } from '../../../lib/cases/case-lifecycle.js';
import { caseListSchema, DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from '../../../lib/cases/list-cases.js';
import { CASE_EVENT_TYPES, caseEventSchema, EVENT_ID_PATTERN } from '../../../lib/cases/case-lifecycle.js';
import { EVENT_RETENTION_DAYS } from '../../../lib/cases/event-retention.js';
import { EVENT_LIST_PARAMETERS, EVENT_NOT_FOUND_DETAIL, eventListSchema } from '../../../lib/cases/list-events.js';
import {
  createCasesBadRequestSchema,
  idempotencyKeyReusedProblemSchema,
  insufficientScopeProblemSchema,
  internalProblemSchema,
  invalidCursorProblemSchema,
  invalidRequestProblemSchema,
  listCasesBadRequestSchema,
  notFoundProblemSchema,
  payloadTooLargeProblemSchema,
  problemSchema,
  rateLimitedProblemSchema,
  serviceUnavailableProblemSchema,
  unauthenticatedProblemSchema,
  unsupportedMediaTypeProblemSchema,
  webhookEndpointDisabledProblemSchema,
  webhookEndpointLimitProblemSchema,
} from '../../../lib/http/response-schemas.js';
import { DELIVERY_LIST_PARAMETERS, webhookDeliveryListSchema } from '../../../lib/webhooks/list-deliveries.js';
import { WEBHOOK_PING_EVENT_TYPE, webhookPingEventSchema, webhookPingResultSchema } from '../../../lib/webhooks/ping-event.js';
import { redeliverRequestSchema } from '../../../lib/webhooks/redeliver-event.js';
import { DELIVERY_RETENTION_SECONDS, webhookDeliveryViewSchema } from '../../../lib/webhooks/webhook-delivery.js';
import { DELIVERY_TIMEOUT_MS } from '../../../lib/adapters/webhooks/webhook-sender.js';
import { RETRY_WINDOW_SECONDS } from '../../../lib/webhooks/retry-schedule.js';
import { MAX_ENDPOINT_URL_LENGTH } from '../../../lib/webhooks/endpoint-url.js';
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
import type { Scope } from '../../../lib/auth/scopes.js';
import { MAX_CASES_PER_REQUEST } from '../../../lib/cases/batch-size.js';
import { caseInputSchema, MAX_INVOICE_REF_LENGTH } from '../../../lib/cases/case-input.js';
import { CURSOR_LIFETIME_MS } from '../../../lib/cases/list-cursor.js';
import { MAX_PRINCIPAL_PENCE } from '../../../lib/cases/money.js';
import { MAX_QUOTE_DAYS_AHEAD } from '../../../lib/cases/read-case.js';
import { MAX_BODY_BYTES } from '../../../lib/http/json-envelope.js';
import { MAX_FILE_NAME_LENGTH, MAX_UPLOAD_BYTES, uploadRequestSchema } from '../../../lib/uploads/upload-request.js';
import { uploadTicketSchema } from '../../../lib/uploads/upload-ticket.js';
import { DEFAULT_STACK_CONFIG } from '../stack-config.js';

// Limits the text states, from the constants the code enforces (the document is compared byte for byte in a test).
const MAX_PRINCIPAL_POUNDS = MAX_PRINCIPAL_PENCE / 100;
const MAX_PRINCIPAL_TEXT = MAX_PRINCIPAL_POUNDS.toLocaleString('en-GB');
const IDEMPOTENCY_HOURS = DEFAULT_STACK_CONFIG.idempotencyTtlSeconds / 3600;
const CURSOR_HOURS = CURSOR_LIFETIME_MS / 3_600_000;
const mebibytes = (bytes: number) => `${bytes / (1024 * 1024)} MiB`;

/**
 * The partner contract as an OpenAPI 3.1 document, generated from the zod schemas the handlers
 * validate with (requests) and from the response schemas (lib/http/response-schemas.ts and the domain types' own).
 *
 * `npm run openapi` writes it to docs/openapi.json; test/integration/openapi-document.test.ts
 * fails when the committed file differs from a fresh generation, and the contract tests validate
 * every response the integration tests receive against the committed file.
 *
 * The request schemas are the handlers' own; refinements (lengths counted in code points, "not
 * blank", real dates) cannot be expressed by the generator, so `documented()` adds the matching
 * JSON Schema keywords and descriptions field by field. A test checks each documented length
 * against the handlers' schema at its boundaries.
 */

export const OPENAPI_FILE = 'docs/openapi.json';

const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  'cases:write':
    'upload invoices (`POST /api/v1/uploads`), create cases (`POST /api/v1/cases`) and withdraw them (`POST /api/v1/cases/{id}/withdraw`)',
  'cases:read':
    'read, list and look up cases (`GET /api/v1/cases/{id}`, `GET /api/v1/cases`) and read their events (`GET /api/v1/events`, `GET /api/v1/events/{id}`)',
  'webhooks:manage': 'manage webhook endpoints (`/api/v1/webhook-endpoints`)',
};

const DESCRIPTION = `Partners upload invoice files, submit overdue business-to-business invoices as recovery cases in batches of up to ${MAX_CASES_PER_REQUEST}, read a case's status, and list or look up their cases.

## Authentication

Every request carries your API key, either as \`Authorization: Bearer <key>\` or as \`X-Api-Key: <key>\` (if both are sent they must be the same key). A missing, malformed, unknown or revoked key gets \`401 UNAUTHENTICATED\`; a valid key without the operation's scope gets \`403 INSUFFICIENT_SCOPE\`. Keys belong to one company and see only its data.

## Scopes

A key holds exactly the scopes given when it was created. Each operation names the scope it requires (in its description and as \`x-required-scope\`).

| Scope | Grants |
|---|---|
${Object.entries(SCOPE_DESCRIPTIONS)
  .map(([scope, grants]) => `| \`${scope}\` | ${grants} |`)
  .join('\n')}

## Errors

Every non-2xx response is RFC 9457 problem details (\`application/problem+json\`) with a stable \`code\` to switch on and a \`requestId\` to quote. Checks run in this order: authentication (401), scope (403), request envelope (413, 415, 400), then the work. Per-case problems in \`POST /api/v1/cases\` are not HTTP errors: they are items in \`rejected\`, each with a \`RejectionCode\`.

## Retries

Send an \`Idempotency-Key\` with each batch: a repeat within ${IDEMPOTENCY_HOURS} hours gets \`409\` and creates nothing. Independently, a case whose \`invoiceRef\` your company already has is rejected as \`DUPLICATE\`. A retry never creates a second case.

## Versioning

The version is in the path (\`/api/v1\`). Additive changes (new optional response members, new enum values, new operations) may appear within v1: ignore members you do not know.`;

// ---- request schemas: the handlers' own, with the documentation their refinements need --------

type Shape = Record<string, z.ZodType>;

/** Adds JSON Schema keywords and descriptions to fields of a handler's schema, by name only. */
function documented<S extends Shape>(shape: S, docs: { [K in keyof S]?: Record<string, unknown> }): Shape {
  const out: Shape = {};
  for (const [name, docsOfField] of Object.entries(docs)) {
    const field = shape[name];
    if (!field) throw new Error(`documented(): no field "${name}" in the schema`);
    out[name] = field.meta(docsOfField as Record<string, unknown>);
  }
  return out;
}

const caseShape = caseInputSchema.shape;

export const attestationDocSchema = caseShape.attestation
  .extend(
    documented(caseShape.attestation.shape, {
      b2b: { description: 'Must be `true`: the debt is business-to-business.', example: true },
      under10k: { description: `Must be \`true\`: the debt is at most ${MAX_PRINCIPAL_TEXT} GBP.`, example: true },
      within6years: { description: 'Must be `true`: the debt is within the six-year limitation window.', example: true },
      undisputed: { description: 'Must be `true`: the debt is undisputed.', example: true },
      attestedBy: {
        minLength: 1,
        maxLength: 200,
        description: 'The authorised person making the attestation (not blank).',
        example: 'Jane Smith, Credit Controller',
      },
    }),
  )
  .meta({
    id: 'Attestation',
    description:
      'The legal eligibility assertion, kept immutably for the audit trail. All four flags must be `true`, else the case is rejected with `ATTESTATION_FAILED`. Unknown members are refused (`INVALID_FIELD`).',
  });

export const caseInputDocSchema = caseInputSchema
  .extend({
    ...documented(caseShape, {
      debtorName: { minLength: 1, maxLength: 300, description: 'The debtor company (not blank).', example: 'Acme Widgets Ltd' },
      debtorEmail: { format: 'email', description: 'Where the debtor is contacted.', example: 'accounts@acme.example' },
      invoiceRef: {
        minLength: 1,
        maxLength: MAX_INVOICE_REF_LENGTH,
        description: 'Your invoice reference (not blank). Unique per company: compared trimmed, Unicode NFC-normalised and case-folded.',
        example: 'INV-2025-0042',
      },
      invoiceDate: {
        description: '`YYYY-MM-DD` or an ISO 8601 date-time with `Z` or an offset. Not after `dueDate`.',
        example: '2025-01-10',
      },
      dueDate: {
        description: '`YYYY-MM-DD` or an ISO 8601 date-time with `Z` or an offset. In the past (a date: before today in Europe/London).',
        example: '2025-02-10',
      },
      principalAmount: {
        description: `GBP, as a JSON number with at most 2 decimal places; greater than 0 and at most ${MAX_PRINCIPAL_TEXT}.`,
        exclusiveMinimum: 0,
        maximum: MAX_PRINCIPAL_POUNDS,
        example: 1250.5,
      },
      invoiceFileKey: {
        description: 'The `fileKey` returned by `POST /api/v1/uploads`, unchanged, with the file already uploaded.',
        example: 'invoices/cmp_4fZ0qR8sT2uV6wXy/7Gk2mP9qR4sT8vW1xY3zA5bC7dE9fG1h.pdf',
      },
      debtorCompanyNo: {
        description:
          'UK company number: 8 digits, or 2 letters and 6 digits (shorter all-digit numbers are zero-padded). Confirms the registered details; Scottish and Northern Irish registrations are out of jurisdiction.',
        example: '01234567',
      },
      debtorAddress: { maxLength: 500, description: 'Optional context.', example: '1 High Street, London EC1A 1AA' },
      description: {
        maxLength: 2000,
        description: 'Optional context.',
        example: 'Widgets delivered 2025-01-05, invoice unpaid after two reminders.',
      },
      claimStatutoryInterest: {
        description:
          'Whether the case claims statutory compensation and interest under the Late Payment of Commercial Debts (Interest) Act 1998 (default `true`); with `false` the case claims the principal only.',
        example: true,
      },
    }),
    attestation: attestationDocSchema,
  })
  .meta({
    id: 'CaseInput',
    description:
      'One case: one unpaid business-to-business invoice and one debtor. Each case is checked on its own: a case that breaks a rule is rejected with a `RejectionCode` and does not fail the request. Unknown members are refused (`INVALID_FIELD`); optional members may be omitted or `null`.',
  });

export const createCasesRequestSchema = z
  .strictObject({
    cases: z
      .array(caseInputDocSchema)
      .min(1)
      .max(MAX_CASES_PER_REQUEST)
      .meta({ description: `1 to ${MAX_CASES_PER_REQUEST} cases.` }),
  })
  .meta({ id: 'CreateCasesRequest' });

export const uploadRequestDocSchema = uploadRequestSchema
  .extend(
    documented(uploadRequestSchema.shape, {
      fileName: {
        minLength: 1,
        maxLength: MAX_FILE_NAME_LENGTH,
        description: 'The file name, kept as metadata only: not blank, no control characters.',
        example: 'INV-2025-0042.pdf',
      },
      contentType: { description: 'The file type; the upload must send exactly this `Content-Type`.', example: 'application/pdf' },
      contentLength: {
        description: `The file size in bytes (at most ${MAX_UPLOAD_BYTES}, ${mebibytes(MAX_UPLOAD_BYTES)}); the upload must send exactly this size.`,
        example: 48213,
      },
    }),
  )
  .meta({ id: 'UploadRequest', description: 'Exactly these three members; any other is refused.' });

export const withdrawRequestDocSchema = withdrawRequestSchema
  .extend(
    documented(withdrawRequestSchema.shape, {
      reason: {
        maxLength: MAX_WITHDRAW_REASON_LENGTH,
        description: `Why the case is withdrawn (at most ${MAX_WITHDRAW_REASON_LENGTH} characters); kept as the \`reason\` of the \`WITHDRAWN\` entry of \`statusHistory\`. An empty reason counts as none.`,
        example: 'Paid directly by the debtor',
      },
    }),
  )
  .meta({ id: 'WithdrawRequest', description: 'Optional: the body may be left out. Unknown members are refused.' });
const endpointRequestDocs = {
  url: {
    maxLength: MAX_ENDPOINT_URL_LENGTH,
    description:
      '`https://` only; no user info, no fragment; the host must be public (an IP literal or a name resolving to a private, loopback, link-local, CGNAT, multicast or unique-local address is refused).',
    example: 'https://hooks.partner.example/pca',
  },
  events: { description: 'One or more of `case.created`, `case.updated`, `*` (every type), each at most once.', example: ['*'] },
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

// ---- shared responses --------------------------------------------------------------------------

const PROBLEM_JSON = 'application/problem+json';

type HeaderDocs = Record<string, { required?: boolean; description: string; schema: Record<string, unknown> }>;

const cacheControl = { description: 'Always `no-store`.', schema: { type: 'string', enum: ['no-store'] } };

const responseHeaders = (headers: HeaderDocs) => ({ 'Cache-Control': cacheControl, ...headers }) as unknown as ResponseConfig['headers'];

function problem(
  description: string,
  schema: z.ZodType,
  headers: HeaderDocs = {},
  examples?: Record<string, { summary: string; value: unknown }>,
): ResponseConfig {
  return {
    description,
    headers: responseHeaders(headers),
    content: { [PROBLEM_JSON]: { schema, ...(examples ? { examples } : {}) } },
  };
}

function example(schema: z.ZodType): Record<string, unknown> {
  return (z.globalRegistry.get(schema)?.example ?? {}) as Record<string, unknown>;
}

const unauthorized = problem('No API key, or a malformed, unknown or revoked one.', unauthenticatedProblemSchema, {
  'WWW-Authenticate': {
    required: true,
    description: 'The authentication scheme: `Bearer realm="partner-case-api"`.',
    schema: { type: 'string' },
  },
});

function forbidden(scope: Scope): ResponseConfig {
  return problem(
    `The API key lacks the scope \`${scope}\`.`,
    insufficientScopeProblemSchema,
    {
      'WWW-Authenticate': {
        required: true,
        description: `\`Bearer realm="partner-case-api", error="insufficient_scope", scope="${scope}"\`.`,
        schema: { type: 'string' },
      },
    },
    {
      insufficientScope: {
        summary: 'The key lacks the scope',
        value: {
          ...example(insufficientScopeProblemSchema),
          requiredScope: scope,
          detail: `This API key does not hold the scope "${scope}" that this operation requires.`,
        },
      },
    },
  );
}

const payloadTooLarge = problem(
  `The request body is over ${MAX_BODY_BYTES} bytes (${mebibytes(MAX_BODY_BYTES)}).`,
  payloadTooLargeProblemSchema,
);
const unsupportedMediaType = problem('The request body was not sent as `application/json`.', unsupportedMediaTypeProblemSchema);
const tooManyRequests = problem('A rate limit of the gateway was exceeded.', rateLimitedProblemSchema, {
  'Retry-After': { required: true, description: 'Seconds to wait before retrying.', schema: { type: 'string', pattern: '^[0-9]+$' } },
});
const otherProblem = problem(
  'Any other error (for example `404 NOT_FOUND` from the gateway for an unknown route): problem details with a `code`.',
  problemSchema,
);
const internal = problem('An unexpected failure. Safe to retry; quote the `requestId` if it persists.', internalProblemSchema);
const unavailable = problem(
  'Storage could not answer in time; nothing was written. Retry after `Retry-After` seconds.',
  serviceUnavailableProblemSchema,
  {
    'Retry-After': { required: true, description: 'Seconds to wait before retrying.', schema: { type: 'string', pattern: '^[0-9]+$' } },
  },
);

function json(description: string, schema: z.ZodType, examples?: Record<string, { summary: string; value: unknown }>): ResponseConfig {
  return { description, headers: responseHeaders({}), content: { 'application/json': { schema, ...(examples ? { examples } : {}) } } };
}

function secured(scope: Scope): Pick<RouteConfig, 'security'> & { 'x-required-scope': Scope } {
  // OpenAPI 3.1 lets a requirement on a non-OAuth scheme list "roles"; the scope is also stated in
  // the description and in x-required-scope for tools that ignore them.
  return { security: [{ bearerAuth: [scope] }, { apiKeyHeader: [scope] }], 'x-required-scope': scope };
}

const scopeSentence = (scope: Scope) => `\n\nRequires the scope \`${scope}\`.`;

// ---- the document ------------------------------------------------------------------------------

const CASE = {
  debtorName: 'Acme Widgets Ltd',
  debtorEmail: 'accounts@acme.example',
  invoiceRef: 'INV-2025-0042',
  invoiceDate: '2025-01-10',
  dueDate: '2025-02-10',
  principalAmount: 1250.5,
  invoiceFileKey: 'invoices/cmp_4fZ0qR8sT2uV6wXy/7Gk2mP9qR4sT8vW1xY3zA5bC7dE9fG1h.pdf',
  debtorCompanyNo: '01234567',
  attestation: { b2b: true, under10k: true, within6years: true, undisputed: true, attestedBy: 'Jane Smith, Credit Controller' },
};

const CREATED = { index: 0, invoiceRef: 'INV-2025-0042', id: 'case_7Gk2mP9qR4sT8vW1xY3zA5', reference: 'PC-222-22B', livemode: true };
const REJECTED_DUE_DATE = {
  index: 1,
  invoiceRef: 'INV-2025-0043',
  code: 'DUE_DATE_NOT_PAST',
  message: 'dueDate must be in the past (a date must be before today in Europe/London; a date-time before now)',
  errors: [
    { field: 'dueDate', message: 'dueDate must be in the past (a date must be before today in Europe/London; a date-time before now)' },
  ],
};
const REJECTED_DUPLICATE = {
  index: 0,
  invoiceRef: 'INV-2025-0042',
  code: 'DUPLICATE',
  message: 'invoiceRef is already being chased in case PC-222-22B',
  errors: [{ field: 'invoiceRef', message: 'invoiceRef is already being chased in case PC-222-22B' }],
  existingCaseId: 'case_7Gk2mP9qR4sT8vW1xY3zA5',
  existingReference: 'PC-222-22B',
};

function registerDocument(registry: OpenAPIRegistry): void {
  registry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'pca_<key id>_<secret><checksum>',
    description: 'Your API key as a bearer token: `Authorization: Bearer <key>`.',
  });
  registry.registerComponent('securitySchemes', 'apiKeyHeader', {
    type: 'apiKey',
    in: 'header',
    name: 'X-Api-Key',
    description: 'Your API key in the `X-Api-Key` header. If `Authorization` is sent too, both must carry the same key.',
  });
  registry.registerComponent('parameters', 'IdempotencyKey', {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description: `Recommended. A key you choose per batch, 1 to 255 visible ASCII characters (0x21-0x7E); the quoted form \`"abc"\` means \`abc\`. Scoped to your company and kept for ${IDEMPOTENCY_HOURS} hours: a repeat gets \`409 IDEMPOTENCY_KEY_REUSED\` and creates nothing. A request refused with 400, 413 or 415 does not use the key up.`,
    schema: { type: 'string', minLength: 1, maxLength: 255 },
    example: 'batch-2025-03-04-001',
  });

  registry.registerPath({
    method: 'post',
    path: '/api/v1/uploads',
    operationId: 'createUpload',
    tags: ['Uploads'],
    summary: 'Request an invoice upload',
    description:
      'Returns a `fileKey` and a presigned S3 `PUT` URL. `PUT` the file bytes to `uploadUrl` with exactly the `headers` given, before `expiresAt`; then cite `fileKey` as `invoiceFileKey` when creating a case. Issuing an upload writes nothing.' +
      scopeSentence('cases:write'),
    ...secured('cases:write'),
    request: {
      body: {
        required: true,
        content: {
          'application/json': {
            schema: uploadRequestDocSchema,
            examples: {
              pdf: {
                summary: 'A PDF invoice',
                value: { fileName: 'INV-2025-0042.pdf', contentType: 'application/pdf', contentLength: 48213 },
              },
            },
          },
        },
      },
    },
    responses: {
      201: json('The upload ticket.', uploadTicketSchema, {
        pdf: { summary: 'A presigned PUT for a PDF', value: example(uploadTicketSchema) },
      }),
      400: problem(
        'The body is not JSON, not an object, or a field breaks the rules; `errors` lists every problem.',
        invalidRequestProblemSchema,
        {},
        {
          invalidFields: {
            summary: 'Two fields to fix',
            value: {
              ...example(invalidRequestProblemSchema),
              errors: [
                { field: 'contentType', message: 'contentType must be one of application/pdf, image/png, image/jpeg' },
                {
                  field: 'contentLength',
                  message: `contentLength must be at most ${MAX_UPLOAD_BYTES} bytes (${mebibytes(MAX_UPLOAD_BYTES)})`,
                },
              ],
            },
          },
        },
      ),
      401: unauthorized,
      403: forbidden('cases:write'),
      413: payloadTooLarge,
      415: unsupportedMediaType,
      429: tooManyRequests,
      500: internal,
      503: unavailable,
      default: otherProblem,
    },
  });

  registry.registerPath({
    method: 'post',
    path: '/api/v1/cases',
    operationId: 'createCases',
    tags: ['Cases'],
    summary: 'Create recovery cases (batch)',
    description:
      `Creates 1 to ${MAX_CASES_PER_REQUEST} cases. Each case is created or rejected on its own: every element of \`cases\` appears exactly once, in \`created\` or in \`rejected\` (with a \`RejectionCode\`), by its zero-based \`index\`. \`201\` when at least one case was created, \`200\` when none was. Creating a case does not start recovery: a case begins as \`DRAFT\`.` +
      scopeSentence('cases:write'),
    ...secured('cases:write'),
    parameters: [{ $ref: '#/components/parameters/IdempotencyKey' }],
    request: {
      body: {
        required: true,
        content: {
          'application/json': {
            schema: createCasesRequestSchema,
            examples: {
              oneCase: { summary: 'One case', value: { cases: [CASE] } },
              twoCases: {
                summary: 'Two cases, the second due in the future',
                value: { cases: [CASE, { ...CASE, invoiceRef: 'INV-2025-0043', dueDate: '2099-12-31', debtorCompanyNo: null }] },
              },
            },
          },
        },
      },
    },
    responses: {
      201: json('At least one case was created.', createCasesResponseSchema, {
        created: { summary: 'One case created, one rejected', value: { created: [CREATED], rejected: [REJECTED_DUE_DATE] } },
      }),
      200: json('No case was created: every case is in `rejected`.', createCasesResponseSchema, {
        duplicate: { summary: 'The invoice is already being chased', value: { created: [], rejected: [REJECTED_DUPLICATE] } },
      }),
      400: problem(
        'The request as a whole was refused; nothing was created and the `Idempotency-Key` was not used up.',
        createCasesBadRequestSchema,
        {},
        {
          invalidRequest: {
            summary: '`cases` is missing',
            value: {
              ...example(invalidRequestProblemSchema),
              detail: `The request body must hold "cases", an array of 1 to ${MAX_CASES_PER_REQUEST} cases.`,
              errors: [{ field: 'cases', message: 'cases is required' }],
            },
          },
          batchEmpty: {
            summary: 'No cases',
            value: {
              type: '/problems/batch-empty',
              title: 'Batch empty',
              status: 400,
              detail: '"cases" must hold at least 1 case.',
              code: 'BATCH_EMPTY',
              requestId: 'c0a8012e-6f1d-4a7b-9d4e-2b7f3c1d9e10',
            },
          },
          batchTooLarge: {
            summary: `More than ${MAX_CASES_PER_REQUEST} cases`,
            value: {
              type: '/problems/batch-too-large',
              title: 'Batch too large',
              status: 400,
              detail: `"cases" holds 120 cases; at most ${MAX_CASES_PER_REQUEST} are accepted per request.`,
              code: 'BATCH_TOO_LARGE',
              requestId: 'c0a8012e-6f1d-4a7b-9d4e-2b7f3c1d9e10',
              maxCases: MAX_CASES_PER_REQUEST,
              receivedCases: 120,
            },
          },
        },
      ),
      401: unauthorized,
      403: forbidden('cases:write'),
      409: problem(
        'The `Idempotency-Key` was already used: nothing new was created.',
        idempotencyKeyReusedProblemSchema,
        {
          'Retry-After': {
            required: false,
            description:
              'Only while the first request is `IN_PROGRESS`: seconds until it has certainly ended (its function timeout plus a margin); retry then to receive its result.',
            schema: { type: 'string', pattern: '^[0-9]+$' },
          },
        },
        {
          completed: {
            summary: 'The first request finished: its result is included',
            value: {
              type: '/problems/idempotency-key-reused',
              title: 'Idempotency key reused',
              status: 409,
              detail: 'This Idempotency-Key was already used; nothing new was created. The original result is included.',
              code: 'IDEMPOTENCY_KEY_REUSED',
              requestId: 'c0a8012e-6f1d-4a7b-9d4e-2b7f3c1d9e10',
              state: 'COMPLETED',
              sameRequest: true,
              created: [CREATED],
              rejected: [REJECTED_DUE_DATE],
            },
          },
          inProgress: {
            summary: 'The first request is still running',
            value: {
              type: '/problems/idempotency-key-reused',
              title: 'Idempotency key reused',
              status: 409,
              detail:
                'A request with this Idempotency-Key is still being processed; nothing new was created. Retry later to receive its result.',
              code: 'IDEMPOTENCY_KEY_REUSED',
              requestId: 'c0a8012e-6f1d-4a7b-9d4e-2b7f3c1d9e10',
              state: 'IN_PROGRESS',
              sameRequest: true,
            },
          },
        },
      ),
      413: payloadTooLarge,
      415: unsupportedMediaType,
      429: tooManyRequests,
      500: internal,
      503: unavailable,
      default: otherProblem,
    },
  });

  const CURSOR_EXAMPLE = 'AZ3q0b5mTqV8Xc1k9Yw2Lr7N4pGhS6dEfJ0uBvWxYz1aCqRtUiOpLkJhGfDsA';
  registry.registerPath({
    method: 'get',
    path: '/api/v1/cases',
    operationId: 'listCases',
    tags: ['Cases'],
    summary: 'List or look up cases',
    description:
      "Your company's cases, newest first (`createdAt` descending, then `id` descending), a page at a time. Pass `nextCursor` as `cursor`, with the same filters, for the next page; it is `null` on the last page. Walking every page of a collection that does not change meanwhile returns each case exactly once. A list may lag creation by about a second (it is served from a secondary index).\n\n" +
      'With `invoiceRef` it is a look-up instead: every case with that invoiceRef, compared as the duplicate check compares it (trimmed, Unicode NFC-normalised, case-folded), newest first, found even a moment after it was created or withdrawn. At most one of them is not `WITHDRAWN` (the one holding the invoiceRef); the others were withdrawn, which gives an invoiceRef up for a new case. They come in one page (`limit` does not apply, `nextCursor` is `null`). Other filters given with it must match too.\n\n' +
      `Each parameter at most once; an unknown, repeated or bad parameter is \`400 INVALID_REQUEST\` with \`errors\`. A cursor is opaque, bound to your company and to the filters it was issued for, and expires after ${CURSOR_HOURS} hours: otherwise \`400 INVALID_CURSOR\`.` +
      scopeSentence('cases:read'),
    ...secured('cases:read'),
    parameters: [
      {
        name: 'invoiceRef',
        in: 'query',
        required: false,
        description: `Look up every case with this invoiceRef, withdrawn ones included (1 to ${MAX_INVOICE_REF_LENGTH} characters, not blank).`,
        schema: { type: 'string', minLength: 1, maxLength: MAX_INVOICE_REF_LENGTH },
        example: 'INV-2025-0042',
      },
      {
        name: 'status',
        in: 'query',
        required: false,
        description: 'Only cases with this status.',
        schema: { type: 'string', enum: [...CASE_STATUSES] },
      },
      {
        name: 'recoveryGate',
        in: 'query',
        required: false,
        description: 'Only cases with this recovery gate.',
        schema: { type: 'string', enum: [...RECOVERY_GATES] },
      },
      {
        name: 'createdFrom',
        in: 'query',
        required: false,
        description: 'Only cases created at or after this instant: an ISO 8601 date-time with `Z` or an offset.',
        schema: { type: 'string', format: 'date-time' },
        example: '2025-03-01T00:00:00Z',
      },
      {
        name: 'createdBefore',
        in: 'query',
        required: false,
        description:
          'Only cases created before this instant (exclusive): an ISO 8601 date-time with `Z` or an offset, later than `createdFrom`.',
        schema: { type: 'string', format: 'date-time' },
        example: '2025-04-01T00:00:00+01:00',
      },
      {
        name: 'limit',
        in: 'query',
        required: false,
        description: `Cases per page, 1 to ${MAX_LIST_LIMIT} (default ${DEFAULT_LIST_LIMIT}).`,
        schema: { type: 'integer', minimum: 1, maximum: MAX_LIST_LIMIT, default: DEFAULT_LIST_LIMIT },
      },
      {
        name: 'cursor',
        in: 'query',
        required: false,
        description: 'The `nextCursor` of the previous page, unchanged.',
        schema: { type: 'string' },
        example: CURSOR_EXAMPLE,
      },
    ],
    responses: {
      200: json('A page of cases (or the look-up result).', caseListSchema, {
        page: { summary: 'A page with more to come', value: { data: [example(caseViewSchema)], nextCursor: CURSOR_EXAMPLE } },
        lookUp: { summary: 'A look-up by invoiceRef', value: { data: [example(caseViewSchema)], nextCursor: null } },
        none: { summary: 'Nothing matches', value: { data: [], nextCursor: null } },
      }),
      400: problem(
        'A query parameter or the cursor was refused.',
        listCasesBadRequestSchema,
        {},
        {
          invalidRequest: {
            summary: 'A bad limit and an unknown parameter',
            value: {
              ...example(invalidRequestProblemSchema),
              detail: 'The query string is invalid; see "errors" for every parameter to fix.',
              errors: [
                { field: 'limit', message: `limit must be a whole number from 1 to ${MAX_LIST_LIMIT}` },
                {
                  field: 'sort',
                  message:
                    'sort is not a query parameter of this operation; use invoiceRef, status, recoveryGate, createdFrom, createdBefore, limit, cursor',
                },
              ],
            },
          },
          invalidCursor: { summary: 'An expired cursor', value: example(invalidCursorProblemSchema) },
        },
      ),
      401: unauthorized,
      403: forbidden('cases:read'),
      429: tooManyRequests,
      500: internal,
      default: otherProblem,
    },
  });

  registry.registerPath({
    method: 'get',
    path: '/api/v1/cases/{id}',
    operationId: 'getCase',
    tags: ['Cases'],
    summary: 'Read a case',
    description:
      "Returns one of your company's cases. A case of another company answers exactly like one that does not exist (`404`)." +
      scopeSentence('cases:read'),
    ...secured('cases:read'),
    parameters: [
      {
        name: 'id',
        in: 'path',
        required: true,
        description: 'The case id, as returned in `created[].id`.',
        schema: { type: 'string', pattern: CASE_ID_PATTERN.source },
        example: 'case_7Gk2mP9qR4sT8vW1xY3zA5',
      },
      {
        name: 'asOf',
        in: 'query',
        required: false,
        description: `A settlement quote: the open case's \`amounts\` as of this date (\`YYYY-MM-DD\`, from today in Europe/London to ${MAX_QUOTE_DAYS_AHEAD} days ahead; default today). A withdrawn case ignores it. Any other value is \`400 INVALID_REQUEST\`.`,
        schema: { type: 'string', format: 'date' },
        example: '2025-03-31',
      },
    ],
    responses: {
      200: json('The case.', caseViewSchema, { draft: { summary: 'A new case', value: example(caseViewSchema) } }),
      400: problem('The `asOf` query parameter was refused.', invalidRequestProblemSchema),
      401: unauthorized,
      403: forbidden('cases:read'),
      404: problem('No case with this id exists for your company.', notFoundProblemSchema),
      429: tooManyRequests,
      500: internal,
      503: unavailable,
      default: otherProblem,
    },
  });

  const EVENT_ID_EXAMPLE = 'evt_3Jd8kQ2mX7pL4sW9zR1tB6';
  const caseExample = example(caseViewSchema);
  const EVENT_EXAMPLE = {
    id: EVENT_ID_EXAMPLE,
    type: 'case.updated',
    createdAt: '2025-03-04T10:21:07.412Z',
    livemode: true,
    data: {
      object: {
        ...caseExample,
        status: 'READY',
        recoveryGate: 'CONFIRMED',
        updatedAt: '2025-03-04T10:21:07.412Z',
        statusHistory: [
          { status: 'DRAFT', at: caseExample.createdAt },
          { status: 'READY', at: '2025-03-04T10:21:07.412Z' },
        ],
      },
      previousAttributes: { status: 'DRAFT', recoveryGate: 'AWAITING_CONFIRMATION' },
    },
  };
  const CREATED_EVENT_EXAMPLE = {
    id: 'evt_9Qw2eR5tY8uI1oP4aS7dF0',
    type: 'case.created',
    createdAt: caseExample.createdAt,
    livemode: true,
    data: { object: caseExample },
  };
  registry.registerPath({
    method: 'get',
    path: '/api/v1/events',
    operationId: 'listEvents',
    tags: ['Events'],
    summary: 'List events',
    description:
      `Your company's events of the key's mode, newest first (\`createdAt\` descending, then \`id\` descending), a page at a time: one \`case.created\` per case created and one \`case.updated\` per change of a case's \`status\`, \`recoveryGate\` or \`debtorVerification\`. Events are kept ${EVENT_RETENTION_DAYS} days; older ones are never returned. The list may lag the change it announces by about a second (it is served from a secondary index); \`GET /api/v1/events/{id}\` reads an event as soon as its change is made.\n\n` +
      `Paging and cursors work as for \`GET /api/v1/cases\`: pass \`nextCursor\` as \`cursor\`, with the same filters; it is \`null\` on the last page, and walking every page returns each event once. Each parameter at most once; an unknown, repeated or bad parameter is \`400 INVALID_REQUEST\` with \`errors\`. A cursor is opaque, bound to your company, the key's mode and the filters it was issued for, and expires after ${CURSOR_HOURS} hours: otherwise \`400 INVALID_CURSOR\` (a case list's cursor is refused here too).` +
      scopeSentence('cases:read'),
    ...secured('cases:read'),
    parameters: [
      {
        name: 'type',
        in: 'query',
        required: false,
        description: 'Only events of this type.',
        schema: { type: 'string', enum: [...CASE_EVENT_TYPES] },
      },
      {
        name: 'caseId',
        in: 'query',
        required: false,
        description: 'Only the events of this case (a case id as returned in `created[].id`).',
        schema: { type: 'string', pattern: CASE_ID_PATTERN.source },
        example: 'case_7Gk2mP9qR4sT8vW1xY3zA5',
      },
      {
        name: 'createdFrom',
        in: 'query',
        required: false,
        description: 'Only events created at or after this instant: an ISO 8601 date-time with `Z` or an offset.',
        schema: { type: 'string', format: 'date-time' },
        example: '2025-03-01T00:00:00Z',
      },
      {
        name: 'createdBefore',
        in: 'query',
        required: false,
        description:
          'Only events created before this instant (exclusive): an ISO 8601 date-time with `Z` or an offset, later than `createdFrom`.',
        schema: { type: 'string', format: 'date-time' },
        example: '2025-04-01T00:00:00+01:00',
      },
      {
        name: 'limit',
        in: 'query',
        required: false,
        description: `Events per page, 1 to ${MAX_LIST_LIMIT} (default ${DEFAULT_LIST_LIMIT}).`,
        schema: { type: 'integer', minimum: 1, maximum: MAX_LIST_LIMIT, default: DEFAULT_LIST_LIMIT },
      },
      {
        name: 'cursor',
        in: 'query',
        required: false,
        description: 'The `nextCursor` of the previous page, unchanged.',
        schema: { type: 'string' },
        example: CURSOR_EXAMPLE,
      },
    ],
    responses: {
      200: json('A page of events.', eventListSchema, {
        page: { summary: 'A page with more to come', value: { data: [EVENT_EXAMPLE, CREATED_EVENT_EXAMPLE], nextCursor: CURSOR_EXAMPLE } },
        none: { summary: 'Nothing matches', value: { data: [], nextCursor: null } },
      }),
      400: problem(
        'A query parameter or the cursor was refused.',
        listCasesBadRequestSchema,
        {},
        {
          invalidRequest: {
            summary: 'A malformed caseId and an unknown parameter',
            value: {
              ...example(invalidRequestProblemSchema),
              detail: 'The query string is invalid; see "errors" for every parameter to fix.',
              errors: [
                { field: 'caseId', message: 'caseId must be a case id as returned in created[].id, such as case_7Gk2mP9qR4sT8vW1xY3zA5' },
                {
                  field: 'status',
                  message: `status is not a query parameter of this operation; use ${EVENT_LIST_PARAMETERS.join(', ')}`,
                },
              ],
            },
          },
          invalidCursor: { summary: 'An expired cursor', value: example(invalidCursorProblemSchema) },
        },
      ),
      401: unauthorized,
      403: forbidden('cases:read'),
      429: tooManyRequests,
      500: internal,
      503: unavailable,
      default: otherProblem,
    },
  });

  registry.registerPath({
    method: 'get',
    path: '/api/v1/events/{id}',
    operationId: 'getEvent',
    tags: ['Events'],
    summary: 'Read an event',
    description:
      `Returns one of your company's events of the key's mode, exactly as the list and webhooks carry it. An event of another company or of the other mode, and one older than ${EVENT_RETENTION_DAYS} days, answer exactly like one that does not exist (\`404\`).` +
      scopeSentence('cases:read'),
    ...secured('cases:read'),
    parameters: [
      {
        name: 'id',
        in: 'path',
        required: true,
        description: 'The event id (`evt_...`).',
        schema: { type: 'string', pattern: EVENT_ID_PATTERN.source },
        example: EVENT_ID_EXAMPLE,
      },
    ],
    responses: {
      200: json('The event.', caseEventSchema, {
        updated: { summary: 'A case became READY', value: EVENT_EXAMPLE },
        created: { summary: 'A case was created', value: CREATED_EVENT_EXAMPLE },
      }),
      401: unauthorized,
      403: forbidden('cases:read'),
      404: problem(EVENT_NOT_FOUND_DETAIL, notFoundProblemSchema),
      429: tooManyRequests,
      500: internal,
      503: unavailable,
      default: otherProblem,
    },
  });

  const withdrawn = {
    ...example(caseViewSchema),
    status: 'WITHDRAWN',
    updatedAt: '2025-03-05T09:12:40.118Z',
    statusHistory: [
      { status: 'DRAFT', at: '2025-03-04T10:20:30.000Z' },
      { status: 'WITHDRAWN', at: '2025-03-05T09:12:40.118Z', reason: 'Paid directly by the debtor' },
    ],
  };
  registry.registerPath({
    method: 'post',
    path: '/api/v1/cases/{id}/withdraw',
    operationId: 'withdrawCase',
    tags: ['Cases'],
    summary: 'Withdraw a case',
    description:
      'Withdraws one of your company\u2019s cases, from `DRAFT`, `READY` or `ON_HOLD`: it becomes `WITHDRAWN` for good, with an entry in `statusHistory` (and your `reason`, if given) and a `case.updated` event. A withdrawn case no longer holds its invoiceRef: the same invoiceRef can be submitted again and is created, not `DUPLICATE`; the look-up by invoiceRef then returns both cases. Withdrawing a case that is already withdrawn answers `200` with the case unchanged (safe to retry). The body is optional. A case of another company answers exactly like one that does not exist (`404`).' +
      scopeSentence('cases:write'),
    ...secured('cases:write'),
    parameters: [
      {
        name: 'id',
        in: 'path',
        required: true,
        description: 'The case id, as returned in `created[].id`.',
        schema: { type: 'string', pattern: CASE_ID_PATTERN.source },
        example: 'case_7Gk2mP9qR4sT8vW1xY3zA5',
      },
    ],
    request: {
      body: {
        required: false,
        content: {
          'application/json': {
            schema: withdrawRequestDocSchema,
            examples: { reason: { summary: 'With a reason', value: { reason: 'Paid directly by the debtor' } } },
          },
        },
      },
    },
    responses: {
      200: json('The case, withdrawn (now or before).', caseViewSchema, { withdrawn: { summary: 'A withdrawn case', value: withdrawn } }),
      400: problem(
        'The body is not JSON, not an object, or a field breaks the rules; `errors` lists every problem.',
        invalidRequestProblemSchema,
        {},
        {
          reasonTooLong: {
            summary: 'A reason that is too long',
            value: {
              ...example(invalidRequestProblemSchema),
              detail: 'The withdrawal request is invalid; see "errors" for every field to fix.',
              errors: [{ field: 'reason', message: `reason must be at most ${MAX_WITHDRAW_REASON_LENGTH} characters` }],
            },
          },
        },
      ),
      401: unauthorized,
      403: forbidden('cases:write'),
      404: problem('No case with this id exists for your company.', notFoundProblemSchema),
      413: payloadTooLarge,
      415: unsupportedMediaType,
      429: tooManyRequests,
      500: internal,
      503: unavailable,
      default: otherProblem,
    },
  });
}

function registerTestHelpers(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'post',
    path: '/api/v1/test-helpers/cases/{id}/confirm',
    operationId: 'testConfirmCase',
    tags: ['Test helpers'],
    summary: 'Confirm a test case (test mode only)',
    description:
      'Test-mode keys only: makes the confirmation a user would make in your dashboard (spec rule 4) for one of your test cases, ' +
      'so you can rehearse what follows: `recoveryGate` becomes `CONFIRMED`, `status` `READY` (or stays `DRAFT` while the debtor is ' +
      'being verified), and one `case.updated` event is written. Answers the case record after the change, or as it is when there ' +
      'was nothing to confirm (already confirmed, auto-attested or withdrawn). With a live key this route does not exist (`404`): ' +
      'live cases are confirmed in your dashboard only. The confirmation is recorded as made by "test helper", with your key id.' +
      scopeSentence('cases:write'),
    ...secured('cases:write'),
    parameters: [
      {
        name: 'id',
        in: 'path',
        required: true,
        description: 'The test case id, as returned in `created[].id`.',
        schema: { type: 'string', pattern: CASE_ID_PATTERN.source },
        example: 'case_7Gk2mP9qR4sT8vW1xY3zA5',
      },
    ],
    responses: {
      200: json('The case after the confirmation.', caseViewSchema, {
        confirmed: { summary: 'A confirmed test case', value: example(caseViewSchema) },
      }),
      401: unauthorized,
      403: forbidden('cases:write'),
      404: problem('No test case with this id exists for your company, or the key is a live-mode key.', notFoundProblemSchema),
      429: tooManyRequests,
      500: internal,
      503: unavailable,
      default: otherProblem,
    },
  });
}

function registerWebhookEndpoints(registry: OpenAPIRegistry): void {
  const scope: Scope = 'webhooks:manage';
  const collection = '/api/v1/webhook-endpoints';
  const one = `${collection}/{id}`;
  const idParameter = {
    name: 'id',
    in: 'path' as const,
    required: true,
    description: 'The endpoint id, as returned on creation.',
    schema: { type: 'string' as const, pattern: ENDPOINT_ID_PATTERN.source },
    example: 'we_7Gk2mP9qR4sT8vW1xY3zA5',
  };
  const invalid = problem(
    'The body breaks the rules, or the URL is refused (field `url`); `errors` lists every problem.',
    invalidRequestProblemSchema,
    {},
    {
      privateUrl: {
        summary: 'A URL resolving to a private address',
        value: {
          ...example(invalidRequestProblemSchema),
          detail: 'The webhook endpoint URL is not acceptable.',
          errors: [
            {
              field: 'url',
              message:
                'url must reach a public address: hooks.example.com resolves to 10.0.0.5 is a private address, which cannot receive webhooks',
            },
          ],
        },
      },
    },
  );
  const notFound = problem('No webhook endpoint with this id exists for your company in this mode.', notFoundProblemSchema);
  const common = { 401: unauthorized, 403: forbidden(scope), 429: tooManyRequests, 500: internal, 503: unavailable, default: otherProblem };

  registry.registerPath({
    method: 'post',
    path: collection,
    operationId: 'createWebhookEndpoint',
    tags: ['Webhooks'],
    summary: 'Create a webhook endpoint',
    description:
      `Creates an endpoint and returns it with its signing \`secret\`, shown only here (and on rotation). At most ${MAX_ENDPOINTS_PER_MODE} endpoints per company and mode; an endpoint made with a test key receives test events only.` +
      scopeSentence(scope),
    ...secured(scope),
    request: { body: { required: true, content: { 'application/json': { schema: createEndpointRequestDocSchema } } } },
    responses: {
      201: json('The endpoint, with its secret.', createdWebhookEndpointSchema, {
        created: {
          summary: 'A new endpoint',
          value: { ...example(webhookEndpointViewSchema), secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw4T8dBGl2ZfM=' },
        },
      }),
      400: invalid,
      409: problem(`The company already has ${MAX_ENDPOINTS_PER_MODE} endpoints in this mode.`, webhookEndpointLimitProblemSchema),
      413: payloadTooLarge,
      415: unsupportedMediaType,
      ...common,
    },
  });
  registry.registerPath({
    method: 'get',
    path: collection,
    operationId: 'listWebhookEndpoints',
    tags: ['Webhooks'],
    summary: 'List webhook endpoints',
    description: "Every endpoint of your company in the key's mode, newest first, without secrets." + scopeSentence(scope),
    ...secured(scope),
    responses: { 200: json('The endpoints.', webhookEndpointListSchema), ...common },
  });
  registry.registerPath({
    method: 'get',
    path: one,
    operationId: 'getWebhookEndpoint',
    tags: ['Webhooks'],
    summary: 'Read a webhook endpoint',
    description: 'One endpoint, without its secret.' + scopeSentence(scope),
    ...secured(scope),
    parameters: [idParameter],
    responses: { 200: json('The endpoint.', webhookEndpointViewSchema), 404: notFound, ...common },
  });
  registry.registerPath({
    method: 'patch',
    path: one,
    operationId: 'updateWebhookEndpoint',
    tags: ['Webhooks'],
    summary: 'Change a webhook endpoint',
    description:
      'Changes `url`, `events`, `description` or `status`; a new URL is checked as on creation. Enabling an endpoint the service disabled clears `disabledReason`.' +
      scopeSentence(scope),
    ...secured(scope),
    parameters: [idParameter],
    request: { body: { required: true, content: { 'application/json': { schema: updateEndpointRequestDocSchema } } } },
    responses: {
      200: json('The endpoint as changed.', webhookEndpointViewSchema),
      400: invalid,
      404: notFound,
      413: payloadTooLarge,
      415: unsupportedMediaType,
      ...common,
    },
  });
  registry.registerPath({
    method: 'delete',
    path: one,
    operationId: 'deleteWebhookEndpoint',
    tags: ['Webhooks'],
    summary: 'Delete a webhook endpoint',
    description:
      'Removes the endpoint and its secrets; no delivery follows, and it no longer counts against the limit.' + scopeSentence(scope),
    ...secured(scope),
    parameters: [idParameter],
    responses: { 204: { description: 'Deleted.', headers: responseHeaders({}) }, 404: notFound, ...common },
  });
  registry.registerPath({
    method: 'post',
    path: `${one}/rotate-secret`,
    operationId: 'rotateWebhookEndpointSecret',
    tags: ['Webhooks'],
    summary: "Rotate a webhook endpoint's secret",
    description:
      'Makes a new signing secret and returns it (shown only here). For 24 hours every delivery carries a signature with the previous secret too, so you can switch without missing a verification.' +
      scopeSentence(scope),
    ...secured(scope),
    parameters: [idParameter],
    responses: { 200: json('The new secret.', rotatedSecretSchema), 404: notFound, ...common },
  });

  registry.registerPath({
    method: 'post',
    path: `${one}/ping`,
    operationId: 'pingWebhookEndpoint',
    tags: ['Webhooks'],
    summary: 'Ping a webhook endpoint',
    description:
      `Sends one \`${WEBHOOK_PING_EVENT_TYPE}\` event to the endpoint now, signed like every delivery (with both secrets during a rotation), and answers with what happened: \`delivered\` is \`true\` for a 2xx within ${DELIVERY_TIMEOUT_MS / 1000} seconds. ` +
      'A ping is sent once and never retried, is not in the delivery log, and leaves the endpoint\u2019s health alone (it neither counts towards nor ends a run of failures). A disabled endpoint is pinged too: check your fix, then enable it.' +
      scopeSentence(scope),
    ...secured(scope),
    parameters: [idParameter],
    responses: {
      200: json('What the ping came to (also when your receiver failed: see `delivered`).', webhookPingResultSchema, {
        delivered: { summary: 'Your receiver answered 200', value: { delivered: true, statusCode: 200, durationMs: 84 } },
        failed: {
          summary: 'Nothing listened',
          value: { delivered: false, durationMs: 3, error: 'ECONNREFUSED: connect ECONNREFUSED 93.184.216.34:443' },
        },
      }),
      404: notFound,
      ...common,
    },
  });
  registry.registerPath({
    method: 'post',
    path: `${one}/redeliver`,
    operationId: 'redeliverWebhookEvent',
    tags: ['Webhooks'],
    summary: 'Redeliver an event',
    description:
      'Delivers one of your events to the endpoint again, as a new delivery with its own id in the delivery log, retried like any other. The event must be your company\u2019s, of the endpoint\u2019s mode, and not older than ' +
      `${EVENT_RETENTION_DAYS} days; the endpoint must be enabled. Its \`webhook-id\` is the event id, as on the first delivery, so a receiver that deduplicates sees it as a repeat.` +
      scopeSentence(scope),
    ...secured(scope),
    parameters: [idParameter],
    request: { body: { required: true, content: { 'application/json': { schema: redeliverRequestDocSchema } } } },
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
      400: problem('The body breaks the rules; `errors` lists every problem.', invalidRequestProblemSchema),
      404: problem(
        'No webhook endpoint with this id, or no event with this `eventId`, exists for your company in this mode (events are kept 30 days).',
        notFoundProblemSchema,
        {},
        {
          unknownEvent: {
            summary: 'An unknown event',
            value: {
              ...example(notFoundProblemSchema),
              detail: 'No event evt_5Fg7Hj9Kl2Mn4Pq6Rs8Tu0 exists for your company in this mode (events are kept 30 days).',
            },
          },
        },
      ),
      409: problem('The endpoint is disabled: enable it first.', webhookEndpointDisabledProblemSchema),
      413: payloadTooLarge,
      415: unsupportedMediaType,
      ...common,
    },
  });
  registry.registerPath({
    method: 'get',
    path: `${one}/deliveries`,
    operationId: 'listWebhookDeliveries',
    tags: ['Webhooks'],
    summary: 'List an endpoint\u2019s deliveries',
    description:
      `The endpoint\u2019s delivery log, newest first, a page at a time: one delivery per event and endpoint (however often the event reached the queue), plus one per redelivery, each with its attempts (\`at\`, \`statusCode\` when one came, \`durationMs\`, \`error\`). Kept ${DELIVERY_RETENTION_SECONDS / 86_400} days. ` +
      `Paging as for \`GET /api/v1/events\`: pass \`nextCursor\` as \`cursor\`; a cursor is bound to your company, the key\u2019s mode and this endpoint and expires after ${CURSOR_HOURS} hours (else \`400 INVALID_CURSOR\`).` +
      scopeSentence(scope),
    ...secured(scope),
    parameters: [
      idParameter,
      {
        name: 'limit',
        in: 'query',
        required: false,
        description: `Deliveries per page, 1 to ${MAX_LIST_LIMIT} (default ${DEFAULT_LIST_LIMIT}).`,
        schema: { type: 'integer', minimum: 1, maximum: MAX_LIST_LIMIT, default: DEFAULT_LIST_LIMIT },
      },
      {
        name: 'cursor',
        in: 'query',
        required: false,
        description: 'The `nextCursor` of the previous page, unchanged.',
        schema: { type: 'string' },
      },
    ],
    responses: {
      200: json('A page of deliveries.', webhookDeliveryListSchema),
      400: problem(
        'A query parameter or the cursor was refused.',
        listCasesBadRequestSchema,
        {},
        {
          invalidRequest: {
            summary: 'An unknown parameter',
            value: {
              ...example(invalidRequestProblemSchema),
              detail: 'The query string is invalid; see "errors" for every parameter to fix.',
              errors: [
                {
                  field: 'status',
                  message: `status is not a query parameter of this operation; use ${DELIVERY_LIST_PARAMETERS.join(', ')}`,
                },
              ],
            },
          },
          invalidCursor: { summary: 'An expired cursor', value: example(invalidCursorProblemSchema) },
        },
      ),
      404: notFound,
      ...common,
    },
  });
}

/**
 * The `webhooks` section (OpenAPI 3.1): what a partner's receiver is sent, with the payload schemas
 * the code builds and checks events with (lib/cases/case-lifecycle.ts, lib/webhooks/ping-event.ts).
 */
function registerWebhooks(registry: OpenAPIRegistry): void {
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

export type OpenApiDocument = ReturnType<OpenApiGeneratorV31['generateDocument']>;

export function buildOpenApiDocument(): OpenApiDocument {
  const registry = new OpenAPIRegistry();
  registerDocument(registry);
  registerTestHelpers(registry);
  registerWebhookEndpoints(registry);
  registerWebhooks(registry);
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Partner Case API',
      version: '1.0.0',
      description: DESCRIPTION,
      contact: { name: 'Partner integrations' },
    },
    servers: [
      {
        url: 'https://{apiId}.execute-api.{region}.amazonaws.com/{stage}',
        description: 'A deployed stack (the `ApiUrl` output of the CDK stack).',
        variables: { apiId: { default: 'abc123defg' }, region: { default: 'eu-west-2' }, stage: { default: 'prod' } },
      },
      { url: 'http://localhost:3000', description: 'Local development (`npm start`).' },
    ],
    tags: [
      { name: 'Uploads', description: 'Upload the invoice file first; its `fileKey` goes into the case.' },
      { name: 'Cases', description: 'Create cases in batches, read their status, list and look them up.' },
      {
        name: 'Events',
        description: `What happened to your cases: one event per creation and per change, kept ${EVENT_RETENTION_DAYS} days.`,
      },
      { name: 'Test helpers', description: 'Test-mode keys only: make in the sandbox what other systems do to live cases.' },
      {
        name: 'Webhooks',
        description: 'Endpoints that receive your case events, signed per Standard Webhooks. Test keys manage test endpoints only.',
      },
    ],
  });
}

/** The file contents: stable key order as generated, two-space indent, trailing newline. */
export function renderOpenApiDocument(): string {
  return `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`;
}
