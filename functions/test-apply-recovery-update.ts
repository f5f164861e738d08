import { testRecoveryAdapters } from '../lib/adapters/production-adapters.js';
import type { ApiKeyStore } from '../lib/auth/ports.js';
import type { RecoveryDeps } from '../lib/cases/apply-recovery-change.js';
import { applyTestRecoveryUpdate } from '../lib/cases/apply-test-recovery-update.js';
import { caseIdToRead, CASE_NOT_FOUND_DETAIL } from '../lib/cases/read-case.js';
import { NotFoundError } from '../lib/errors.js';
import { apiHandler, jsonResponse, type CoreHandler } from '../lib/http/api-handler.js';
import { callerOf } from '../lib/http/types.js';

/**
 * POST /api/v1/test-helpers/cases/{id}/recovery (test keys only, scope cases:write): one recovery
 * update as the back office would send it (`recovery_started`, `payment_collected`, `closed`),
 * without `updateId` and `by`, on a test case, so partners rehearse every transition and amount.
 * 200 with the case record after it; a refused update leaves the case unchanged and answers 409
 * (CASE_NOT_OPEN, INVALID_TRANSITION, PAYMENT_EXCEEDS_OUTSTANDING, PAYMENT_LIMIT_REACHED). With a
 * live key the route does not exist (404), like the confirm helper: live cases move only by the
 * back office.
 */
export interface TestApplyRecoveryUpdateDeps {
  keys: ApiKeyStore;
  recovery: RecoveryDeps;
  now: () => Date;
}

export const TEST_HELPER_LIVE_KEY_DETAIL = 'No resource matches this path for a live-mode key: test helpers exist for test-mode keys only.';

export function testApplyRecoveryUpdate(deps: TestApplyRecoveryUpdateDeps): CoreHandler {
  return async (event, context) => {
    const caller = callerOf(context);
    // Before the body is looked at: for a live key the route does not exist, whatever it sends.
    if (caller.mode !== 'test') throw new NotFoundError(TEST_HELPER_LIVE_KEY_DETAIL);
    const caseId = caseIdToRead(event.pathParameters?.id);
    if (caseId === undefined) throw new NotFoundError(CASE_NOT_FOUND_DETAIL);
    context.logFields.caseId = caseId;
    const view = await applyTestRecoveryUpdate(
      deps.recovery,
      { companyId: caller.companyId, caseId, body: event.body as unknown, requestId: context.requestId, now: deps.now() },
      context.deadline,
    );
    return jsonResponse(200, view);
  };
}

export function buildTestApplyRecoveryUpdateHandler(deps: TestApplyRecoveryUpdateDeps) {
  return apiHandler({ scope: 'cases:write', keys: deps.keys, jsonBody: true }, testApplyRecoveryUpdate(deps));
}

const adapters = testRecoveryAdapters();
export const handler = buildTestApplyRecoveryUpdateHandler({ keys: adapters.keys, recovery: adapters.recovery, now: adapters.now });
