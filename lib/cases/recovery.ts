import * as z from 'zod';
import {
  CaseNotOpenError,
  InvalidRequestError,
  InvalidTransitionError,
  PaymentExceedsOutstandingError,
  PaymentLimitReachedError,
  type FieldError,
  unknownFieldErrors,
} from '../errors.js';
import { randomBase62 } from '../random-id.js';
import { isWellFormedText } from '../text.js';
import { isAllowedTransition, type PreviousAttributes } from './case-lifecycle.js';
import {
  CASE_ID_PATTERN,
  CLOSURE_REASONS,
  MAX_CLOSURE_NOTE_LENGTH,
  MAX_PAYMENTS_PER_CASE,
  amountFactsOf,
  amountsOf,
  isOpenStatus,
  lifecycleOf,
  type CaseStatus,
  type Closure,
  type ClosureReason,
  type StoredCase,
} from './case-record.js';
import { computeAmountsInPence } from './compute-amounts.js';
import { londonDate, parseCaseDate } from './dates.js';
import { exactPence, formatPence } from './money.js';

/**
 * Recovery and money (product rules, "Recovery and money") as pure rules over the stored case:
 * each decision takes the case as read and the time, and answers the case after the change (its
 * next `revision`, payment facts, status, closure and history) with the event's
 * previousAttributes, or throws the domain error that refuses it. Storage, the event and the
 * records written beside it are the use cases' (record-payment.ts, apply-recovery-update.ts).
 */

// ---------------------------------------------------------------------------------------------
// Inputs

export const PAYMENT_SOURCES = ['DIRECT', 'COLLECTED'] as const;
export type PaymentSource = (typeof PAYMENT_SOURCES)[number];

export const MAX_PAYMENT_REFERENCE_LENGTH = 100;
export const MAX_UPDATE_ID_LENGTH = 100;

const text = (field: string, max: number) =>
  z
    .string()
    .min(1, { error: `${field} must not be empty` })
    .refine(isWellFormedText, { error: `${field} must be valid Unicode text (it holds an unpaired surrogate)` })
    .refine((s) => [...s].length <= max, { error: `${field} must be at most ${max} characters` });

/** A payment amount: a JSON number above 0 with at most two decimals (pence are taken from its digits: money.ts exactPence). */
const amountSchema = z
  .number({ error: 'amount must be a number' })
  .refine((n) => n > 0, { error: 'amount must be greater than 0' })
  .refine((n) => exactPence(n) !== undefined, { error: 'amount must have at most 2 decimal places' });

const paidAtSchema = z
  .string({ error: 'paidAt must be a date as YYYY-MM-DD' })
  .refine((s) => parseCaseDate(s)?.kind === 'date', { error: 'paidAt must be a real date as YYYY-MM-DD' });

/** The body of `POST /api/v1/cases/{id}/payments`; unknown fields are refused. */
export const paymentRequestSchema = /* @__PURE__ */ z
  .object({
    amount: amountSchema.meta({ description: 'GBP paid, above 0, at most 2 decimals.', example: 250.5 }),
    paidAt: paidAtSchema.meta({
      description: 'The day the debtor paid (YYYY-MM-DD): not after today in Europe/London, not before invoiceDate.',
      example: '2025-03-10',
    }),
    reference: text('reference', MAX_PAYMENT_REFERENCE_LENGTH)
      .optional()
      .meta({ description: 'Your reference for the payment, 1–100 characters.' }),
  })
  .strict();
export type PaymentRequest = z.infer<typeof paymentRequestSchema>;

export const RECOVERY_UPDATE_TYPES = ['recovery_started', 'payment_collected', 'closed'] as const;
export type RecoveryUpdateType = (typeof RECOVERY_UPDATE_TYPES)[number];

/** Which optional fields each update type takes (and requires): anything else sent with it is refused, never ignored. */
const FIELDS_BY_TYPE: Readonly<Record<RecoveryUpdateType, { required: readonly string[]; allowed: readonly string[] }>> = {
  recovery_started: { required: [], allowed: ['note'] },
  payment_collected: { required: ['amount', 'paidAt'], allowed: ['amount', 'paidAt', 'reference'] },
  closed: { required: ['reason'], allowed: ['reason', 'note'] },
};
const TYPE_FIELDS = ['amount', 'paidAt', 'reference', 'reason', 'note'] as const;

