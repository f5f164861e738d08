import type { MiddlewareObj } from '@middy/core';
import { parseApiKey, secretMatches } from '../auth/api-key.js';
import type { ApiKeyStore } from '../data/api-key-store.js';
import { UnauthenticatedError } from '../errors.js';
import { logger } from '../logger.js';
import { headerValues } from './headers.js';
import type { ApiContext, ApiEvent, ApiResult } from './types.js';

const BEARER = /^[ \t]*bearer[ \t]+([^\s]+)[ \t]*$/i;
/** Hash compared when no key record exists, so unknown and known keys cost the same work. */
const DUMMY_HASH = '0'.repeat(64);
export const KEY_USE_RECORD_INTERVAL_MS = 60_000;

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
  keys: ApiKeyStore;
  now?: () => Date;
  /**
   * Storage work a route can start in parallel with the key lookup (the read route fetches the
   * case). Its result is handed to the handler only after authentication and the scope check.
   */
  prefetch?: (event: ApiEvent) => Promise<unknown>;
}

type Settled = { ok: true; value: unknown } | { ok: false; error: unknown };

interface AuthInternals {
  prefetched?: Promise<Settled>;
  keyUse?: Promise<void>;
}

const internals = new WeakMap<object, AuthInternals>();

/** The prefetched value for this request; rethrows the prefetch's failure. */
export async function prefetched<T>(context: ApiContext): Promise<T> {
  const pending = internals.get(context)?.prefetched;
  if (!pending) throw new Error('no prefetch configured for this route');
  const settled = await pending;
  if (!settled.ok) throw settled.error;
  return settled.value as T;
}

export function authenticate(options: AuthenticateOptions): MiddlewareObj<ApiEvent, ApiResult, Error, ApiContext> {
  const now = options.now ?? (() => new Date());

  const awaitKeyUse = async (context: ApiContext) => {
    // Started off the critical path; awaited before the response leaves so the write is not
    // frozen mid-flight with the Lambda sandbox. It has normally finished long before.
    await internals.get(context)?.keyUse;
  };

  return {
    before: async ({ event, context }) => {
      const state: AuthInternals = {};
      internals.set(context, state);

      const presented = presentedKey(event);
      const parsed = presented === undefined ? undefined : parseApiKey(presented);
      if (!parsed) throw new UnauthenticatedError(); // no storage read at all for a malformed key

      if (options.prefetch) {
        state.prefetched = options.prefetch(event).then(
          (value): Settled => ({ ok: true, value }),
          (error: unknown): Settled => ({ ok: false, error }),
        );
      }

      const record = await options.keys.get(parsed.keyId);
      const matches = secretMatches(parsed.secret, record?.secretHash ?? DUMMY_HASH);
      if (!record || !matches || record.revoked) throw new UnauthenticatedError();

      context.auth = { companyId: record.companyId, keyId: record.keyId, scopes: record.scopes };
      logger.appendKeys({ companyId: record.companyId, keyId: record.keyId });

      const at = now();
      const last = record.lastUsedAt ? Date.parse(record.lastUsedAt) : Number.NaN;
      if (!(at.getTime() - last < KEY_USE_RECORD_INTERVAL_MS)) {
        const notAfter = new Date(at.getTime() - KEY_USE_RECORD_INTERVAL_MS).toISOString();
        state.keyUse = options.keys.touch(record.keyId, at.toISOString(), notAfter).catch((error: unknown) => {
          logger.warn('could not record API key use', { error: error as Error });
        });
      }
    },
    after: async ({ context }) => awaitKeyUse(context),
    onError: async ({ context }) => awaitKeyUse(context),
  };
}
