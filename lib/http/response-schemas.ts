import * as z from 'zod';
import { createdItemSchema, rejectedItemSchema } from '../cases/batch-result.js';
import { CASE_ID_EXAMPLE, caseViewSchema, REFERENCE_EXAMPLE } from '../cases/case-record.js';
import { paymentViewSchema } from '../cases/recovery.js';
import { SCOPES } from '../auth/scopes.js';
import { ERROR_CODES, fieldErrorSchema } from '../errors.js';
import { problemType } from './problem-details.js';

/**
 * The response bodies of the partner API as zod schemas: the source of the response half of
 * `docs/openapi.json` (infra/contract/openapi/document.ts) and of the contract tests, which validate every
 * response the integration tests receive against that document. The success bodies are defined
 * beside the domain types they are the source of (`z.infer`); the problem bodies are here.
 *
 * Plain zod (`.meta()` for ids, descriptions and examples): nothing here is needed at run time.
 *
 * Objects are open (no `additionalProperties: false`): additive fields may appear within v1. The
 * contract tests close them, so the code cannot send a member the document does not list.
 */

// ---- problem details (RFC 9457) ------------------------------------------------------------

/**
 * Codes the handlers send (lib/errors.ts), then those only API Gateway sends in front of them.
 * `FORBIDDEN` is in lib/errors.ts: the internal route's handler sends it too (a request without an
 * IAM caller), as WAF and API Gateway's signature checks do.
 */
export const PROBLEM_CODES = [...ERROR_CODES, 'RATE_LIMITED', 'GATEWAY_TIMEOUT'] as const;
export type ProblemCode = (typeof PROBLEM_CODES)[number];

export const problemCodeSchema = z.enum(PROBLEM_CODES).meta({
  id: 'ProblemCode',
  description:
    'Stable, machine-readable error code: switch on this, not on `title` or `detail`. `RATE_LIMITED`, `FORBIDDEN` and `GATEWAY_TIMEOUT` come from the gateway in front of the API. New codes may be added within v1.',
});

/** Any problem: what every error response has in common, whatever its code. */
export const problemSchema = z
  .object({
    type: z.string().meta({
      format: 'uri-reference',
      description: 'Identifies the problem type; a URI reference relative to the API base address.',
      example: problemType('NOT_FOUND'),
    }),
    title: z.string().meta({ description: 'Short summary of the problem type.', example: 'Not found' }),
    status: z.int().min(400).max(599).meta({ description: 'The HTTP status code.', example: 404 }),
    detail: z.string().meta({ description: 'What went wrong with this request, for a person.' }),
    code: problemCodeSchema,
    requestId: z
      .string()
      .optional()
      .meta({ description: 'Request id: quote it when contacting support. Absent only when the firewall answered.' }),
  })
  .meta({
    id: 'Problem',
    description: 'RFC 9457 problem details. Problems may carry further members (extension members), described with each response.',
    example: {
      type: problemType('NOT_FOUND'),
      title: 'Not found',
      status: 404,
      detail: 'No resource matches this method and path. Paths start with /api/v1/.',
      code: 'NOT_FOUND',
      requestId: 'c0a8012e-6f1d-4a7b-9d4e-2b7f3c1d9e10',
    },
  });

/** The members every problem has; `code` and `status` are narrowed per problem below. */
function problem<C extends ProblemCode, S extends number, E extends z.ZodRawShape>(
  id: string,
  code: C,
  status: S,
  title: string,
  description: string,
  extensions: E,
  example: Record<string, unknown>,
) {
  return z
    .object({
      type: z.string().meta({
        format: 'uri-reference',
        description: 'Identifies the problem type; a URI reference relative to the API base address.',
        example: problemType(code),
      }),
      title: z.string().meta({ description: 'Short summary of the problem type.', example: title }),
      status: z.literal(status).meta({ description: 'The HTTP status code.' }),
      detail: z.string().meta({ description: 'What went wrong with this request, for a person.' }),
      code: z.literal(code).meta({ description: 'Stable error code; one of `ProblemCode`.' }),
      requestId: z
        .string()
        .meta({ description: 'Request id: quote it when contacting support.', example: 'c0a8012e-6f1d-4a7b-9d4e-2b7f3c1d9e10' }),
      ...extensions,
    })
    .meta({
      id,
      description,
      example: {
        type: problemType(code),
        title,
        status,
        code,
        requestId: 'c0a8012e-6f1d-4a7b-9d4e-2b7f3c1d9e10',
        ...example,
      },
    });
}