const updateFields = {
  type: z.enum(RECOVERY_UPDATE_TYPES, { error: `type must be one of ${RECOVERY_UPDATE_TYPES.join(', ')}` }),
  amount: amountSchema.optional(),
  paidAt: paidAtSchema.optional(),
  reference: text('reference', MAX_PAYMENT_REFERENCE_LENGTH).optional(),
  reason: z.enum(CLOSURE_REASONS, { error: `reason must be one of ${CLOSURE_REASONS.join(', ')}` }).optional(),
  note: text('note', MAX_CLOSURE_NOTE_LENGTH).optional(),
};

function fieldsMatchType(
  update: { type: RecoveryUpdateType } & Partial<Record<(typeof TYPE_FIELDS)[number], unknown>>,
  ctx: z.RefinementCtx,
) {
  const { required, allowed } = FIELDS_BY_TYPE[update.type];
  for (const field of required)
    if (update[field as (typeof TYPE_FIELDS)[number]] === undefined)
      ctx.addIssue({ code: 'custom', path: [field], message: `${field} is required for ${update.type}` });
  for (const field of TYPE_FIELDS)
    if (update[field] !== undefined && !allowed.includes(field))
      ctx.addIssue({ code: 'custom', path: [field], message: `${field} is not taken by ${update.type}` });
}

/** One update as the test-mode helper takes it (no updateId, no `by`: the partner rehearses, no back office acts). */
export const recoveryUpdateBodySchema = /* @__PURE__ */ z.object(updateFields).strict().superRefine(fieldsMatchType);
export type RecoveryUpdateBody = z.infer<typeof recoveryUpdateBodySchema>;

/** Who in the recovery team made an update. */
export const recoveryActorSchema = /* @__PURE__ */ z
  .object({ name: text('by.name', 200), email: z.email({ error: 'by.email must be a valid e-mail address' }) })
  .strict();
export type RecoveryActor = z.infer<typeof recoveryActorSchema>;

/** One update of `POST /internal/v1/recovery-updates` (the back office) or the operator's admin command. */
export const recoveryUpdateSchema = /* @__PURE__ */ z
  .object({
    updateId: text('updateId', MAX_UPDATE_ID_LENGTH),
    caseId: z.string({ error: 'caseId must be a string' }),
    ...updateFields,
    by: recoveryActorSchema,
  })
  .strict()
  .superRefine(fieldsMatchType);
export type RecoveryUpdate = z.infer<typeof recoveryUpdateSchema>;

/** zod's issues as the service's field errors. */
export function fieldErrorsOf(error: z.ZodError): FieldError[] {
  return error.issues.flatMap((issue) => {
    const at = issue.path.join('.');
    // Each unknown field named as the field, as the other routes do (lib/errors.ts unknownFieldErrors).
    if (issue.code === 'unrecognized_keys') {
      return unknownFieldErrors(
        issue.keys.map((key) => (at ? `${at}.${key}` : key)),
        (field) => `${field} is not a recognised field`,
      );
    }
    return [{ field: at || '(body)', message: issue.message }];
  });
}

// ---------------------------------------------------------------------------------------------
// Payments

const PAYMENT_ID_RANDOM_LENGTH = 22;
export const PAYMENT_ID_PATTERN = new RegExp(`^pay_[0-9A-Za-z]{${PAYMENT_ID_RANDOM_LENGTH}}$`);
export function newPaymentId(): string {
  return `pay_${randomBase62(PAYMENT_ID_RANDOM_LENGTH)}`;
}

/** A payment as stored: immutable, one item per payment (table-keys.ts `PAYMENT#<sequence>`). */
export interface StoredPayment {
  paymentId: string;
  caseId: string;
  companyId: string;
  mode: StoredCase['mode'];
  /** 1 to MAX_PAYMENTS_PER_CASE: its place among the case's payments, in the order recorded. */
  sequence: number;
  source: PaymentSource;
  amountPence: number;
  paidAt: string;
  reference?: string;
  recordedAt: string;
  requestId: string;
}

