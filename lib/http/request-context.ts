import { randomUUID } from 'node:crypto';
import type { MiddlewareObj } from '@middy/core';
import { DEADLINE_RESERVE_MS, REQUEST_RETRY_BUDGET, requestDeadline } from '../deadline.js';
import { logger } from '../runtime/logger.js';
import type { ApiContext, ApiEvent, ApiResult } from './types.js';

/**
 * First middleware: fixes the request id (API Gateway's, else Lambda's), resets per-request log
 * keys, adds the Lambda context to them, and writes exactly one log line when the request ends,
 * whatever the outcome.
 */
export function requestContext(): MiddlewareObj<ApiEvent, ApiResult, Error, ApiContext> {
  const finish = (request: { event: ApiEvent; context: ApiContext; response: ApiResult | null | undefined }) => {
    const { context, event, response } = request;
    logger.info('request completed', {
      method: event.httpMethod,
      resource: event.resource,
      statusCode: response?.statusCode,
      durationMs: Math.round(performance.now() - context.startedAt),
      ...context.logFields,
    });
  };
  return {
    before: (request) => {
      const context = request.context;
      context.startedAt = performance.now();
      // Lambda's own clock; a context without one (a hand-made test context) gets API Gateway's 29 s.
      const remainingMs = typeof context.getRemainingTimeInMillis === 'function' ? context.getRemainingTimeInMillis() : 29_000;
      context.deadline = requestDeadline({
        now: Date.now(),
        remainingMs,
        reserveMs: DEADLINE_RESERVE_MS,
        retryBudget: REQUEST_RETRY_BUDGET,
      });
      context.logFields = {};
      context.requestId = request.event.requestContext?.requestId || context.awsRequestId || randomUUID();
      logger.resetKeys();
      // The function's name and ARN on every line, as the workers' lines have them (injectLambdaContext
      // is not used here: it would also reset a log level set at run time on every invocation).
      logger.addContext(context);
      logger.appendKeys({ requestId: context.requestId });
    },
    after: (request) => finish(request),
    // Runs after the problem-details middleware (onError handlers run in reverse order of use()),
    // so the response it logs is the mapped one.
    onError: (request) => finish(request),
  };
}
