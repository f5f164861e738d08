import type { MiddlewareObj } from '@middy/core';
import { ApiError, InternalError, InvalidRequestError, problemResponse } from '../errors.js';
import { logger } from '../logger.js';
import type { ApiContext, ApiEvent, ApiResult } from './types.js';

function isMiddyJsonParserError(error: unknown): boolean {
  const cause = (error as { cause?: { package?: string } } | undefined)?.cause;
  return cause?.package === '@middy/http-json-body-parser';
}

/** Maps anything thrown to the error class it represents; unknown errors become INTERNAL. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  // The envelope middleware has already enforced the content type, so the JSON parser can only
  // fail here because the text is not JSON.
  if (isMiddyJsonParserError(error)) return new InvalidRequestError('The request body is not valid JSON.');
  return new InternalError();
}

/**
 * The one error mapper for every route: typed errors become RFC 9457 problem details; anything
 * else is logged server-side (with its stack) and answered as a bare 500 without internals.
 */
export function problemDetails(): MiddlewareObj<ApiEvent, ApiResult, Error, ApiContext> {
  return {
    onError: (request) => {
      const apiError = toApiError(request.error);
      if (apiError.status >= 500) {
        logger.error('request failed', { error: request.error as Error });
      } else {
        request.context.logFields.errorCode = apiError.code;
      }
      request.response = problemResponse(apiError, request.context.requestId ?? 'unknown');
    },
  };
}
