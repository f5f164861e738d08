import { paymentAdapters } from '../lib/adapters/production-adapters.js';
import type { ApiKeyStore } from '../lib/auth/ports.js';
import { listCasePayments } from '../lib/cases/list-case-payments.js';
import type { RecoveryStore } from '../lib/cases/ports.js';
import { caseIdToRead, CASE_NOT_FOUND_DETAIL } from '../lib/cases/read-case.js';
import { NotFoundError } from '../lib/errors.js';
import { apiHandler, jsonResponse } from '../lib/http/api-handler.js';
import { callerOf } from '../lib/http/types.js';

/**
 * GET /api/v1/cases/{id}/payments (scope cases:read): every payment of the case, oldest first, in
 * one answer (a case holds at most 100). The case and its payments are read in parallel after the key.
 */
export interface ListCasePaymentsHandlerDeps {
  keys: ApiKeyStore;
  payments: { store: RecoveryStore };
}

export function buildListCasePaymentsHandler(deps: ListCasePaymentsHandlerDeps) {
  return apiHandler({ scope: 'cases:read', keys: deps.keys }, async (event, context) => {
    const caseId = caseIdToRead(event.pathParameters?.id);
    if (caseId === undefined) throw new NotFoundError(CASE_NOT_FOUND_DETAIL);
    const caller = callerOf(context);
    const data = await listCasePayments(deps.payments, { companyId: caller.companyId, mode: caller.mode, caseId }, context.deadline);
    context.logFields.caseId = caseId;
    return jsonResponse(200, { data });
  });
}

export const handler = buildListCasePaymentsHandler(paymentAdapters());
