import type { MiddlewareObj } from '@middy/core';
import { CodedError, InvalidRequestError, type ErrorCode } from '../errors.js';
import { logger } from '../runtime/logger.js';
import type { ApiContext, ApiEvent, ApiResult } from './types.js';

/**
 * The one mapper from errors to HTTP: every CodedError becomes RFC 9457 problem details with the
 * status and title its code has here; anything else becomes a bare 500 `INTERNAL`, its detail
 * logged server-side only. Domain code throws codes, never statuses.
 */
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

const PROBLEMS: Readonly<Record<ErrorCode, { status: number; title: string }>> = {
  UNAUTHENTICATED: { status: 401, title: 'Unauthenticated' },
  INSUFFICIENT_SCOPE: { status: 403, title: 'Insufficient scope' },
  FORBIDDEN: { status: 403, title: 'Forbidden' },
  NOT_FOUND: { status: 404, title: 'Not found' },
  METHOD_NOT_ALLOWED: { status: 405, title: 'Method not allowed' },
  IDEMPOTENCY_KEY_REUSED: { status: 409, title: 'Idempotency key reused' },
  PAYLOAD_TOO_LARGE: { status: 413, title: 'Payload too large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Unsupported media type' },
  INVALID_REQUEST: { status: 400, title: 'Invalid request' },
  INVALID_CURSOR: { status: 400, title: 'Invalid cursor' },
  BATCH_EMPTY: { status: 400, title: 'Batch empty' },
  BATCH_TOO_LARGE: { status: 400, title: 'Batch too large' },
  WEBHOOK_ENDPOINT_LIMIT_REACHED: { status: 409, title: 'Webhook endpoint limit reached' },
  WEBHOOK_ENDPOINT_DISABLED: { status: 409, title: 'Webhook endpoint disabled' },
  CASE_NOT_OPEN: { status: 409, title: 'Case not open' },
  INVALID_TRANSITION: { status: 409, title: 'Invalid transition' },
  PAYMENT_EXCEEDS_OUTSTANDING: { status: 409, title: 'Payment exceeds outstanding' },
  PAYMENT_LIMIT_REACHED: { status: 409, title: 'Payment limit reached' },
  INTERNAL: { status: 500, title: 'Internal error' },
  SERVICE_UNAVAILABLE: { status: 503, title: 'Service unavailable' },
};

const REALM = 'Bearer realm="partner-case-api"';

/** Errors that exist only at the HTTP edge, with the response headers they need. */
export class HttpError extends CodedError {
  constructor(
    code: ErrorCode,
    detail: string,
    readonly headers: Record<string, string> = {},
    extensions: Record<string, unknown> = {},
  ) {
    super(code, detail, { extensions });
  }
}

export class PayloadTooLargeError extends HttpError {
  constructor(limitBytes: number) {
    super('PAYLOAD_TOO_LARGE', `The request body exceeds the limit of ${limitBytes} bytes.`, {}, { limitBytes });
  }
}

export class UnsupportedMediaTypeError extends HttpError {
  constructor(detail = 'The request body must be JSON, sent with "Content-Type: application/json".') {
    super('UNSUPPORTED_MEDIA_TYPE', detail);
  }
}

export class InternalError extends HttpError {
  constructor() {
    super('INTERNAL', 'The request could not be completed. It is safe to retry; quote the requestId if it keeps failing.');
  }
}

export function statusOf(code: ErrorCode): number {
  return PROBLEMS[code].status;
}

/**
 * Problem `type` URIs are relative references resolved against the API's base address: the one
 * formula for every problem, whether a handler, the gateway, the firewall or the OpenAPI examples send it.
 */
export function problemType(code: string): string {
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

export function toProblemDetails(error: CodedError, requestId: string): ProblemDetails {
  const { status, title } = PROBLEMS[error.code];
  const standard: ProblemDetails = { type: problemType(error.code), title, status, detail: error.detail, code: error.code, requestId };
  // Extension members follow the standard ones and can never replace them.
  for (const [name, value] of Object.entries(error.extensions)) {
    if (!(name in standard)) standard[name] = value;
  }
  return standard;
}

/** The response headers a code implies (RFC 6750 challenges, Retry-After), plus an edge error's own. */
function headersOf(error: CodedError): Record<string, string> {
  const headers: Record<string, string> = {};
  if (error.code === 'UNAUTHENTICATED') headers['WWW-Authenticate'] = REALM;
  if (error.code === 'INSUFFICIENT_SCOPE') {
    headers['WWW-Authenticate'] = `${REALM}, error="insufficient_scope", scope="${String(error.extensions.requiredScope)}"`;
  }
  if (error.retryAfterSeconds !== undefined) headers['Retry-After'] = String(error.retryAfterSeconds);
  return error instanceof HttpError ? { ...headers, ...error.headers } : headers;
}

export function problemResponse(error: CodedError, requestId: string): ApiResult {
  return {
    statusCode: statusOf(error.code),
    headers: { 'Content-Type': PROBLEM_CONTENT_TYPE, 'Cache-Control': 'no-store', ...headersOf(error) },
    body: JSON.stringify(toProblemDetails(error, requestId)),
  };
}

function isMiddyJsonParserError(error: unknown): boolean {
  const cause = (error as { cause?: { package?: string } } | undefined)?.cause;
  return cause?.package === '@middy/http-json-body-parser';
}

/** Maps anything thrown to the coded error it represents; unknown errors become INTERNAL. */
export function toCodedError(error: unknown): CodedError {
  if (error instanceof CodedError) return error;
  // The envelope middleware has already enforced the content type, so the JSON parser can only
  // fail here because the text is not JSON.
  if (isMiddyJsonParserError(error)) return new InvalidRequestError('The request body is not valid JSON.');
  return new InternalError();
}

/** The error middleware of every route: registered last, so it sees whatever was thrown. */
export function problemDetails(): MiddlewareObj<ApiEvent, ApiResult, Error, ApiContext> {
  return {
    onError: (request) => {
      const coded = toCodedError(request.error);
      if (statusOf(coded.code) >= 500) {
        logger.error('request failed', { error: request.error as Error });
      } else {
        request.context.logFields.errorCode = coded.code;
      }
      request.response = problemResponse(coded, request.context.requestId ?? 'unknown');
    },
  };
}
