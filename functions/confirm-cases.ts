import { caseChangeAdapters } from '../lib/adapters/production-adapters.js';
import { confirmCases, type ChangeCaseDeps } from '../lib/cases/change-case.js';
import { parseConfirmationRequest, type ConfirmationResponse } from '../lib/cases/confirmation-request.js';
import { jsonResponse, type CoreHandler } from '../lib/http/api-handler.js';
import { iamCallerFrom, internalHandler } from '../lib/http/internal-handler.js';
import { validRequestBody } from '../lib/http/valid-request-body.js';

/**
 * POST /internal/v1/confirmations: the partner's dashboard confirms cases (spec rule 4). Authorised
 * by AWS IAM, never by a partner key (lib/http/internal-handler.ts). It confirms live cases only:
 * test cases are confirmed with the test-mode helper (functions/test-confirm-case.ts). Each
 * confirmation is its own transaction (the case change, its event, the confirmation record naming
 * the signing IAM principal); one result per case id, in the order given, 200 even when some of
 * them met a transient failure (those answer `retry`: change-case.ts confirmCases).
 */
export interface ConfirmCasesDeps {
  changes: ChangeCaseDeps;
}

export function confirmCasesCore(deps: ConfirmCasesDeps): CoreHandler {
  return async (event, context) => {
    const request = validRequestBody(parseConfirmationRequest(event.body as unknown), context, 'confirmation request');
    const { companyId, caseIds, confirmedBy } = request;
    const outcomes = await confirmCases(
      deps.changes,
      {
        mode: 'live',
        companyId,
        caseIds,
        confirmedBy,
        requestId: context.requestId,
        source: 'dashboard',
        principal: iamCallerFrom(context).userArn,
      },
      context.deadline,
    );
    const body: ConfirmationResponse = {
      results: outcomes.map((outcome) => ({
        caseId: outcome.caseId,
        result: outcome.result,
        ...('stored' in outcome ? { status: outcome.stored.status } : {}),
        ...(outcome.result === 'retry' ? { message: outcome.message } : {}),
      })),
    };
    const counts: Record<string, number> = {};
    for (const { result } of outcomes) counts[result] = (counts[result] ?? 0) + 1;
    Object.assign(context.logFields, { companyId, confirmationResults: counts });
    return jsonResponse(200, body);
  };
}

export function buildConfirmCasesHandler(deps: ConfirmCasesDeps) {
  return internalHandler(confirmCasesCore(deps));
}

export const handler = buildConfirmCasesHandler({ changes: caseChangeAdapters().changes });
