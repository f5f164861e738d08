import * as z from 'zod';
import { InvalidRequestError } from '../errors.js';
import { randomBase62 } from '../random-id.js';
import { isWellFormedText } from '../text.js';
import { CASE_STATUSES, RECOVERY_GATES, caseViewSchema, type CaseView } from './case-record.js';

/**
 * The case's life after creation (product rules "Case lifecycle" and "Events"), as pure rules:
 * the status is derived from the two gates, and each change (confirm, withdraw, a verification
 * outcome, settling a case whose gates are already satisfied) is a function from the current
 * lifecycle state and the time to either "no change, because …" or the new state, the
 * statusHistory entry to append and the event's previousAttributes.
 *
 * Not wired yet (docs/lifecycle-design.md): the create path still stores `DRAFT` with the
 * original two recovery gates. The status and gate lists below extend case-record.ts's lists
 * (one source for the values they share) until the wiring step moves them there.
 */

/** `DRAFT` (a gate is pending) → `READY` | `ON_HOLD`; `WITHDRAWN` from any of those by the partner. */
export const LIFECYCLE_STATUSES = [...CASE_STATUSES, 'READY', 'ON_HOLD', 'WITHDRAWN'] as const;
export type LifecycleStatus = (typeof LIFECYCLE_STATUSES)[number];

/** `CONFIRMED` is reached from `AWAITING_CONFIRMATION` only. */
export const LIFECYCLE_RECOVERY_GATES = [...RECOVERY_GATES, 'CONFIRMED'] as const;
export type LifecycleRecoveryGate = (typeof LIFECYCLE_RECOVERY_GATES)[number];

/**
 * Every transition the rules allow, and no other ("No other transitions"). A derived status
 * outside this table is a bug in the rules below, never an answer: it throws.
 */
export const ALLOWED_TRANSITIONS: Readonly<Record<LifecycleStatus, readonly LifecycleStatus[]>> = {
  DRAFT: ['READY', 'ON_HOLD', 'WITHDRAWN'],
  READY: ['WITHDRAWN'],
  ON_HOLD: ['WITHDRAWN'],
  WITHDRAWN: [],
};

export const DEBTOR_VERIFICATION_STATUSES = ['NOT_REQUESTED', 'PENDING', 'VERIFIED', 'NAME_MISMATCH', 'NOT_ACTIVE', 'NOT_FOUND'] as const;
export type DebtorVerificationStatus = (typeof DEBTOR_VERIFICATION_STATUSES)[number];
/** The outcomes that put a case `ON_HOLD`: the partner must act. */
export const FAILED_VERIFICATION_STATUSES = [
  'NAME_MISMATCH',
  'NOT_ACTIVE',
  'NOT_FOUND',
] as const satisfies readonly DebtorVerificationStatus[];

const checkedAt = z.iso
  .datetime()
  .meta({ description: 'When the registry was consulted (ISO 8601, UTC).', example: '2025-03-04T10:20:35.000Z' });

// Documentation only (OpenAPI, contract tests, types): marked pure so a bundle that does not use it drops it.
export const debtorVerificationSchema = /* @__PURE__ */ z
  .discriminatedUnion('status', [
    z.object({ status: z.literal('NOT_REQUESTED') }).strict(),
    z.object({ status: z.literal('PENDING') }).strict(),
    z.object({ status: z.literal('VERIFIED'), checkedAt }).strict(),
    z
      .object({
        status: z.literal('NAME_MISMATCH'),
        registeredName: z.string().meta({ description: 'The name on the register.', example: 'ACME WIDGETS (HOLDINGS) LIMITED' }),
        checkedAt,
      })
      .strict(),
    z
      .object({
        status: z.literal('NOT_ACTIVE'),
        companyStatus: z
          .string()
          .meta({ description: "The register's `company_status`, e.g. `dissolved`, `liquidation`.", example: 'dissolved' }),
        checkedAt,
      })
      .strict(),
    z.object({ status: z.literal('NOT_FOUND'), checkedAt }).strict(),
  ])
  .meta({
    description:
      'The debtor checked against Companies House by `debtorCompanyNo`, after creation: `NOT_REQUESTED` (no debtorCompanyNo), `PENDING`, ' +
      '`VERIFIED`, or a failure that puts the case `ON_HOLD`: `NAME_MISMATCH` (with `registeredName`), `NOT_ACTIVE` (with `companyStatus`), `NOT_FOUND`.',
  });
