import * as z from 'zod';
import { CaseNotOpenError, InvalidRequestError } from '../errors.js';
import { randomBase62 } from '../random-id.js';
import { isWellFormedText } from '../text.js';
import {
  CASE_STATUSES,
  MAX_WITHDRAW_REASON_LENGTH,
  amountsSchema,
  closureSchema,
  isOpenStatus,
  RECOVERY_GATES,
  caseViewSchema,
  debtorVerificationSchema,
  type CaseStatus,
  type CaseView,
  type DebtorVerification,
  type DebtorVerificationStatus,
  type RecoveryGate,
  type StatusHistoryEntry,
} from './case-record.js';

/**
 * The case's life after creation (product rules "Case lifecycle" and "Events"), as pure rules:
 * the status is derived from the two gates, and each change (confirm, withdraw, a verification
 * outcome, settling a case whose gates are already satisfied) is a function from the current
 * lifecycle state and the time to either "no change, because …" or the new state, the
 * statusHistory entry to append and the event's previousAttributes.
 *
 * The statuses, gates and the lifecycle fields' schemas live in case-record.ts (the case's own
 * fields); the rules over them live here.
 */

/**
 * Every transition the rules allow, and no other ("No other transitions"). A derived status
 * outside this table is a bug in the rules below, never an answer: it throws.
 */
export const ALLOWED_TRANSITIONS: Readonly<Record<CaseStatus, readonly CaseStatus[]>> = {
  // CLOSED from every open status: a payment bringing outstanding to 0.00 closes the case PAID_IN_FULL at once.
  DRAFT: ['READY', 'ON_HOLD', 'CLOSED', 'WITHDRAWN'],
  READY: ['IN_RECOVERY', 'CLOSED', 'WITHDRAWN'],
  ON_HOLD: ['CLOSED', 'WITHDRAWN'],
  // CLOSED here also by the back office (`closed`, with a reason).
  IN_RECOVERY: ['CLOSED', 'WITHDRAWN'],
  CLOSED: [],
  WITHDRAWN: [],
};

/** The outcomes that put a case `ON_HOLD`: the partner must act. */
export const FAILED_VERIFICATION_STATUSES = [
  'NAME_MISMATCH',
  'NOT_ACTIVE',
  'NOT_FOUND',
] as const satisfies readonly DebtorVerificationStatus[];

/** A verification with an answer from the registry (what a verifier records). */
export type DebtorVerificationOutcome = Extract<DebtorVerification, { checkedAt: string }>;

/** The fields whose change is announced by a `case.updated` event. */
export interface LifecycleState {
  status: CaseStatus;
  recoveryGate: RecoveryGate;
  debtorVerification: DebtorVerification;
}

/** The earlier values of the lifecycle fields a change touched (the event's `previousAttributes`). */
export const previousAttributesSchema = /* @__PURE__ */ z
  .object({
    status: z.enum(CASE_STATUSES).optional(),
    recoveryGate: z.enum(RECOVERY_GATES).optional(),
    debtorVerification: debtorVerificationSchema.optional(),
    closure: closureSchema.nullable().optional(),
    amounts: amountsSchema.optional(),
  })
  .strict()
  .meta({
    description:
      "The changed fields' values before the change (only `status`, `recoveryGate`, `debtorVerification`, `closure` and `amounts` are reported; `amounts` when a payment or a closure changed them, as they stood just before).",
  });
export type PreviousAttributes = z.infer<typeof previousAttributesSchema>;

export const CASE_EVENT_TYPES = ['case.created', 'case.updated'] as const;
export type CaseEventType = (typeof CASE_EVENT_TYPES)[number];

const EVENT_ID_RANDOM_LENGTH = 22;
export const EVENT_ID_PATTERN = new RegExp(`^evt_[0-9A-Za-z]{${EVENT_ID_RANDOM_LENGTH}}$`);

/** A new event id: `evt_` and 22 random base62 characters, like a case id. */
export function newEventId(): string {
  return `evt_${randomBase62(EVENT_ID_RANDOM_LENGTH)}`;
}