// Documentation only (OpenAPI, contract tests, types).
export const paymentViewSchema = /* @__PURE__ */ z
  .object({
    id: z.string().regex(PAYMENT_ID_PATTERN).meta({ example: 'pay_3Hk8nQ2rS5tU9vW4xY7zB1' }),
    caseId: z.string().regex(CASE_ID_PATTERN),
    source: z.enum(PAYMENT_SOURCES).meta({ description: '`DIRECT`: you reported it; `COLLECTED`: the recovery team collected it.' }),
    amount: z
      .string()
      .regex(/^\d+\.\d{2}$/)
      .meta({ example: '250.50' }),
    paidAt: z.string().meta({ example: '2025-03-10' }),
    reference: z.string().nullable(),
    recordedAt: z.iso.datetime(),
    livemode: z.boolean(),
  })
  .strict()
  .meta({ id: 'Payment', description: 'Money the debtor paid on a case.' });
export type PaymentView = z.infer<typeof paymentViewSchema>;

export function toPaymentView(payment: StoredPayment): PaymentView {
  return {
    id: payment.paymentId,
    caseId: payment.caseId,
    source: payment.source,
    amount: formatPence(payment.amountPence),
    paidAt: payment.paidAt,
    reference: payment.reference ?? null,
    recordedAt: payment.recordedAt,
    livemode: payment.mode === 'live',
  };
}

// ---------------------------------------------------------------------------------------------
// Decisions

/** A change the rules allow: the case after it and what the event reports. */
export interface RecoveryDecision {
  after: StoredCase;
  previousAttributes: PreviousAttributes;
  /** ISO 8601: the case's `updatedAt` and the event's `createdAt`. */
  at: string;
  /** Set when the change closed the case (its invoiceRef is then given up, as a withdrawal does). */
  closed: boolean;
}

function requireOpen(stored: StoredCase): void {
  if (!isOpenStatus(stored.status)) throw new CaseNotOpenError(stored.status);
}

/** The case after a change at `at`: the next revision, and a status change with its history entry and closure. */
function changed(
  before: StoredCase,
  at: Date,
  changes: { status?: CaseStatus; closure?: Closure; paymentFacts?: StoredCase['paymentFacts']; historyReason?: string },
): RecoveryDecision {
  const iso = at.toISOString();
  const status = changes.status ?? before.status;
  if (status !== before.status && !isAllowedTransition(before.status, status))
    throw new Error(`Recovery rule violated: ${before.status} → ${status} is not an allowed transition`);
  const history = lifecycleOf(before).statusHistory;
  const after: StoredCase = {
    ...before,
    status,
    updatedAt: iso,
    revision: (before.revision ?? 0) + 1,
    statusHistory:
      status === before.status
        ? history
        : [...history, { status, at: iso, ...(changes.historyReason !== undefined ? { reason: changes.historyReason } : {}) }],
    ...(changes.paymentFacts ? { paymentFacts: changes.paymentFacts } : {}),
    ...(changes.closure ? { closure: changes.closure } : {}),
  };
  const previousAttributes: PreviousAttributes = {};
  if (status !== before.status) previousAttributes.status = before.status;
  if (changes.closure) previousAttributes.closure = null;
  const amountsBefore = amountsOf(before, { now: at });
  if (JSON.stringify(amountsOf(after, { now: at })) !== JSON.stringify(amountsBefore)) previousAttributes.amounts = amountsBefore;
  return { after, previousAttributes, at: iso, closed: status === 'CLOSED' };
}

/** The back office started work: `READY` → `IN_RECOVERY`. */
export function decideRecoveryStart(stored: StoredCase, at: Date): RecoveryDecision {
  requireOpen(stored);
  if (stored.status !== 'READY')
    throw new InvalidTransitionError(`Recovery starts only from READY; the case is ${stored.status}.`, stored.status);
  return changed(stored, at, { status: 'IN_RECOVERY' });
}

