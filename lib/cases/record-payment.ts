import type { Deadline } from '../deadline.js';
import { InvalidRequestError } from '../errors.js';
import type { Log } from '../log.js';
import type { Mode } from '../mode.js';
import { toCaseView, type CaseView, type StoredCase } from './case-record.js';
import { exactPence } from './money.js';
import { applyRecoveryChange, type RecoveryDeps } from './apply-recovery-change.js';
import { keyReusedError } from './idempotency-replay.js';
import type { ClaimResult, IdempotencyStore } from './ports.js';
import { decidePayment, fieldErrorsOf, newPaymentId, paymentRequestSchema, toPaymentView, type PaymentView } from './recovery.js';
import { requestFingerprint } from './request-fingerprint.js';

export interface RecordPaymentCommand {
  companyId: string;
  mode: Mode;
  caseId: string;
  /** The request body as received (checked here: paymentRequestSchema). */
  payment: unknown;
  requestId: string;
  now: Date;
  /** The request's Idempotency-Key, already checked (lib/http/batch-envelope.ts parseIdempotencyKey). */
  idempotencyKey?: string;
  /** The case's read, started already (the handler reads it in parallel with the API key). */
  firstRead?: Promise<StoredCase | undefined>;
}

/** What a payment with an Idempotency-Key also needs: the batch's key store and its settings. */
export interface PaymentIdempotencyDeps {
  idempotency: IdempotencyStore;
  idempotencyTtlSeconds: number;
  /** As CreateCasesDeps.claimHorizonSeconds: an IN_PROGRESS claim older than this may be taken over. */
  claimHorizonSeconds: number;
  log: Log;
}

export type RecordPaymentDeps = RecoveryDeps & Partial<PaymentIdempotencyDeps>;

export interface RecordedPayment {
  payment: PaymentView;
  case: CaseView;
}

/**
 * `POST /api/v1/cases/{id}/payments`: the partner reports money the debtor paid directly
 * (`DIRECT`). Answers the payment and the case after it, or throws: INVALID_REQUEST (the body),
 * NOT_FOUND (foreign, unknown or other-mode case), CASE_NOT_OPEN, PAYMENT_EXCEEDS_OUTSTANDING,
 * PAYMENT_LIMIT_REACHED (recovery.ts decidePayment), IDEMPOTENCY_KEY_REUSED, SERVICE_UNAVAILABLE.
 *
 * With an Idempotency-Key, the batch's rules (product rules "Idempotency-Key"): the key is claimed
 * once the body is valid, in parallel with the case's read; the payment's transaction completes the
 * claim with this answer (so the key and the payment land together, two round trips after the API
 * key); a reuse answers 409 with `sameRequest` and the original answer, and records nothing; a
 * request that records nothing (a refusal, storage unavailable) gives the key back.
 */
export async function recordPayment(deps: RecordPaymentDeps, command: RecordPaymentCommand, deadline?: Deadline): Promise<RecordedPayment> {
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
  const key = command.idempotencyKey !== undefined ? idempotencyOf(deps, command) : undefined;
  const read = command.firstRead ?? deps.store.get(command.mode, command.caseId, deadline);
  const firstRead = key ? await key.takeWithRead(read, deadline) : { stored: await read };
  try {
    const result = await applyRecoveryChange(
      deps,
      {
        mode: command.mode,
        companyId: command.companyId,
        caseId: command.caseId,
        at: command.now,
        firstRead: firstRead.stored,
        decide: (stored, at) => decidePayment(stored, input, at),
        extras: (before, decision) => {
          const payment = {
            paymentId,
            caseId: before.caseId,
            companyId: before.companyId,
            mode: before.mode,
            sequence: decision.after.paymentFacts!.length,
            ...input,
            recordedAt: decision.at,
            requestId: command.requestId,
          };
          const answer = { payment: toPaymentView(payment), case: toCaseView(decision.after, { now: command.now }) };
          return { payment, ...(key ? { completeClaim: key.completion(answer) } : {}) };
        },
      },
      deadline,
    );
    // A payment carries no updateId: its transaction always applies or is stale.
    if (result.kind !== 'applied' || !result.change.payment) throw new Error('a payment change was not applied');
    return { payment: toPaymentView(result.change.payment), case: toCaseView(result.stored, { now: command.now }) };
  } catch (error) {
    // The claim is completed only by the payment's own transaction: whatever failed, a claim still
    // IN_PROGRESS under this request's id means nothing was recorded, and the key is given back.
    if (key) await key.release(deadline);
    throw error;
  }
}

function idempotencyOf(deps: RecordPaymentDeps, command: RecordPaymentCommand) {
  const { idempotency, idempotencyTtlSeconds, claimHorizonSeconds, log } = deps;
  if (!idempotency || idempotencyTtlSeconds === undefined || claimHorizonSeconds === undefined || !log) {
    throw new Error('recordPayment was given an Idempotency-Key without an idempotency store');
  }
  const idempotencyKey = command.idempotencyKey!;
  const { mode, companyId, requestId, now } = command;
  // The route and the case are part of the request: the same body for another case is another request.
  const requestHash = requestFingerprint({ route: 'POST /api/v1/cases/{id}/payments', caseId: command.caseId, body: command.payment });
  const release = async (deadline?: Deadline) => {
    try {
      await idempotency.release(mode, companyId, idempotencyKey, requestId, deadline?.forCleanUp());
    } catch (error) {
      // As for a batch: the claim stays IN_PROGRESS until its horizon; a retry meanwhile gets 409 and records nothing.
      log.error('could not release idempotency claim', { error: error as Error, idempotencyKeyReleased: false });
    }
  };
  return {
    /** The claim and the case's read in parallel; the request ends here unless the key is this request's. */
    async takeWithRead(read: Promise<StoredCase | undefined>, deadline?: Deadline): Promise<{ stored: StoredCase | undefined }> {
      const claim: Promise<ClaimResult> = idempotency.claim(
        {
          mode,
          companyId,
          idempotencyKey,
          requestId,
          now,
          ttlSeconds: idempotencyTtlSeconds,
          staleAfterSeconds: claimHorizonSeconds,
          requestHash,
        },
        deadline,
      );
      const [claimed, stored] = await Promise.allSettled([claim, read]);
      if (claimed.status === 'rejected') {
        // The put may have landed with its answer lost: give the key back so a retry is not refused.
        await release(deadline);
        throw claimed.reason;
      }
      if (!claimed.value.claimed) throw keyReusedError(claimed.value, requestHash, now, claimHorizonSeconds);
      if (stored.status === 'rejected') {
        await release(deadline);
        throw stored.reason;
      }
      return { stored: stored.value };
    },
    completion: (answer: RecordedPayment) => ({ mode, companyId, idempotencyKey, requestId, response: answer, now }),
    release,
  };
}
