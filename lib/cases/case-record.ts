import * as z from 'zod';
import { randomBase62 } from '../random-id.js';
import type { Mode } from '../mode.js';
import type { ValidCase } from './case-input.js';
import { computeAmounts, type CaseAmounts, type PaymentFact } from './compute-amounts.js';
import { londonDate } from './dates.js';
import { formatPence } from './money.js';
import { awaitsReferenceRateFor } from './reference-rates.js';

/**
 * The stored case and its public view (spec 2.4 plus the additive fields of the product rules).
 * Money is held as integer pence; it is shown as a decimal string with two places. The view's
 * zod schema is the one source of its type and of its part of the OpenAPI document.
 */
/**
 * `DRAFT` (a gate is pending) → `READY` | `ON_HOLD`; `READY` → `IN_RECOVERY` (the back office);
 * `WITHDRAWN` (the partner) and `CLOSED` (a closing payment) from any open status, `CLOSED` also by
 * the back office from `IN_RECOVERY`. The transitions are ALLOWED_TRANSITIONS in lib/cases/case-lifecycle.ts.
 */
export const CASE_STATUSES = ['DRAFT', 'READY', 'ON_HOLD', 'IN_RECOVERY', 'CLOSED', 'WITHDRAWN'] as const;
export type CaseStatus = (typeof CASE_STATUSES)[number];
/** The statuses in which a case still changes and takes payments (product rules, "Recovery and money"). */
export const OPEN_STATUSES = ['DRAFT', 'READY', 'ON_HOLD', 'IN_RECOVERY'] as const satisfies readonly CaseStatus[];
/** Final: nothing moves a case out of these, and no payment is accepted. */
export const FINAL_STATUSES = ['CLOSED', 'WITHDRAWN'] as const satisfies readonly CaseStatus[];
export function isOpenStatus(status: CaseStatus): boolean {
  return (OPEN_STATUSES as readonly CaseStatus[]).includes(status);
}

/** Why a case was closed: paid in full (a payment or the back office), or the back office's other outcomes. */
export const CLOSURE_REASONS = ['PAID_IN_FULL', 'SETTLED', 'UNRECOVERABLE', 'DISPUTED', 'INSOLVENT'] as const;
export type ClosureReason = (typeof CLOSURE_REASONS)[number];
/** The longest closure note the back office may attach. */
export const MAX_CLOSURE_NOTE_LENGTH = 500;

// Documentation only (OpenAPI, contract tests, types): marked pure so a bundle that does not use it drops it.
export const closureSchema = /* @__PURE__ */ z
  .object({
    reason: z.enum(CLOSURE_REASONS).meta({
      description:
        '`PAID_IN_FULL` (outstanding reached 0.00), `SETTLED` (a lower sum was agreed with the debtor), `UNRECOVERABLE`, `DISPUTED` or `INSOLVENT`.',
    }),
    at: z.iso.datetime().meta({ description: 'When the case was closed (ISO 8601, UTC).', example: '2025-06-30T14:02:11.000Z' }),
    note: z.string().max(MAX_CLOSURE_NOTE_LENGTH).optional().meta({ description: "The recovery team's note, if any." }),
  })
  .strict()
  .meta({ id: 'Closure', description: 'How a `CLOSED` case ended.' });
export type Closure = z.infer<typeof closureSchema>;
/** A case is created `AUTO_ATTESTED` or `AWAITING_CONFIRMATION`; `CONFIRMED` is reached from the latter only. */
export const RECOVERY_GATES = ['AUTO_ATTESTED', 'AWAITING_CONFIRMATION', 'CONFIRMED'] as const;
export type RecoveryGate = (typeof RECOVERY_GATES)[number];

export const DEBTOR_VERIFICATION_STATUSES = ['NOT_REQUESTED', 'PENDING', 'VERIFIED', 'NAME_MISMATCH', 'NOT_ACTIVE', 'NOT_FOUND'] as const;
export type DebtorVerificationStatus = (typeof DEBTOR_VERIFICATION_STATUSES)[number];

