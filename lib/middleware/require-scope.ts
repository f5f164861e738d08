import type { MiddlewareObj } from '@middy/core';
import { hasScope, type Scope } from '../auth/scopes.js';
import { InsufficientScopeError } from '../errors.js';
import { authOf, type ApiContext, type ApiEvent, type ApiResult } from './types.js';

export function requireScope(scope: Scope): MiddlewareObj<ApiEvent, ApiResult, Error, ApiContext> {
  return {
    before: ({ context }) => {
      if (!hasScope(authOf(context).scopes as string[], scope)) throw new InsufficientScopeError(scope);
    },
  };
}