export const unauthenticatedProblemSchema = problem(
  'UnauthenticatedProblem',
  'UNAUTHENTICATED',
  401,
  'Unauthenticated',
  'No API key, or a malformed, unknown or revoked one (one identical body for all). Sent with `WWW-Authenticate: Bearer`.',
  {},
  { detail: 'A valid API key is required: send it as "Authorization: Bearer <key>" or "X-Api-Key: <key>".' },
);

export const insufficientScopeProblemSchema = problem(
  'InsufficientScopeProblem',
  'INSUFFICIENT_SCOPE',
  403,
  'Insufficient scope',
  'The API key is valid but lacks the scope this operation requires.',
  {
    requiredScope: z.enum(SCOPES).meta({ description: 'The scope the operation requires.', example: 'cases:write' }),
  },
  { detail: 'This API key does not hold the scope "cases:write" that this operation requires.', requiredScope: 'cases:write' },
);

export const notFoundProblemSchema = problem(
  'NotFoundProblem',
  'NOT_FOUND',
  404,
  'Not found',
  'The case does not exist, or belongs to another company (its existence is never revealed).',
  {},
  { detail: 'No case with this id exists for your company.' },
);

export const webhookEndpointLimitProblemSchema = problem(
  'WebhookEndpointLimitProblem',
  'WEBHOOK_ENDPOINT_LIMIT_REACHED',
  409,
  'Webhook endpoint limit reached',
  'The company already has the most webhook endpoints one mode may hold; nothing was created.',
  { maxEndpoints: z.int().meta({ description: 'The limit per company and mode.', example: 16 }) },
  {
    detail: 'This company already has 16 webhook endpoints in this mode, the most allowed. Delete one before creating another.',
    maxEndpoints: 16,
  },
);

export const webhookEndpointDisabledProblemSchema = problem(
  'WebhookEndpointDisabledProblem',
  'WEBHOOK_ENDPOINT_DISABLED',
  409,
  'Webhook endpoint disabled',
  'The endpoint is disabled, so nothing was redelivered; enable it first (a ping still reaches it).',
  {},
  {
    detail:
      'The webhook endpoint we_7Gk2mP9qR4sT8vW1xY3zA5 is disabled, so nothing was redelivered. Enable it (PATCH its status to "enabled") first; a ping reaches it meanwhile.',
  },
);

/** A final case (CLOSED or WITHDRAWN) asked to change or take a payment (product rules, "Recovery and money"). */
export const caseNotOpenProblemSchema = problem(
  'CaseNotOpenProblem',
  'CASE_NOT_OPEN',
  409,
  'Case not open',
  'The case is final (`CLOSED` or `WITHDRAWN`): it takes no further change or payment; `caseStatus` names its status.',
  { caseStatus: z.enum(['CLOSED', 'WITHDRAWN']).meta({ description: 'The case\u2019s status.' }) },
  { detail: 'The case is CLOSED, which is final: it takes no further change or payment.', caseStatus: 'CLOSED' },
);

/** A change the rules do not allow from the case's status (the test-mode recovery helper). */
export const invalidTransitionProblemSchema = problem(
  'InvalidTransitionProblem',
  'INVALID_TRANSITION',
  409,
  'Invalid transition',
  'The rules do not allow this change from the case\u2019s current status; the case is unchanged.',
  { caseStatus: z.string().meta({ description: 'The case\u2019s status.', example: 'DRAFT' }) },
  { detail: 'Recovery starts only from READY; the case is DRAFT.', caseStatus: 'DRAFT' },
);

/** A payment above the case's outstanding amount today. */
export const paymentExceedsOutstandingProblemSchema = problem(
  'PaymentExceedsOutstandingProblem',
  'PAYMENT_EXCEEDS_OUTSTANDING',
  409,
  'Payment exceeds outstanding',
  'The payment is more than the case\u2019s outstanding amount today; nothing was recorded.',
  {
    outstanding: z
      .string()
      .regex(/^\d+\.\d{2}$/)
      .meta({ description: 'The case\u2019s outstanding amount today, GBP.', example: '749.50' }),
  },
  { detail: "The payment is more than the case's outstanding amount today, 749.50 GBP; nothing was recorded.", outstanding: '749.50' },
);