const checkedAt = /* @__PURE__ */ z.iso
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
    id: 'DebtorVerification',
    description:
      'The debtor checked against Companies House by `debtorCompanyNo`, after creation: `NOT_REQUESTED` (no debtorCompanyNo), `PENDING`, ' +
      '`VERIFIED`, or a failure that puts the case `ON_HOLD`: `NAME_MISMATCH` (with `registeredName`), `NOT_ACTIVE` (with `companyStatus`), `NOT_FOUND`.',
  });
export type DebtorVerification = z.infer<typeof debtorVerificationSchema>;

export const MAX_WITHDRAW_REASON_LENGTH = 500;

export const statusHistoryEntrySchema = /* @__PURE__ */ z
  .object({
    status: z.enum(CASE_STATUSES),
    at: z.iso.datetime().meta({ description: 'When the case entered this status (ISO 8601, UTC).' }),
    reason: z.string().max(MAX_WITHDRAW_REASON_LENGTH).optional().meta({
      description:
        'For `WITHDRAWN`, the reason the partner gave (if any); for `ON_HOLD`, the verification outcome that caused it; for `CLOSED`, the closure reason.',
    }),
  })
  .strict();
export type StatusHistoryEntry = z.infer<typeof statusHistoryEntrySchema>;
export const statusHistorySchema = /* @__PURE__ */ z.array(statusHistoryEntrySchema).meta({
  description: 'Every status the case has had, oldest first; the first entry is `DRAFT` at creation.',
});

const CASE_ID_RANDOM_LENGTH = 22;
export const CASE_ID_PATTERN = new RegExp(`^case_[0-9A-Za-z]{${CASE_ID_RANDOM_LENGTH}}$`);

/** A new case id: `case_` and 22 random base62 characters (about 131 bits). */
export function newCaseId(): string {
  return `case_${randomBase62(CASE_ID_RANDOM_LENGTH)}`;
}

export const CASE_ID_EXAMPLE = 'case_7Gk2mP9qR4sT8vW1xY3zA5';
export const REFERENCE_EXAMPLE = 'PC-222-22B';

// Documentation only (OpenAPI, contract tests, types): marked pure so a bundle that does not use it drops it.
export const caseIdSchema = /* @__PURE__ */ z.string().regex(CASE_ID_PATTERN).meta({
  description: 'Case identifier: `case_` and 22 base62 characters.',
  example: CASE_ID_EXAMPLE,
});

export const caseReferenceSchema = /* @__PURE__ */ z.string().min(1).max(16).meta({
  description:
    'Human-readable case reference, unique across the service, at most 16 characters, free of easily confused characters (e.g. `PC-222-22B`). Quote it on the phone.',
  example: REFERENCE_EXAMPLE,
});

export const livemodeSchema = /* @__PURE__ */ z.boolean().meta({
  description:
    '`true` for a case made with a live key; `false` for a test-mode case (made with a `pca_test_` key), which never enters recovery.',
  example: true,
});

const moneyText = (description: string, example: string) =>
  z
    .string()
    .regex(/^\d+\.\d{2}$/)
    .meta({ description, example });
const isoDate = (description: string, example: string) =>
  z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/)
    .meta({ description, example });

