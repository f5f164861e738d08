import type { Deadline } from '../../deadline.js';
import type { Mode } from '../../mode.js';
import type { DebtorVerificationStatus } from '../case-record.js';
import { lifecycleOf } from '../case-record.js';
import { settleStatus } from '../case-lifecycle.js';
import { recordDebtorVerification, settleCaseStatus, type ChangeCaseDeps } from '../change-case.js';
import type { VerificationAttempt, VerificationRetries } from './ports.js';
import { verifyDebtor, type RetryReason, type VerifyDebtorDeps } from './verify-debtor.js';

/**
 * The verification worker's use cases (functions/verify-debtors.ts runs them for the table's
 * stream and for its retry queue): what happens to a new case after its creation, and one
 * verification attempt of a case's debtor. Both are safe to run twice or at once for the same
 * case: the change use cases write a change only while the case is still as the rule saw it, so a
 * second delivery or a second worker finds the change made and writes no second event.
 */
export interface CaseVerificationDeps {
  changes: ChangeCaseDeps;
  verifier: VerifyDebtorDeps;
  retries: VerificationRetries;
}

export type AttemptResult =
  /** The outcome is on the case now (`changed`), or another worker recorded one first. */
  | { kind: 'recorded'; status: DebtorVerificationStatus; source: 'sandbox' | 'cache' | 'registry'; changed: boolean }
  /** Nothing to verify: the case is gone, withdrawn, or no longer `PENDING` (a repeated delivery). */
  | { kind: 'nothing-to-do'; reason: 'not_found' | 'not_pending' | 'withdrawn' | 'closed' }
  | { kind: 'retry-scheduled'; at: Date; reason: RetryReason; failures: number }
  /** Still `PENDING` after the whole retry horizon: the operator alarm's case. */
  | { kind: 'exhausted'; failures: number; detail: string };

/** One attempt at verifying a case's debtor: the case as stored now, the verifier, then the outcome recorded or the next attempt scheduled. */
export async function attemptVerification(
  deps: CaseVerificationDeps,
  attempt: VerificationAttempt,
  deadline?: Deadline,
): Promise<AttemptResult> {
  const stored = await deps.changes.store.get(attempt.mode, attempt.caseId, deadline);
  if (!stored) return { kind: 'nothing-to-do', reason: 'not_found' };
  const lifecycle = lifecycleOf(stored);
  // A withdrawn case is terminal: no registry request is spent on it (and it leaves the alarm's count).
  if (lifecycle.status === 'WITHDRAWN') return { kind: 'nothing-to-do', reason: 'withdrawn' };
  // So is a closed one (a closing payment may come before the debtor's verification ends).
  if (lifecycle.status === 'CLOSED') return { kind: 'nothing-to-do', reason: 'closed' };
  if (lifecycle.debtorVerification.status !== 'PENDING' || stored.debtorCompanyNo === undefined)
    return { kind: 'nothing-to-do', reason: 'not_pending' };

  const result = await verifyDebtor(deps.verifier, {
    mode: attempt.mode,
    companyId: stored.companyId,
    companyNumber: stored.debtorCompanyNo,
    debtorName: stored.debtorName,
    now: deps.changes.now(),
    firstAttemptAt: new Date(attempt.firstAttemptAt),
    failures: attempt.failures,
  });
  if (result.kind === 'exhausted') return { kind: 'exhausted', failures: result.failures, detail: result.detail };
  if (result.kind === 'retry') {
    await deps.retries.schedule({ ...attempt, failures: result.failures }, result.at);
    return { kind: 'retry-scheduled', at: result.at, reason: result.reason, failures: result.failures };
  }
  const recorded = await recordDebtorVerification(deps.changes, attempt.mode, attempt.caseId, result.outcome, deadline);
  if (recorded.kind === 'not_found') return { kind: 'nothing-to-do', reason: 'not_found' };
  if (recorded.kind === 'unchanged') return { kind: 'nothing-to-do', reason: recorded.reason };
  return { kind: 'recorded', status: result.outcome.status, source: result.source, changed: true };
}

export interface NewCaseResult {
  /** `READY` when the new case's gates were already satisfied and this delivery moved it. */
  settled: boolean;
  verification?: AttemptResult;
}

/** A case just created (the stream's INSERT): settle its status, then verify its debtor when it is `PENDING`. */
export async function processNewCase(
  deps: CaseVerificationDeps,
  created: { mode: Mode; caseId: string; pending: boolean; settles: boolean },
  deadline?: Deadline,
): Promise<NewCaseResult> {
  let settled = false;
  if (created.settles) settled = (await settleCaseStatus(deps.changes, created.mode, created.caseId, deadline)).kind === 'changed';
  if (!created.pending) return { settled };
  const firstAttemptAt = deps.changes.now().toISOString();
  const verification = await attemptVerification(
    deps,
    { caseId: created.caseId, mode: created.mode, firstAttemptAt, failures: 0 },
    deadline,
  );
  return { settled, verification };
}

/**
 * What a new case's image says the worker has to do, without a read: whether the settle rule
 * would move it (a change that raced ahead is caught by the change use case's own read) and
 * whether its debtor waits for verification.
 */
export function workForNewCase(image: Parameters<typeof lifecycleOf>[0], now: Date): { settles: boolean; pending: boolean } {
  const lifecycle = lifecycleOf(image);
  return {
    settles: settleStatus(lifecycle, now).changed,
    pending: lifecycle.debtorVerification.status === 'PENDING' && image.debtorCompanyNo !== undefined,
  };
}
