import { caseEventSchema, EVENT_ID_PATTERN } from '../../../lib/cases/case-lifecycle.js';
import { caseViewSchema } from '../../../lib/cases/case-record.js';
import { EVENT_RETENTION_DAYS } from '../../../lib/cases/event-retention.js';
import { EVENT_LIST_PARAMETERS, EVENT_NOT_FOUND_DETAIL, eventListQuerySchema, eventListSchema } from '../../../lib/cases/list-events.js';
import { notFoundProblemSchema } from '../../../lib/http/response-schemas.js';
import { caseIdParameter, CURSOR_HOURS, listBadRequest, listParameterDocs } from './cases.js';
import { CURSOR_EXAMPLE, example, idParameter, json, problem, queryParameters, type OperationDoc } from './components.js';

const EVENT_ID_EXAMPLE = 'evt_3Jd8kQ2mX7pL4sW9zR1tB6';
const caseExample = example(caseViewSchema);
const UPDATED_EVENT = {
  id: EVENT_ID_EXAMPLE,
  type: 'case.updated',
  createdAt: '2025-03-04T10:21:07.412Z',
  livemode: true,
  data: {
    object: {
      ...caseExample,
      status: 'READY',
      recoveryGate: 'CONFIRMED',
      updatedAt: '2025-03-04T10:21:07.412Z',
      statusHistory: [
        { status: 'DRAFT', at: caseExample.createdAt },
        { status: 'READY', at: '2025-03-04T10:21:07.412Z' },
      ],
    },
    previousAttributes: { status: 'DRAFT', recoveryGate: 'AWAITING_CONFIRMATION' },
  },
};
const CREATED_EVENT = {
  id: 'evt_9Qw2eR5tY8uI1oP4aS7dF0',
  type: 'case.created',
  createdAt: caseExample.createdAt,
  livemode: true,
  data: { object: caseExample },
};

export const EVENT_OPERATIONS: Record<string, OperationDoc> = {
  ListEvents: {
    tag: 'Events',
    description:
      `Your company's events of the key's mode, newest first (\`createdAt\` descending, then \`id\` descending), a page at a time: one \`case.created\` per case created and one \`case.updated\` per change of a case's \`status\`, \`recoveryGate\` or \`debtorVerification\`. Events are kept ${EVENT_RETENTION_DAYS} days; older ones are never returned. The list may lag the change it announces by about a second (it is served from a secondary index); \`GET /api/v1/events/{id}\` reads an event as soon as its change is made.\n\n` +
      `Paging and cursors work as for \`GET /api/v1/cases\`: pass \`nextCursor\` as \`cursor\`, with the same filters; it is \`null\` on the last page, and walking every page returns each event once. Each parameter at most once; an unknown, repeated or bad parameter is \`400 INVALID_REQUEST\` with \`errors\`. A cursor is opaque, bound to your company, the key's mode and the filters it was issued for, and expires after ${CURSOR_HOURS} hours: otherwise \`400 INVALID_CURSOR\` (a case list's cursor is refused here too).`,
    parameters: queryParameters(eventListQuerySchema, {
      type: { description: 'Only events of this type.' },
      caseId: {
        description: 'Only the events of this case (a case id as returned in `created[].id`).',
        example: caseIdParameter().example,
      },
      ...listParameterDocs('events'),
    }),
    responses: {
      200: json('A page of events.', eventListSchema, {
        page: { summary: 'A page with more to come', value: { data: [UPDATED_EVENT, CREATED_EVENT], nextCursor: CURSOR_EXAMPLE } },
        none: { summary: 'Nothing matches', value: { data: [], nextCursor: null } },
      }),
    },
    problems: ['INVALID_REQUEST', 'INVALID_CURSOR', 'SERVICE_UNAVAILABLE'],
    problemResponses: {
      400: listBadRequest('A malformed caseId and an unknown parameter', [
        { field: 'caseId', message: 'caseId must be a case id as returned in created[].id, such as case_7Gk2mP9qR4sT8vW1xY3zA5' },
        { field: 'status', message: `status is not a query parameter of this operation; use ${EVENT_LIST_PARAMETERS.join(', ')}` },
      ]),
    },
  },

  GetEvent: {
    tag: 'Events',
    description: `Returns one of your company's events of the key's mode, exactly as the list and webhooks carry it. An event of another company or of the other mode, and one older than ${EVENT_RETENTION_DAYS} days, answer exactly like one that does not exist (\`404\`).`,
    parameters: [idParameter('The event id (`evt_...`).', EVENT_ID_PATTERN, EVENT_ID_EXAMPLE)],
    responses: {
      200: json('The event.', caseEventSchema, {
        updated: { summary: 'A case became READY', value: UPDATED_EVENT },
        created: { summary: 'A case was created', value: CREATED_EVENT },
      }),
    },
    problems: ['NOT_FOUND', 'SERVICE_UNAVAILABLE'],
    problemResponses: { 404: problem(EVENT_NOT_FOUND_DETAIL, notFoundProblemSchema) },
  },
};
