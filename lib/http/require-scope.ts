import type { MiddlewareObj } from '@middy/core';
import { requireScope as checkScope, type Scope } from '../auth/scopes.js';
import { callerOf, type ApiContext, type ApiEvent, type ApiResult } from './types.js';

export function requireScope(scope: Scope): MiddlewareObj<ApiEvent, ApiResult, Error, ApiContext> {
  return {
    before: ({ context }) => checkScope(callerOf(context), scope),
  };
}
