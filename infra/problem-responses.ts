import { ResponseType } from 'aws-cdk-lib/aws-apigateway';
import { PROBLEM_CONTENT_TYPE } from '../lib/http/problem-details.js';

/**
 * API Gateway answers some requests itself, before any function runs (unknown route, stage
 * throttle, WAF block, oversized request, its own failures). These gateway responses make those
 * answers the same RFC 9457 problem details the handlers send (lib/errors.ts): same media type,
 * same members, `type` as a relative URI, and API Gateway's request id.
 *
 * A gateway-response template cannot read the status code, so each response pins its own status
 * and the body repeats it. DEFAULT_4XX and DEFAULT_5XX catch every type not listed separately.
 */
export interface ProblemGatewayResponse {
  /** Construct id. */
  id: string;
  type: ResponseType;
  status: number;
  code: string;
  title: string;
  detail: string;
  /** Extra static response headers. */
  headers?: Record<string, string>;
}

const NOT_FOUND = {
  status: 404,
  code: 'NOT_FOUND',
  title: 'Not found',
  detail: 'No resource matches this method and path. Paths start with /api/v1/.',
} as const;

export const PROBLEM_GATEWAY_RESPONSES: readonly ProblemGatewayResponse[] = [
  {
    id: 'Default4xx',
    type: ResponseType.DEFAULT_4XX,
    status: 400,
    code: 'INVALID_REQUEST',
    title: 'Invalid request',
    detail: 'The request could not be accepted.',
  },
  // API Gateway reports an unknown path, or a method a path does not have, as a missing
  // authentication token (it assumes an IAM-signed call was meant). It is a 404 to a partner.
  { id: 'MissingAuthenticationToken', type: ResponseType.MISSING_AUTHENTICATION_TOKEN, ...NOT_FOUND },
  { id: 'ResourceNotFound', type: ResponseType.RESOURCE_NOT_FOUND, ...NOT_FOUND },
  // No method uses IAM authorisation, so signature errors only arise when API Gateway tries to read
  // "Authorization: Bearer ..." as a SigV4 header on an unmatched route: also a 404.
  { id: 'InvalidSignature', type: ResponseType.INVALID_SIGNATURE, ...NOT_FOUND },
  { id: 'ExpiredToken', type: ResponseType.EXPIRED_TOKEN, ...NOT_FOUND },
  {
    id: 'Throttled',
    type: ResponseType.THROTTLED,
    status: 429,
    code: 'RATE_LIMITED',
    title: 'Too many requests',
    detail: 'The request rate limit was exceeded. Retry after a short delay, with backoff.',
    headers: { 'Retry-After': '1' },
  },
  {
    id: 'QuotaExceeded',
    type: ResponseType.QUOTA_EXCEEDED,
    status: 429,
    code: 'RATE_LIMITED',
    title: 'Too many requests',
    detail: 'The request quota was exceeded. Retry later.',
    headers: { 'Retry-After': '60' },
  },
  {
    id: 'WafFiltered',
    type: ResponseType.WAF_FILTERED,
    status: 403,
    code: 'FORBIDDEN',
    title: 'Forbidden',
    detail: 'The request was blocked by the web application firewall.',
  },
  {
    id: 'RequestTooLarge',
    type: ResponseType.REQUEST_TOO_LARGE,
    status: 413,
    code: 'PAYLOAD_TOO_LARGE',
    title: 'Payload too large',
    detail: 'The request is larger than the API accepts.',
  },
  {
    id: 'UnsupportedMediaType',
    type: ResponseType.UNSUPPORTED_MEDIA_TYPE,
    status: 415,
    code: 'UNSUPPORTED_MEDIA_TYPE',
    title: 'Unsupported media type',
    detail: 'The request body must be JSON, sent with "Content-Type: application/json".',
  },
  {
    id: 'Default5xx',
    type: ResponseType.DEFAULT_5XX,
    status: 500,
    code: 'INTERNAL',
    title: 'Internal error',
    detail: 'The request could not be completed. It is safe to retry; quote the requestId if it keeps failing.',
  },
];

/** `/problems/not-found` for NOT_FOUND, as lib/errors.ts builds them. */
export function problemTypeUri(code: string): string {
  return `/problems/${code.toLowerCase().replace(/_/g, '-')}`;
}

/** The mapping template: a JSON body whose requestId API Gateway fills in. */
export function problemTemplate(response: ProblemGatewayResponse): string {
  return JSON.stringify({
    type: problemTypeUri(response.code),
    title: response.title,
    status: response.status,
    detail: response.detail,
    code: response.code,
    requestId: '$context.requestId',
  });
}

/** Header values are quoted: API Gateway reads unquoted values as request-parameter references. */
export function problemHeaders(response: ProblemGatewayResponse): Record<string, string> {
  const headers: Record<string, string> = {
    'Content-Type': PROBLEM_CONTENT_TYPE,
    'Cache-Control': 'no-store',
    ...response.headers,
  };
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, `'${value}'`]));
}