// Documentation only (OpenAPI, contract tests, types); lib/cases/compute-amounts.ts computes it, docs/api.md "Amounts" explains it.
export const amountsSchema = /* @__PURE__ */ z
  .object({
    principal: moneyText('principalAmount.', '2500.00'),
    compensation: moneyText(
      'The fixed sum of the Late Payment of Commercial Debts (Interest) Act 1998 for the principal: below 1,000.00 → 40.00; to 9,999.99 → 70.00; 10,000.00 → 100.00. `0.00` when `claimStatutoryInterest` is false.',
      '70.00',
    ),
    interestFrom: isoDate('The day after dueDate (a date-time dueDate counts as its Europe/London date).', '2025-04-01'),
    interestRate: z
      .string()
      .regex(/^\d+\.\d{2}$/)
      .nullable()
      .meta({
        description:
          "Percent a year: the Bank of England reference rate of the half-year in which interestFrom falls, plus 8.00; fixed for the life of the case. `null` when statutory interest is not claimed, or when that half-year's rate is not in the table yet.",
        example: '12.75',
      }),
    interest: z
      .string()
      .regex(/^\d+\.\d{2}$/)
      .nullable()
      .meta({
        description:
          'For each day from interestFrom to asOf: the principal unpaid that day × interestRate ÷ 100 ÷ 365, summed exactly and rounded once, half up. `null` when interestRate is null for want of a reference rate.',
        example: '58.16',
      }),
    claimed: moneyText('principal + compensation + interest.', '2628.16'),
    paid: moneyText('The sum of the payments on the case (applied to principal, then compensation, then interest).', '1000.00'),
    outstanding: moneyText('claimed − paid, never below 0.00.', '1628.16'),
    asOf: isoDate(
      'The Europe/London date the figures are for: today for an open case (or the date quoted with `?asOf=`), the day it was closed or withdrawn for a final one.',
      '2025-06-30',
    ),
  })
  .strict()
  .meta({ id: 'Amounts', description: 'What the case claims, what was paid and what is outstanding, in GBP (docs/api.md, "Amounts").' });

export const caseViewSchema = /* @__PURE__ */ z
  .object({
    id: caseIdSchema,
    reference: caseReferenceSchema,
    status: z.enum(CASE_STATUSES).meta({
      description:
        'Case status. A newly created case is `DRAFT`; it becomes `READY` when every gate is satisfied (`recoveryGate` `AUTO_ATTESTED` or `CONFIRMED`, and `debtorVerification` `NOT_REQUESTED` or `VERIFIED`), `ON_HOLD` when debtor verification failed (you must act), `IN_RECOVERY` when the recovery team starts work on a `READY` case, `CLOSED` (final, see `closure`) when it is paid in full or the recovery team closes it, and `WITHDRAWN` (final) when you withdraw it. Further values may be added within v1: treat an unknown status as "in progress".',
    }),
    debtorName: z.string().meta({ example: 'Acme Widgets Ltd' }),
    principalAmount: z
      .string()
      .regex(/^\d+\.\d{2}$/)
      .meta({ description: 'GBP as a decimal string with two decimal places (a number in the create request).', example: '1250.50' }),
    currency: z.enum(['GBP']),
    createdAt: z.iso.datetime().meta({ description: 'ISO 8601, UTC.', example: '2025-03-04T10:20:30.000Z' }),
    updatedAt: z.iso.datetime().meta({ description: 'ISO 8601, UTC.', example: '2025-03-04T10:20:30.000Z' }),
    invoiceRef: z.string().meta({ description: 'As submitted.', example: 'INV-2025-0042' }),
    invoiceDate: z.string().meta({ description: 'As submitted (`YYYY-MM-DD` or an ISO 8601 date-time).', example: '2025-01-10' }),
    dueDate: z.string().meta({ description: 'As submitted (`YYYY-MM-DD` or an ISO 8601 date-time).', example: '2025-02-10' }),
    recoveryGate: z.enum(RECOVERY_GATES).meta({
      description:
        'What the case waits for before recovery starts: `AUTO_ATTESTED` when auto-attestation is enabled for your account, `AWAITING_CONFIRMATION` when a confirmation in your dashboard is needed, `CONFIRMED` once it was made.',
    }),
    livemode: livemodeSchema,
    debtorVerification: debtorVerificationSchema,
    statusHistory: statusHistorySchema,
    claimStatutoryInterest: z.boolean().meta({
      description: 'Whether the case claims statutory compensation and interest (the create input, `true` unless sent `false`).',
    }),
    amounts: amountsSchema,
    closure: closureSchema.nullable().meta({ description: 'How the case ended: set when `status` is `CLOSED`, null otherwise.' }),
  })
  .meta({
    id: 'Case',
    description: 'A recovery case, as your company sees it.',
    example: {
      id: CASE_ID_EXAMPLE,
      reference: REFERENCE_EXAMPLE,
      status: 'DRAFT',
      debtorName: 'Acme Widgets Ltd',
      principalAmount: '1250.50',
      currency: 'GBP',
      createdAt: '2025-03-04T10:20:30.000Z',
      updatedAt: '2025-03-04T10:20:30.000Z',
      invoiceRef: 'INV-2025-0042',
      invoiceDate: '2025-01-10',
      dueDate: '2025-02-10',
      recoveryGate: 'AWAITING_CONFIRMATION',
      livemode: true,
      debtorVerification: { status: 'PENDING' },
      statusHistory: [{ status: 'DRAFT', at: '2025-03-04T10:20:30.000Z' }],
      claimStatutoryInterest: true,
      amounts: {
        principal: '1250.50',
        compensation: '70.00',
        interestFrom: '2025-02-11',
        interestRate: '12.75',
        interest: '9.61',
        claimed: '1330.11',
        paid: '0.00',
        outstanding: '1330.11',
        asOf: '2025-03-04',
      },
      closure: null,
    },
  });
