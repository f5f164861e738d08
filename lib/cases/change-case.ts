import type { Deadline } from '../deadline.js';
import { NotFoundError, ServiceUnavailableError } from '../errors.js';
import type { Mode } from '../mode.js';
import {
  buildCaseEvent,
  confirmCase,
  recordVerification,
  settleStatus,
  withdrawCase,
  type CaseEvent,
  type ConfirmUnchangedReason,
  type DebtorVerificationOutcome,
  type LifecycleChange,
  type LifecycleChanged,
  type LifecycleState,
  type SettleUnchangedReason,
  type VerificationUnchangedReason,
} from './case-lifecycle.js';
import { lifecycleOf, toCaseView, type StoredCase } from './case-record.js';
import type { CaseChange, CaseChangeStore, ConfirmationSource, ConfirmedBy } from './ports.js';
import { CASE_NOT_FOUND_DETAIL } from './read-case.js';

/**
 * The use cases that change a case after creation: each reads the case, asks the pure rule of
 * case-lifecycle.ts what the change is, and writes the change, its event (and a confirmation
 * record, or the guard's release) in one transaction conditional on the state the rule saw. When
 * another change won meanwhile (`stale`), it reads again and asks the rule again: so two changes
 * racing for one case give one winner, one event each, and a consistent history; and a change
 * delivered twice (a stream record, a retried request) finds it already made and writes nothing.
 * Lifecycle changes only move forward (statuses, gates and verification never return to an
 * earlier value), so a few rounds always settle it.
 */
export interface ChangeCaseDeps {
  store: CaseChangeStore;
  now: () => Date;
}

/** More stale rounds than a case has changes (at most one per gate and two statuses) means something is wrong. */
const MAX_ROUNDS = 6;

export type ChangeResult<Reason extends string> =
  | { kind: 'not_found' }
  | { kind: 'unchanged'; reason: Reason; stored: StoredCase }
  | { kind: 'changed'; stored: StoredCase; event: CaseEvent };

interface ChangeRequest<Reason extends string> {
  mode: Mode;
  caseId: string;
  /** The caller's company: another company's case is not found. Absent for the worker, which acts on the case itself. */
  companyId?: string;
  rule: (state: LifecycleState, at: Date) => LifecycleChange<Reason>;
  /**
   * The case as already read for this request (a route reads it in parallel with the API key):
   * the first round starts from it instead of reading again. Later rounds always read.
   */
  firstRead?: { stored: StoredCase | undefined };
  /** What else the change's transaction writes, given the case and the change. */
  extras?: (before: StoredCase, changed: LifecycleChanged, event: CaseEvent) => Pick<CaseChange, 'confirmation' | 'releaseInvoiceRef'>;
}

function caseAfter(before: StoredCase, changed: LifecycleChanged): StoredCase {
  const lifecycle = lifecycleOf(before);
  return {
    ...before,
    ...changed.state,
    updatedAt: changed.at,
    // Every change counts (recovery changes condition on it: ports.ts RecoveryStore).
    revision: (before.revision ?? 0) + 1,
    statusHistory: changed.historyEntry ? [...lifecycle.statusHistory, changed.historyEntry] : lifecycle.statusHistory,
  };
}

export async function changeCase<Reason extends string>(
  deps: ChangeCaseDeps,
  request: ChangeRequest<Reason>,
  deadline?: Deadline,
): Promise<ChangeResult<Reason>> {
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const before =
      round === 0 && request.firstRead ? request.firstRead.stored : await deps.store.get(request.mode, request.caseId, deadline);
    if (!before || (request.companyId !== undefined && before.companyId !== request.companyId)) return { kind: 'not_found' };
    const { status, recoveryGate, debtorVerification } = lifecycleOf(before);
    const result = request.rule({ status, recoveryGate, debtorVerification }, deps.now());
    if (!result.changed) return { kind: 'unchanged', reason: result.reason, stored: before };
    const after = caseAfter(before, result);
    const event = buildCaseEvent(toCaseView(after, { now: new Date(result.at) }), result.at, result.previousAttributes);
    const outcome = await deps.store.apply({ before, after, event, ...request.extras?.(before, result, event) }, deadline);
    if (outcome === 'applied') return { kind: 'changed', stored: after, event };
  }
  throw new ServiceUnavailableError();
}

export interface WithdrawCommand {
  mode: Mode;
  companyId: string;
  caseId: string;
  reason?: string;
  /** The case as the route already read it (see ChangeRequest.firstRead). */
  firstRead?: { stored: StoredCase | undefined };
}

