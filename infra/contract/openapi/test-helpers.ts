import { caseViewSchema } from '../../../lib/cases/case-record.js';
import { notFoundProblemSchema } from '../../../lib/http/response-schemas.js';
import { caseIdParameter } from './cases.js';
import { example, json, problem, type OperationDoc } from './components.js';

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
};