export type CaseView = z.infer<typeof caseViewSchema>;

/** What is stored for a case: the checked input (without its attestation, kept in its own audit record) plus what creation adds. */
export type StoredCase = Omit<ValidCase, 'attestation'> & CaseCreationFields;

/** What creation adds to a checked case; none of it may come from the input. */
export interface CaseCreationFields {
  caseId: string;
  companyId: string;
  reference: string;
  status: CaseStatus;
  recoveryGate: RecoveryGate;
  currency: 'GBP';
  createdAt: string;
  updatedAt: string;
  createdByKeyId: string;
  requestId: string;
  /** The mode of the key that created it; a case stored before test mode existed is live. */
  mode: Mode;
  /**
   * Absent only on a case stored before the lifecycle existed: read it through `lifecycleOf`,
   * which gives such a case `PENDING` (it has a debtorCompanyNo) or `NOT_REQUESTED`.
   */
  debtorVerification?: DebtorVerification;
  /** Absent only on a case stored before the lifecycle existed (`lifecycleOf` gives `DRAFT` at `createdAt`). */
  statusHistory?: StatusHistoryEntry[];
  /**
   * Counts the case's changes since recovery existed (absent: 0). Every change writes the next
   * value conditional on the one it read (optimistic concurrency), so two changes computed from
   * the same case never both land: two payments racing never both pass the outstanding check.
   */
  revision?: number;
  /**
   * The case's payments as the amounts need them (date and pence, in the order recorded, at most
   * MAX_PAYMENTS_PER_CASE): kept on the case so a read computes amounts from the one item. The
   * full payments are items of their own (lib/adapters/dynamodb/table-keys.ts, `PAYMENT#`).
   */
  paymentFacts?: PaymentFact[];
  /** Set when the case is `CLOSED`. */
  closure?: Closure;
}

/** At most this many payments a case (product rules: 409 PAYMENT_LIMIT_REACHED beyond). */
export const MAX_PAYMENTS_PER_CASE = 100;

/** Compiles only while the checked input has none of creation's fields (buildNewCase spreads it after them). */
export const INPUT_CANNOT_SET_CREATION_FIELDS: [Extract<keyof ValidCase, keyof CaseCreationFields>] extends [never] ? true : never = true;

/**
 * A new case's lifecycle (spec rule 1: "A created case begins at `DRAFT`", whatever its gates): its
 * debtor verification `PENDING` when it names a debtorCompanyNo, else `NOT_REQUESTED`, and its
 * history one `DRAFT` entry. A case whose gates are already satisfied moves on afterwards, off the
 * create request's path (`settleStatus` in case-lifecycle.ts). Also the defaults of a case stored
 * before the lifecycle existed (`lifecycleOf`).
 */
export function newCaseLifecycle(
  hasDebtorCompanyNo: boolean,
  createdAt: string,
): { status: 'DRAFT'; debtorVerification: DebtorVerification; statusHistory: StatusHistoryEntry[] } {
  return {
    status: 'DRAFT',
    debtorVerification: { status: hasDebtorCompanyNo ? 'PENDING' : 'NOT_REQUESTED' },
    statusHistory: [{ status: 'DRAFT', at: createdAt }],
  };
}

