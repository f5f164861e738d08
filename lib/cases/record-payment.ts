import type { Deadline } from '../deadline.js';
import { InvalidRequestError } from '../errors.js';
import type { Mode } from '../mode.js';
import { toCaseView, type CaseView } from './case-record.js';
import { exactPence } from './money.js';
import { applyRecoveryChange, type RecoveryDeps } from './apply-recovery-change.js';
import { decidePayment, fieldErrorsOf, newPaymentId, paymentRequestSchema, toPaymentView, type PaymentView } from './recovery.js';

export interface RecordPaymentCommand {
  companyId: string;
  mode: Mode;
  caseId: string;
  /** The request body as received (checked here: paymentRequestSchema). */
  payment: unknown;
  requestId: string;
  now: Date;
}

/**
 * `POST /api/v1/cases/{id}/payments`: the partner reports money the debtor paid directly
 * (`DIRECT`). Answers the payment and the case after it, or throws: INVALID_REQUEST (the body),
 * NOT_FOUND (foreign, unknown or other-mode case), CASE_NOT_OPEN, PAYMENT_EXCEEDS_OUTSTANDING,
 * PAYMENT_LIMIT_REACHED (recovery.ts decidePayment), SERVICE_UNAVAILABLE.
 */
export async function recordPayment(
  deps: RecoveryDeps,
  command: RecordPaymentCommand,
  deadline?: Deadline,
): Promise<{ payment: PaymentView; case: CaseView }> {
  const parsed = paymentRequestSchema.safeParse(command.payment);
  if (!parsed.success) throw new InvalidRequestError('The payment was refused; see "errors".', fieldErrorsOf(parsed.error));
  const body = parsed.data;
  const input = {
    amountPence: exactPence(body.amount)!,
    paidAt: body.paidAt,
    ...(body.reference !== undefined ? { reference: body.reference } : {}),
    source: 'DIRECT' as const,
  };
  const paymentId = newPaymentId();
  const result = await applyRecoveryChange(
    deps,
    {
      mode: command.mode,
      companyId: command.companyId,
      caseId: command.caseId,
      at: command.now,
      decide: (stored, at) => decidePayment(stored, input, at),
      extras: (before, decision) => ({
        payment: {
          paymentId,
          caseId: before.caseId,
          companyId: before.companyId,
          mode: before.mode,
          sequence: decision.after.paymentFacts!.length,
          ...input,
          recordedAt: decision.at,
          requestId: command.requestId,
        },
      }),
    },
    deadline,
  );
  // A payment carries no updateId: its transaction always applies or is stale.
  if (result.kind !== 'applied' || !result.change.payment) throw new Error('a payment change was not applied');
  return { payment: toPaymentView(result.change.payment), case: toCaseView(result.stored, { now: command.now }) };
}
