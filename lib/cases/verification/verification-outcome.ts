import type { DebtorVerificationOutcome } from '../case-lifecycle.js';
import type { DefinitiveAnswer } from './ports.js';
import { isSameCompanyName } from './registered-name.js';

/** The register's `company_status` of a company that trades; any other puts the case ON_HOLD as NOT_ACTIVE. */
export const ACTIVE_COMPANY_STATUS = 'active';

/**
 * The verification outcome for a debtor from the registry's answer: `NOT_FOUND`; `NOT_ACTIVE`
 * (any status but `active`, whatever the name); `NAME_MISMATCH` (active, another name); `VERIFIED`.
 */
export function verificationOutcome(answer: DefinitiveAnswer, debtorName: string, checkedAt: Date): DebtorVerificationOutcome {
  const at = checkedAt.toISOString();
  if (answer.kind === 'not-found') return { status: 'NOT_FOUND', checkedAt: at };
  const { companyName, companyStatus } = answer.profile;
  if (companyStatus !== ACTIVE_COMPANY_STATUS) return { status: 'NOT_ACTIVE', companyStatus, checkedAt: at };
  if (!isSameCompanyName(debtorName, companyName)) return { status: 'NAME_MISMATCH', registeredName: companyName, checkedAt: at };
  return { status: 'VERIFIED', checkedAt: at };
}