/** A stored case's lifecycle fields, with the defaults of a case stored before the lifecycle existed. */
export function lifecycleOf(stored: StoredCase): {
  status: CaseStatus;
  recoveryGate: RecoveryGate;
  debtorVerification: DebtorVerification;
  statusHistory: StatusHistoryEntry[];
} {
  const created = newCaseLifecycle(stored.debtorCompanyNo !== undefined, stored.createdAt);
  return {
    status: stored.status,
    recoveryGate: stored.recoveryGate,
    debtorVerification: stored.debtorVerification ?? created.debtorVerification,
    statusHistory: stored.statusHistory ?? created.statusHistory,
  };
}

/** When the figures of a view are taken: `now` (default: the clock) gives today's London date; `quoteAsOf` a later date to quote. */
export interface AmountsAt {
  now?: Date;
  /** `YYYY-MM-DD`, already checked (lib/cases/read-case.ts); ignored for a final case. */
  quoteAsOf?: string;
}

/** The Europe/London date the amounts are for (product rules: today, a quote, or the day a final case ended). */
export function amountsDateOf(stored: StoredCase, at: AmountsAt = {}): string {
  if (!isOpenStatus(stored.status)) {
    const ended = (stored.statusHistory ?? []).findLast((entry) => entry.status === stored.status)?.at ?? stored.updatedAt;
    return londonDate(Date.parse(ended));
  }
  return at.quoteAsOf ?? londonDate((at.now ?? new Date()).getTime());
}

/** The facts the amounts are computed from, as of `asOf`. */
export function amountFactsOf(stored: StoredCase, asOf: string) {
  return {
    principalPence: stored.principalPence,
    dueDate: stored.dueDate,
    // A case stored before the choice existed claims, as the default does.
    claimStatutoryInterest: stored.claimStatutoryInterest ?? true,
    payments: stored.paymentFacts ?? [],
    asOf,
  };
}

/**
 * The case's amounts: an open case's as of today in London (or the quoted date), a final case's
 * as of the day it was closed or withdrawn, when interest stopped; paid from the payment facts
 * kept on the case item (no payment item is read).
 */
export function amountsOf(stored: StoredCase, at: AmountsAt = {}): CaseAmounts {
  return computeAmounts(amountFactsOf(stored, amountsDateOf(stored, at)));
}

/**
 * Whether the case claims statutory interest and the half-year its interest starts in has no
 * reference rate in the table yet (awaitsReferenceRateFor: from the table's first half-year on):
 * its `interestRate` and `interest` are null, never guessed (product rules, "Recovery and
 * money"). The functions count such cases per request for the operators' alarm (docs/deploy.md,
 * "Adding a reference rate").
 */
export function awaitsReferenceRate(view: Pick<CaseView, 'claimStatutoryInterest' | 'amounts'>): boolean {
  return view.claimStatutoryInterest && view.amounts.interestRate === null && awaitsReferenceRateFor(view.amounts.interestFrom);
}

/** How many of `views` await their half-year's reference rate (awaitsReferenceRate). */
export function countAwaitingReferenceRate(views: readonly Pick<CaseView, 'claimStatutoryInterest' | 'amounts'>[]): number {
  return views.filter(awaitsReferenceRate).length;
}

export function toCaseView(stored: StoredCase, at: AmountsAt = {}): CaseView {
  const lifecycle = lifecycleOf(stored);
  return {
    id: stored.caseId,
    reference: stored.reference,
    status: stored.status,
    debtorName: stored.debtorName,
    principalAmount: formatPence(stored.principalPence),
    currency: stored.currency,
    createdAt: stored.createdAt,
    updatedAt: stored.updatedAt,
    invoiceRef: stored.invoiceRef,
    invoiceDate: stored.invoiceDate,
    dueDate: stored.dueDate,
    recoveryGate: stored.recoveryGate,
    livemode: stored.mode === 'live',
    debtorVerification: lifecycle.debtorVerification,
    statusHistory: lifecycle.statusHistory,
    claimStatutoryInterest: stored.claimStatutoryInterest ?? true,
    amounts: amountsOf(stored, at),
    closure: stored.status === 'CLOSED' && stored.closure ? stored.closure : null,
  };
}
