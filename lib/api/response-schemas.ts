import * as z from 'zod';
import { REJECTION_CODES } from '../cases/case-input.js';
import type { CaseView } from '../cases/case-record.js';
import type { CreatedItem, RejectedItem } from '../cases/create-cases-service.js';
import type { ErrorCode, FieldError } from '../errors.js';
import type { UploadTicket } from '../uploads/upload-service.js';

/**
 * The response bodies of the partner API as zod schemas: the source of the response half of
 * `docs/openapi.json` (infra/openapi/document.ts) and of the contract tests, which validate every
 * response the integration tests receive against that document.
 *
 * Plain zod (`.meta()` for ids, descriptions and examples): nothing here is needed at run time,
 * and the type checks at the bottom make `tsc` fail when a product type and its schema drift.
 *
 * Objects are open (no `additionalProperties: false`): additive fields may appear within v1. The
 * contract tests close them, so the code cannot send a member the document does not list.
 */

// ---- shared pieces -------------------------------------------------------------------------

const CASE_ID_EXAMPLE = 'case_7Gk2mP9qR4sT8vW1xY3zA5';
const REFERENCE_EXAMPLE = 'PC-222-22B';

export const caseIdSchema = z.string().regex(/^case_[0-9A-Za-z]{22}$/).meta({
  description: 'Case identifier: `case_` and 22 base62 characters.',
  example: CASE_ID_EXAMPLE,
});

export const caseReferenceSchema = z.string().min(1).max(16).meta({
  description:
    'Human-readable case reference, unique across the service, at most 16 characters, free of easily confused characters (e.g. `PC-222-22B`). Quote it on the phone.',
  example: REFERENCE_EXAMPLE,
});

const index = z.int().min(0).max(99).meta({ description: 'Zero-based position of the case in the request array `cases`.', example: 0 });

export const fieldErrorSchema = z
  .object({
    field: z.string().meta({ description: 'The field, as a dotted path (`attestation.b2b`), or a header name.', example: 'debtorEmail' }),
    message: z.string().meta({ example: 'debtorEmail must be a valid e-mail address' }),
  })
  .meta({ id: 'FieldError', description: 'One problem with one field.' });

// ---- POST /api/v1/cases --------------------------------------------------------------------

export const rejectionCodeSchema = z.enum(REJECTION_CODES).meta({
  id: 'RejectionCode',
  description: [
    'Why a case was rejected: the first failing rule, in this order.',
    '',
    '- `INVALID_FIELD`: a field is missing, of the wrong type, too long, badly formatted, or unknown.',
    '- `ATTESTATION_FAILED`: one of `b2b`, `under10k`, `within6years`, `undisputed` is not `true`.',
    '- `AMOUNT_OUT_OF_RANGE`: `principalAmount` is not greater than 0 and at most 10,000 GBP.',
    '- `INVOICE_DATE_AFTER_DUE_DATE`: `invoiceDate` is after `dueDate`.',
    '- `DUE_DATE_NOT_PAST`: `dueDate` is not in the past (a date: before today in Europe/London).',
    '- `INVALID_FILE_KEY`: `invoiceFileKey` is not a fileKey issued to your company.',
    '- `FILE_NOT_UPLOADED`: nothing was uploaded under `invoiceFileKey` yet.',
    '- `OUT_OF_JURISDICTION`: `debtorCompanyNo` is registered outside England & Wales.',
    '- `DUPLICATE`: your company already has a case for this `invoiceRef` (or an earlier element of the same request has it).',
    '- `TEMPORARY_FAILURE`: storage failed; nothing was written for this case and resubmitting it is safe.',
    '',
    'New codes may be added within v1: treat an unknown code as a rejection to show to a person.',
  ].join('\n'),
  example: 'DUPLICATE',
});

export const createdItemSchema = z
  .object({
    index,
    invoiceRef: z.string().meta({ description: 'Echoes the input.', example: 'INV-2025-0042' }),
    id: caseIdSchema,
    reference: caseReferenceSchema,
  })
  .meta({
    id: 'CreatedItem',
    description: 'A case that was created (status `DRAFT`).',
    example: { index: 0, invoiceRef: 'INV-2025-0042', id: CASE_ID_EXAMPLE, reference: REFERENCE_EXAMPLE },
  });