export type DebtorVerification = z.infer<typeof debtorVerificationSchema>;
/** A verification with an answer from the registry (what a verifier records). */
export type DebtorVerificationOutcome = Extract<DebtorVerification, { checkedAt: string }>;

export const MAX_WITHDRAW_REASON_LENGTH = 500;

export const statusHistoryEntrySchema = /* @__PURE__ */ z
  .object({
    status: z.enum(LIFECYCLE_STATUSES),
    at: z.iso.datetime().meta({ description: 'When the case entered this status (ISO 8601, UTC).' }),
    reason: z.string().max(MAX_WITHDRAW_REASON_LENGTH).optional().meta({
      description: 'For `WITHDRAWN`, the reason the partner gave (if any); for `ON_HOLD`, the verification outcome that caused it.',
    }),
  })
  .strict();
export type StatusHistoryEntry = z.infer<typeof statusHistoryEntrySchema>;
export const statusHistorySchema = /* @__PURE__ */ z.array(statusHistoryEntrySchema).meta({
  description: 'Every status the case has had, oldest first; the first entry is `DRAFT` at creation.',
});

/** The fields whose change is announced by a `case.updated` event. */
export interface LifecycleState {
  status: LifecycleStatus;
  recoveryGate: LifecycleRecoveryGate;
  debtorVerification: DebtorVerification;
}

/** The earlier values of the lifecycle fields a change touched (the event's `previousAttributes`). */
export const previousAttributesSchema = /* @__PURE__ */ z
  .object({
    status: z.enum(LIFECYCLE_STATUSES).optional(),
    recoveryGate: z.enum(LIFECYCLE_RECOVERY_GATES).optional(),
    debtorVerification: debtorVerificationSchema.optional(),
  })
  .strict()
  .meta({
    description: "The changed fields' values before the change (only `status`, `recoveryGate` and `debtorVerification` are reported).",
  });
export type PreviousAttributes = z.infer<typeof previousAttributesSchema>;

/** The case record as GET will return it once the lifecycle is wired: the created case plus its lifecycle fields. */
export const lifecycleCaseViewSchema = /* @__PURE__ */ caseViewSchema.extend({
  status: z.enum(LIFECYCLE_STATUSES),
  recoveryGate: z.enum(LIFECYCLE_RECOVERY_GATES),
  debtorVerification: debtorVerificationSchema,
  statusHistory: statusHistorySchema,
});
export type LifecycleCaseView = z.infer<typeof lifecycleCaseViewSchema>;

export const CASE_EVENT_TYPES = ['case.created', 'case.updated'] as const;
export type CaseEventType = (typeof CASE_EVENT_TYPES)[number];

const EVENT_ID_RANDOM_LENGTH = 22;
export const EVENT_ID_PATTERN = new RegExp(`^evt_[0-9A-Za-z]{${EVENT_ID_RANDOM_LENGTH}}$`);

/** A new event id: `evt_` and 22 random base62 characters, like a case id. */
export function newEventId(): string {
  return `evt_${randomBase62(EVENT_ID_RANDOM_LENGTH)}`;
}

export const caseEventSchema = /* @__PURE__ */ z.discriminatedUnion('type', [
  z
    .object({
      id: z.string().regex(EVENT_ID_PATTERN),
      type: z.literal('case.created'),
      createdAt: z.iso.datetime(),
      livemode: z.boolean(),
      data: z.object({ object: lifecycleCaseViewSchema }).strict(),
    })
    .strict(),
  z
    .object({
      id: z.string().regex(EVENT_ID_PATTERN),
      type: z.literal('case.updated'),
      createdAt: z.iso.datetime(),
      livemode: z.boolean(),
      data: z.object({ object: lifecycleCaseViewSchema, previousAttributes: previousAttributesSchema }).strict(),
    })
    .strict(),
]);
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