/**
 * `POST /api/v1/cases/{id}/withdraw`: the case as it is after (withdrawn now, or before). Another
 * company's case is not found, with the same answer as a read of it (`CASE_NOT_FOUND_DETAIL`).
 */
export async function withdrawCaseFor(deps: ChangeCaseDeps, command: WithdrawCommand, deadline?: Deadline): Promise<StoredCase> {
  const result = await changeCase(
    deps,
    {
      mode: command.mode,
      caseId: command.caseId,
      companyId: command.companyId,
      ...(command.firstRead ? { firstRead: command.firstRead } : {}),
      rule: (state, at) => withdrawCase(state, at, command.reason),
      extras: () => ({ releaseInvoiceRef: true }),
    },
    deadline,
  );
  if (result.kind === 'not_found') throw new NotFoundError(CASE_NOT_FOUND_DETAIL);
  return result.stored;
}

/** One case's answer in a confirmation request. */
export type ConfirmCaseOutcome =
  | { caseId: string; result: 'confirmed' | ConfirmUnchangedReason; stored: StoredCase }
  | { caseId: string; result: 'not_found' }
  /** Storage could not answer for this case in time (it may or may not have been confirmed): send its id again. */
  | { caseId: string; result: 'retry'; message: string };

export const CONFIRM_RETRY_MESSAGE =
  'This case could not be confirmed now: storage was unavailable or too slow, and the confirmation may or may not have been ' +
  'recorded. Send this case id again; a case already confirmed then answers already_confirmed.';

export interface ConfirmCommand {
  mode: Mode;
  companyId: string;
  caseIds: readonly string[];
  confirmedBy: ConfirmedBy;
  requestId: string;
  source: ConfirmationSource;
  /** Recorded on each confirmation record (ConfirmationRecord.principal). */
  principal?: string;
}

/**
 * One confirmation per case id, in parallel; one outcome per id, in the order given. Each stands on
 * its own: a case that met a transient storage failure (ServiceUnavailableError: retries or the
 * deadline ran out) answers `retry`, and the others keep their results (one failure among a
 * hundred must not turn 99 confirmations into an error). Any other error is a defect and is thrown.
 */
export async function confirmCases(deps: ChangeCaseDeps, command: ConfirmCommand, deadline?: Deadline): Promise<ConfirmCaseOutcome[]> {
  return Promise.all(
    command.caseIds.map((caseId) =>
      confirmOne(deps, command, caseId, deadline).catch((error: unknown): ConfirmCaseOutcome => {
        if (error instanceof ServiceUnavailableError) return { caseId, result: 'retry', message: CONFIRM_RETRY_MESSAGE };
        throw error;
      }),
    ),
  );
}

async function confirmOne(deps: ChangeCaseDeps, command: ConfirmCommand, caseId: string, deadline?: Deadline): Promise<ConfirmCaseOutcome> {
  const result = await changeCase(
    deps,
    {
      mode: command.mode,
      caseId,
      companyId: command.companyId,
      rule: confirmCase,
      extras: (before, changed, event) => ({
        confirmation: {
          caseId,
          companyId: before.companyId,
          mode: before.mode,
          confirmedBy: command.confirmedBy,
          confirmedAt: changed.at,
          requestId: command.requestId,
          source: command.source,
          ...(command.principal === undefined ? {} : { principal: command.principal }),
          eventId: event.id,
        },
      }),
    },
    deadline,
  );
  if (result.kind === 'not_found') return { caseId, result: 'not_found' };
  return { caseId, result: result.kind === 'changed' ? 'confirmed' : result.reason, stored: result.stored };
}

/** The verifier's outcome for a case (the worker: no company to compare). */
export function recordDebtorVerification(
  deps: ChangeCaseDeps,
  mode: Mode,
  caseId: string,
  outcome: DebtorVerificationOutcome,
  deadline?: Deadline,
): Promise<ChangeResult<VerificationUnchangedReason>> {
  return changeCase(deps, { mode, caseId, rule: (state, at) => recordVerification(state, outcome, at) }, deadline);
}

/** A new case whose gates are already satisfied moves on to `READY` (the worker, for every new case). */
export function settleCaseStatus(
  deps: ChangeCaseDeps,
  mode: Mode,
  caseId: string,
  deadline?: Deadline,
): Promise<ChangeResult<SettleUnchangedReason>> {
  return changeCase(deps, { mode, caseId, rule: settleStatus }, deadline);
}