/** The case already holds the most payments a case may hold. */
export const paymentLimitReachedProblemSchema = problem(
  'PaymentLimitReachedProblem',
  'PAYMENT_LIMIT_REACHED',
  409,
  'Payment limit reached',
  'The case already holds 100 payments, the most a case may hold; nothing was recorded.',
  { maxPayments: z.int().meta({ description: 'The limit per case.', example: 100 }) },
  { detail: 'The case already holds 100 payments, the most a case may hold; nothing was recorded.', maxPayments: 100 },
);

export const invalidRequestProblemSchema = problem(
  'InvalidRequestProblem',
  'INVALID_REQUEST',
  400,
  'Invalid request',
  'The request as a whole is malformed (not JSON, not an object, a missing or misspelt member, a bad `Idempotency-Key`, an unknown, repeated or bad query parameter). Nothing was created and an `Idempotency-Key` was not used up.',
  { errors: z.array(fieldErrorSchema).optional().meta({ description: 'Every field problem found, when the problem is with fields.' }) },
  {
    detail: 'The upload request is invalid; see "errors" for every field to fix.',
    errors: [{ field: 'contentType', message: 'contentType must be one of application/pdf, image/png, image/jpeg' }],
  },
);

export const invalidCursorProblemSchema = problem(
  'InvalidCursorProblem',
  'INVALID_CURSOR',
  400,
  'Invalid cursor',
  'The `cursor` was altered, issued to another company or for other filters, or is more than 24 hours old. List again from the first page (without `cursor`).',
  {},
  { detail: 'The cursor has expired (cursors are valid for 24 hours). Start again without a cursor.' },
);

export const listCasesBadRequestSchema = z.discriminatedUnion('code', [invalidRequestProblemSchema, invalidCursorProblemSchema]).meta({
  id: 'ListCasesBadRequestProblem',
  description: 'A query parameter was refused (`INVALID_REQUEST`, with `errors`) or the cursor was (`INVALID_CURSOR`).',
});

export const batchEmptyProblemSchema = problem(
  'BatchEmptyProblem',
  'BATCH_EMPTY',
  400,
  'Batch empty',
  '`cases` holds no case.',
  {},
  { detail: '"cases" must hold at least 1 case.' },
);

export const batchTooLargeProblemSchema = problem(
  'BatchTooLargeProblem',
  'BATCH_TOO_LARGE',
  400,
  'Batch too large',
  '`cases` holds more than 100 cases. Nothing was created: split the batch.',
  {
    maxCases: z.int().meta({ description: 'Most cases accepted per request.', example: 100 }),
    receivedCases: z.int().meta({ description: 'How many cases the request held.', example: 120 }),
  },
  { detail: '"cases" holds 120 cases; at most 100 are accepted per request.', maxCases: 100, receivedCases: 120 },
);

export const payloadTooLargeProblemSchema = problem(
  'PayloadTooLargeProblem',
  'PAYLOAD_TOO_LARGE',
  413,
  'Payload too large',
  'The request body is over 1 MiB. It was not read.',
  {
    limitBytes: z
      .int()
      .optional()
      .meta({ description: 'The body size limit in bytes (absent when the gateway refused the request).', example: 1048576 }),
  },
  { detail: 'The request body exceeds the limit of 1048576 bytes.', limitBytes: 1048576 },
);

export const unsupportedMediaTypeProblemSchema = problem(
  'UnsupportedMediaTypeProblem',
  'UNSUPPORTED_MEDIA_TYPE',
  415,
  'Unsupported media type',
  'The request body was not sent as `Content-Type: application/json`.',
  {},
  { detail: 'The request body must be JSON, sent with "Content-Type: application/json".' },
);

const sameRequestSchema = z.boolean().meta({
  description:
    'Whether this request carries the same body as the first one with this key (compared by a hash of its canonical JSON). `true`: a safe retry. `false`: the key was reused for another request by mistake, and that request was not processed.',
});

const idempotencyDescription =
  'The `Idempotency-Key` was already used by your company (within 24 hours). Nothing new was created, whatever the payload.';

export const idempotencyInProgressProblemSchema = problem(
  'IdempotencyKeyInProgressProblem',
  'IDEMPOTENCY_KEY_REUSED',
  409,
  'Idempotency key reused',
  `${idempotencyDescription} The first request is still being processed: retry after \`Retry-After\` seconds to receive its result.`,
  {
    state: z.literal('IN_PROGRESS').meta({ description: 'The first request with this key is still running.' }),
    sameRequest: sameRequestSchema,
  },
  {
    detail: 'A request with this Idempotency-Key is still being processed; nothing new was created. Retry later to receive its result.',
    state: 'IN_PROGRESS',
    sameRequest: true,
  },
);

