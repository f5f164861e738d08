import * as z from 'zod';
import { unknownFieldErrors } from '../errors.js';
import { isWellFormedText } from '../text.js';
import { normaliseCompanyNumber, isOutOfJurisdiction } from './company-number.js';
import { isAfter, isInPast, parseCaseDate } from './dates.js';
import { invoiceRefKey } from './invoice-ref.js';
import { amountInRange, toPence } from './money.js';

/**
 * Per-case validation (spec 2.1/2.2, product rules "POST /api/v1/cases"). Pure: no I/O, the
 * clock and the file-key check are passed in. The storage-dependent rules (FILE_NOT_UPLOADED,
 * DUPLICATE, TEMPORARY_FAILURE) are applied by the batch service.
 */
export const REJECTION_CODES = [
  'INVALID_FIELD',
  'ATTESTATION_FAILED',
  'AMOUNT_OUT_OF_RANGE',
  'INVOICE_DATE_AFTER_DUE_DATE',
  'DUE_DATE_NOT_PAST',
  'INVALID_FILE_KEY',
  'FILE_NOT_UPLOADED',
  'OUT_OF_JURISDICTION',
  'DUPLICATE',
  'TEMPORARY_FAILURE',
] as const;
export type RejectionCode = (typeof REJECTION_CODES)[number];

export interface Finding {
  code: RejectionCode;
  field: string;
  message: string;
}

/** Spec 2.1: invoiceRef is 1 to 100 characters. */
export const MAX_INVOICE_REF_LENGTH = 100;

export const ATTESTATION_FLAGS = ['b2b', 'under10k', 'within6years', 'undisputed'] as const;

const chars = (s: string) => [...s].length;
const notBlank = (s: string) => s.trim().length > 0;

/** Every string field: a string of well-formed Unicode (product rules "Request bytes"). */
function str(field: string, typeError: string) {
  return z
    .string({ error: typeError })
    .refine(isWellFormedText, { error: `${field} must be valid Unicode text (it holds an unpaired surrogate)`, abort: true });
}

function text(field: string, max: number, min = 1) {
  return str(field, `${field} must be a string`)
    .refine((s) => chars(s) >= min && chars(s) <= max, { error: `${field} must be ${min} to ${max} characters` })
    .refine(notBlank, { error: `${field} must not be blank` });
}

function optionalText(field: string, max: number) {
  return str(field, `${field} must be a string`)
    .refine((s) => chars(s) <= max, { error: `${field} must be at most ${max} characters` })
    .nullish();
}

const caseDate = (field: string) =>
  str(field, `${field} must be a string`).refine((s) => parseCaseDate(s) !== undefined, {
    error: `${field} must be a real date as YYYY-MM-DD or an ISO 8601 date-time with Z or an offset`,
  });

const attestationSchema = z.strictObject(
  {
    b2b: z.boolean({ error: 'attestation.b2b must be true or false' }),
    under10k: z.boolean({ error: 'attestation.under10k must be true or false' }),
    within6years: z.boolean({ error: 'attestation.within6years must be true or false' }),
    undisputed: z.boolean({ error: 'attestation.undisputed must be true or false' }),
    attestedBy: text('attestation.attestedBy', 200),
  },
  { error: 'attestation must be an object with b2b, under10k, within6years, undisputed and attestedBy' },
);

export const caseInputSchema = z.strictObject({
  debtorName: text('debtorName', 300),
  debtorEmail: str('debtorEmail', 'debtorEmail must be a string')
    .max(254, { error: 'debtorEmail must be at most 254 characters' })
    .pipe(z.email({ error: 'debtorEmail must be a valid e-mail address' })),
  invoiceRef: text('invoiceRef', MAX_INVOICE_REF_LENGTH),
  invoiceDate: caseDate('invoiceDate'),
  dueDate: caseDate('dueDate'),
  principalAmount: z
    .number({ error: 'principalAmount must be a number (GBP, e.g. 1250.5)' })
    .refine((n) => toPence(n) !== undefined, { error: 'principalAmount must have at most 2 decimal places' }),
  invoiceFileKey: str('invoiceFileKey', 'invoiceFileKey must be a string (the fileKey from POST /api/v1/uploads)'),
  attestation: attestationSchema,
  debtorCompanyNo: str('debtorCompanyNo', 'debtorCompanyNo must be a string')
    .refine((s) => normaliseCompanyNumber(s) !== undefined, {
      error: 'debtorCompanyNo must be a UK company number: 8 digits, or 2 letters and 6 digits',
    })
    .nullish(),
  debtorAddress: optionalText('debtorAddress', 500),
  description: optionalText('description', 2000),
  claimStatutoryInterest: z.boolean({ error: 'claimStatutoryInterest must be true or false' }).nullish(),
});

export type CaseInput = z.infer<typeof caseInputSchema>;

export type Attestation = z.infer<typeof attestationSchema>;

/** A case that passed every pure rule, normalised for storage. */
export interface ValidCase {
  debtorName: string;
  debtorEmail: string;
  invoiceRef: string;
  invoiceRefKey: string;
  invoiceDate: string;
  dueDate: string;
  principalPence: number;
  invoiceFileKey: string;
  attestation: Attestation;
  debtorCompanyNo?: string;
  debtorAddress?: string;
  description?: string;
  /** Whether statutory compensation and interest are claimed; always set by checkCase (absent only on cases stored before it existed: read as true). */
  claimStatutoryInterest?: boolean;
}