/** The back office closed the case: from `IN_RECOVERY`, with a reason; `PAID_IN_FULL` only when nothing is outstanding. */
export function decideClose(stored: StoredCase, closing: { reason: ClosureReason; note?: string }, at: Date): RecoveryDecision {
  requireOpen(stored);
  if (stored.status !== 'IN_RECOVERY')
    throw new InvalidTransitionError(
      `Only a case IN_RECOVERY can be closed by the recovery team; the case is ${stored.status}.`,
      stored.status,
    );
  if (closing.reason === 'PAID_IN_FULL') {
    const outstanding = amountsOf(stored, { now: at }).outstanding;
    if (outstanding !== '0.00')
      throw new InvalidTransitionError(`PAID_IN_FULL needs outstanding 0.00; the case has ${outstanding} outstanding.`, stored.status);
  }
  const iso = at.toISOString();
  return changed(stored, at, {
    status: 'CLOSED',
    closure: { reason: closing.reason, at: iso, ...(closing.note !== undefined ? { note: closing.note } : {}) },
    historyReason: closing.reason,
  });
}

export interface PaymentInput {
  amountPence: number;
  paidAt: string;
  reference?: string;
  source: PaymentSource;
}

/**
 * A payment on an open case: above 0, at most today's outstanding, dated from invoiceDate to today
 * (Europe/London), at most MAX_PAYMENTS_PER_CASE a case. A payment that leaves nothing outstanding
 * closes the case `PAID_IN_FULL` in the same change.
 */
export function decidePayment(stored: StoredCase, payment: PaymentInput, at: Date): RecoveryDecision {
  requireOpen(stored);
  const facts = stored.paymentFacts ?? [];
  if (facts.length >= MAX_PAYMENTS_PER_CASE) throw new PaymentLimitReachedError(MAX_PAYMENTS_PER_CASE);
  if (!Number.isSafeInteger(payment.amountPence) || payment.amountPence <= 0)
    throw new InvalidRequestError('The payment was refused.', [{ field: 'amount', message: 'amount must be greater than 0' }]);
  const today = londonDate(at.getTime());
  const invoiceDate = parseCaseDate(stored.invoiceDate);
  const invoiceDay = invoiceDate?.kind === 'date' ? invoiceDate.date : invoiceDate?.londonDate;
  if (payment.paidAt > today)
    throw new InvalidRequestError('The payment was refused.', [
      { field: 'paidAt', message: `paidAt must not be after today (${today}, Europe/London)` },
    ]);
  if (invoiceDay !== undefined && payment.paidAt < invoiceDay)
    throw new InvalidRequestError('The payment was refused.', [
      { field: 'paidAt', message: `paidAt must not be before the invoiceDate (${invoiceDay})` },
    ]);
  const outstanding = computeAmountsInPence(amountFactsOf(stored, today)).outstanding;
  if (payment.amountPence > outstanding) throw new PaymentExceedsOutstandingError(formatPence(outstanding));
  const paymentFacts = [...facts, { amountPence: payment.amountPence, paidAt: payment.paidAt }];
  const paidUp = computeAmountsInPence(amountFactsOf({ ...stored, paymentFacts }, today)).outstanding === 0;
  return paidUp
    ? changed(stored, at, {
        paymentFacts,
        status: 'CLOSED',
        closure: { reason: 'PAID_IN_FULL', at: at.toISOString() },
        historyReason: 'PAID_IN_FULL',
      })
    : changed(stored, at, { paymentFacts });
}

/** One back-office update (or the test helper's), by its type. */
export function decideRecoveryUpdate(stored: StoredCase, update: RecoveryUpdateBody, at: Date): RecoveryDecision {
  switch (update.type) {
    case 'recovery_started':
      return decideRecoveryStart(stored, at);
    case 'closed':
      return decideClose(stored, { reason: update.reason!, ...(update.note !== undefined ? { note: update.note } : {}) }, at);
    case 'payment_collected':
      return decidePayment(
        stored,
        {
          amountPence: exactPence(update.amount!)!,
          paidAt: update.paidAt!,
          ...(update.reference !== undefined ? { reference: update.reference } : {}),
          source: 'COLLECTED',
        },
        at,
      );
  }
}
