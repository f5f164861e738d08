import type { MiddlewareObj } from '@middy/core';
import type { KeyAuthenticator } from '../auth/authenticate-key.js';
import type { Deadline } from '../deadline.js';
import type { Mode } from '../mode.js';
import { logger } from '../runtime/logger.js';
import { headerValues } from './headers.js';
import type { ApiContext, ApiEvent, ApiResult } from './types.js';

const BEARER = /^[ \t]*bearer[ \t]+([^\s]+)[ \t]*$/i;

/**
 * The key presented with the request, or undefined when none or a contradictory set was sent.
 * Both `Authorization: Bearer` and `X-Api-Key` are accepted; if both are sent they must agree.
 */
export function presentedKey(event: Pick<ApiEvent, 'headers' | 'multiValueHeaders'>): string | undefined {
  const authorization = headerValues(event, 'authorization');
  const apiKeyHeader = headerValues(event, 'x-api-key');
  if (authorization.length > 1 || apiKeyHeader.length > 1) return undefined;
  let fromBearer: string | undefined;
  if (authorization.length === 1) {
    const match = BEARER.exec(authorization[0] as string);
    if (!match) return undefined;
    fromBearer = match[1];
  }
  const fromHeader = apiKeyHeader.length === 1 ? (apiKeyHeader[0] as string).trim() : undefined;
  if (fromBearer !== undefined && fromHeader !== undefined && fromBearer !== fromHeader) return undefined;
  const key = fromBearer ?? fromHeader;
  return key ? key : undefined;
}

export interface AuthenticateOptions {
  authenticator: KeyAuthenticator;
  /** Started once the key parses, in parallel with its lookup; its result lands on `context.prefetched`. */
  prefetch?: (event: ApiEvent, deadline: Deadline, mode: Mode) => Promise<unknown>;
}

/**
 * Wires the authentication rules of `lib/auth` into the chain: reads the key from the headers,
 * asks the authenticator, and puts the caller on the context. The once-a-minute key-use write it
 * may start is awaited before the response leaves, so it is not frozen with the Lambda sandbox.
 */
export function authenticate(options: AuthenticateOptions): MiddlewareObj<ApiEvent, ApiResult, Error, ApiContext> {
  const awaitKeyUse = async (context: ApiContext) => {
    await context.keyUse;
  };
  return {
    before: async ({ event, context }) => {
      delete context.caller;
      delete context.prefetched;
      delete context.keyUse;
      const parsed = options.authenticator.parse(presentedKey(event)); // throws before any storage read
      if (options.prefetch) {
        context.prefetched = options.prefetch(event, context.deadline, parsed.mode).then(
          (value) => ({ ok: true as const, value }),
          (error: unknown) => ({ ok: false as const, error }),
        );
      }
      const { caller, keyUse } = await options.authenticator.authenticate(parsed, context.deadline);
      context.keyUse = keyUse;
      context.caller = caller;
      logger.appendKeys({ companyId: caller.companyId, keyId: caller.keyId, mode: caller.mode });
    },
    after: async ({ context }) => awaitKeyUse(context),
    onError: async ({ context }) => awaitKeyUse(context),
  };
}
