import { caseListAdapters } from '../lib/adapters/production-adapters.js';
import type { ApiKeyStore } from '../lib/auth/ports.js';
import { listEvents, parseEventListQuery } from '../lib/cases/list-events.js';
import type { CursorSealer } from '../lib/cases/list-cursor.js';
import type { EventLister } from '../lib/cases/ports.js';
import type { Deadline } from '../lib/deadline.js';
import { apiHandler, jsonResponse } from '../lib/http/api-handler.js';
import { callerOf } from '../lib/http/types.js';

/** GET /api/v1/events (scope cases:read): a company's events, newest first, a page at a time. */
export interface ListEventsDeps {
  keys: ApiKeyStore;
  events: EventLister;
  /** The cursor sealer, built once per process (its key may come from Secrets Manager). */
  cursors: (deadline?: Deadline) => Promise<CursorSealer>;
  now?: () => Date;
}

export function buildListEventsHandler(deps: ListEventsDeps) {
  const now = deps.now ?? (() => new Date());
  return apiHandler({ scope: 'cases:read', keys: deps.keys }, async (event, context) => {
    const query = parseEventListQuery(event.queryStringParameters, event.multiValueQueryStringParameters);
    const page = await listEvents(
      { lister: deps.events, cursors: await deps.cursors(context.deadline), now },
      callerOf(context),
      query,
      context.deadline,
    );
    context.logFields.returned = page.data.length;
    return jsonResponse(200, page);
  });
}

export const handler = buildListEventsHandler(caseListAdapters());