export const rejectedItemSchema = z
  .object({
    index,
    invoiceRef: z
      .string()
      .nullable()
      .meta({ description: 'Echoes the input exactly as submitted; `null` when it was absent or not a string.', example: 'INV-2025-0041' }),
    code: rejectionCodeSchema,
    message: z.string().meta({ description: 'Explanatory text for a person. For `DUPLICATE` it contains the existing case reference.' }),
    errors: z.array(fieldErrorSchema).meta({ description: 'Every problem found with this case, so all can be fixed at once.' }),
    existingCaseId: caseIdSchema.optional().meta({ description: 'Only with `DUPLICATE`: the id of the case already chasing this invoice.' }),
    existingReference: caseReferenceSchema.optional().meta({ description: 'Only with `DUPLICATE`: the reference of the case already chasing this invoice.' }),
  })
  .meta({
    id: 'RejectedItem',
    description: 'A case that was not created, with the code of the first rule it failed.',
    example: {
      index: 1,
      invoiceRef: 'INV-2025-0041',
      code: 'DUPLICATE',
      message: 'invoiceRef is already being chased in case PC-222-229',
      errors: [{ field: 'invoiceRef', message: 'invoiceRef is already being chased in case PC-222-229' }],
      existingCaseId: 'case_0aB1cD2eF3gH4iJ5kL6mN7',
      existingReference: 'PC-222-229',
    },
  });

export const createCasesResponseSchema = z
  .object({
    created: z.array(createdItemSchema).meta({ description: 'Cases created, in request order.' }),
    rejected: z.array(rejectedItemSchema).meta({ description: 'Cases rejected, in request order.' }),
  })
  .meta({
    id: 'CreateCasesResponse',
    description: 'Every element of the request appears exactly once, in `created` or in `rejected`, with its `index`.',
  });

// ---- GET /api/v1/cases/{id} ----------------------------------------------------------------

export const caseViewSchema = z
  .object({
    id: caseIdSchema,
    reference: caseReferenceSchema,
    status: z.enum(['DRAFT']).meta({
      description: 'Case status. A newly created case is `DRAFT`. Further values may be added within v1: treat an unknown status as "in progress".',
    }),
    debtorName: z.string().meta({ example: 'Acme Widgets Ltd' }),
    principalAmount: z
      .string()
      .regex(/^\d+\.\d{2}$/)
      .meta({ description: 'GBP as a decimal string with two decimal places (a number in the create request).', example: '1250.50' }),
    currency: z.enum(['GBP']),
    createdAt: z.iso.datetime().meta({ description: 'ISO 8601, UTC.', example: '2025-03-04T10:20:30.000Z' }),
    updatedAt: z.iso.datetime().meta({ description: 'ISO 8601, UTC.', example: '2025-03-04T10:20:30.000Z' }),
    invoiceRef: z.string().meta({ description: 'As submitted.', example: 'INV-2025-0042' }),
    invoiceDate: z.string().meta({ description: 'As submitted (`YYYY-MM-DD` or an ISO 8601 date-time).', example: '2025-01-10' }),
    dueDate: z.string().meta({ description: 'As submitted (`YYYY-MM-DD` or an ISO 8601 date-time).', example: '2025-02-10' }),
    recoveryGate: z.enum(['AUTO_ATTESTED', 'AWAITING_CONFIRMATION']).meta({
      description:
        'What the case waits for before recovery starts: `AUTO_ATTESTED` when auto-attestation is enabled for your account, `AWAITING_CONFIRMATION` when a confirmation in your dashboard is needed.',
    }),
  })
  .meta({
    id: 'Case',
    description: 'A recovery case, as your company sees it.',
    example: {
      id: CASE_ID_EXAMPLE,
      reference: REFERENCE_EXAMPLE,
      status: 'DRAFT',
      debtorName: 'Acme Widgets Ltd',
      principalAmount: '1250.50',
      currency: 'GBP',
      createdAt: '2025-03-04T10:20:30.000Z',
      updatedAt: '2025-03-04T10:20:30.000Z',
      invoiceRef: 'INV-2025-0042',
      invoiceDate: '2025-01-10',
      dueDate: '2025-02-10',
      recoveryGate: 'AWAITING_CONFIRMATION',
    },
  });

// ---- POST /api/v1/uploads ------------------------------------------------------------------

