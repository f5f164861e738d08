import { caseChangeAdapters } from '../lib/adapters/production-adapters.js';
import type { ApiKeyStore } from '../lib/auth/ports.js';
import { withdrawCaseFor, type ChangeCaseDeps } from '../lib/cases/change-case.js';
import { toCaseView, type StoredCase } from '../lib/cases/case-record.js';
import { caseIdToRead, CASE_NOT_FOUND_DETAIL } from '../lib/cases/read-case.js';
import { parseWithdrawRequest } from '../lib/cases/withdraw-request.js';
import { NotFoundError } from '../lib/errors.js';
import { apiHandler, jsonResponse } from '../lib/http/api-handler.js';
import { callerOf, prefetchedValue } from '../lib/http/types.js';

/**
 * POST /api/v1/cases/{id}/withdraw (scope cases:write): the partner withdraws a case, with an
 * optional `{ "reason" }`. 200 with the case record, `WITHDRAWN`; a second withdrawal answers the
 * case as it is and writes nothing. The change, its event and the release of the invoiceRef are
 * one transaction (lib/adapters/dynamodb/case-change-store.ts).
 */
export interface WithdrawCaseDeps {
  keys: ApiKeyStore;
  changes: ChangeCaseDeps;
}

export function buildWithdrawCaseHandler(deps: WithdrawCaseDeps) {
  return apiHandler(
    {
      scope: 'cases:write',
      keys: deps.keys,
      jsonBody: 'optional',
      // The case is read in parallel with the API key, in the mode of the key's prefix, as GET
      // does; it is looked at only after authentication, the scope check and the body's checks.
      prefetch: async (event, deadline, mode) => {
        const id = caseIdToRead(event.pathParameters?.id);
        return id === undefined ? undefined : deps.changes.store.get(mode, id, deadline);
      },
    },
    async (event, context) => {
      const { reason } = parseWithdrawRequest(event.body as unknown);
      const caseId = caseIdToRead(event.pathParameters?.id);
      if (caseId === undefined) throw new NotFoundError(CASE_NOT_FOUND_DETAIL);
      const caller = callerOf(context);
      const firstRead = { stored: await prefetchedValue<StoredCase | undefined>(context) };
      const stored = await withdrawCaseFor(
        deps.changes,
        { mode: caller.mode, companyId: caller.companyId, caseId, ...(reason !== undefined ? { reason } : {}), firstRead },
        context.deadline,
      );
      context.logFields.caseId = caseId;
      return jsonResponse(200, toCaseView(stored));
    },
  );
}

export const handler = buildWithdrawCaseHandler(caseChangeAdapters());