export const caseEventSchema = /* @__PURE__ */ z
  .discriminatedUnion('type', [
    z
      .object({
        id: z.string().regex(EVENT_ID_PATTERN),
        type: z.literal('case.created'),
        createdAt: z.iso.datetime(),
        livemode: z.boolean(),
        data: z.object({ object: caseViewSchema }).strict(),
      })
      .strict(),
    z
      .object({
        id: z.string().regex(EVENT_ID_PATTERN),
        type: z.literal('case.updated'),
        createdAt: z.iso.datetime(),
        livemode: z.boolean(),
        data: z.object({ object: caseViewSchema, previousAttributes: previousAttributesSchema }).strict(),
      })
      .strict(),
  ])
  .meta({
    id: 'Event',
    description:
      'One creation (`case.created`) or one change of a case\u2019s `status`, `recoveryGate` or `debtorVerification` (`case.updated`). `data.object` is the case as `GET /api/v1/cases/{id}` returned it right after; `data.previousAttributes` (on `case.updated` only) holds the changed fields\u2019 earlier values. Kept 30 days. Further event types may be added within v1: ignore a `type` you do not know.',
  });
export type CaseEvent = z.infer<typeof caseEventSchema>;

/** The body of `POST /api/v1/cases/{id}/withdraw` (optional). */
export const withdrawRequestSchema = /* @__PURE__ */ z
  .object({
    reason: z
      .string()
      .refine(isWellFormedText, { error: 'reason must be valid Unicode text (it holds an unpaired surrogate)' })
      .refine((s) => [...s].length <= MAX_WITHDRAW_REASON_LENGTH, {
        error: `reason must be at most ${MAX_WITHDRAW_REASON_LENGTH} characters`,
      })
      .optional(),
  })
  .strict();
export type WithdrawRequest = z.infer<typeof withdrawRequestSchema>;

// ---------------------------------------------------------------------------------------------
// Rules

export function isRecoveryGateSatisfied(gate: RecoveryGate): boolean {
  return gate === 'AUTO_ATTESTED' || gate === 'CONFIRMED';
}

export function isVerificationSatisfied(verification: DebtorVerification): boolean {
  return verification.status === 'NOT_REQUESTED' || verification.status === 'VERIFIED';
}

export function isVerificationFailed(verification: DebtorVerification): boolean {
  return (FAILED_VERIFICATION_STATUSES as readonly string[]).includes(verification.status);
}

/**
 * The status the gates call for. `WITHDRAWN`, `IN_RECOVERY` and `CLOSED` are acts (the partner's,
 * the back office's, a payment's), not gates: they are never derived, only kept, so the verifier
 * and a late confirmation never move a case out of them.
 */
export function deriveStatus(current: CaseStatus, recoveryGate: RecoveryGate, verification: DebtorVerification): CaseStatus {
  if (current === 'WITHDRAWN' || current === 'IN_RECOVERY' || current === 'CLOSED') return current;
  if (isVerificationFailed(verification)) return 'ON_HOLD';
  if (isRecoveryGateSatisfied(recoveryGate) && isVerificationSatisfied(verification)) return 'READY';
  return 'DRAFT';
}

export function isAllowedTransition(from: CaseStatus, to: CaseStatus): boolean {
  return ALLOWED_TRANSITIONS[from].includes(to);
}

export interface LifecycleChanged {
  changed: true;
  state: LifecycleState;
  /** Present when the status changed: append it to `statusHistory`. */
  historyEntry?: StatusHistoryEntry;
  /** The event's `previousAttributes`: the earlier values of the fields that changed. */
  previousAttributes: PreviousAttributes;
  /** ISO 8601: the case's new `updatedAt` and the event's `createdAt`. */
  at: string;
}
export interface LifecycleUnchanged<Reason extends string> {
  changed: false;
  reason: Reason;
}
export type LifecycleChange<Reason extends string> = LifecycleChanged | LifecycleUnchanged<Reason>;

/** Applies gate changes, derives the status, and reports what changed; throws on a transition the rules forbid. */
function change(
  current: LifecycleState,
  gates: Partial<Omit<LifecycleState, 'status'>>,
  at: Date,
  forcedStatus?: CaseStatus,
  reason?: string,
): LifecycleChanged {
  const recoveryGate = gates.recoveryGate ?? current.recoveryGate;
  const debtorVerification = gates.debtorVerification ?? current.debtorVerification;
  const status = forcedStatus ?? deriveStatus(current.status, recoveryGate, debtorVerification);
  if (status !== current.status && !isAllowedTransition(current.status, status)) {
    throw new Error(`Lifecycle rule violated: ${current.status} → ${status} is not an allowed transition`);
  }
  const previousAttributes: PreviousAttributes = {};
  if (status !== current.status) previousAttributes.status = current.status;
  if (recoveryGate !== current.recoveryGate) previousAttributes.recoveryGate = current.recoveryGate;
  if (debtorVerification !== current.debtorVerification) previousAttributes.debtorVerification = current.debtorVerification;
  const iso = at.toISOString();
  const historyReason = status === 'ON_HOLD' ? debtorVerification.status : reason;
  return {
    changed: true,
    state: { status, recoveryGate, debtorVerification },
    ...(status !== current.status
      ? { historyEntry: { status, at: iso, ...(historyReason !== undefined ? { reason: historyReason } : {}) } }
      : {}),
    previousAttributes,
    at: iso,
  };
}

