import { InvalidRequestError, unknownFieldErrors, type FieldError } from '../errors.js';
import { withdrawRequestSchema, type WithdrawRequest } from './case-lifecycle.js';

/**
 * The body of `POST /api/v1/cases/{id}/withdraw`, already parsed as JSON by the envelope: absent
 * (`null`: the body is optional) or `{ "reason"? }`. Every problem is reported at once as
 * `{ field, message }`, like the other routes' bodies; an unknown field is refused rather than
 * ignored, so a misspelt `reasons` is not silently dropped from the case's history.
 */
export function parseWithdrawRequest(body: unknown): WithdrawRequest {
  if (body === null || body === undefined) return {};
  const parsed = withdrawRequestSchema.safeParse(body);
  if (parsed.success) return parsed.data;
  const errors: FieldError[] = [];
  for (const issue of parsed.error.issues) {
    if (issue.code === 'unrecognized_keys') {
      errors.push(...unknownFieldErrors(issue.keys, (field) => `${field} is not a field of this request; the only field is reason`));
    } else if (issue.code === 'invalid_type') {
      errors.push({ field: 'reason', message: 'reason must be a string' });
    } else {
      errors.push({ field: String(issue.path[0] ?? 'reason'), message: issue.message });
    }
  }
  throw new InvalidRequestError('The withdrawal request is invalid; see "errors" for every field to fix.', errors);
}