const FILE_KEY_EXAMPLE = 'invoices/cmp_4fZ0qR8sT2uV6wXy/7Gk2mP9qR4sT8vW1xY3zA5bC7dE9fG1h.pdf';

export const fileKeySchema = z
  .string()
  .regex(/^invoices\/cmp_[0-9A-Za-z]{16}\/[0-9A-Za-z]{32}\.(pdf|png|jpg)$/)
  .meta({ description: 'Send it unchanged as `invoiceFileKey` when creating a case.', example: FILE_KEY_EXAMPLE });

export const uploadTicketSchema = z
  .object({
    fileKey: fileKeySchema,
    uploadUrl: z.url().meta({
      description: 'Presigned S3 URL for the `PUT`, valid until `expiresAt`. Use it exactly as given and treat it as a secret until it expires.',
      example: `https://partner-case-invoices.s3.eu-west-2.amazonaws.com/${FILE_KEY_EXAMPLE}?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=900&X-Amz-SignedHeaders=content-length%3Bcontent-type%3Bhost`,
    }),
    method: z.enum(['PUT']).meta({ description: 'The HTTP method for the upload.' }),
    headers: z
      .object({
        'Content-Type': z.string().meta({ description: 'The declared content type.', example: 'application/pdf' }),
        'Content-Length': z.string().regex(/^[1-9]\d*$/).meta({ description: 'The declared size in bytes.', example: '48213' }),
      })
      .meta({ description: 'Exactly the headers the `PUT` must send. Both are signed: another type or size is refused by S3.' }),
    expiresAt: z.iso.datetime().meta({ description: 'When `uploadUrl` stops working (15 minutes after issue).', example: '2025-03-04T10:35:30.000Z' }),
  })
  .meta({
    id: 'UploadTicket',
    description: 'Where and how to upload the invoice file.',
    example: {
      fileKey: FILE_KEY_EXAMPLE,
      uploadUrl: `https://partner-case-invoices.s3.eu-west-2.amazonaws.com/${FILE_KEY_EXAMPLE}?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=900&X-Amz-SignedHeaders=content-length%3Bcontent-type%3Bhost`,
      method: 'PUT',
      headers: { 'Content-Type': 'application/pdf', 'Content-Length': '48213' },
      expiresAt: '2025-03-04T10:35:30.000Z',
    },
  });

// ---- problem details (RFC 9457) ------------------------------------------------------------

/** Codes the handlers send (lib/errors.ts), then those API Gateway and WAF send in front of them. */
export const PROBLEM_CODES = [
  'UNAUTHENTICATED',
  'INSUFFICIENT_SCOPE',
  'NOT_FOUND',
  'METHOD_NOT_ALLOWED',
  'IDEMPOTENCY_KEY_REUSED',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'INVALID_REQUEST',
  'BATCH_EMPTY',
  'BATCH_TOO_LARGE',
  'INTERNAL',
  'RATE_LIMITED',
  'FORBIDDEN',
  'GATEWAY_TIMEOUT',
] as const;
export type ProblemCode = (typeof PROBLEM_CODES)[number];

export const problemCodeSchema = z.enum(PROBLEM_CODES).meta({
  id: 'ProblemCode',
  description:
    'Stable, machine-readable error code: switch on this, not on `title` or `detail`. `RATE_LIMITED`, `FORBIDDEN` and `GATEWAY_TIMEOUT` come from the gateway in front of the API. New codes may be added within v1.',
});

