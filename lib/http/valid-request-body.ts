import { InvalidRequestError, type FieldError } from '../errors.js';
import type { ApiContext } from './types.js';

/**
 * The value of a parsed request body, or the 400 that lists every field to fix (one answer for the
 * whole body, so a partner fixes it in one round). The log line keeps only how many fields were
 * wrong: the fields' values may be a partner's data.
 */
export function validRequestBody<T>(
  parsed: { ok: true; value: T } | { ok: false; errors: FieldError[] },
  context: Pick<ApiContext, 'logFields'>,
  subject: string,
): T {
  if (parsed.ok) return parsed.value;
  context.logFields.invalidFieldCount = parsed.errors.length;
  throw new InvalidRequestError(`The ${subject} is invalid; see "errors" for every field to fix.`, parsed.errors);
}
