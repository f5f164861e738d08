import { BatchEmptyError, BatchTooLargeError } from '../errors.js';

export const MAX_CASES_PER_REQUEST = 100;

/** Spec 8: a batch holds 1 to 100 cases; otherwise the request as a whole is refused. */
export function checkBatchSize(count: number): void {
  if (count === 0) throw new BatchEmptyError();
  if (count > MAX_CASES_PER_REQUEST) throw new BatchTooLargeError(count, MAX_CASES_PER_REQUEST);
}
