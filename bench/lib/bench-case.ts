import { buildCaseEvent } from '../../lib/cases/case-lifecycle.js';
import { toCaseView, type StoredCase } from '../../lib/cases/case-record.js';
import type { NewCase } from '../../lib/cases/ports.js';
import type { Mode } from '../../lib/mode.js';
import { randomBase62 } from '../../lib/random-id.js';

export interface BenchCaseOptions {
  /** Starts the invoice reference, so a bench's cases are told apart in the table. */
  invoicePrefix: string;
  mode?: Mode;
  /** The debtor's company number: the case then awaits verification (PENDING); without one, none is asked. */
  debtorCompanyNo?: string;
}

/** A case awaiting confirmation, its audit record and its `case.created` event, as the create path stores them. */
export function benchCase(companyId: string, { invoicePrefix, mode = 'live', debtorCompanyNo }: BenchCaseOptions): NewCase {
  const at = new Date().toISOString();
  const caseId = `case_${randomBase62(22)}`;
  const invoiceRef = `${invoicePrefix}-${randomBase62(10)}`;
  const stored: StoredCase = {
    caseId,
    companyId,
    reference: `PC-${randomBase62(6).toUpperCase()}`,
    status: 'DRAFT',
    recoveryGate: 'AWAITING_CONFIRMATION',
    currency: 'GBP',
    createdAt: at,
    updatedAt: at,
    createdByKeyId: 'KeyBenchBenchBen',
    requestId: `bench-${randomBase62(8)}`,
    mode,
    debtorVerification: { status: debtorCompanyNo === undefined ? 'NOT_REQUESTED' : 'PENDING' },
    statusHistory: [{ status: 'DRAFT', at }],
    debtorName: 'Bench Debtor Limited',
    debtorEmail: 'ap@debtor.example',
    ...(debtorCompanyNo === undefined ? {} : { debtorCompanyNo }),
    invoiceRef,
    invoiceRefKey: invoiceRef.toLowerCase(),
    invoiceDate: '2025-01-10',
    dueDate: '2025-02-10',
    principalPence: 125_050,
    invoiceFileKey: `invoices/${companyId}/${randomBase62(32)}.pdf`,
  };
  const audit = { caseId, companyId, mode, b2b: true, under10k: true, within6years: true, undisputed: true };
  return {
    stored,
    audit: { ...audit, attestedBy: 'Bench', attestedAt: at, keyId: 'KeyBenchBenchBen', requestId: stored.requestId, sourceIp: '192.0.2.1' },
    event: buildCaseEvent(toCaseView(stored), at),
  };
}
