/**
 * The stored case and its public view (spec 2.4 plus the additive fields of the product rules).
 * Money is held as integer pence; it is shown as a decimal string with two places.
 */
export type CaseStatus = 'DRAFT';
export type RecoveryGate = 'AUTO_ATTESTED' | 'AWAITING_CONFIRMATION';

export interface StoredCase {
  caseId: string;
  companyId: string;
  reference: string;
  status: CaseStatus;
  recoveryGate: RecoveryGate;
  debtorName: string;
  debtorEmail: string;
  invoiceRef: string;
  invoiceRefKey: string;
  invoiceDate: string;
  dueDate: string;
  principalPence: number;
  currency: 'GBP';
  invoiceFileKey: string;
  debtorCompanyNo?: string;
  debtorAddress?: string;
  description?: string;
  createdAt: string;
  updatedAt: string;
  createdByKeyId: string;
  requestId: string;
}

export interface CaseView {
  id: string;
  reference: string;
  status: CaseStatus;
  debtorName: string;
  principalAmount: string;
  currency: 'GBP';
  createdAt: string;
  updatedAt: string;
  invoiceRef: string;
  invoiceDate: string;
  dueDate: string;
  recoveryGate: RecoveryGate;
}

export function formatPence(pence: number): string {
  const sign = pence < 0 ? '-' : '';
  const abs = Math.abs(pence);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

export function toCaseView(stored: StoredCase): CaseView {
  return {
    id: stored.caseId,
    reference: stored.reference,
    status: stored.status,
    debtorName: stored.debtorName,
    principalAmount: formatPence(stored.principalPence),
    currency: stored.currency,
    createdAt: stored.createdAt,
    updatedAt: stored.updatedAt,
    invoiceRef: stored.invoiceRef,
    invoiceDate: stored.invoiceDate,
    dueDate: stored.dueDate,
    recoveryGate: stored.recoveryGate,
  };
}

export const CASE_ID_PATTERN = /^case_[0-9A-Za-z]{22}$/;
