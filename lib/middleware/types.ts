import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type { Scope } from '../auth/scopes.js';

/** Who is calling, established by the auth middleware before any handler code runs. */
export interface AuthContext {
  companyId: string;
  keyId: string;
  scopes: readonly Scope[] | readonly string[];
}

/** The Lambda context, extended by our middleware. */
export interface ApiContext extends Context {
  requestId: string;
  auth?: AuthContext;
  /** Fields a handler adds to the one log line written per request (counts, outcome). */
  logFields: Record<string, unknown>;
  /** Monotonic start time of the request, for the duration in the request log. */
  startedAt: number;
}

export type ApiEvent = APIGatewayProxyEvent;
export type ApiResult = APIGatewayProxyResult;

/** The authenticated caller; throws if called on a route without the auth middleware. */
export function authOf(context: ApiContext): AuthContext {
  if (!context.auth) throw new Error('auth middleware did not run');
  return context.auth;
}
