import type { Deadline } from '../deadline.js';
import { InvalidRequestError, NotFoundError, ServiceUnavailableError } from '../errors.js';
import type { CaseView } from './case-record.js';
import { applyRecoveryUpdate } from './apply-recovery-update.js';
import type { RecoveryDeps } from './apply-recovery-change.js';
import { fieldErrorsOf, recoveryUpdateBodySchema } from './recovery.js';

export interface ApplyTestRecoveryUpdateCommand {
  companyId: string;
  caseId: string;
  /** The request body as received (checked here: recoveryUpdateBodySchema, strict). */
  body: unknown;
  requestId: string;
  now: Date;
}

/**
 * The test-mode recovery helper (`POST /api/v1/test-helpers/cases/{id}/recovery`): one update as
 * the back office would send it, without `updateId` and `by`, on a test case, so a partner
 * rehearses every transition and amount. The same rules and the same transaction as the back
 * office's (apply-recovery-update.ts), with no update record: nothing identifies a rehearsal to
 * deduplicate, and a repeat is simply decided again (a second `recovery_started` is refused).
 *
 * Answers the case after the update, or throws what refused it: INVALID_REQUEST (the body),
 * NOT_FOUND, CASE_NOT_OPEN, INVALID_TRANSITION, PAYMENT_EXCEEDS_OUTSTANDING, PAYMENT_LIMIT_REACHED,
 * SERVICE_UNAVAILABLE. Always test mode: the caller has checked the key is a test key.
 */
export async function applyTestRecoveryUpdate(
  deps: RecoveryDeps,
  command: ApplyTestRecoveryUpdateCommand,
  deadline?: Deadline,
): Promise<CaseView> {
  const parsed = recoveryUpdateBodySchema.safeParse(command.body);
  if (!parsed.success) throw new InvalidRequestError('The recovery update was refused; see "errors".', fieldErrorsOf(parsed.error));
  const outcome = await applyRecoveryUpdate(
    deps,
    {
      companyId: command.companyId,
      mode: 'test',
      update: { ...parsed.data, caseId: command.caseId },
      requestId: command.requestId,
      now: command.now,
      source: 'test-helper',
    },
    deadline,
  );
  switch (outcome.result) {
    case 'applied':
      return outcome.case;
    case 'not_found':
      throw new NotFoundError(outcome.message);
    // The rule's own domain error (CASE_NOT_OPEN, INVALID_TRANSITION, PAYMENT_...), with its extensions.
    case 'invalid_state':
    case 'invalid':
      throw outcome.error;
    case 'retry':
      throw new ServiceUnavailableError();
    case 'already_applied':
      // Only an update with an updateId can be already applied; this one has none.
      throw new Error('a test-helper recovery update without updateId answered already_applied');
  }
}
