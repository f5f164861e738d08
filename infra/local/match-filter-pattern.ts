/**
 * Lambda event filtering, the part the stack's patterns use (infra/contract/stream-consumers.ts),
 * for the local event source mappings: a pattern is an object whose keys name fields of the event
 * (a stream record); a nested object descends into that field, a list gives the rules the field
 * may satisfy (any one of them). A rule is an exact value (a field that is a list matches when one
 * of its elements does) or `{ "exists": true | false }`. Every key must match; a field that is
 * absent matches no exact value. A rule beyond that subset (prefix, numeric, anything-but...) is
 * refused when the poller starts, never guessed at: the local world must drop exactly the records
 * Lambda would.
 *
 * `exists`, as Lambda evaluates it, tests leaf nodes only: `{ "exists": true }` matches a field
 * holding a value (a string, number, boolean, null, or a list of them), never an object, and
 * `{ "exists": false }` matches when no such value is there, so a field holding an object counts as
 * absent (the trap AWS's guide warns of for DynamoDB images).
 */
export function matchesFilterPattern(pattern: object, value: unknown): boolean {
  for (const [key, rule] of Object.entries(pattern)) {
    const field = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
    if (Array.isArray(rule)) {
      if (!(rule as unknown[]).some((r) => matchesRule(r, field))) return false;
    } else if (!matchesFilterPattern(rule as object, field)) return false;
  }
  return true;
}

function isLeaf(field: unknown): boolean {
  return field !== undefined && (field === null || typeof field !== 'object' || Array.isArray(field));
}

function matchesRule(rule: unknown, field: unknown): boolean {
  if (rule !== null && typeof rule === 'object') return isLeaf(field) === (rule as { exists: boolean }).exists;
  const candidates = Array.isArray(field) ? field : [field];
  return candidates.some((candidate) => candidate !== undefined && candidate === rule);
}

/** Throws unless every rule of the pattern is a nested object or a list of exact values and `exists` rules. */
export function assertSupportedFilterPattern(pattern: object, path = ''): void {
  for (const [key, rule] of Object.entries(pattern)) {
    const at = path ? `${path}.${key}` : key;
    if (Array.isArray(rule)) {
      const unsupported = (rule as unknown[]).find((v) => v !== null && typeof v === 'object' && !isExistsRule(v));
      if (unsupported !== undefined || rule.length === 0)
        throw new Error(
          `filter pattern ${at}: only lists of exact values and exists rules are imitated locally, not ${JSON.stringify(rule)}`,
        );
    } else if (rule !== null && typeof rule === 'object') assertSupportedFilterPattern(rule, at);
    else throw new Error(`filter pattern ${at}: a rule is a list of values or a nested pattern, not ${JSON.stringify(rule)}`);
  }
}

function isExistsRule(rule: object): boolean {
  const entries = Object.entries(rule);
  return entries.length === 1 && entries[0]![0] === 'exists' && typeof entries[0]![1] === 'boolean';
}

/**
 * A DynamoDB stream mapping's pattern, as Lambda's guide states it: it filters on the record's
 * `dynamodb` key only (no `eventName`, `eventSource`, `awsRegion`...). Refused at start otherwise,
 * so a pattern AWS would not honour fails the day it is written, not in production.
 */
export function assertDynamoDbStreamFilterPattern(pattern: object): void {
  const outside = Object.keys(pattern).filter((key) => key !== 'dynamodb');
  if (outside.length > 0)
    throw new Error(
      `filter pattern ${outside.join(', ')}: a DynamoDB event source mapping filters on the "dynamodb" key only ` +
        '(Lambda developer guide, "Using event filtering with a DynamoDB event source")',
    );
  assertSupportedFilterPattern(pattern);
}
