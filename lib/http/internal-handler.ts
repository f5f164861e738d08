import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy, { type MiddlewareObj } from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import { ForbiddenError } from '../errors.js';
import { logger } from '../runtime/logger.js';
import { metrics } from '../runtime/metrics.js';
import type { CoreHandler } from './api-handler.js';
import { jsonEnvelope, requireObjectBody } from './json-envelope.js';
import { problemDetails } from './problem-details.js';
import { requestContext } from './request-context.js';
import { traceRequest } from './trace-request.js';
import type { ApiContext, ApiEvent, ApiResult } from './types.js';

/**
 * The chain of the internal routes (`/internal/v1/...`), called by AWS principals of our own
 * systems, never by partners: request id → IAM caller (403) → envelope (413/415/400) → handler,
 * with the same problem-details mapper as the partner routes. There is no API key and no scope:
 * API Gateway authorises these methods with AWS_IAM (SigV4, `execute-api:Invoke` on the route's
 * ARN) before the function runs, and puts the verified caller in `requestContext.identity`; the
 * local server does the same after verifying the signature (infra/local). An event without that
 * identity never reached us through that check (a misconfigured method, a direct invoke), so it
 * is refused here too: defence in depth.
 */
export interface IamCaller {
  /** The signing principal's ARN (an IAM user, or an assumed role's session). */
  userArn: string;
  accountId?: string;
  accessKey?: string;
}

export const NO_IAM_CALLER_DETAIL =
  'This internal route accepts only requests signed with AWS credentials (SigV4, service execute-api) by a principal allowed to invoke it; partner API keys are not accepted here.';

/** The IAM caller API Gateway verified, or undefined when the event carries none. */
export function iamCallerOf(event: Pick<ApiEvent, 'requestContext'>): IamCaller | undefined {
  const identity = event.requestContext?.identity;
  const userArn = identity?.userArn;
  if (typeof userArn !== 'string' || !userArn.startsWith('arn:')) return undefined;
  return {
    userArn,
    ...(identity.accountId ? { accountId: identity.accountId } : {}),
    ...(identity.accessKey ? { accessKey: identity.accessKey } : {}),
  };
}

export interface InternalContext extends ApiContext {
  iamCaller?: IamCaller;
}

/** Refuses an event without an IAM caller (403 FORBIDDEN) and puts the caller on the context. */
export function requireIamCaller(): MiddlewareObj<ApiEvent, ApiResult, Error, InternalContext> {
  return {
    before: ({ event, context }) => {
      delete context.iamCaller;
      const caller = iamCallerOf(event);
      if (!caller) throw new ForbiddenError(NO_IAM_CALLER_DETAIL);
      context.iamCaller = caller;
      logger.appendKeys({ iamCaller: caller.userArn });
    },
  };
}

/** The verified IAM caller; throws if called on a route without `requireIamCaller`. */
export function iamCallerFrom(context: ApiContext): IamCaller {
  const caller = (context as InternalContext).iamCaller;
  if (!caller) throw new Error('IAM caller middleware did not run');
  return caller;
}

export function internalHandler(core: CoreHandler) {
  return middy<ApiEvent, ApiResult, Error, InternalContext>()
    .use(traceRequest())
    .use(logMetrics(metrics, { captureColdStartMetric: true }))
    .use(requestContext())
    .use(requireIamCaller())
    .use(jsonEnvelope())
    .use(httpJsonBodyParser())
    .use(requireObjectBody())
    .use(problemDetails())
    .handler(core);
}
