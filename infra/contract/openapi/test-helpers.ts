import { z } from 'zod';
import { caseViewSchema, CLOSURE_REASONS, MAX_CLOSURE_NOTE_LENGTH } from '../../../lib/cases/case-record.js';
import { MAX_PAYMENT_REFERENCE_LENGTH, recoveryUpdateBodySchema } from '../../../lib/cases/recovery.js';
import {
  caseNotOpenProblemSchema,
  invalidRequestProblemSchema,
  invalidTransitionProblemSchema,
  notFoundProblemSchema,
  paymentExceedsOutstandingProblemSchema,
  paymentLimitReachedProblemSchema,
} from '../../../lib/http/response-schemas.js';
import { caseIdParameter } from './cases.js';
import { BODY_PROBLEMS, example, invalidRequestExample, json, jsonBody, problem, type OperationDoc } from './components.js';

// ---- the recovery helper's body -----------------------------------------------------------------

/**
 * The helper's body, one shape per `type`, for the document only. The handler's schema
 * (recovery.ts recoveryUpdateBodySchema) is one strict object whose refinement says which fields
 * each type requires and takes; a generator cannot see a refinement, so the shapes are stated here
 * from its own fields, and the contract tests send every shape through the handler.
 */
const field = recoveryUpdateBodySchema.shape;
const note = field.note.unwrap().meta({
  maxLength: MAX_CLOSURE_NOTE_LENGTH,
  description: `A note, 1–${MAX_CLOSURE_NOTE_LENGTH} characters.`,
});
const testRecoveryUpdateDocSchema = z
  .discriminatedUnion('type', [
    z
      .object({ type: z.literal('recovery_started'), note: note.optional() })
      .strict()
      .meta({ title: 'recovery_started', description: 'The recovery team started work: `READY` → `IN_RECOVERY`.' }),
    z
      .object({
        type: z.literal('payment_collected'),
        amount: field.amount.unwrap().meta({ exclusiveMinimum: 0, description: 'GBP collected, above 0, at most 2 decimals.' }),
        paidAt: field.paidAt.unwrap().meta({
          format: 'date',
          description: 'The day the debtor paid (YYYY-MM-DD): not after today in Europe/London, not before invoiceDate.',
        }),
        reference: field.reference
          .unwrap()
          .meta({ maxLength: MAX_PAYMENT_REFERENCE_LENGTH, description: `A reference, 1–${MAX_PAYMENT_REFERENCE_LENGTH} characters.` })
          .optional(),
      })
      .strict()
      .meta({
        title: 'payment_collected',
        description:
          'The recovery team collected money (a payment of source `COLLECTED`), in any open status, up to today\u2019s `outstanding`; one that leaves `0.00` outstanding closes the case `PAID_IN_FULL`.',
      }),
    z
      .object({
        type: z.literal('closed'),
        reason: z.enum(CLOSURE_REASONS).meta({ description: '`PAID_IN_FULL` only when `outstanding` is `0.00`.' }),
        note: note.optional(),
      })
      .strict()
      .meta({ title: 'closed', description: 'The recovery team closed the case: `IN_RECOVERY` → `CLOSED`, with a reason.' }),
  ])
  .meta({
    id: 'TestRecoveryUpdate',
    description:
      'One recovery update as the recovery team would report it, without `updateId` and `by`. Each `type` takes exactly the fields shown; any other field is refused.',
  });

/** The refusals the rules give (the case unchanged): several codes share 409, told apart by `code`. */
const testRecoveryConflictSchema = z
  .discriminatedUnion('code', [
    caseNotOpenProblemSchema,
    invalidTransitionProblemSchema,
    paymentExceedsOutstandingProblemSchema,
    paymentLimitReachedProblemSchema,
  ])
  .meta({ id: 'TestRecoveryConflictProblem', description: 'The rules refused the update; the case is unchanged.' });

const IN_RECOVERY = {
  ...example(caseViewSchema),
  status: 'IN_RECOVERY',
  recoveryGate: 'AUTO_ATTESTED',
  updatedAt: '2025-03-05T09:12:40.118Z',
  statusHistory: [
    { status: 'DRAFT', at: '2025-03-04T10:20:30.000Z' },
    { status: 'READY', at: '2025-03-04T10:20:31.000Z' },
    { status: 'IN_RECOVERY', at: '2025-03-05T09:12:40.118Z' },
  ],
};

