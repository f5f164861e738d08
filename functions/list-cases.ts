import { caseListAdapters } from '../lib/adapters/production-adapters.js';
import type { ApiKeyStore } from '../lib/auth/ports.js';
import { listCases, parseListQuery } from '../lib/cases/list-cases.js';
import type { CursorSealer } from '../lib/cases/list-cursor.js';
import type { CaseLister } from '../lib/cases/ports.js';
import type { Deadline } from '../lib/deadline.js';
import { apiHandler, jsonResponse } from '../lib/http/api-handler.js';
import { callerOf } from '../lib/http/types.js';

/** GET /api/v1/cases (scope cases:read): list a company's cases, or look one up by invoiceRef. */
export interface ListCasesDeps {
  keys: ApiKeyStore;
  caseLister: CaseLister;
  /** The cursor sealer, built once per process (its key may come from Secrets Manager). */
  cursors: (deadline?: Deadline) => Promise<CursorSealer>;
  now?: () => Date;
}

export function buildListCasesHandler(deps: ListCasesDeps) {
  const now = deps.now ?? (() => new Date());
  return apiHandler({ scope: 'cases:read', keys: deps.keys }, async (event, context) => {
    const query = parseListQuery(event.queryStringParameters, event.multiValueQueryStringParameters);
    const page = await listCases(
      { lister: deps.caseLister, cursors: await deps.cursors(context.deadline), now },
      callerOf(context),
      query,
      context.deadline,
    );
    context.logFields.returned = page.data.length;
    return jsonResponse(200, page);
  });
}

export const handler = buildListCasesHandler(caseListAdapters());
