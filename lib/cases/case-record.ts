import * as z from 'zod';
import { randomBase62 } from '../random-id.js';
import type { Mode } from '../mode.js';
import type { ValidCase } from './case-input.js';

/**
 * The stored case and its public view (spec 2.4 plus the additive fields of the product rules).
 * Money is held as integer pence; it is shown as a decimal string with two places. The view's
 * zod schema is the one source of its type and of its part of the OpenAPI document.
 */
export const CASE_STATUSES = ['DRAFT'] as const;
export type CaseStatus = (typeof CASE_STATUSES)[number];
export const RECOVERY_GATES = ['AUTO_ATTESTED', 'AWAITING_CONFIRMATION'] as const;
export type RecoveryGate = (typeof RECOVERY_GATES)[number];

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

export const caseViewSchema = /* @__PURE__ */ z
  .object({
    id: caseIdSchema,
    reference: caseReferenceSchema,
    status: z.enum(CASE_STATUSES).meta({
      description:
        'Case status. A newly created case is `DRAFT`. Further values may be added within v1: treat an unknown status as "in progress".',
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
        'What the case waits for before recovery starts: `AUTO_ATTESTED` when auto-attestation is enabled for your account, `AWAITING_CONFIRMATION` when a confirmation in your dashboard is needed.',
    }),
    livemode: livemodeSchema,
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
}

/** Compiles only while the checked input has none of creation's fields (buildNewCase spreads it after them). */
export const INPUT_CANNOT_SET_CREATION_FIELDS: [Extract<keyof ValidCase, keyof CaseCreationFields>] extends [never] ? true : never = true;

export function formatPence(pence: number): string {
  const sign = pence < 0 ? '-' : '';
  const abs = Math.abs(pence);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

export function toCaseView(stored: StoredCase): CaseView {
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
  };
}
