import { caseChangeAdapters } from '../lib/adapters/production-adapters.js';
import type { ApiKeyStore } from '../lib/auth/ports.js';
import { toCaseView } from '../lib/cases/case-record.js';
import { confirmCases, type ChangeCaseDeps } from '../lib/cases/change-case.js';
import { caseIdToRead, CASE_NOT_FOUND_DETAIL } from '../lib/cases/read-case.js';
import { NotFoundError, ServiceUnavailableError } from '../lib/errors.js';
import { apiHandler, jsonResponse, type CoreHandler } from '../lib/http/api-handler.js';
import { callerOf } from '../lib/http/types.js';

/**
 * POST /api/v1/test-helpers/cases/{id}/confirm (test keys only, scope cases:write): the same
 * confirmation the dashboard makes, for a test case, so partners can rehearse what follows it
 * (status READY, the `case.updated` event). 200 with the case record after the change, or as it
 * is when there was nothing to confirm (already confirmed, auto-attested, withdrawn). With a live
 * key the route does not exist (404): live cases are confirmed only in the dashboard.
 */
export interface TestConfirmCaseDeps {
  keys: ApiKeyStore;
  changes: ChangeCaseDeps;
}

/** Who a test-helper confirmation names: the helper, and the key that called it (as `principal`). */
export const TEST_HELPER_CONFIRMED_BY = { name: 'test helper' } as const;

export function testConfirmCase(deps: TestConfirmCaseDeps): CoreHandler {
  return async (event, context) => {
    const caller = callerOf(context);
    if (caller.mode !== 'test')
      throw new NotFoundError('No resource matches this path for a live-mode key: test helpers exist for test-mode keys only.');
    const caseId = caseIdToRead(event.pathParameters?.id);
    if (caseId === undefined) throw new NotFoundError(CASE_NOT_FOUND_DETAIL);
    const [outcome] = await confirmCases(
      deps.changes,
      {
        mode: 'test',
        companyId: caller.companyId,
        caseIds: [caseId],
        confirmedBy: TEST_HELPER_CONFIRMED_BY,
        requestId: context.requestId,
        source: 'test-helper',
        principal: `apiKey:${caller.keyId}`,
      },
      context.deadline,
    );
    // One case: a transient failure is the request's (503, safe to send again), as before.
    if (outcome?.result === 'retry') throw new ServiceUnavailableError();
    if (!outcome || !('stored' in outcome)) throw new NotFoundError(CASE_NOT_FOUND_DETAIL);
    context.logFields.confirmationResult = outcome.result;
    return jsonResponse(200, toCaseView(outcome.stored));
  };
}

export function buildTestConfirmCaseHandler(deps: TestConfirmCaseDeps) {
  return apiHandler({ scope: 'cases:write', keys: deps.keys }, testConfirmCase(deps));
}

const adapters = caseChangeAdapters();
export const handler = buildTestConfirmCaseHandler({ keys: adapters.keys, changes: adapters.changes });
