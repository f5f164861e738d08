import { tableAdapters } from '../lib/adapters/production-adapters.js';
import type { ApiKeyStore } from '../lib/auth/ports.js';
import { awaitsReferenceRate, type StoredCase } from '../lib/cases/case-record.js';
import type { CaseReader } from '../lib/cases/ports.js';
import { authoriseCaseRead, caseIdToRead, parseQuoteAsOf } from '../lib/cases/read-case.js';
import { apiHandler, jsonResponse, type CoreHandler } from '../lib/http/api-handler.js';
import { callerOf, prefetchedValue } from '../lib/http/types.js';
import { metrics, MetricUnit } from '../lib/runtime/metrics.js';

/** GET /api/v1/cases/{id} (scope cases:read). */
export interface GetCaseDeps {
  keys: ApiKeyStore;
  caseReader: CaseReader;
  now?: () => Date;
}

const buildGetCase =
  (now: () => Date): CoreHandler =>
  async (event, context) => {
    // The case was fetched in parallel with the API key (one storage round trip in all); it is
    // only looked at now, after authentication and the scope check have passed.
    const found = await prefetchedValue<StoredCase | undefined>(context);
    const at = now();
    // `?asOf=` (a settlement quote) is checked before the case is looked at: a bad one is a 400 whether the case exists or not.
    const quoteAsOf = parseQuoteAsOf(event.queryStringParameters, event.multiValueQueryStringParameters, at);
    const view = authoriseCaseRead(callerOf(context), found, { now: at, ...(quoteAsOf !== undefined ? { quoteAsOf } : {}) });
    // The operators' alarm fires while such a case is read (published by the shared chain, once per request).
    if (awaitsReferenceRate(view)) {
      context.logFields.referenceRateMissing = 1;
      metrics.addMetric('ReferenceRateMissing', MetricUnit.Count, 1);
    }
    return jsonResponse(200, view);
  };

export const getCase: CoreHandler = buildGetCase(() => new Date());

export function buildGetCaseHandler(deps: GetCaseDeps) {
  return apiHandler(
    {
      scope: 'cases:read',
      keys: deps.keys,
      // The mode comes from the key's prefix (parsed, not yet authenticated): the read is made in
      // that mode's world, and authentication then requires the stored key to have the same mode.
      prefetch: async (event, deadline, mode) => {
        const id = caseIdToRead(event.pathParameters?.id);
        return id === undefined ? undefined : deps.caseReader.get(mode, id, deadline);
      },
    },
    deps.now ? buildGetCase(deps.now) : getCase,
  );
}

export const handler = buildGetCaseHandler(tableAdapters());
