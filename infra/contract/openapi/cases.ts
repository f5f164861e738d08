import { z } from 'zod';
import { MAX_CASES_PER_REQUEST } from '../../../lib/cases/batch-size.js';
import { createCasesResponseSchema } from '../../../lib/cases/batch-result.js';
import { withdrawRequestSchema } from '../../../lib/cases/case-lifecycle.js';
import { caseInputSchema, MAX_INVOICE_REF_LENGTH } from '../../../lib/cases/case-input.js';
import { CASE_ID_PATTERN, caseViewSchema, MAX_WITHDRAW_REASON_LENGTH } from '../../../lib/cases/case-record.js';
import { COMPANY_NUMBER_INPUT_PATTERN } from '../../../lib/cases/company-number.js';
import { CASE_DATE_PATTERN, DATE_TIME } from '../../../lib/cases/dates.js';
import { caseListQuerySchema, caseListSchema, DEFAULT_LIST_LIMIT, LIST_PARAMETERS, MAX_LIST_LIMIT } from '../../../lib/cases/list-cases.js';
import { CURSOR_LIFETIME_MS, CURSOR_PATTERN, MAX_CURSOR_LENGTH } from '../../../lib/cases/list-cursor.js';
import { MAX_PRINCIPAL_PENCE } from '../../../lib/cases/money.js';
import { MAX_QUOTE_DAYS_AHEAD } from '../../../lib/cases/read-case.js';
import {
  caseNotOpenProblemSchema,
  batchEmptyProblemSchema,
  batchTooLargeProblemSchema,
  createCasesBadRequestSchema,
  idempotencyCompletedProblemSchema,
  idempotencyInProgressProblemSchema,
  idempotencyKeyReusedProblemSchema,
  invalidCursorProblemSchema,
  invalidRequestProblemSchema,
  listCasesBadRequestSchema,
  notFoundProblemSchema,
  paymentExceedsOutstandingProblemSchema,
  paymentIdempotencyCompletedProblemSchema,
  paymentLimitReachedProblemSchema,
} from '../../../lib/http/response-schemas.js';
import { paymentRequestSchema, paymentViewSchema } from '../../../lib/cases/recovery.js';
import { FILE_KEY_PATTERN, MAX_FILE_KEY_LENGTH } from '../../../lib/uploads/file-key.js';
import {
  BODY_PROBLEMS,
  CURSOR_EXAMPLE,
  example,
  idParameter,
  invalidRequestExample,
  json,
  problem,
  queryParameters,
  documented,
  jsonBody,
  type OperationDoc,
  type ParameterDocs,
} from './components.js';

export const MAX_PRINCIPAL_POUNDS = MAX_PRINCIPAL_PENCE / 100;
const MAX_PRINCIPAL_TEXT = MAX_PRINCIPAL_POUNDS.toLocaleString('en-GB');
export const CURSOR_HOURS = CURSOR_LIFETIME_MS / 3_600_000;

// ---- request schemas: the handlers' own, with the documentation their refinements need --------

const caseShape = caseInputSchema.shape;
const caseDate = (description: string, exampleValue: string) => ({ pattern: CASE_DATE_PATTERN.source, description, example: exampleValue });

export const attestationDocSchema = caseShape.attestation
  .extend(
    documented(caseShape.attestation.shape, {
      b2b: { description: 'Must be `true`: the debt is business-to-business.', example: true },
      under10k: { description: `Must be \`true\`: the debt is at most ${MAX_PRINCIPAL_TEXT} GBP.`, example: true },
      within6years: { description: 'Must be `true`: the debt is within the six-year limitation window.', example: true },
      undisputed: { description: 'Must be `true`: the debt is undisputed.', example: true },
      attestedBy: {
        minLength: 1,
        maxLength: 200,
        description: 'The authorised person making the attestation (not blank).',
        example: 'Jane Smith, Credit Controller',
      },
    }),
  )
  .meta({
    id: 'Attestation',
    description:
      'The legal eligibility assertion, kept immutably for the audit trail. All four flags must be `true`, else the case is rejected with `ATTESTATION_FAILED`. Unknown members are refused (`INVALID_FIELD`).',
  });