export function isRecoveryGateSatisfied(gate: LifecycleRecoveryGate): boolean {
  return gate === 'AUTO_ATTESTED' || gate === 'CONFIRMED';
}

export function isVerificationSatisfied(verification: DebtorVerification): boolean {
  return verification.status === 'NOT_REQUESTED' || verification.status === 'VERIFIED';
}

export function isVerificationFailed(verification: DebtorVerification): boolean {
  return (FAILED_VERIFICATION_STATUSES as readonly string[]).includes(verification.status);
}

/** The status the gates call for. `WITHDRAWN` is the partner's act, not a gate: it is never derived, only kept. */
export function deriveStatus(
  current: LifecycleStatus,
  recoveryGate: LifecycleRecoveryGate,
  verification: DebtorVerification,
): LifecycleStatus {
  if (current === 'WITHDRAWN') return 'WITHDRAWN';
  if (isVerificationFailed(verification)) return 'ON_HOLD';
  if (isRecoveryGateSatisfied(recoveryGate) && isVerificationSatisfied(verification)) return 'READY';
  return 'DRAFT';
}

export function isAllowedTransition(from: LifecycleStatus, to: LifecycleStatus): boolean {
  return ALLOWED_TRANSITIONS[from].includes(to);
}

/**
 * A case as created (spec rule 1: "A created case begins at `DRAFT`", whatever its gates): a
 * case whose gates are already satisfied then moves on through `settleStatus`, off the create
 * request's path, with its own `case.updated` event.
 */
export function initialLifecycle(
  recoveryGate: LifecycleRecoveryGate,
  hasDebtorCompanyNo: boolean,
  createdAt: Date,
): {
  state: LifecycleState;
  statusHistory: StatusHistoryEntry[];
} {
  return {
    state: { status: 'DRAFT', recoveryGate, debtorVerification: { status: hasDebtorCompanyNo ? 'PENDING' : 'NOT_REQUESTED' } },
    statusHistory: [{ status: 'DRAFT', at: createdAt.toISOString() }],
  };
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
  forcedStatus?: LifecycleStatus,
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
  if (current.recoveryGate !== 'AWAITING_CONFIRMATION' || current.status === 'WITHDRAWN') return { changed: false, reason: 'not_awaiting' };
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
  // An empty reason says nothing: the history entry then has none, as when the body is absent.
  return change(current, {}, at, 'WITHDRAWN', reason === '' ? undefined : reason);
}

export type VerificationUnchangedReason = 'not_pending' | 'withdrawn';

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

/** The case record after a change, as GET returns it and the event carries it. */
export function applyChange(view: LifecycleCaseView, changed: LifecycleChanged): LifecycleCaseView {
  return {
    ...view,
    ...changed.state,
    updatedAt: changed.at,
    statusHistory: changed.historyEntry ? [...view.statusHistory, changed.historyEntry] : view.statusHistory,
  };
}

/** The created case's view with its lifecycle fields (the create path's record until the wiring adds them to it). */
export function withLifecycle(view: CaseView, state: LifecycleState, statusHistory: StatusHistoryEntry[]): LifecycleCaseView {
  return { ...view, ...state, statusHistory };
}

/** The event announcing a creation (`previous` absent) or a change, written in the same transaction as it. */
export function buildCaseEvent(
  object: LifecycleCaseView,
  createdAt: string,
  previousAttributes?: PreviousAttributes,
  id = newEventId(),
): CaseEvent {
  const base = { id, createdAt, livemode: object.livemode };
  return previousAttributes === undefined
    ? { ...base, type: 'case.created', data: { object } }
    : { ...base, type: 'case.updated', data: { object, previousAttributes } };
}
