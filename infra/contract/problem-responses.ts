import type { APIGatewayProxyResult } from 'aws-lambda';
import { PROBLEM_CONTENT_TYPE, problemType } from '../../lib/http/problem-details.js';

/**
 * API Gateway answers some requests itself, before or instead of a function (unknown path, a
 * method the path does not have, stage throttle, WAF block, oversized request, a function that
 * failed or did not answer in time). These answers are the same RFC 9457 problem details the
 * handlers send (lib/http/problem-details.ts `toProblemDetails`): same media type, same members in the same
 * order, `type` as a relative URI, and API Gateway's request id. The stack turns them into gateway
 * responses and mock integrations (infra/stack/http-api.ts); the local server (`npm start`) and
 * `npm run invoke` send exactly the same bodies, from the same definitions. Plain data: the local
 * tools load this without the CDK.
 */
export interface ProblemGatewayResponse {
  /** Construct id. */
  id: string;
  /** API Gateway's response type as its API names it (the stack's `ResponseType.of`; a test holds each to the CDK's list). */
  type: GatewayResponseType;
  /**
   * The status API Gateway answers with. Left undefined where API Gateway decides it and the
   * template cannot know it (a gateway-response template has no variable for the status): the
   * response then keeps API Gateway's own status and the body carries no `status` member, rather
   * than a wrong one.
   */
  status?: number;
  code: string;
  title: string;
  detail: string;
  /** Extra static response headers. */
  headers?: Record<string, string>;
}

/** The API Gateway response types this API answers with problem details. */
export type GatewayResponseType =
  | 'DEFAULT_4XX'
  | 'DEFAULT_5XX'
  | 'MISSING_AUTHENTICATION_TOKEN'
  | 'RESOURCE_NOT_FOUND'
  | 'INVALID_SIGNATURE'
  | 'EXPIRED_TOKEN'
  | 'ACCESS_DENIED'
  | 'THROTTLED'
  | 'QUOTA_EXCEEDED'
  | 'WAF_FILTERED'
  | 'REQUEST_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'INTEGRATION_TIMEOUT';

const NOT_FOUND = {
  status: 404,
  code: 'NOT_FOUND',
  title: 'Not found',
  detail: 'No resource matches this path. Paths start with /api/v1/.',
} as const;

/** API Gateway refused an AWS_IAM request (problem-responses above). */
const IAM_REFUSED = { status: 403, code: 'FORBIDDEN', title: 'Forbidden' } as const;
const IAM_ADVICE =
  'Internal routes (/internal/v1/) take AWS IAM signatures only (docs/internal-api.md); partner routes start with /api/v1/ and take an API key.';

/**
 * Retrying after a 5xx is safe: POST /api/v1/cases replays its first answer for the same
 * Idempotency-Key, and a repeated upload request only issues another URL.
 */
const RETRY_ADVICE =
  'The request may or may not have taken effect: retry it (with the same Idempotency-Key for POST /api/v1/cases), and quote the requestId if it keeps failing.';

