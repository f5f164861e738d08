import { NotFoundError } from '../errors.js';
import type { AuthContext } from '../middleware/types.js';
import { toCaseView, type CaseView, type StoredCase } from './case-record.js';

export const CASE_NOT_FOUND_DETAIL = 'No case with this id exists for your company.';

/**
 * Tenancy rule for reads: another company's case is answered exactly like a missing one (same
 * error, same body, and the same storage work, since both paths did the one lookup).
 */
export function authoriseCaseRead(auth: AuthContext, found: StoredCase | undefined): CaseView {
  if (!found || found.companyId !== auth.companyId) throw new NotFoundError(CASE_NOT_FOUND_DETAIL);
  return toCaseView(found);
}
