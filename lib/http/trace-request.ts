import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import type { MiddlewareObj } from '@middy/core';
import { tracer } from '../runtime/tracer.js';
import { statusOf, toCodedError } from './problem-details.js';
import type { ApiContext, ApiEvent, ApiResult } from './types.js';

/**
 * Outermost middleware: the invocation's X-Ray handler segment (annotated `ColdStart` and
 * `Service`), so the key lookup and every storage call of the route are its subsegments.
 *
 * Two departures from Powertools' defaults, both deliberate:
 * - the response is not recorded as trace metadata: it carries partner data and, for uploads, a
 *   presigned URL that grants a write;
 * - only an error that becomes a 5xx is recorded on the segment. Recording one marks the segment
 *   as a fault, and a partner's 400/401/403 is an answered request, not a fault of the service.
 */
export function traceRequest(): MiddlewareObj<ApiEvent, ApiResult, Error, ApiContext> {
  const segment = captureLambdaHandler(tracer, { captureResponse: false });
  type Request = Parameters<NonNullable<typeof segment.before>>[0];
  return {
    before: async (request) => {
      await segment.before?.(request as Request);
    },
    after: async (request) => {
      await segment.after?.(request as Request);
    },
    onError: async (request) => {
      const serverError = statusOf(toCodedError(request.error).code) >= 500;
      // `after` closes the segment without recording anything (the response is not captured).
      await (serverError ? segment.onError : segment.after)?.(request as Request);
    },
  };
}