/** Any problem: what every error response has in common, whatever its code. */
export const problemSchema = z
  .object({
    type: z.string().meta({ format: 'uri-reference', description: 'Identifies the problem type; a URI reference relative to the API base address.', example: '/problems/not-found' }),
    title: z.string().meta({ description: 'Short summary of the problem type.', example: 'Not found' }),
    status: z.int().min(400).max(599).meta({ description: 'The HTTP status code.', example: 404 }),
    detail: z.string().meta({ description: 'What went wrong with this request, for a person.' }),
    code: problemCodeSchema,
    requestId: z.string().optional().meta({ description: 'Request id: quote it when contacting support. Absent only when the firewall answered.' }),
  })
  .meta({
    id: 'Problem',
    description: 'RFC 9457 problem details. Problems may carry further members (extension members), described with each response.',
    example: {
      type: '/problems/not-found',
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
        example: `/problems/${code.toLowerCase().replace(/_/g, '-')}`,
      }),
      title: z.string().meta({ description: 'Short summary of the problem type.', example: title }),
      status: z.literal(status).meta({ description: 'The HTTP status code.' }),
      detail: z.string().meta({ description: 'What went wrong with this request, for a person.' }),
      code: z.literal(code).meta({ description: 'Stable error code; one of `ProblemCode`.' }),
      requestId: z.string().meta({ description: 'Request id: quote it when contacting support.', example: 'c0a8012e-6f1d-4a7b-9d4e-2b7f3c1d9e10' }),
      ...extensions,
    })
    .meta({
      id,
      description,
      example: { type: `/problems/${code.toLowerCase().replace(/_/g, '-')}`, title, status, code, requestId: 'c0a8012e-6f1d-4a7b-9d4e-2b7f3c1d9e10', ...example },
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
  { requiredScope: z.enum(['cases:write', 'cases:read', 'webhooks:manage']).meta({ description: 'The scope the operation requires.', example: 'cases:write' }) },
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

export const invalidRequestProblemSchema = problem(
  'InvalidRequestProblem',
  'INVALID_REQUEST',
  400,
  'Invalid request',
  'The request as a whole is malformed (not JSON, not an object, a missing or misspelt member, a bad `Idempotency-Key`). Nothing was created and an `Idempotency-Key` was not used up.',
  { errors: z.array(fieldErrorSchema).optional().meta({ description: 'Every field problem found, when the problem is with fields.' }) },
  {
    detail: 'The upload request is invalid; see "errors" for every field to fix.',
    errors: [{ field: 'contentType', message: 'contentType must be one of application/pdf, image/png, image/jpeg' }],
  },
);

export const batchEmptyProblemSchema = problem('BatchEmptyProblem', 'BATCH_EMPTY', 400, 'Batch empty', '`cases` holds no case.', {}, { detail: '"cases" must hold at least 1 case.' });

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
  { limitBytes: z.int().optional().meta({ description: 'The body size limit in bytes (absent when the gateway refused the request).', example: 1048576 }) },
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

const idempotencyDescription =
  'The `Idempotency-Key` was already used by your company (within 24 hours). Nothing new was created, whatever the payload.';

export const idempotencyInProgressProblemSchema = problem(
  'IdempotencyKeyInProgressProblem',
  'IDEMPOTENCY_KEY_REUSED',
  409,
  'Idempotency key reused',
  `${idempotencyDescription} The first request is still being processed: retry after \`Retry-After\` seconds to receive its result.`,
  { state: z.literal('IN_PROGRESS').meta({ description: 'The first request with this key is still running.' }) },
  {
    detail: 'A request with this Idempotency-Key is still being processed; nothing new was created. Retry later to receive its result.',
    state: 'IN_PROGRESS',
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
    created: z.array(createdItemSchema).meta({ description: 'The original `created` array.' }),
    rejected: z.array(rejectedItemSchema).meta({ description: 'The original `rejected` array.' }),
  },
  {
    detail: 'This Idempotency-Key was already used; nothing new was created. The original result is included.',
    state: 'COMPLETED',
    created: [{ index: 0, invoiceRef: 'INV-2025-0042', id: CASE_ID_EXAMPLE, reference: REFERENCE_EXAMPLE }],
    rejected: [],
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
  .meta({ id: 'CreateCasesBadRequestProblem', description: 'The request as a whole was refused: nothing was created and an `Idempotency-Key` was not used up.' });

// ---- compile-time drift checks ---------------------------------------------------------------

type Exact<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const check = <T extends true>(value: T) => value;

check<Exact<z.infer<typeof createdItemSchema>, CreatedItem>>(true);
check<Exact<z.infer<typeof rejectedItemSchema>, RejectedItem>>(true);
check<Exact<z.infer<typeof caseViewSchema>, CaseView>>(true);
check<Exact<z.infer<typeof uploadTicketSchema>, UploadTicket>>(true);
check<Exact<z.infer<typeof fieldErrorSchema>, FieldError>>(true);
// Every code the handlers can throw is in the document's enum.
check<Exact<Exclude<ErrorCode, ProblemCode>, never>>(true);
