import type { APIGatewayProxyResult } from 'aws-lambda';

/**
 * Every HTTP-level failure is one of these classes. Each carries a stable UPPER_SNAKE `code` that
 * partners switch on; the one error middleware (`lib/middleware/problem-details.ts`) turns them
 * into RFC 9457 problem details. Anything that is not an ApiError becomes a bare 500 `INTERNAL`.
 */
export type ErrorCode =
  | 'UNAUTHENTICATED'
  | 'INSUFFICIENT_SCOPE'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'IDEMPOTENCY_KEY_REUSED'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'INVALID_REQUEST'
  | 'BATCH_EMPTY'
  | 'BATCH_TOO_LARGE'
  | 'INTERNAL';

export interface FieldError {
  field: string;
  message: string;
}

/**
 * At most this many unknown fields are named in an `errors` list; the last entry says how many
 * more there were. Naming every one let 1 MiB of short unknown keys come back as ~7 MB of
 * `errors`, more than a Lambda response may hold (6 MB), which API Gateway turns into a 5xx.
 */
export const MAX_LISTED_UNKNOWN_FIELDS = 20;

/** One `errors` entry per unknown field, capped at MAX_LISTED_UNKNOWN_FIELDS. */
export function unknownFieldErrors(fields: readonly string[], message: (field: string) => string): FieldError[] {
  const listed = fields.slice(0, MAX_LISTED_UNKNOWN_FIELDS);
  const rest = fields.length - listed.length;
  return listed.map((field, i) => ({
    field,
    message: message(field) + (i === listed.length - 1 && rest > 0 ? ` (and ${rest} more unknown fields not listed)` : ''),
  }));
}

export interface ApiErrorOptions {
  /** Additive members of the problem body (RFC 9457 "extension members"). */
  extensions?: Record<string, unknown>;
  headers?: Record<string, string>;
}

export class ApiError extends Error {
  readonly extensions: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(
    readonly code: ErrorCode,
    readonly status: number,
    readonly title: string,
    readonly detail: string,
    options: ApiErrorOptions = {},
  ) {
    super(detail);
    this.name = new.target.name;
    this.extensions = options.extensions ?? {};
    this.headers = options.headers ?? {};
  }
}

export class UnauthenticatedError extends ApiError {
  constructor() {
    // One identical body for missing, malformed, unknown and revoked keys: the caller must not be
    // able to tell which it was.
    super('UNAUTHENTICATED', 401, 'Unauthenticated', 'A valid API key is required: send it as "Authorization: Bearer <key>" or "X-Api-Key: <key>".', {
      headers: { 'WWW-Authenticate': 'Bearer realm="partner-case-api"' },
    });
  }
}

export class InsufficientScopeError extends ApiError {
  constructor(requiredScope: string) {
    super('INSUFFICIENT_SCOPE', 403, 'Insufficient scope', `This API key does not hold the scope "${requiredScope}" that this operation requires.`, {
      extensions: { requiredScope },
      headers: { 'WWW-Authenticate': `Bearer realm="partner-case-api", error="insufficient_scope", scope="${requiredScope}"` },
    });
  }
}

export class NotFoundError extends ApiError {
  constructor(detail = 'The requested resource does not exist.') {
    super('NOT_FOUND', 404, 'Not found', detail);
  }
}

export class MethodNotAllowedError extends ApiError {
  constructor(allowed: readonly string[]) {
    super('METHOD_NOT_ALLOWED', 405, 'Method not allowed', `This resource supports: ${allowed.join(', ')}.`, {
      headers: { Allow: allowed.join(', ') },
    });
  }
}

export class PayloadTooLargeError extends ApiError {
  constructor(limitBytes: number) {
    super('PAYLOAD_TOO_LARGE', 413, 'Payload too large', `The request body exceeds the limit of ${limitBytes} bytes.`, {
      extensions: { limitBytes },
    });
  }
}

export class UnsupportedMediaTypeError extends ApiError {
  constructor() {
    super('UNSUPPORTED_MEDIA_TYPE', 415, 'Unsupported media type', 'The request body must be JSON, sent with "Content-Type: application/json".');
  }
}

export class InvalidRequestError extends ApiError {
  constructor(detail: string, errors?: FieldError[]) {
    super('INVALID_REQUEST', 400, 'Invalid request', detail, errors ? { extensions: { errors } } : {});
  }
}

export class BatchEmptyError extends ApiError {
  constructor() {
    super('BATCH_EMPTY', 400, 'Batch empty', '"cases" must hold at least 1 case.');
  }
}

export class BatchTooLargeError extends ApiError {
  constructor(count: number, max: number) {
    super('BATCH_TOO_LARGE', 400, 'Batch too large', `"cases" holds ${count} cases; at most ${max} are accepted per request.`, {
      extensions: { maxCases: max, receivedCases: count },
    });
  }
}

export type IdempotencyState = 'IN_PROGRESS' | 'COMPLETED';

export class IdempotencyKeyReusedError extends ApiError {
  constructor(state: IdempotencyState, original?: { created: unknown[]; rejected: unknown[] }, retryAfterSeconds = 2) {
    super(
      'IDEMPOTENCY_KEY_REUSED',
      409,
      'Idempotency key reused',
      state === 'COMPLETED'
        ? 'This Idempotency-Key was already used; nothing new was created. The original result is included.'
        : 'A request with this Idempotency-Key is still being processed; nothing new was created. Retry later to receive its result.',
      {
        extensions: state === 'COMPLETED' && original ? { state, created: original.created, rejected: original.rejected } : { state },
        headers: state === 'IN_PROGRESS' ? { 'Retry-After': String(retryAfterSeconds) } : {},
      },
    );
  }
}

export class InternalError extends ApiError {
  constructor() {
    super('INTERNAL', 500, 'Internal error', 'The request could not be completed. It is safe to retry; quote the requestId if it keeps failing.');
  }
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** Problem `type` URIs are relative references resolved against the API's base address. */
export function problemType(code: ErrorCode): string {
  return `/problems/${code.toLowerCase().replace(/_/g, '-')}`;
}

export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  requestId: string;
  [extension: string]: unknown;
}

export function toProblemDetails(error: ApiError, requestId: string): ProblemDetails {
  const standard: ProblemDetails = {
    type: problemType(error.code),
    title: error.title,
    status: error.status,
    detail: error.detail,
    code: error.code,
    requestId,
  };
  // Extension members follow the standard ones and can never replace them.
  for (const [name, value] of Object.entries(error.extensions)) {
    if (!(name in standard)) standard[name] = value;
  }
  return standard;
}

export function problemResponse(error: ApiError, requestId: string): APIGatewayProxyResult {
  return {
    statusCode: error.status,
    headers: { 'Content-Type': PROBLEM_CONTENT_TYPE, 'Cache-Control': 'no-store', ...error.headers },
    body: JSON.stringify(toProblemDetails(error, requestId)),
  };
}