export const PROBLEM_GATEWAY_RESPONSES: readonly ProblemGatewayResponse[] = [
  {
    id: 'Default4xx',
    type: 'DEFAULT_4XX',
    status: 400,
    code: 'INVALID_REQUEST',
    title: 'Invalid request',
    detail: 'The request could not be accepted.',
  },
  // API Gateway reports an unknown path as a missing authentication token (it assumes an
  // IAM-signed call was meant). It is a 404 to a partner. A known path with another method is a
  // 405 from the path's mock method (http-api.ts, METHOD_NOT_ALLOWED_RESPONSE below).
  { id: 'MissingAuthenticationToken', type: 'MISSING_AUTHENTICATION_TOKEN', ...NOT_FOUND },
  { id: 'ResourceNotFound', type: 'RESOURCE_NOT_FOUND', ...NOT_FOUND },
  // The internal routes (AWS_IAM, route-table.ts) are the only methods API Gateway authorises
  // itself. An unsigned request to one is a MISSING_AUTHENTICATION_TOKEN like an unknown path (one
  // status per type for the whole API): a 404, so the route stays invisible to unsigned callers.
  // A signature API Gateway refuses (malformed, such as a partner's "Authorization: Bearer ...";
  // wrong; expired; or a principal IAM does not allow) is a 403. API Gateway also reads a Bearer
  // header as a malformed signature on an unmatched path, which then answers this 403 too.
  {
    id: 'InvalidSignature',
    type: 'INVALID_SIGNATURE',
    ...IAM_REFUSED,
    detail: `The Authorization header is not a valid AWS SigV4 signature for this request. ${IAM_ADVICE}`,
  },
  {
    id: 'ExpiredToken',
    type: 'EXPIRED_TOKEN',
    ...IAM_REFUSED,
    detail: `The AWS signature or security token has expired (a signature is valid for 15 minutes). ${IAM_ADVICE}`,
  },
  {
    id: 'AccessDenied',
    type: 'ACCESS_DENIED',
    ...IAM_REFUSED,
    detail: `The signing AWS principal is not allowed to invoke this route (execute-api:Invoke). ${IAM_ADVICE}`,
  },
  {
    id: 'Throttled',
    type: 'THROTTLED',
    status: 429,
    code: 'RATE_LIMITED',
    title: 'Too many requests',
    detail: 'The request rate limit was exceeded. Retry after a short delay, with backoff.',
    headers: { 'Retry-After': '1' },
  },
  {
    id: 'QuotaExceeded',
    type: 'QUOTA_EXCEEDED',
    status: 429,
    code: 'RATE_LIMITED',
    title: 'Too many requests',
    detail: 'The request quota was exceeded. Retry later.',
    headers: { 'Retry-After': '60' },
  },
  {
    id: 'WafFiltered',
    type: 'WAF_FILTERED',
    status: 403,
    code: 'FORBIDDEN',
    title: 'Forbidden',
    detail: 'The request was blocked by the web application firewall.',
  },
  {
    id: 'RequestTooLarge',
    type: 'REQUEST_TOO_LARGE',
    status: 413,
    code: 'PAYLOAD_TOO_LARGE',
    title: 'Payload too large',
    detail: 'The request is larger than the API accepts.',
  },
  {
    id: 'UnsupportedMediaType',
    type: 'UNSUPPORTED_MEDIA_TYPE',
    status: 415,
    code: 'UNSUPPORTED_MEDIA_TYPE',
    title: 'Unsupported media type',
    detail: 'The request body must be JSON, sent with "Content-Type: application/json".',
  },
  // The function did not answer within API Gateway's 29 s: always a 504.
  {
    id: 'IntegrationTimeout',
    type: 'INTEGRATION_TIMEOUT',
    status: 504,
    code: 'GATEWAY_TIMEOUT',
    title: 'Gateway timeout',
    detail: `The API did not answer in time. ${RETRY_ADVICE}`,
  },
  // Every other 5XX keeps the status API Gateway gives it, because it is not one fixed value:
  // a function that throws, returns a malformed result or overruns its own timeout (inside the
  // 29 s) is a 502; API Gateway's documented defaults for INTEGRATION_FAILURE (504) and
  // API_CONFIGURATION_ERROR (500) are not what it answers in every case (an AWS_PROXY integration
  // failure is observed as 500, a malformed proxy result is a "configuration error" answered 502).
  // Pinning a status here would also change every unlisted 5XX to it (DEFAULT_5XX's status
  // applies to all of them), as it once turned the 504 above into a 500.
  {
    id: 'Default5xx',
    type: 'DEFAULT_5XX',
    code: 'INTERNAL',
    title: 'Internal error',
    detail: `The request could not be completed. ${RETRY_ADVICE}`,
  },
];

/**
 * A known path with a method it does not have: each routed resource gets an ANY method with a
 * mock integration that answers this (API Gateway matches ANY only for methods not declared on
 * the resource). `Allow` is added per resource.
 */
export const METHOD_NOT_ALLOWED_RESPONSE = {
  status: 405,
  code: 'METHOD_NOT_ALLOWED',
  title: 'Method not allowed',
  detail: 'This path does not support this method; the Allow header lists the methods it supports.',
} as const;

/** The gateway response of an API Gateway response type, e.g. `INTEGRATION_TIMEOUT`. */
export function gatewayResponse(type: string): ProblemGatewayResponse {
  const found = PROBLEM_GATEWAY_RESPONSES.find((r) => r.type === type);
  if (!found) throw new Error(`no gateway response is defined for ${type}`);
  return found;
}

type ProblemSpec = Pick<ProblemGatewayResponse, 'status' | 'code' | 'title' | 'detail'>;

/** The body, member for member as `toProblemDetails` (lib/http/problem-details.ts) orders them. */
export function gatewayProblem(response: ProblemSpec, requestId: string): Record<string, unknown> {
  return {
    type: problemType(response.code),
    title: response.title,
    ...(response.status === undefined ? {} : { status: response.status }),
    detail: response.detail,
    code: response.code,
    requestId,
  };
}

/** The mapping template: a JSON body whose requestId API Gateway fills in. */
export function problemTemplate(response: ProblemSpec): string {
  return JSON.stringify(gatewayProblem(response, '$context.requestId'));
}

/** The response headers, as sent. */
export function problemHeaderValues(response: Pick<ProblemGatewayResponse, 'headers'>): Record<string, string> {
  return { 'Content-Type': PROBLEM_CONTENT_TYPE, 'Cache-Control': 'no-store', ...response.headers };
}

/** Header values are quoted: API Gateway reads unquoted values as request-parameter references. */
export function problemHeaders(response: Pick<ProblemGatewayResponse, 'headers'>): Record<string, string> {
  return Object.fromEntries(Object.entries(problemHeaderValues(response)).map(([name, value]) => [name, `'${value}'`]));
}

/**
 * The answer the local tools send where API Gateway would send this response. `status` is the
 * status API Gateway would answer with, needed where the response does not pin one.
 */
export function gatewayProblemResult(
  response: ProblemSpec & Pick<ProblemGatewayResponse, 'headers'>,
  requestId: string,
  options: { status?: number; headers?: Record<string, string> } = {},
): APIGatewayProxyResult {
  const statusCode = response.status ?? options.status;
  if (statusCode === undefined) throw new Error(`the response ${response.code} pins no status: say which one API Gateway would send`);
  return {
    statusCode,
    headers: { ...problemHeaderValues(response), ...options.headers },
    body: JSON.stringify(gatewayProblem(response, requestId)),
  };
}
