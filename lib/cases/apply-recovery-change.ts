import type { Deadline } from '../deadline.js';
import { NotFoundError, ServiceUnavailableError } from '../errors.js';
import type { Mode } from '../mode.js';
import { buildCaseEvent, type CaseEvent } from './case-lifecycle.js';
import { toCaseView, type StoredCase } from './case-record.js';
import type { RecoveryChange, RecoveryStore } from './ports.js';
import { CASE_NOT_FOUND_DETAIL } from './read-case.js';
import type { RecoveryDecision } from './recovery.js';

/**
 * The loop every recovery change runs (record-payment.ts, apply-recovery-update.ts): read the case,
 * ask the pure rule (recovery.ts), write the change with its event and records in one transaction
 * conditional on the revision read. When another change won meanwhile (`stale`), read again and
 * decide again: so of two payments racing, the second is decided against the first's outstanding,
 * and refused if it no longer fits. A refusal is the rule's domain error, thrown as it is.
 */
export interface RecoveryDeps {
  store: RecoveryStore;
}

/** Rounds before giving up as unavailable: each lost round means another change of the same case landed. */
const MAX_ROUNDS = 12;

export interface RecoveryChangeRequest {
  mode: Mode;
  companyId: string;
  caseId: string;
  at: Date;
  decide: (stored: StoredCase, at: Date) => RecoveryDecision;
  /** The payment item, update record, key's answer ... the transaction also writes. */
  extras?: (
    before: StoredCase,
    decision: RecoveryDecision,
    event: CaseEvent,
  ) => Pick<RecoveryChange, 'payment' | 'update' | 'completeClaim'>;
  /** The case as already read (in parallel with other work), for the first round only. */
  firstRead?: StoredCase | undefined;
}

export type RecoveryChangeResult =
  { kind: 'applied'; stored: StoredCase; event: CaseEvent; change: RecoveryChange } | { kind: 'already_applied' };

export async function applyRecoveryChange(
  deps: RecoveryDeps,
  request: RecoveryChangeRequest,
  deadline?: Deadline,
): Promise<RecoveryChangeResult> {
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const before = round === 0 && 'firstRead' in request ? request.firstRead : await deps.store.get(request.mode, request.caseId, deadline);
    if (!before || before.companyId !== request.companyId) throw new NotFoundError(CASE_NOT_FOUND_DETAIL);
    const decision = request.decide(before, request.at);
    const event = buildCaseEvent(toCaseView(decision.after, { now: new Date(decision.at) }), decision.at, decision.previousAttributes);
    const change: RecoveryChange = {
      before,
      after: decision.after,
      event,
      ...request.extras?.(before, decision, event),
      ...(decision.closed ? { releaseInvoiceRef: true } : {}),
    };
    const outcome = await deps.store.apply(change, deadline);
    if (outcome === 'applied') return { kind: 'applied', stored: decision.after, event, change };
    if (outcome === 'already_applied') return { kind: 'already_applied' };
  }
  throw new ServiceUnavailableError();
}
