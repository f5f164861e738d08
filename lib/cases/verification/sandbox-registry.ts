import type { DebtorVerificationOutcome } from '../case-lifecycle.js';
import { normaliseCompanyNumber } from '../company-number.js';

/**
 * Test mode's registry (product rules "Case lifecycle"): test mode never calls Companies House.
 * It answers at once, by number, so a partner can rehearse every outcome; the numbers are part of
 * the partner contract (docs/api.md once wired).
 */
export const SANDBOX_COMPANY_NUMBERS = {
  NOT_FOUND: '00000404',
  NOT_ACTIVE: '00000410',
  NAME_MISMATCH: '00000409',
} as const;
export const SANDBOX_INACTIVE_STATUS = 'dissolved';
export const SANDBOX_REGISTERED_NAME = 'SANDBOX OTHER NAME LIMITED';

export const sandboxRegistry = {
  /** The outcome for a test-mode case; any number other than the three fixed ones is VERIFIED, whatever the debtor's name. */
  outcome(companyNumber: string, checkedAt: Date): DebtorVerificationOutcome {
    const at = checkedAt.toISOString();
    switch (normaliseCompanyNumber(companyNumber)) {
      case SANDBOX_COMPANY_NUMBERS.NOT_FOUND:
        return { status: 'NOT_FOUND', checkedAt: at };
      case SANDBOX_COMPANY_NUMBERS.NOT_ACTIVE:
        return { status: 'NOT_ACTIVE', companyStatus: SANDBOX_INACTIVE_STATUS, checkedAt: at };
      case SANDBOX_COMPANY_NUMBERS.NAME_MISMATCH:
        return { status: 'NAME_MISMATCH', registeredName: SANDBOX_REGISTERED_NAME, checkedAt: at };
      default:
        return { status: 'VERIFIED', checkedAt: at };
    }
  },
};
