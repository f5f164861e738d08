/**
 * Lambda event filtering, the part the stack's patterns use (infra/contract/stream-consumers.ts),
 * for the local event source mappings: a pattern is an object whose keys name fields of the event
 * (a stream record); a nested object descends into that field, a list gives the values the field
 * may have (any one of them, compared exactly; a field that is a list matches when one of its
 * elements does). Every key must match; a field that is absent matches nothing. A rule beyond that
 * subset (prefix, numeric, exists, anything-but...) is refused when the poller starts, never
 * guessed at: the local world must drop exactly the records Lambda would.
 */
export function matchesFilterPattern(pattern: object, value: unknown): boolean {
  for (const [key, rule] of Object.entries(pattern)) {
    const field = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
    if (Array.isArray(rule)) {
      const candidates = Array.isArray(field) ? field : [field];
      if (!candidates.some((candidate) => candidate !== undefined && (rule as unknown[]).includes(candidate))) return false;
    } else if (!matchesFilterPattern(rule as object, field)) return false;
  }
  return true;
}

/** Throws unless every rule of the pattern is a nested object or a list of strings, numbers, booleans or null. */
export function assertSupportedFilterPattern(pattern: object, path = ''): void {
  for (const [key, rule] of Object.entries(pattern)) {
    const at = path ? `${path}.${key}` : key;
    if (Array.isArray(rule)) {
      const unsupported = (rule as unknown[]).find((v) => v !== null && typeof v === 'object');
      if (unsupported !== undefined || rule.length === 0)
        throw new Error(`filter pattern ${at}: only lists of exact values are imitated locally, not ${JSON.stringify(rule)}`);
    } else if (rule !== null && typeof rule === 'object') assertSupportedFilterPattern(rule, at);
    else throw new Error(`filter pattern ${at}: a rule is a list of values or a nested pattern, not ${JSON.stringify(rule)}`);
  }
}