export interface CaseCheck {
  /** Present when the shape is valid (no INVALID_FIELD), even if later rules failed. */
  value?: ValidCase;
  /** Every problem found, each with the code of the rule it breaks. */
  findings: Finding[];
}

export interface CheckContext {
  now: Date;
  /** Rule 6: is this a key the service issued under the calling company's prefix? */
  fileKeyProblem: (fileKey: string) => string | undefined;
}

/** The invoiceRef exactly as submitted when it is a string, else null (for the echo). */
export function echoInvoiceRef(raw: unknown): string | null {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return null;
  const ref = (raw as Record<string, unknown>).invoiceRef;
  return typeof ref === 'string' ? ref : null;
}

function fieldOf(path: readonly PropertyKey[]): string {
  return path.map(String).join('.');
}

function isAbsent(raw: unknown, path: readonly PropertyKey[]): boolean {
  let node: unknown = raw;
  for (const key of path) {
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, key)) return true;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return node === undefined;
}

function shapeFindings(raw: unknown, error: z.ZodError): Finding[] {
  const findings: Finding[] = [];
  const unknown: string[] = [];
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      const prefix = issue.path.length ? `${fieldOf(issue.path)}.` : '';
      for (const key of issue.keys) unknown.push(`${prefix}${key}`);
      continue;
    }
    const field = fieldOf(issue.path);
    const missing = issue.code === 'invalid_type' && isAbsent(raw, issue.path);
    findings.push({ code: 'INVALID_FIELD', field, message: missing ? `${field} is required` : issue.message });
  }
  for (const error of unknownFieldErrors(unknown, (field) => `${field} is not a recognised field`))
    findings.push({ code: 'INVALID_FIELD', ...error });
  return findings;
}

/** Applies rules 1–6 and 8 to one raw case. */
export function checkCase(raw: unknown, context: CheckContext): CaseCheck {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { findings: [{ code: 'INVALID_FIELD', field: '', message: 'each element of cases must be a JSON object' }] };
  }
  const parsed = caseInputSchema.safeParse(raw);
  if (!parsed.success) return { findings: shapeFindings(raw, parsed.error) };

  const input = parsed.data;
  const findings: Finding[] = [];

  const failedFlags = ATTESTATION_FLAGS.filter((flag) => input.attestation[flag] !== true);
  if (failedFlags.length > 0) {
    findings.push({
      code: 'ATTESTATION_FAILED',
      field: 'attestation',
      message: `the attestation must confirm every eligibility condition; not confirmed: ${failedFlags.join(', ')}`,
    });
  }

  const pence = toPence(input.principalAmount) as number;
  if (!amountInRange(pence)) {
    findings.push({
      code: 'AMOUNT_OUT_OF_RANGE',
      field: 'principalAmount',
      message: 'principalAmount must be greater than 0 and at most 10000 GBP',
    });
  }

  const invoiceDate = parseCaseDate(input.invoiceDate)!;
  const dueDate = parseCaseDate(input.dueDate)!;
  if (isAfter(invoiceDate, dueDate)) {
    findings.push({ code: 'INVOICE_DATE_AFTER_DUE_DATE', field: 'invoiceDate', message: 'invoiceDate must not be after dueDate' });
  }
  if (!isInPast(dueDate, context.now)) {
    findings.push({
      code: 'DUE_DATE_NOT_PAST',
      field: 'dueDate',
      message: 'dueDate must be in the past (a date must be before today in Europe/London; a date-time before now)',
    });
  }

  const fileKeyProblem = context.fileKeyProblem(input.invoiceFileKey);
  if (fileKeyProblem !== undefined) {
    findings.push({ code: 'INVALID_FILE_KEY', field: 'invoiceFileKey', message: fileKeyProblem });
  }

  let companyNo: string | undefined;
  if (input.debtorCompanyNo !== undefined && input.debtorCompanyNo !== null) {
    companyNo = normaliseCompanyNumber(input.debtorCompanyNo) as string;
    if (isOutOfJurisdiction(companyNo)) {
      findings.push({
        code: 'OUT_OF_JURISDICTION',
        field: 'debtorCompanyNo',
        message: `debtorCompanyNo ${companyNo} is registered outside England & Wales; claims are brought in the small claims track of England & Wales`,
      });
    }
  }

  const value: ValidCase = {
    debtorName: input.debtorName,
    debtorEmail: input.debtorEmail,
    invoiceRef: input.invoiceRef,
    invoiceRefKey: invoiceRefKey(input.invoiceRef),
    invoiceDate: input.invoiceDate,
    dueDate: input.dueDate,
    principalPence: pence,
    invoiceFileKey: input.invoiceFileKey,
    attestation: {
      b2b: input.attestation.b2b,
      under10k: input.attestation.under10k,
      within6years: input.attestation.within6years,
      undisputed: input.attestation.undisputed,
      attestedBy: input.attestation.attestedBy,
    },
    ...(companyNo !== undefined ? { debtorCompanyNo: companyNo } : {}),
    ...(input.debtorAddress != null ? { debtorAddress: input.debtorAddress } : {}),
    ...(input.description != null ? { description: input.description } : {}),
    claimStatutoryInterest: input.claimStatutoryInterest ?? true,
  };
  return { value, findings };
}

/** The code of the first failing rule in the product rules' order. */
export function firstCode(findings: readonly Finding[]): RejectionCode | undefined {
  let best: RejectionCode | undefined;
  for (const f of findings) {
    if (best === undefined || REJECTION_CODES.indexOf(f.code) < REJECTION_CODES.indexOf(best)) best = f.code;
  }
  return best;
}
