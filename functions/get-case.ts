import type { CaseReader } from '../lib/data/case-store.js';
import type { ApiKeyStore } from '../lib/data/api-key-store.js';
import { defaultTableStores } from '../lib/data/stores.js';
import { CASE_ID_PATTERN, type StoredCase } from '../lib/cases/case-record.js';
import { authoriseCaseRead } from '../lib/cases/read-case.js';
import { apiHandler, jsonResponse, type CoreHandler } from '../lib/middleware/api-handler.js';
import { prefetched } from '../lib/middleware/authenticate.js';
import { authOf, type ApiEvent } from '../lib/middleware/types.js';

/** GET /api/v1/cases/{id} (scope cases:read). */
export interface GetCaseDeps {
  keys: ApiKeyStore;
  caseReader: CaseReader;
}

function caseIdOf(event: ApiEvent): string | undefined {
  const id = event.pathParameters?.id;
  return id !== undefined && CASE_ID_PATTERN.test(id) ? id : undefined;
}

export const getCase: CoreHandler = async (_event, context) => {
  // The case was fetched in parallel with the API key (one storage round trip in all); it is
  // only looked at now, after authentication and the scope check have passed.
  const found = await prefetched<StoredCase | undefined>(context);
  return jsonResponse(200, authoriseCaseRead(authOf(context), found));
};

export function buildGetCaseHandler(deps: GetCaseDeps) {
  return apiHandler(
    {
      scope: 'cases:read',
      keys: deps.keys,
      prefetch: async (event) => {
        const id = caseIdOf(event);
        return id === undefined ? undefined : deps.caseReader.get(id);
      },
    },
    getCase,
  );
}

export const handler = buildGetCaseHandler(defaultTableStores());