export const TEST_HELPER_OPERATIONS: Record<string, OperationDoc> = {
  TestConfirmCase: {
    tag: 'Test helpers',
    description:
      'Test-mode keys only: makes the confirmation a user would make in your dashboard (spec rule 4) for one of your test cases, ' +
      'so you can rehearse what follows: `recoveryGate` becomes `CONFIRMED`, `status` `READY` (or stays `DRAFT` while the debtor is ' +
      'being verified), and one `case.updated` event is written. Answers the case record after the change, or as it is when there ' +
      'was nothing to confirm (already confirmed, auto-attested or withdrawn). With a live key this route does not exist (`404`): ' +
      'live cases are confirmed in your dashboard only. The confirmation is recorded as made by "test helper", with your key id.',
    parameters: [caseIdParameter('The test case id, as returned in `created[].id`.')],
    responses: {
      200: json('The case after the confirmation.', caseViewSchema, {
        confirmed: { summary: 'A confirmed test case', value: example(caseViewSchema) },
      }),
    },
    problems: ['NOT_FOUND', 'SERVICE_UNAVAILABLE'],
    problemResponses: {
      404: problem('No test case with this id exists for your company, or the key is a live-mode key.', notFoundProblemSchema),
    },
  },
  TestApplyRecoveryUpdate: {
    tag: 'Test helpers',
    description:
      'Test-mode keys only: applies one update the recovery team would report for one of your test cases, so you can rehearse ' +
      'every transition and every amount: `recovery_started` (`READY` → `IN_RECOVERY`), `payment_collected` (a `COLLECTED` payment ' +
      'in any open status, up to today\u2019s `outstanding`; one that leaves `0.00` outstanding closes the case `PAID_IN_FULL` at once) ' +
      'and `closed` (`IN_RECOVERY` → `CLOSED`, with a `reason`). The same rules as for live cases decide, and each applied update ' +
      'writes one `case.updated` event. Answers the case record after the update. An update the rules refuse leaves the case ' +
      'unchanged and answers `409`: `CASE_NOT_OPEN` for a `CLOSED` or `WITHDRAWN` case, `PAYMENT_EXCEEDS_OUTSTANDING` for too large ' +
      'a payment, `PAYMENT_LIMIT_REACHED` after 100 payments, `INVALID_TRANSITION` for any other change the current status does ' +
      'not allow. With a live key this route does not exist (`404`): live cases move only by the recovery team.',
    parameters: [caseIdParameter('The test case id, as returned in `created[].id`.')],
    request: jsonBody(testRecoveryUpdateDocSchema, {
      started: { summary: 'Start recovery', value: { type: 'recovery_started' } },
      payment: {
        summary: 'A collected payment',
        value: { type: 'payment_collected', amount: 250.5, paidAt: '2025-03-10', reference: 'BACS 1234' },
      },
      closed: { summary: 'Close, settled', value: { type: 'closed', reason: 'SETTLED', note: 'Debtor agreed 1,000.00' } },
    }),
    responses: {
      200: json('The case after the update.', caseViewSchema, { inRecovery: { summary: 'Recovery started', value: IN_RECOVERY } }),
    },
    problems: [
      'INVALID_REQUEST',
      'NOT_FOUND',
      'CASE_NOT_OPEN',
      'INVALID_TRANSITION',
      'PAYMENT_EXCEEDS_OUTSTANDING',
      'PAYMENT_LIMIT_REACHED',
      ...BODY_PROBLEMS,
      'SERVICE_UNAVAILABLE',
    ],
    problemResponses: {
      400: problem(
        'The body is not JSON, not an object, or a field breaks the rules; `errors` lists every problem.',
        invalidRequestProblemSchema,
        {},
        {
          missingAmount: {
            summary: 'A payment without an amount',
            value: invalidRequestExample('The recovery update was refused; see "errors".', [
              { field: 'amount', message: 'amount is required for payment_collected' },
            ]),
          },
        },
      ),
      404: problem('No test case with this id exists for your company, or the key is a live-mode key.', notFoundProblemSchema),
      409: problem(
        'The rules refused the update; the case is unchanged. `code` says why.',
        testRecoveryConflictSchema,
        {},
        {
          caseNotOpen: { summary: 'The case is final', value: example(caseNotOpenProblemSchema) },
          invalidTransition: { summary: 'Not allowed from the current status', value: example(invalidTransitionProblemSchema) },
          paymentExceedsOutstanding: { summary: 'More than outstanding', value: example(paymentExceedsOutstandingProblemSchema) },
        },
      ),
    },
  },
};
