import { InsufficientScopeError } from '../errors.js';

/** Scopes a key can hold (spec 5). `webhooks:manage` grants the webhook endpoint routes (product rules "Webhooks"). */
export const SCOPES = ['cases:write', 'cases:read', 'webhooks:manage'] as const;
export type Scope = (typeof SCOPES)[number];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

export function hasScope(granted: readonly string[], required: Scope): boolean {
  return granted.includes(required);
}

/** Throws InsufficientScopeError unless the caller's key holds the scope. */
export function requireScope(caller: { scopes: readonly string[] }, required: Scope): void {
  if (!hasScope(caller.scopes, required)) throw new InsufficientScopeError(required);
}

/** Parses an operator's comma-separated scope list; throws naming the bad entry. */
export function parseScopeList(text: string): Scope[] {
  const entries = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (entries.length === 0) throw new Error(`No scopes given; choose from ${SCOPES.join(', ')}`);
  for (const entry of entries) {
    if (!isScope(entry)) throw new Error(`Unknown scope "${entry}"; choose from ${SCOPES.join(', ')}`);
  }
  return [...new Set(entries)] as Scope[];
}