export type ConfirmUnchangedReason = 'already_confirmed' | 'not_awaiting';

/**
 * The partner's dashboard confirmed the case (spec rule 4). `already_confirmed` for a case
 * confirmed before (even if withdrawn since); `not_awaiting` for an auto-attested or withdrawn case.
 * A confirmed case whose debtor is still being verified stays `DRAFT`; an `ON_HOLD` case stays `ON_HOLD`.
 */
export function confirmCase(current: LifecycleState, at: Date): LifecycleChange<ConfirmUnchangedReason> {
  if (current.recoveryGate === 'CONFIRMED') return { changed: false, reason: 'already_confirmed' };
  if (current.recoveryGate !== 'AWAITING_CONFIRMATION' || !isOpenStatus(current.status)) return { changed: false, reason: 'not_awaiting' };
  return change(current, { recoveryGate: 'CONFIRMED' }, at);
}

export type WithdrawUnchangedReason = 'already_withdrawn';

/** The partner withdrew the case; again is no change (the route answers 200 with the case as it is). */
export function withdrawCase(current: LifecycleState, at: Date, reason?: string): LifecycleChange<WithdrawUnchangedReason> {
  if (reason !== undefined) {
    const checked = withdrawRequestSchema.safeParse({ reason });
    if (!checked.success)
      throw new InvalidRequestError(
        'The withdrawal was refused.',
        checked.error.issues.map((i) => ({ field: 'reason', message: i.message })),
      );
  }
  if (current.status === 'WITHDRAWN') return { changed: false, reason: 'already_withdrawn' };
  // CLOSED is final too, but withdrawing it is refused rather than answered unchanged (product rules).
  if (current.status === 'CLOSED') throw new CaseNotOpenError(current.status);
  // An empty reason says nothing: the history entry then has none, as when the body is absent.
  return change(current, {}, at, 'WITHDRAWN', reason === '' ? undefined : reason);
}

export type VerificationUnchangedReason = 'not_pending' | 'withdrawn' | 'closed';

/**
 * The verifier's outcome for a `PENDING` verification. Anything else is no change: `not_pending`
 * when an outcome is already recorded (a second worker, or a stream record delivered twice) or
 * none was requested; `withdrawn` when the partner withdrew the case meanwhile (it changes no more).
 */
export function recordVerification(
  current: LifecycleState,
  outcome: DebtorVerificationOutcome,
  at: Date,
): LifecycleChange<VerificationUnchangedReason> {
  if (current.debtorVerification.status !== 'PENDING') return { changed: false, reason: 'not_pending' };
  if (current.status === 'WITHDRAWN') return { changed: false, reason: 'withdrawn' };
  if (current.status === 'CLOSED') return { changed: false, reason: 'closed' };
  return change(current, { debtorVerification: outcome }, at);
}

export type SettleUnchangedReason = 'unchanged';

/**
 * Moves a case to the status its gates call for when nothing else will: a case created with every
 * gate satisfied (auto-attested, no debtorCompanyNo) is born `DRAFT` and becomes `READY` here.
 */
export function settleStatus(current: LifecycleState, at: Date): LifecycleChange<SettleUnchangedReason> {
  if (deriveStatus(current.status, current.recoveryGate, current.debtorVerification) === current.status)
    return { changed: false, reason: 'unchanged' };
  return change(current, {}, at);
}

/** The event announcing a creation (`previous` absent) or a change, written in the same transaction as it. */
export function buildCaseEvent(object: CaseView, createdAt: string, previousAttributes?: PreviousAttributes, id = newEventId()): CaseEvent {
  const base = { id, createdAt, livemode: object.livemode };
  return previousAttributes === undefined
    ? { ...base, type: 'case.created', data: { object } }
    : { ...base, type: 'case.updated', data: { object, previousAttributes } };
}
