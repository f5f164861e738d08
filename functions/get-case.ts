import { tableAdapters } from '../lib/adapters/production-adapters.js';
import type { ApiKeyStore } from '../lib/auth/ports.js';
import type { StoredCase } from '../lib/cases/case-record.js';
import type { CaseReader } from '../lib/cases/ports.js';
import { authoriseCaseRead, caseIdToRead } from '../lib/cases/read-case.js';
import { apiHandler, jsonResponse, type CoreHandler } from '../lib/http/api-handler.js';
import { callerOf, prefetchedValue } from '../lib/http/types.js';

/** GET /api/v1/cases/{id} (scope cases:read). */
export interface GetCaseDeps {
  keys: ApiKeyStore;
  caseReader: CaseReader;
}

export const getCase: CoreHandler = async (_event, context) => {
  // The case was fetched in parallel with the API key (one storage round trip in all); it is
  // only looked at now, after authentication and the scope check have passed.
  const found = await prefetchedValue<StoredCase | undefined>(context);
  return jsonResponse(200, authoriseCaseRead(callerOf(context), found));
};

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
    getCase,
  );
}

export const handler = buildGetCaseHandler(tableAdapters());