export const caseInputDocSchema = caseInputSchema
  .extend({
    ...documented(caseShape, {
      debtorName: { minLength: 1, maxLength: 300, description: 'The debtor company (not blank).', example: 'Acme Widgets Ltd' },
      debtorEmail: { format: 'email', description: 'Where the debtor is contacted.', example: 'accounts@acme.example' },
      invoiceRef: {
        minLength: 1,
        maxLength: MAX_INVOICE_REF_LENGTH,
        description: 'Your invoice reference (not blank). Unique per company: compared trimmed, Unicode NFC-normalised and case-folded.',
        example: 'INV-2025-0042',
      },
      invoiceDate: caseDate('`YYYY-MM-DD` or an ISO 8601 date-time with `Z` or an offset; a real date. Not after `dueDate`.', '2025-01-10'),
      dueDate: caseDate(
        '`YYYY-MM-DD` or an ISO 8601 date-time with `Z` or an offset; a real date. In the past (a date: before today in Europe/London).',
        '2025-02-10',
      ),
      principalAmount: {
        description: `GBP, as a JSON number with at most 2 decimal places; greater than 0 and at most ${MAX_PRINCIPAL_TEXT}.`,
        exclusiveMinimum: 0,
        maximum: MAX_PRINCIPAL_POUNDS,
        example: 1250.5,
      },
      invoiceFileKey: {
        maxLength: MAX_FILE_KEY_LENGTH,
        pattern: FILE_KEY_PATTERN.source,
        description: 'The `fileKey` returned by `POST /api/v1/uploads`, unchanged, with the file already uploaded.',
        example: 'invoices/cmp_4fZ0qR8sT2uV6wXy/7Gk2mP9qR4sT8vW1xY3zA5bC7dE9fG1h.pdf',
      },
      debtorCompanyNo: {
        pattern: COMPANY_NUMBER_INPUT_PATTERN.source,
        description:
          'UK company number: 8 digits, or 2 letters and 6 digits (shorter all-digit numbers are zero-padded). Confirms the registered details; Scottish and Northern Irish registrations are out of jurisdiction.',
        example: '01234567',
      },
      debtorAddress: { maxLength: 500, description: 'Optional context.', example: '1 High Street, London EC1A 1AA' },
      description: {
        maxLength: 2000,
        description: 'Optional context.',
        example: 'Widgets delivered 2025-01-05, invoice unpaid after two reminders.',
      },
      claimStatutoryInterest: {
        description:
          'Whether the case claims statutory compensation and interest under the Late Payment of Commercial Debts (Interest) Act 1998 (default `true`); with `false` the case claims the principal only.',
        example: true,
      },
    }),
    attestation: attestationDocSchema,
  })
  .meta({
    id: 'CaseInput',
    description:
      'One case: one unpaid business-to-business invoice and one debtor. Each case is checked on its own: a case that breaks a rule is rejected with a `RejectionCode` and does not fail the request. Unknown members are refused (`INVALID_FIELD`); optional members may be omitted or `null`.',
  });

export const createCasesRequestSchema = z
  .strictObject({
    cases: z
      .array(caseInputDocSchema)
      .min(1)
      .max(MAX_CASES_PER_REQUEST)
      .meta({ description: `1 to ${MAX_CASES_PER_REQUEST} cases.` }),
  })
  .meta({ id: 'CreateCasesRequest' });

export const withdrawRequestDocSchema = withdrawRequestSchema
  .extend(
    documented(withdrawRequestSchema.shape, {
      reason: {
        maxLength: MAX_WITHDRAW_REASON_LENGTH,
        description: `Why the case is withdrawn (at most ${MAX_WITHDRAW_REASON_LENGTH} characters); kept as the \`reason\` of the \`WITHDRAWN\` entry of \`statusHistory\`. An empty reason counts as none.`,
        example: 'Paid directly by the debtor',
      },
    }),
  )
  .meta({ id: 'WithdrawRequest', description: 'Optional: the body may be left out. Unknown members are refused.' });

// ---- shared by the lists -----------------------------------------------------------------------

/** `createdFrom`/`createdBefore`, `limit` and `cursor`: the parameters every list with them describes alike. */
export function listParameterDocs(items: string) {
  const bound = (text: string, exampleValue: string): ParameterDocs => ({
    description: `Only ${items} created ${text}: an ISO 8601 date-time with \`Z\` or an offset${text.startsWith('before') ? ', later than `createdFrom`' : ''}.`,
    schema: { pattern: DATE_TIME.source },
    example: exampleValue,
  });
  return {
    createdFrom: bound('at or after this instant', '2025-03-01T00:00:00Z'),
    createdBefore: bound('before this instant (exclusive)', '2025-04-01T00:00:00+01:00'),
    ...pagingParameterDocs(items),
  };
}

