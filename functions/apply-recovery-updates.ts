import { recoveryAdapters } from '../lib/adapters/production-adapters.js';
import { applyRecoveryUpdates } from '../lib/cases/apply-recovery-update.js';
import type { RecoveryDeps } from '../lib/cases/apply-recovery-change.js';
import { parseRecoveryUpdatesRequest, type RecoveryUpdatesResponse } from '../lib/cases/recovery-updates-request.js';
import { jsonResponse, type CoreHandler } from '../lib/http/api-handler.js';
import { internalHandler } from '../lib/http/internal-handler.js';
import { validRequestBody } from '../lib/http/valid-request-body.js';

/**
 * POST /internal/v1/recovery-updates: the recovery back office reports what it did on live cases
 * (product rules "Recovery and money"). Authorised by AWS IAM, never by a partner key
 * (lib/http/internal-handler.ts), like the dashboard's confirmations. Live cases only: a partner
 * rehearses test cases with the test-mode helper. A bad envelope is a 400; past it, every update
 * gets its own result, in the order given, and the answer is 200 even when some of them were
 * malformed (`invalid`), refused by the rules (`invalid_state`) or met a transient storage fault
 * (`retry`, that update only): apply-recovery-update.ts applyRecoveryUpdates.
 */
export interface ApplyRecoveryUpdatesDeps {
  recovery: RecoveryDeps;
  now: () => Date;
}

export function applyRecoveryUpdatesCore(deps: ApplyRecoveryUpdatesDeps): CoreHandler {
  return async (event, context) => {
    const { companyId, updates } = validRequestBody(
      parseRecoveryUpdatesRequest(event.body as unknown),
      context,
      'recovery updates request',
    );
    const results = await applyRecoveryUpdates(
      deps.recovery,
      { companyId, mode: 'live', updates, requestId: context.requestId, now: deps.now(), source: 'back-office' },
      context.deadline,
    );
    const body: RecoveryUpdatesResponse = { results };
    // Counts only: an update's fields (amounts, notes, names) stay out of the logs.
    const counts: Record<string, number> = {};
    for (const { result } of results) counts[result] = (counts[result] ?? 0) + 1;
    Object.assign(context.logFields, { companyId, recoveryUpdateResults: counts });
    return jsonResponse(200, body);
  };
}

export function buildApplyRecoveryUpdatesHandler(deps: ApplyRecoveryUpdatesDeps) {
  return internalHandler(applyRecoveryUpdatesCore(deps));
}

export const handler = buildApplyRecoveryUpdatesHandler(recoveryAdapters());
