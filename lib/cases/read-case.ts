import type { Caller } from '../auth/authenticate-key.js';
import { NotFoundError } from '../errors.js';
import { CASE_ID_PATTERN, toCaseView, type CaseView, type StoredCase } from './case-record.js';

export const CASE_NOT_FOUND_DETAIL = 'No case with this id exists for your company.';

/** The id to look up, or undefined when it cannot name any case (no storage read is worth making). */
export function caseIdToRead(id: string | undefined): string | undefined {
  return id !== undefined && CASE_ID_PATTERN.test(id) ? id : undefined;
}

/**
 * Tenancy rule for reads: another company's case is answered exactly like a missing one (same
 * error, same body, and the same storage work, since both paths did the one lookup). The lookup
 * itself is started by the caller, in parallel with authentication (one round trip in all).
 */
export function authoriseCaseRead(caller: Pick<Caller, 'companyId' | 'mode'>, found: StoredCase | undefined): CaseView {
  // The lookup was made in the caller's mode (the mode is in the storage key); the comparison
  // here is a second fence, not the separation itself.
  if (!found || found.companyId !== caller.companyId || found.mode !== caller.mode) throw new NotFoundError(CASE_NOT_FOUND_DETAIL);
  return toCaseView(found);
}