export const idempotencyCompletedProblemSchema = problem(
  'IdempotencyKeyCompletedProblem',
  'IDEMPOTENCY_KEY_REUSED',
  409,
  'Idempotency key reused',
  `${idempotencyDescription} The first request finished: its original \`created\` and \`rejected\` arrays are included, so a client that lost that response recovers its case ids.`,
  {
    state: z.literal('COMPLETED').meta({ description: 'The first request with this key has finished.' }),
    sameRequest: sameRequestSchema,
    created: z.array(createdItemSchema).meta({ description: 'The original `created` array.' }),
    rejected: z.array(rejectedItemSchema).meta({ description: 'The original `rejected` array.' }),
  },
  {
    detail: 'This Idempotency-Key was already used; nothing new was created. The original result is included.',
    state: 'COMPLETED',
    sameRequest: true,
    created: [{ index: 0, invoiceRef: 'INV-2025-0042', id: CASE_ID_EXAMPLE, reference: REFERENCE_EXAMPLE, livemode: true }],
    rejected: [],
  },
);

const PAYMENT_EXAMPLE = {
  id: 'pay_3Hk8nQ2rS5tU9vW4xY7zB1',
  caseId: CASE_ID_EXAMPLE,
  source: 'DIRECT',
  amount: '250.50',
  paidAt: '2025-03-10',
  reference: 'BACS 0042',
  recordedAt: '2025-03-11T09:15:02.331Z',
  livemode: true,
};

/** A payment's key reused after its first request finished: the original `payment` and `case` come back. */
export const paymentIdempotencyCompletedProblemSchema = problem(
  'PaymentIdempotencyKeyCompletedProblem',
  'IDEMPOTENCY_KEY_REUSED',
  409,
  'Idempotency key reused',
  `${idempotencyDescription} The first payment request finished: its original \`payment\` and \`case\` are included, so a client that lost that response recovers the payment's id.`,
  {
    state: z.literal('COMPLETED').meta({ description: 'The first request with this key has finished.' }),
    sameRequest: sameRequestSchema,
    // The components themselves (a `.meta()` here would copy them under new names): the first answer's payment and case.
    payment: paymentViewSchema,
    case: caseViewSchema,
  },
  {
    detail: 'This Idempotency-Key was already used; nothing new was created. The original result is included.',
    state: 'COMPLETED',
    sameRequest: true,
    payment: z.globalRegistry.get(paymentViewSchema)?.example ?? PAYMENT_EXAMPLE,
    case: z.globalRegistry.get(caseViewSchema)?.example,
  },
);

export const idempotencyKeyReusedProblemSchema = z
  .discriminatedUnion('state', [idempotencyInProgressProblemSchema, idempotencyCompletedProblemSchema])
  .meta({ id: 'IdempotencyKeyReusedProblem', description: idempotencyDescription });

export const internalProblemSchema = problem(
  'InternalProblem',
  'INTERNAL',
  500,
  'Internal error',
  'The request could not be completed. It is safe to retry (with the same `Idempotency-Key`); quote `requestId` if it keeps failing.',
  {},
  { detail: 'The request could not be completed. It is safe to retry; quote the requestId if it keeps failing.' },
);

export const serviceUnavailableProblemSchema = problem(
  'ServiceUnavailableProblem',
  'SERVICE_UNAVAILABLE',
  503,
  'Service unavailable',
  'Storage could not answer in time and nothing was written: the request had no effect. Retry after `Retry-After` seconds, with backoff; with the same `Idempotency-Key` it is safe.',
  {},
  {
    detail:
      'Storage is temporarily unavailable and nothing was written. Retry after the Retry-After delay; with the same Idempotency-Key it is safe.',
  },
);

export const rateLimitedProblemSchema = problem(
  'RateLimitedProblem',
  'RATE_LIMITED',
  429,
  'Too many requests',
  'Sent by the gateway when a rate limit is exceeded. Retry after `Retry-After` seconds, with backoff. (When the firewall limits a key, the body is `application/json` and has no `requestId`.)',
  {},
  { detail: 'The request rate limit was exceeded. Retry after a short delay, with backoff.' },
);

export const createCasesBadRequestSchema = z
  .discriminatedUnion('code', [invalidRequestProblemSchema, batchEmptyProblemSchema, batchTooLargeProblemSchema])
  .meta({
    id: 'CreateCasesBadRequestProblem',
    description: 'The request as a whole was refused: nothing was created and an `Idempotency-Key` was not used up.',
  });
