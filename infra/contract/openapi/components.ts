import type { ResponseConfig, RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import type { Scope } from '../../../lib/auth/scopes.js';
import type { ErrorCode } from '../../../lib/errors.js';
import { IDEMPOTENCY_KEY_PATTERN } from '../../../lib/http/batch-envelope.js';
import { MAX_BODY_BYTES } from '../../../lib/http/json-envelope.js';
import { statusOf } from '../../../lib/http/problem-details.js';
import {
  insufficientScopeProblemSchema,
  internalProblemSchema,
  invalidRequestProblemSchema,
  payloadTooLargeProblemSchema,
  problemSchema,
  rateLimitedProblemSchema,
  serviceUnavailableProblemSchema,
  unauthenticatedProblemSchema,
  unsupportedMediaTypeProblemSchema,
  type ProblemCode,
} from '../../../lib/http/response-schemas.js';
import { DEFAULT_STACK_CONFIG } from '../stack-config.js';

/**
 * What every resource's operations share (infra/contract/openapi/*.ts): the response helpers, the
 * error block built from an operation's problem codes, query parameters from a handler's zod
 * schema, and the security schemes.
 */

export const mebibytes = (bytes: number) => `${bytes / (1024 * 1024)} MiB`;
export const IDEMPOTENCY_HOURS = DEFAULT_STACK_CONFIG.idempotencyTtlSeconds / 3600;

type Examples = Record<string, { summary: string; value: unknown }>;
type HeaderDocs = Record<string, { required?: boolean; description: string; schema: Record<string, unknown> }>;

const cacheControl = { description: 'Always `no-store`.', schema: { type: 'string', enum: ['no-store'] } };
const retryAfter = (description: string, required = true) => ({
  'Retry-After': { required, description, schema: { type: 'string', pattern: '^[0-9]+$' } },
});

export const responseHeaders = (headers: HeaderDocs = {}) =>
  ({ 'Cache-Control': cacheControl, ...headers }) as unknown as ResponseConfig['headers'];

export function problem(description: string, schema: z.ZodType, headers: HeaderDocs = {}, examples?: Examples): ResponseConfig {
  return {
    description,
    headers: responseHeaders(headers),
    content: { 'application/problem+json': { schema, ...(examples ? { examples } : {}) } },
  };
}

/** A JSON request body (required unless said otherwise). */
export function jsonBody(schema: z.ZodType, examples?: Examples, required = true): RouteConfig['request'] {
  return { body: { required, content: { 'application/json': { schema, ...(examples ? { examples } : {}) } } } };
}

export function json(description: string, schema: z.ZodType, examples?: Examples): ResponseConfig {
  return { description, headers: responseHeaders(), content: { 'application/json': { schema, ...(examples ? { examples } : {}) } } };
}

/** The example a schema carries in its `.meta()`. */
export function example(schema: z.ZodType): Record<string, unknown> {
  return (z.globalRegistry.get(schema)?.example ?? {}) as Record<string, unknown>;
}

/**
 * Adds JSON Schema keywords and descriptions to fields of a handler's schema, by name only. The
 * request schemas are the handlers' own; refinements (lengths counted in code points, "not blank",
 * real dates, patterns checked in code) cannot be seen by the generator, so the matching keywords
 * are stated here, field by field, and tests hold them to the handlers at their boundaries.
 */
export function documented<S extends Record<string, z.ZodType>>(
  shape: S,
  docs: { [K in keyof S]?: Record<string, unknown> },
): Record<string, z.ZodType> {
  const out: Record<string, z.ZodType> = {};
  for (const [name, docsOfField] of Object.entries(docs)) {
    const field = shape[name];
    if (!field) throw new Error(`documented(): no field "${name}" in the schema`);
    out[name] = field.meta(docsOfField as Record<string, unknown>);
  }
  return out;
}

/** The value of an `INVALID_REQUEST` example with these field errors. */
export function invalidRequestExample(detail: string, errors: { field: string; message: string }[]): Record<string, unknown> {
  return { ...example(invalidRequestProblemSchema), detail, errors };
}

function forbidden(scope: Scope): ResponseConfig {
  const detail = `This API key does not hold the scope "${scope}" that this operation requires.`;
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
        value: { ...example(insufficientScopeProblemSchema), requiredScope: scope, detail },
      },
    },
  );
}

/** The answer an operation gives for a code unless it describes its own. */
const STANDARD_PROBLEMS: Partial<Record<ProblemCode, ResponseConfig>> = {
  UNAUTHENTICATED: problem('No API key, or a malformed, unknown or revoked one.', unauthenticatedProblemSchema, {
    'WWW-Authenticate': {
      required: true,
      description: 'The authentication scheme: `Bearer realm="partner-case-api"`.',
      schema: { type: 'string' },
    },
  }),
  INVALID_REQUEST: problem('The body breaks the rules; `errors` lists every problem.', invalidRequestProblemSchema),
  PAYLOAD_TOO_LARGE: problem(
    `The request body is over ${MAX_BODY_BYTES} bytes (${mebibytes(MAX_BODY_BYTES)}).`,
    payloadTooLargeProblemSchema,
  ),
  UNSUPPORTED_MEDIA_TYPE: problem('The request body was not sent as `application/json`.', unsupportedMediaTypeProblemSchema),
  RATE_LIMITED: problem(
    'A rate limit of the gateway was exceeded.',
    rateLimitedProblemSchema,
    retryAfter('Seconds to wait before retrying.'),
  ),
  INTERNAL: problem('An unexpected failure. Safe to retry; quote the `requestId` if it persists.', internalProblemSchema),
  SERVICE_UNAVAILABLE: problem(
    'Storage could not answer in time; nothing was written. Retry after `Retry-After` seconds.',
    serviceUnavailableProblemSchema,
    retryAfter('Seconds to wait before retrying.'),
  ),
};

