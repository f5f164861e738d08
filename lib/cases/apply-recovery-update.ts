import type { Deadline } from '../deadline.js';
import {
  CaseNotOpenError,
  InvalidRequestError,
  InvalidTransitionError,
  NotFoundError,
  PaymentExceedsOutstandingError,
  PaymentLimitReachedError,
  ServiceUnavailableError,
  type CodedError,
} from '../errors.js';
import type { Mode } from '../mode.js';
import { toCaseView, type CaseView } from './case-record.js';
import { exactPence } from './money.js';
import type { RecoveryUpdateSource } from './ports.js';
import { applyRecoveryChange, type RecoveryDeps } from './apply-recovery-change.js';
import {
  decideRecoveryUpdate,
  fieldErrorsOf,
  newPaymentId,
  recoveryUpdateSchema,
  type RecoveryActor,
  type RecoveryUpdateBody,
} from './recovery.js';

/**
 * The recovery back office's updates (`POST /internal/v1/recovery-updates`), the operator's admin
 * command and the test-mode helper: each update is decided by recovery.ts and written with its
 * event, its payment item (payment_collected) and, when it has an updateId, its immutable record,
 * in one transaction. The same updateId again answers `already_applied` and changes nothing, even
 * when two requests carry it at once (the record's put is conditional).
 */
export const RECOVERY_RETRY_MESSAGE =
  'This update could not be applied now: storage was unavailable or too slow, and it may or may not have been applied. ' +
  'Send it again with the same updateId; if it was applied, it then answers already_applied.';

export type RecoveryUpdateResultKind = 'applied' | 'already_applied' | 'not_found' | 'invalid_state' | 'invalid' | 'retry';

export type RecoveryUpdateOutcome =
  | { result: 'applied'; case: CaseView }
  | { result: 'already_applied' }
  | { result: 'not_found'; message: string }
  /** The rules refused it (the case unchanged): the error says which (CASE_NOT_OPEN, INVALID_TRANSITION, PAYMENT_...). */
  | { result: 'invalid_state'; message: string; error: CodedError }
  | { result: 'invalid'; message: string; error: InvalidRequestError }
  | { result: 'retry'; message: string };

/** One update, checked: the back office's (with updateId and by) or the test helper's (without). */
export type CheckedRecoveryUpdate = RecoveryUpdateBody & { caseId: string; updateId?: string; by?: RecoveryActor };

export interface ApplyRecoveryUpdateCommand {
  companyId: string;
  mode: Mode;
  update: CheckedRecoveryUpdate;
  requestId: string;
  now: Date;
  source: RecoveryUpdateSource;
}

/** Applies one checked update; every refusal is an outcome, and only a defect throws. */
export async function applyRecoveryUpdate(
  deps: RecoveryDeps,
  command: ApplyRecoveryUpdateCommand,
  deadline?: Deadline,
): Promise<RecoveryUpdateOutcome> {
  const { update } = command;
  try {
    if (update.updateId !== undefined) {
      // Checked before deciding: an update applied earlier may no longer fit the case it changed.
      const earlier = await deps.store.findUpdate(command.mode, command.companyId, update.updateId, deadline);
      if (earlier) return { result: 'already_applied' };
    }
    const { updateId, by, caseId, ...body } = update;
    const result = await applyRecoveryChange(
      deps,
      {
        mode: command.mode,
        companyId: command.companyId,
        caseId,
        at: command.now,
        decide: (stored, at) => decideRecoveryUpdate(stored, body, at),
        extras: (before, decision, event) => ({
          ...(body.type === 'payment_collected'
            ? {
                payment: {
                  paymentId: newPaymentId(),
                  caseId,
                  companyId: before.companyId,
                  mode: before.mode,
                  sequence: decision.after.paymentFacts!.length,
                  source: 'COLLECTED' as const,
                  amountPence: exactPence(body.amount!)!,
                  paidAt: body.paidAt!,
                  ...(body.reference !== undefined ? { reference: body.reference } : {}),
                  recordedAt: decision.at,
                  requestId: command.requestId,
                },
              }
            : {}),
          ...(updateId !== undefined && by !== undefined
            ? {
                update: {
                  updateId,
                  companyId: before.companyId,
                  mode: before.mode,
                  caseId,
                  update: body,
                  by,
                  appliedAt: decision.at,
                  requestId: command.requestId,
                  source: command.source,
                  eventId: event.id,
                },
              }
            : {}),
        }),
      },
      deadline,
    );
    if (result.kind === 'already_applied') return { result: 'already_applied' };
    return { result: 'applied', case: toCaseView(result.stored, { now: command.now }) };
  } catch (error) {
    if (error instanceof NotFoundError) return { result: 'not_found', message: error.detail };
    if (
      error instanceof CaseNotOpenError ||
      error instanceof InvalidTransitionError ||
      error instanceof PaymentExceedsOutstandingError ||
      error instanceof PaymentLimitReachedError
    )
      return { result: 'invalid_state', message: error.detail, error };
    if (error instanceof InvalidRequestError) return { result: 'invalid', message: messageOf(error), error };
    if (error instanceof ServiceUnavailableError) return { result: 'retry', message: RECOVERY_RETRY_MESSAGE };
    throw error;
  }
}

