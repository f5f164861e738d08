import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy, { type MiddlewareObj } from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import { KeyAuthenticator } from '../auth/authenticate-key.js';
import type { ApiKeyStore } from '../auth/ports.js';
import type { Scope } from '../auth/scopes.js';
import type { Deadline } from '../deadline.js';
import type { Mode } from '../mode.js';
import { operationalLog } from '../runtime/logger.js';
import { metrics } from '../runtime/metrics.js';
import { authenticate } from './authenticate.js';
import { jsonEnvelope, requireObjectBody } from './json-envelope.js';
import { problemDetails } from './problem-details.js';
import { requestContext } from './request-context.js';
import { requireScope } from './require-scope.js';
import { traceRequest } from './trace-request.js';
import type { ApiContext, ApiEvent, ApiResult } from './types.js';

export interface ApiHandlerOptions {
  scope: Scope;
  keys: ApiKeyStore;
  /**
   * Parse and check a JSON object body (POST routes). `optional`: a request without a body (none,
   * or zero bytes) passes with `event.body` null; a body that is there is checked exactly as on
   * every other route (product rules "Request bytes").
   */
  jsonBody?: boolean | 'optional';
  now?: () => Date;
  /**
   * A route's storage read that can run in parallel with the key lookup (the read route fetches
   * the case): started only once the key parses, looked at only after authentication and the
   * scope check (`prefetchedValue`).
   */
  prefetch?: (event: ApiEvent, deadline: Deadline, mode: Mode) => Promise<unknown>;
}

export type CoreHandler = (event: ApiEvent, context: ApiContext) => Promise<ApiResult>;

/**
 * The middleware chain every route shares, in the order the product rules fix:
 * request id → authentication (401) → scope (403) → envelope (413/415/400) → handler,
 * with the one problem-details mapper registered last. Around it all: the X-Ray segment (first
 * in, last out, so it spans the whole request) and the metrics flush (the cold-start metric
 * before anything else runs; the handler's metrics once, after the request log line, on success
 * and on error alike).
 */
export function apiHandler(options: ApiHandlerOptions, core: CoreHandler) {
  const chain = middy<ApiEvent, ApiResult, Error, ApiContext>()
    .use(traceRequest())
    .use(logMetrics(metrics, { captureColdStartMetric: true }))
    .use(requestContext())
    .use(
      authenticate({
        authenticator: new KeyAuthenticator(options.keys, operationalLog, options.now),
        ...(options.prefetch ? { prefetch: options.prefetch } : {}),
      }),
    )
    .use(requireScope(options.scope));
  if (options.jsonBody === 'optional') {
    chain.use(optionalJsonBody());
  } else if (options.jsonBody) {
    chain.use(jsonEnvelope()).use(httpJsonBodyParser()).use(requireObjectBody());
  }
  return chain.use(problemDetails()).handler(core);
}

/** The JSON envelope, run only when the request has a body; an absent body is left as `null`. */
function optionalJsonBody(): MiddlewareObj<ApiEvent, ApiResult, Error, ApiContext> {
  const steps = [jsonEnvelope(), httpJsonBodyParser(), requireObjectBody()] as MiddlewareObj<ApiEvent, ApiResult, Error, ApiContext>[];
  return {
    before: async (request) => {
      if (request.event.body === null || request.event.body === undefined || request.event.body === '') {
        request.event.body = null;
        return;
      }
      for (const step of steps) await step.before?.(request);
    },
  };
}

export function jsonResponse(statusCode: number, body: unknown, headers: Record<string, string> = {}): ApiResult {
  return {
    statusCode,
    headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', ...headers },
    body: JSON.stringify(body),
  };
}