const OTHER_PROBLEM = problem(
  'Any other error (for example `404 NOT_FOUND` from the gateway for an unknown route): problem details with a `code`.',
  problemSchema,
);

/** What every partner operation may answer, whatever it does. */
const EVERY_OPERATION: readonly ProblemCode[] = ['UNAUTHENTICATED', 'INSUFFICIENT_SCOPE', 'RATE_LIMITED', 'INTERNAL'];

/** Every operation with a JSON body answers these before reading it. */
export const BODY_PROBLEMS = ['PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'] as const satisfies readonly ProblemCode[];

const statusOfProblem = (code: ProblemCode) =>
  code === 'RATE_LIMITED' ? 429 : code === 'GATEWAY_TIMEOUT' ? 504 : statusOf(code as ErrorCode);

/**
 * An operation's error responses, from the problem codes it answers with: the standard response
 * for each code, unless the operation describes the status itself (`own`, keyed by status: codes
 * sharing a status, such as `INVALID_REQUEST` and `INVALID_CURSOR`, share one response).
 */
export function errorResponses(
  scope: Scope,
  codes: readonly ProblemCode[],
  own: Partial<Record<number, ResponseConfig>> = {},
): Record<string, ResponseConfig> {
  const responses: Record<string, ResponseConfig> = {};
  for (const code of [...EVERY_OPERATION, ...codes]) {
    const status = statusOfProblem(code);
    const response = own[status] ?? (code === 'INSUFFICIENT_SCOPE' ? forbidden(scope) : STANDARD_PROBLEMS[code]);
    if (!response) throw new Error(`errorResponses(): describe the ${status} response of ${code}`);
    responses[status] = response;
  }
  for (const status of Object.keys(own)) {
    if (!responses[status]) throw new Error(`errorResponses(): a ${status} response is described but no problem code has it`);
  }
  return { ...responses, default: OTHER_PROBLEM };
}

/** A parameter as the document states it. */
export interface ParameterObject {
  name: string;
  in: 'query' | 'path' | 'header';
  required: boolean;
  description: string;
  schema: Record<string, unknown>;
  example?: unknown;
}

/** The per-operation detail each resource file gives; method, path, id, scope and summary come from the route manifest. */
export interface OperationDoc {
  tag: string;
  description: string;
  parameters?: (ParameterObject | { $ref: string })[];
  request?: RouteConfig['request'];
  /** The 2xx responses. */
  responses: Record<number, ResponseConfig>;
  /** The problem codes it answers with besides authentication, scope, rate limiting and internal errors. */
  problems: readonly ProblemCode[];
  /** Its own description of an error status, where the standard one would say too little. */
  problemResponses?: Partial<Record<number, ResponseConfig>>;
}

export interface ParameterDocs {
  description: string;
  example?: unknown;
  /** JSON Schema keywords the handler's refinements enforce but the generator cannot see. */
  schema?: Record<string, unknown>;
}

/**
 * Query parameters from the handler's own zod schema: one per member, in its order, each with its
 * JSON Schema (input side) plus the keywords its refinements enforce. A member without docs, or
 * docs for a member the schema does not have, throws: the document lists exactly the parameters
 * the handler accepts.
 */
export function queryParameters<S extends z.ZodRawShape>(
  schema: z.ZodObject<S>,
  docs: { [K in keyof S]: ParameterDocs },
): ParameterObject[] {
  const names = Object.keys(schema.shape);
  const documented = Object.keys(docs);
  if (names.join() !== documented.join()) throw new Error(`queryParameters(): document ${names.join(', ')} (got ${documented.join(', ')})`);
  return names.map((name) => {
    const field = schema.shape[name] as z.ZodType;
    const { description, example: exampleValue, schema: keywords } = docs[name as keyof S];
    const { $schema: _, ...generated } = z.toJSONSchema(field, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
    return {
      name,
      in: 'query' as const,
      required: !field.isOptional(),
      description,
      schema: { ...generated, ...keywords },
      ...(exampleValue === undefined ? {} : { example: exampleValue }),
    };
  });
}

/** A resource's `{id}` path parameter. */
export function idParameter(description: string, pattern: RegExp, exampleValue: string): ParameterObject {
  return {
    name: 'id',
    in: 'path',
    required: true,
    description,
    schema: { type: 'string', pattern: pattern.source },
    example: exampleValue,
  };
}

export const CURSOR_EXAMPLE = 'AZ3q0b5mTqV8Xc1k9Yw2Lr7N4pGhS6dEfJ0uBvWxYz1aCqRtUiOpLkJhGfDsA';

export const IDEMPOTENCY_KEY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description: `Recommended. A key you choose per batch, 1 to 255 visible ASCII characters (0x21-0x7E); the quoted form \`"abc"\` means \`abc\`. Scoped to your company and kept for ${IDEMPOTENCY_HOURS} hours: a repeat gets \`409 IDEMPOTENCY_KEY_REUSED\` and creates nothing. A request refused with 400, 413 or 415 does not use the key up.`,
  schema: { type: 'string', minLength: 1, pattern: IDEMPOTENCY_KEY_PATTERN.source },
  example: 'batch-2025-03-04-001',
} as const satisfies ParameterObject;

export const SECURITY_SCHEMES = {
  bearerAuth: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'pca_<key id>_<secret><checksum>',
    description: 'Your API key as a bearer token: `Authorization: Bearer <key>`.',
  },
  apiKeyHeader: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Api-Key',
    description: 'Your API key in the `X-Api-Key` header. If `Authorization` is sent too, both must carry the same key.',
  },
} as const;