function messageOf(error: InvalidRequestError): string {
  const errors = error.extensions.errors as { field: string; message: string }[] | undefined;
  return errors?.length ? errors.map((e) => e.message).join('; ') : error.detail;
}

export interface ApplyRecoveryUpdatesCommand {
  companyId: string;
  mode: Mode;
  /** The updates as received: each is checked on its own (a bad one is `invalid`, the others go on). */
  updates: readonly unknown[];
  requestId: string;
  now: Date;
  source: RecoveryUpdateSource;
}

export interface RecoveryUpdateResult {
  updateId: string | null;
  result: RecoveryUpdateResultKind;
  message?: string;
}

/**
 * A batch of updates: one result per update, in the order given. One update's failure never
 * changes another's result. Updates of different cases run in parallel; those of one case run in
 * the order given (a `recovery_started` then a `closed` of the same case in one batch both apply).
 */
export async function applyRecoveryUpdates(
  deps: RecoveryDeps,
  command: ApplyRecoveryUpdatesCommand,
  deadline?: Deadline,
): Promise<RecoveryUpdateResult[]> {
  const results: RecoveryUpdateResult[] = new Array<RecoveryUpdateResult>(command.updates.length);
  const byCase = new Map<string, { index: number; update: CheckedRecoveryUpdate }[]>();
  command.updates.forEach((raw, index) => {
    const parsed = recoveryUpdateSchema.safeParse(raw);
    if (!parsed.success) {
      const updateId = (raw as { updateId?: unknown } | null)?.updateId;
      const message = fieldErrorsOf(parsed.error)
        .map((e) => `${e.field}: ${e.message}`)
        .join('; ');
      results[index] = { updateId: typeof updateId === 'string' ? updateId : null, result: 'invalid', message };
      return;
    }
    const list = byCase.get(parsed.data.caseId) ?? [];
    list.push({ index, update: parsed.data });
    byCase.set(parsed.data.caseId, list);
  });
  await Promise.all(
    [...byCase.values()].map(async (list) => {
      // One case's updates get strictly later times, a millisecond apart, so their statusHistory
      // entries and events (listed by time) keep the order they were given in.
      let at = command.now.getTime();
      for (const { index, update } of list) {
        const outcome = await applyRecoveryUpdate(
          deps,
          {
            companyId: command.companyId,
            mode: command.mode,
            update,
            requestId: command.requestId,
            now: new Date(at++),
            source: command.source,
          },
          deadline,
        );
        results[index] = {
          updateId: update.updateId ?? null,
          result: outcome.result,
          ...('message' in outcome ? { message: outcome.message } : {}),
        };
      }
    }),
  );
  return results;
}
