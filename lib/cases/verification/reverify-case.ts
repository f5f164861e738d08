import type { Deadline } from '../../deadline.js';
import type { Mode } from '../../mode.js';
import { lifecycleOf, type CaseStatus, type DebtorVerificationStatus, type RecoveryGate, type StoredCase } from '../case-record.js';
import type { CaseLister } from '../ports.js';
import { processNewCase, workForNewCase, type CaseVerificationDeps } from './verify-case-debtor.js';

/**
 * The operator's way out for a case left `DRAFT` (product rules "Webhook isolation and
 * operators"): its verifier record exhausted its retries (the registry failed for 24 hours, the
 * `DebtorVerificationExhausted` alarm), or its stream record never reached the worker. It runs
 * what the worker runs for a new case (verify-case-debtor.ts): settle the status when the gates
 * are satisfied, and verify a `PENDING` debtor as a first attempt, so a registry that still fails
 * starts a fresh 24-hour retry series on the worker's queue. Safe to run again and beside the
 * worker: the change use cases write each change once.
 */
export type ReverifyResult =
  /** Moved to `READY`: its gates were already satisfied. */
  | 'settled'
  /** The registry's (or the sandbox's) answer is on the case now. */
  | 'verified'
  /** The registry still could not answer: the next attempt is on the worker's retry queue. */
  | 'retry_scheduled'
  /** Nothing to do (see `reason`). */
  | 'unchanged'
  | 'not_found';

export type UnchangedReason =
  | 'withdrawn'
  /** `READY` or `ON_HOLD` already. */
  | 'not_draft'
  /** Its verification is settled; its recovery gate waits for the partner's confirmation. */
  | 'awaiting_confirmation';

export interface ReverifyOutcome {
  caseId: string;
  mode: Mode;
  /** The case's company (absent when not found). */
  companyId?: string;
  result: ReverifyResult;
  reason?: UnchangedReason;
  /** The case as it is after the command (absent when not found). */
  status?: CaseStatus;
  recoveryGate?: RecoveryGate;
  debtorVerification?: DebtorVerificationStatus;
  /** retry_scheduled: when the worker tries again (ISO 8601), and why. */
  nextAttemptAt?: string;
  detail?: string;
}

export interface ReverifyCaseRequest {
  mode: Mode;
  /**
   * Another company's case is not found. Absent: the case whatever its company, as the worker
   * acts on it (a dead-lettered retry message names the case and mode only).
   */
  companyId?: string;
  caseId: string;
}

function stateOf(stored: StoredCase): Pick<ReverifyOutcome, 'companyId' | 'status' | 'recoveryGate' | 'debtorVerification'> {
  const lifecycle = lifecycleOf(stored);
  return {
    companyId: stored.companyId,
    status: lifecycle.status,
    recoveryGate: lifecycle.recoveryGate,
    debtorVerification: lifecycle.debtorVerification.status,
  };
}

function unchangedReason(stored: StoredCase): UnchangedReason {
  const { status } = lifecycleOf(stored);
  if (status === 'WITHDRAWN') return 'withdrawn';
  if (status !== 'DRAFT') return 'not_draft';
  return 'awaiting_confirmation';
}

export async function reverifyCase(
  deps: CaseVerificationDeps,
  request: ReverifyCaseRequest,
  deadline?: Deadline,
): Promise<ReverifyOutcome> {
  const { mode, caseId } = request;
  const before = await deps.changes.store.get(mode, caseId, deadline);
  if (!before || (request.companyId !== undefined && before.companyId !== request.companyId)) return { caseId, mode, result: 'not_found' };
  const work = workForNewCase(before, deps.changes.now());
  if (!work.settles && !work.pending) return { caseId, mode, result: 'unchanged', reason: unchangedReason(before), ...stateOf(before) };

  const done = await processNewCase(deps, { mode, caseId, ...work }, deadline);
  const after = (await deps.changes.store.get(mode, caseId, deadline)) ?? before;
  const state = stateOf(after);
  const verification = done.verification;
  if (verification?.kind === 'recorded') return { caseId, mode, result: 'verified', ...state };
  if (verification?.kind === 'retry-scheduled')
    return { caseId, mode, result: 'retry_scheduled', nextAttemptAt: verification.at.toISOString(), detail: verification.reason, ...state };
  // A fresh attempt has the whole horizon ahead; kept apart all the same rather than called a success.
  if (verification?.kind === 'exhausted') return { caseId, mode, result: 'unchanged', detail: verification.detail, ...state };
  if (done.settled) return { caseId, mode, result: 'settled', ...state };
  // Another worker made the change first (a replay, the retry queue): the case says where it is.
  return { caseId, mode, result: 'unchanged', reason: unchangedReason(after), ...state };
}

/**
 * Every case of a company and mode still `DRAFT` and created before `createdBefore` (ISO 8601),
 * newest first: the company's case list index (every shard, the date as the key range, the status
 * as a filter; table-keys.ts), a page at a time. No table scan: what it reads is the company's
 * cases older than the bound.
 */
export async function* casesLeftDraft(
  lister: Pick<CaseLister, 'page'>,
  request: { mode: Mode; companyId: string; createdBefore: string },
  deadline?: Deadline,
): AsyncGenerator<StoredCase> {
  let position: Parameters<CaseLister['page']>[0]['position'];
  do {
    const page = await lister.page(
      {
        mode: request.mode,
        companyId: request.companyId,
        filters: { status: 'DRAFT', createdBefore: request.createdBefore },
        limit: 100,
        ...(position ? { position } : {}),
      },
      deadline,
    );
    yield* page.cases;
    position = page.next ?? undefined;
  } while (position);
}
