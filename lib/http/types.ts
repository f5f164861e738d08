import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type { Caller } from '../auth/authenticate-key.js';
import type { Deadline } from '../deadline.js';

/** The Lambda context, extended by our middleware. */
export interface ApiContext extends Context {
  requestId: string;
  /** Set first, from the Lambda's remaining time: every storage call of the request honours it. */
  deadline: Deadline;
  /** Set by the authentication middleware, before the scope check and the handler. */
  caller?: Caller;
  /**
   * A route's storage read started in parallel with the key lookup (see `apiHandler`'s
   * `prefetch`); settled, so an unauthenticated request never leaves an unhandled rejection.
   */
  prefetched?: Promise<{ ok: true; value: unknown } | { ok: false; error: unknown }>;
  /** The once-a-minute key-use write, awaited before the response leaves. */
  keyUse?: Promise<void>;
  /** Fields a handler adds to the one log line written per request (counts, outcome). */
  logFields: Record<string, unknown>;
  /** Monotonic start time of the request, for the duration in the request log. */
  startedAt: number;
}

export type ApiEvent = APIGatewayProxyEvent;
export type ApiResult = APIGatewayProxyResult;

/** The authenticated caller; throws if called on a route without the auth middleware. */
export function callerOf(context: ApiContext): Caller {
  if (!context.caller) throw new Error('auth middleware did not run');
  return context.caller;
}

/** The route's prefetched value, looked at only after authentication and the scope check. */
export async function prefetchedValue<T>(context: ApiContext): Promise<T> {
  if (!context.prefetched) throw new Error('no prefetch configured for this route');
  const settled = await context.prefetched;
  if (!settled.ok) throw settled.error;
  return settled.value as T;
}
