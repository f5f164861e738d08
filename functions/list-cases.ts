import { caseListAdapters } from '../lib/adapters/production-adapters.js';
import type { ApiKeyStore } from '../lib/auth/ports.js';
import { countAwaitingReferenceRate } from '../lib/cases/case-record.js';
import { listCases, parseListQuery } from '../lib/cases/list-cases.js';
import type { CursorSealer } from '../lib/cases/list-cursor.js';
import type { CaseLister } from '../lib/cases/ports.js';
import type { Deadline } from '../lib/deadline.js';
import { apiHandler, jsonResponse } from '../lib/http/api-handler.js';
import { callerOf } from '../lib/http/types.js';
import { metrics, MetricUnit } from '../lib/runtime/metrics.js';

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
    // One datapoint for the page, counting the cases that await their half-year's reference rate (the operators' alarm).
    const referenceRateMissing = countAwaitingReferenceRate(page.data);
    if (referenceRateMissing > 0) {
      context.logFields.referenceRateMissing = referenceRateMissing;
      metrics.addMetric('ReferenceRateMissing', MetricUnit.Count, referenceRateMissing);
    }
    return jsonResponse(200, page);
  });
}

export const handler = buildListCasesHandler(caseListAdapters());
