import * as z from 'zod';
import { fieldErrorSchema } from '../errors.js';
import { MAX_CASES_PER_REQUEST } from './batch-size.js';
import { REJECTION_CODES } from './case-input.js';
import { CASE_ID_EXAMPLE, caseIdSchema, caseReferenceSchema, livemodeSchema, REFERENCE_EXAMPLE } from './case-record.js';

/**
 * The answer to a batch (spec 2.3): every input element in exactly one of `created` / `rejected`.
 * The zod schemas are the one source of the item types and of their part of the OpenAPI document.
 */
const index = z
  .int()
  .min(0)
  .max(MAX_CASES_PER_REQUEST - 1)
  .meta({ description: 'Zero-based position of the case in the request array `cases`.', example: 0 });

export const rejectionCodeSchema = z.enum(REJECTION_CODES).meta({
  id: 'RejectionCode',
  description: [
    'Why a case was rejected: the first failing rule, in this order.',
    '',
    '- `INVALID_FIELD`: a field is missing, of the wrong type, too long, badly formatted, or unknown.',
    '- `ATTESTATION_FAILED`: one of `b2b`, `under10k`, `within6years`, `undisputed` is not `true`.',
    '- `AMOUNT_OUT_OF_RANGE`: `principalAmount` is not greater than 0 and at most 10,000 GBP.',
    '- `INVOICE_DATE_AFTER_DUE_DATE`: `invoiceDate` is after `dueDate`.',
    '- `DUE_DATE_NOT_PAST`: `dueDate` is not in the past (a date: before today in Europe/London).',
    '- `INVALID_FILE_KEY`: `invoiceFileKey` is not a fileKey issued to your company, or was uploaded in the other mode (test or live).',
    '- `FILE_NOT_UPLOADED`: nothing was uploaded under `invoiceFileKey` yet.',
    '- `OUT_OF_JURISDICTION`: `debtorCompanyNo` is registered outside England & Wales.',
    '- `DUPLICATE`: your company already has a case for this `invoiceRef` (or an earlier element of the same request has it).',
    '- `TEMPORARY_FAILURE`: storage failed; resubmitting the case is safe. Usually nothing was written for it; when the message says storage ' +
      'could not confirm whether it was written, it may exist, and a resubmission either creates it once or answers `DUPLICATE` naming it. ' +
      'In test mode, also every case whose `invoiceRef` starts with `SIMULATE-TEMPORARY-FAILURE`, so you can rehearse resubmission.',
    '',
    'New codes may be added within v1: treat an unknown code as a rejection to show to a person.',
  ].join('\n'),
  example: 'DUPLICATE',
});

export const createdItemSchema = z
  .object({
    index,
    invoiceRef: z.string().meta({ description: 'Echoes the input.', example: 'INV-2025-0042' }),
    id: caseIdSchema,
    reference: caseReferenceSchema,
    livemode: livemodeSchema,
  })
  .meta({
    id: 'CreatedItem',
    description: 'A case that was created (status `DRAFT`).',
    example: { index: 0, invoiceRef: 'INV-2025-0042', id: CASE_ID_EXAMPLE, reference: REFERENCE_EXAMPLE, livemode: true },
  });

export const rejectedItemSchema = z
  .object({
    index,
    invoiceRef: z
      .string()
      .nullable()
      .meta({ description: 'Echoes the input exactly as submitted; `null` when it was absent or not a string.', example: 'INV-2025-0041' }),
    code: rejectionCodeSchema,
    message: z.string().meta({ description: 'Explanatory text for a person. For `DUPLICATE` it contains the existing case reference.' }),
    errors: z.array(fieldErrorSchema).meta({ description: 'Every problem found with this case, so all can be fixed at once.' }),
    existingCaseId: caseIdSchema
      .optional()
      .meta({ description: 'Only with `DUPLICATE`: the id of the case already chasing this invoice.' }),
    existingReference: caseReferenceSchema
      .optional()
      .meta({ description: 'Only with `DUPLICATE`: the reference of the case already chasing this invoice.' }),
  })
  .meta({
    id: 'RejectedItem',
    description: 'A case that was not created, with the code of the first rule it failed.',
    example: {
      index: 1,
      invoiceRef: 'INV-2025-0041',
      code: 'DUPLICATE',
      message: 'invoiceRef is already being chased in case PC-222-229',
      errors: [{ field: 'invoiceRef', message: 'invoiceRef is already being chased in case PC-222-229' }],
      existingCaseId: 'case_0aB1cD2eF3gH4iJ5kL6mN7',
      existingReference: 'PC-222-229',
    },
  });
export const createCasesResponseSchema = z
  .object({
    created: z.array(createdItemSchema).meta({ description: 'Cases created, in request order.' }),
    rejected: z.array(rejectedItemSchema).meta({ description: 'Cases rejected, in request order.' }),
  })
  .meta({
    id: 'CreateCasesResponse',
    description: 'Every element of the request appears exactly once, in `created` or in `rejected`, with its `index`.',
  });

export type CreatedItem = z.infer<typeof createdItemSchema>;
export type RejectedItem = z.infer<typeof rejectedItemSchema>;

/** The use case's answer; the HTTP layer turns it into a status (201 when any case was created). */
export interface BatchResult {
  created: CreatedItem[];
  rejected: RejectedItem[];
  /**
   * How many of the `TEMPORARY_FAILURE` rejections rest on a write whose outcome storage could
   * not confirm (the case may exist; an in-request twin of such a case counts too). For operators
   * (log line and metric); never part of the partner's answer.
   */
  writeOutcomeUnknown: number;
  /**
   * How many of the cases created await their half-year's reference rate (`interestRate` null,
   * lib/cases/case-record.ts, awaitsReferenceRate). For operators (log line and metric); never
   * part of the partner's answer.
   */
  referenceRateMissing: number;
  /**
   * How many of the `TEMPORARY_FAILURE` rejections test mode simulated (an invoiceRef starting
   * `SIMULATE-TEMPORARY-FAILURE`): a partner rehearsing its resubmission path, not a storage
   * failure, so never counted in the operators' `CasesTemporaryFailure`.
   */
  simulatedFailures: number;
}
