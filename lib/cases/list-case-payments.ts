import type { Deadline } from '../deadline.js';
import { NotFoundError } from '../errors.js';
import type { Mode } from '../mode.js';
import type { RecoveryStore } from './ports.js';
import { CASE_NOT_FOUND_DETAIL } from './read-case.js';
import { toPaymentView, type PaymentView } from './recovery.js';

/**
 * `GET /api/v1/cases/{id}/payments`: every payment of the case, oldest first. The case and its
 * payments are read in parallel (one round trip); a foreign or other-mode case is not found, and
 * its payments are never shown.
 */
export async function listCasePayments(
  deps: { store: RecoveryStore },
  query: { companyId: string; mode: Mode; caseId: string },
  deadline?: Deadline,
): Promise<PaymentView[]> {
  const [stored, payments] = await Promise.all([
    deps.store.get(query.mode, query.caseId, deadline),
    deps.store.listPayments(query.mode, query.caseId, deadline),
  ]);
  if (!stored || stored.companyId !== query.companyId) throw new NotFoundError(CASE_NOT_FOUND_DETAIL);
  return payments.map(toPaymentView);
}