export function pagingParameterDocs(items: string, withExample = true) {
  return {
    limit: {
      description: `${items[0]?.toUpperCase()}${items.slice(1)} per page, 1 to ${MAX_LIST_LIMIT} (default ${DEFAULT_LIST_LIMIT}).`,
      schema: { type: 'integer', minimum: 1, maximum: MAX_LIST_LIMIT, default: DEFAULT_LIST_LIMIT },
    },
    cursor: {
      description: 'The `nextCursor` of the previous page, unchanged.',
      schema: { maxLength: MAX_CURSOR_LENGTH, pattern: CURSOR_PATTERN.source },
      ...(withExample ? { example: CURSOR_EXAMPLE } : {}),
    },
  } satisfies Record<string, ParameterDocs>;
}

/** The 400 of a list: a bad parameter (`INVALID_REQUEST`) or cursor (`INVALID_CURSOR`). */
export function listBadRequest(summary: string, errors: { field: string; message: string }[]) {
  return problem(
    'A query parameter or the cursor was refused.',
    listCasesBadRequestSchema,
    {},
    {
      invalidRequest: {
        summary,
        value: invalidRequestExample('The query string is invalid; see "errors" for every parameter to fix.', errors),
      },
      invalidCursor: { summary: 'An expired cursor', value: example(invalidCursorProblemSchema) },
    },
  );
}

export const caseIdParameter = (description = 'The case id, as returned in `created[].id`.') =>
  idParameter(description, CASE_ID_PATTERN, 'case_7Gk2mP9qR4sT8vW1xY3zA5');

const caseNotFound = problem('No case with this id exists for your company.', notFoundProblemSchema);

// ---- examples ----------------------------------------------------------------------------------

const CASE = {
  debtorName: 'Acme Widgets Ltd',
  debtorEmail: 'accounts@acme.example',
  invoiceRef: 'INV-2025-0042',
  invoiceDate: '2025-01-10',
  dueDate: '2025-02-10',
  principalAmount: 1250.5,
  invoiceFileKey: 'invoices/cmp_4fZ0qR8sT2uV6wXy/7Gk2mP9qR4sT8vW1xY3zA5bC7dE9fG1h.pdf',
  debtorCompanyNo: '01234567',
  attestation: { b2b: true, under10k: true, within6years: true, undisputed: true, attestedBy: 'Jane Smith, Credit Controller' },
};

const CREATED = { index: 0, invoiceRef: 'INV-2025-0042', id: 'case_7Gk2mP9qR4sT8vW1xY3zA5', reference: 'PC-222-22B', livemode: true };
/** A rejected item as the service answers it: the one rule it broke, its message also given on the field it names. */
function rejectedItem(index: number, invoiceRef: string, code: string, field: string, message: string) {
  return { index, invoiceRef, code, message, errors: [{ field, message }] };
}
const REJECTED_DUE_DATE = rejectedItem(
  1,
  'INV-2025-0043',
  'DUE_DATE_NOT_PAST',
  'dueDate',
  'dueDate must be in the past (a date must be before today in Europe/London; a date-time before now)',
);
const REJECTED_DUPLICATE = {
  ...rejectedItem(0, 'INV-2025-0042', 'DUPLICATE', 'invoiceRef', 'invoiceRef is already being chased in case PC-222-22B'),
  existingCaseId: 'case_7Gk2mP9qR4sT8vW1xY3zA5',
  existingReference: 'PC-222-22B',
};

// ---- payments --------------------------------------------------------------------------------

export const recordedPaymentSchema = z
  .object({ payment: paymentViewSchema, case: caseViewSchema })
  .meta({ id: 'RecordedPayment', description: 'The payment recorded, and the case as `GET /api/v1/cases/{id}` returns it just after.' });

export const paymentListSchema = z
  .object({ data: z.array(paymentViewSchema).meta({ description: 'Every payment of the case, oldest first (at most 100).' }) })
  .meta({ id: 'PaymentList' });

const PAYMENT = {
  id: 'pay_3Hk8nQ2rS5tU9vW4xY7zB1',
  caseId: 'case_7Gk2mP9qR4sT8vW1xY3zA5',
  source: 'DIRECT',
  amount: '250.50',
  paidAt: '2025-03-10',
  reference: 'BACS 0042',
  recordedAt: '2025-03-11T09:15:02.331Z',
  livemode: true,
};

const paymentRefusals = z
  .union([
    caseNotOpenProblemSchema,
    paymentExceedsOutstandingProblemSchema,
    paymentLimitReachedProblemSchema,
    idempotencyInProgressProblemSchema,
    paymentIdempotencyCompletedProblemSchema,
  ])
  .meta({ id: 'RecordPaymentConflictProblem', description: 'Why the payment was not recorded (`code`); nothing was recorded.' });

const WITHDRAWN = {
  ...example(caseViewSchema),
  status: 'WITHDRAWN',
  updatedAt: '2025-03-05T09:12:40.118Z',
  statusHistory: [
    { status: 'DRAFT', at: '2025-03-04T10:20:30.000Z' },
    { status: 'WITHDRAWN', at: '2025-03-05T09:12:40.118Z', reason: 'Paid directly by the debtor' },
  ],
};

// ---- the operations ----------------------------------------------------------------------------

export const CASE_OPERATIONS: Record<string, OperationDoc> = {
  CreateCases: {
    tag: 'Cases',
    description: `Creates 1 to ${MAX_CASES_PER_REQUEST} cases. Each case is created or rejected on its own: every element of \`cases\` appears exactly once, in \`created\` or in \`rejected\` (with a \`RejectionCode\`), by its zero-based \`index\`. \`201\` when at least one case was created, \`200\` when none was. Creating a case does not start recovery: a case begins as \`DRAFT\`.`,
    parameters: [{ $ref: '#/components/parameters/IdempotencyKey' }],
    request: jsonBody(createCasesRequestSchema, {
      oneCase: { summary: 'One case', value: { cases: [CASE] } },
      twoCases: {
        summary: 'Two cases, the second due in the future',
        value: { cases: [CASE, { ...CASE, invoiceRef: 'INV-2025-0043', dueDate: '2099-12-31', debtorCompanyNo: null }] },
      },
    }),
    responses: {
      201: json('At least one case was created.', createCasesResponseSchema, {
        created: { summary: 'One case created, one rejected', value: { created: [CREATED], rejected: [REJECTED_DUE_DATE] } },
      }),
      200: json('No case was created: every case is in `rejected`.', createCasesResponseSchema, {
        duplicate: { summary: 'The invoice is already being chased', value: { created: [], rejected: [REJECTED_DUPLICATE] } },
      }),
    },
    problems: ['INVALID_REQUEST', 'BATCH_EMPTY', 'BATCH_TOO_LARGE', 'IDEMPOTENCY_KEY_REUSED', ...BODY_PROBLEMS, 'SERVICE_UNAVAILABLE'],
    problemResponses: {
      400: problem(
        'The request as a whole was refused; nothing was created and the `Idempotency-Key` was not used up.',
        createCasesBadRequestSchema,
        {},
        {
          invalidRequest: {
            summary: '`cases` is missing',
            value: invalidRequestExample(`The request body must hold "cases", an array of 1 to ${MAX_CASES_PER_REQUEST} cases.`, [
              { field: 'cases', message: 'cases is required' },
            ]),
          },
          batchEmpty: { summary: 'No cases', value: example(batchEmptyProblemSchema) },
          batchTooLarge: { summary: `More than ${MAX_CASES_PER_REQUEST} cases`, value: example(batchTooLargeProblemSchema) },
        },
      ),
      409: problem(
        'The `Idempotency-Key` was already used: nothing new was created.',
        idempotencyKeyReusedProblemSchema,
        {
          'Retry-After': {
            required: false,
            description:
              'Only while the first request is `IN_PROGRESS`: seconds until it has certainly ended (its function timeout plus a margin); retry then to receive its result.',
            schema: { type: 'string', pattern: '^[0-9]+$' },
          },
        },
        {
          completed: {
            summary: 'The first request finished: its result is included',
            value: { ...example(idempotencyCompletedProblemSchema), created: [CREATED], rejected: [REJECTED_DUE_DATE] },
          },
          inProgress: { summary: 'The first request is still running', value: example(idempotencyInProgressProblemSchema) },
        },
      ),
    },
  },

  ListCases: {
    tag: 'Cases',
    description:
      "Your company's cases, newest first (`createdAt` descending, then `id` descending), a page at a time. Pass `nextCursor` as `cursor`, with the same filters, for the next page; it is `null` on the last page. Walking every page of a collection that does not change meanwhile returns each case exactly once. A list may lag creation by about a second (it is served from a secondary index).\n\n" +
      'With `invoiceRef` it is a look-up instead: every case with that invoiceRef, compared as the duplicate check compares it (trimmed, Unicode NFC-normalised, case-folded), newest first, found even a moment after it was created or withdrawn. At most one of them is not `WITHDRAWN` (the one holding the invoiceRef); the others were withdrawn, which gives an invoiceRef up for a new case. They come in one page (`limit` does not apply, `nextCursor` is `null`). Other filters given with it must match too.\n\n' +
      `Each parameter at most once; an unknown, repeated or bad parameter is \`400 INVALID_REQUEST\` with \`errors\`. A cursor is opaque, bound to your company and to the filters it was issued for, and expires after ${CURSOR_HOURS} hours: otherwise \`400 INVALID_CURSOR\`.`,
    parameters: queryParameters(caseListQuerySchema, {
      invoiceRef: {
        description: `Look up every case with this invoiceRef, withdrawn ones included (1 to ${MAX_INVOICE_REF_LENGTH} characters, not blank).`,
        schema: { minLength: 1, maxLength: MAX_INVOICE_REF_LENGTH },
        example: 'INV-2025-0042',
      },
      status: { description: 'Only cases with this status.' },
      recoveryGate: { description: 'Only cases with this recovery gate.' },
      ...listParameterDocs('cases'),
    }),
    responses: {
      200: json('A page of cases (or the look-up result).', caseListSchema, {
        page: { summary: 'A page with more to come', value: { data: [example(caseViewSchema)], nextCursor: CURSOR_EXAMPLE } },
        lookUp: { summary: 'A look-up by invoiceRef', value: { data: [example(caseViewSchema)], nextCursor: null } },
        none: { summary: 'Nothing matches', value: { data: [], nextCursor: null } },
      }),
    },
    problems: ['INVALID_REQUEST', 'INVALID_CURSOR'],
    problemResponses: {
      400: listBadRequest('A bad limit and an unknown parameter', [
        { field: 'limit', message: `limit must be a whole number from 1 to ${MAX_LIST_LIMIT}` },
        {
          field: 'sort',
          message: `sort is not a query parameter of this operation; use ${LIST_PARAMETERS.join(', ')}`,
        },
      ]),
    },
  },

  GetCase: {
    tag: 'Cases',
    description: "Returns one of your company's cases. A case of another company answers exactly like one that does not exist (`404`).",
    parameters: [
      caseIdParameter(),
      {
        name: 'asOf',
        in: 'query',
        required: false,
        description: `A settlement quote: the open case's \`amounts\` as of this date (\`YYYY-MM-DD\`, from today in Europe/London to ${MAX_QUOTE_DAYS_AHEAD} days ahead; default today). A withdrawn case ignores it. Any other value is \`400 INVALID_REQUEST\`.`,
        schema: { type: 'string', format: 'date' },
        example: '2025-03-31',
      },
    ],
    responses: { 200: json('The case.', caseViewSchema, { draft: { summary: 'A new case', value: example(caseViewSchema) } }) },
    problems: ['INVALID_REQUEST', 'NOT_FOUND', 'SERVICE_UNAVAILABLE'],
    problemResponses: { 400: problem('The `asOf` query parameter was refused.', invalidRequestProblemSchema), 404: caseNotFound },
  },

  RecordPayment: {
    tag: 'Cases',
    description:
      'Reports money the debtor paid you directly on one of your company\u2019s open cases (`DRAFT`, `READY`, `ON_HOLD`, `IN_RECOVERY`). The payment (`source` `DIRECT`) is recorded with a `case.updated` event in one transaction; `201` answers it with the case after it (`amounts.paid` and `outstanding` include it). A payment that brings `outstanding` to `0.00` closes the case `PAID_IN_FULL` at once, freeing its invoiceRef. `amount` must not exceed today\u2019s `outstanding` (`409 PAYMENT_EXCEEDS_OUTSTANDING`, with `outstanding`); two payments sent at once are decided one after the other, so they never both pass that check. A case holds at most 100 payments. Send an `Idempotency-Key` to retry safely: a repeat answers `409 IDEMPOTENCY_KEY_REUSED` with `sameRequest` and the original `payment` and `case`, and records nothing. A case of another company, or of the other mode, answers exactly like one that does not exist (`404`).',
    parameters: [caseIdParameter(), { $ref: '#/components/parameters/IdempotencyKey' }],
    request: jsonBody(paymentRequestSchema, {
      payment: { summary: 'A bank transfer', value: { amount: 250.5, paidAt: '2025-03-10', reference: 'BACS 0042' } },
    }),
    responses: {
      201: json('The payment was recorded.', recordedPaymentSchema, {
        recorded: { summary: 'A part payment', value: { payment: PAYMENT, case: { ...example(caseViewSchema), status: 'READY' } } },
      }),
    },
    problems: [
      'INVALID_REQUEST',
      'NOT_FOUND',
      'CASE_NOT_OPEN',
      'PAYMENT_EXCEEDS_OUTSTANDING',
      'PAYMENT_LIMIT_REACHED',
      'IDEMPOTENCY_KEY_REUSED',
      ...BODY_PROBLEMS,
      'SERVICE_UNAVAILABLE',
    ],
    problemResponses: {
      400: problem(
        'The body is not JSON, not an object, has an unknown field, or a field breaks the rules (or the `Idempotency-Key` is malformed); `errors` lists every problem. Nothing was recorded and the key was not used up.',
        invalidRequestProblemSchema,
        {},
        {
          threeDecimals: {
            summary: 'An amount finer than a penny',
            value: invalidRequestExample('The payment was refused; see "errors".', [
              { field: 'amount', message: 'amount must have at most 2 decimal places' },
            ]),
          },
        },
      ),
      404: caseNotFound,
      409: problem(
        'The case is final, the amount is above `outstanding`, the case holds 100 payments already, or the `Idempotency-Key` was used before; nothing was recorded.',
        paymentRefusals,
        {},
        {
          caseNotOpen: { summary: 'The case is closed', value: example(caseNotOpenProblemSchema) },
          exceedsOutstanding: { summary: 'More than is owed today', value: example(paymentExceedsOutstandingProblemSchema) },
          limitReached: { summary: 'The 101st payment', value: example(paymentLimitReachedProblemSchema) },
          keyReused: {
            summary: 'The same request again',
            value: {
              ...example(paymentIdempotencyCompletedProblemSchema),
              payment: PAYMENT,
              case: { ...example(caseViewSchema), status: 'READY' },
            },
          },
        },
      ),
    },
  },

  ListCasePayments: {
    tag: 'Cases',
    description:
      'Every payment of one of your company\u2019s cases, oldest first, in one answer (a case holds at most 100): those you reported (`DIRECT`) and those the recovery team collected (`COLLECTED`). A case of another company, or of the other mode, answers `404`.',
    parameters: [caseIdParameter()],
    responses: {
      200: json('The case\u2019s payments.', paymentListSchema, { one: { summary: 'One payment', value: { data: [PAYMENT] } } }),
    },
    problems: ['NOT_FOUND', 'SERVICE_UNAVAILABLE'],
    problemResponses: { 404: caseNotFound },
  },

  WithdrawCase: {
    tag: 'Cases',
    description:
      'Withdraws one of your company\u2019s cases, from `DRAFT`, `READY`, `ON_HOLD` or `IN_RECOVERY`: it becomes `WITHDRAWN` for good, with an entry in `statusHistory` (and your `reason`, if given) and a `case.updated` event. A withdrawn case no longer holds its invoiceRef: the same invoiceRef can be submitted again and is created, not `DUPLICATE`; the look-up by invoiceRef then returns both cases. Withdrawing a case that is already withdrawn answers `200` with the case unchanged (safe to retry); a `CLOSED` case answers `409` `CASE_NOT_OPEN`. The body is optional. A case of another company answers exactly like one that does not exist (`404`).',
    parameters: [caseIdParameter()],
    request: jsonBody(
      withdrawRequestDocSchema,
      { reason: { summary: 'With a reason', value: { reason: 'Paid directly by the debtor' } } },
      false,
    ),
    responses: {
      200: json('The case, withdrawn (now or before).', caseViewSchema, { withdrawn: { summary: 'A withdrawn case', value: WITHDRAWN } }),
    },
    problems: ['INVALID_REQUEST', 'NOT_FOUND', 'CASE_NOT_OPEN', ...BODY_PROBLEMS, 'SERVICE_UNAVAILABLE'],
    problemResponses: {
      409: problem('The case is `CLOSED`: final, it cannot be withdrawn.', caseNotOpenProblemSchema),
      400: problem(
        'The body is not JSON, not an object, or a field breaks the rules; `errors` lists every problem.',
        invalidRequestProblemSchema,
        {},
        {
          reasonTooLong: {
            summary: 'A reason that is too long',
            value: invalidRequestExample('The withdrawal request is invalid; see "errors" for every field to fix.', [
              { field: 'reason', message: `reason must be at most ${MAX_WITHDRAW_REASON_LENGTH} characters` },
            ]),
          },
        },
      ),
      404: caseNotFound,
    },
  },
};
