import { tableAdapters } from '../lib/adapters/production-adapters.js';
import type { ApiKeyStore } from '../lib/auth/ports.js';
import { authoriseEventRead, eventIdToRead } from '../lib/cases/list-events.js';
import type { EventReader, StoredEvent } from '../lib/cases/ports.js';
import { apiHandler, jsonResponse } from '../lib/http/api-handler.js';
import { callerOf, prefetchedValue } from '../lib/http/types.js';

/** GET /api/v1/events/{id} (scope cases:read). */
export interface GetEventDeps {
  keys: ApiKeyStore;
  events: EventReader;
  now?: () => Date;
}

export function buildGetEventHandler(deps: GetEventDeps) {
  const now = deps.now ?? (() => new Date());
  return apiHandler(
    {
      scope: 'cases:read',
      keys: deps.keys,
      // As get-case: the event is read in the mode the key's prefix names, in parallel with the
      // key lookup, and looked at only after authentication and the scope check have passed.
      prefetch: async (event, deadline, mode) => {
        const id = eventIdToRead(event.pathParameters?.id);
        return id === undefined ? undefined : deps.events.get(mode, id, deadline);
      },
    },
    async (_event, context) => {
      const found = await prefetchedValue<StoredEvent | undefined>(context);
      return jsonResponse(200, authoriseEventRead(callerOf(context), found, now()));
    },
  );
}

export const handler = buildGetEventHandler(tableAdapters());
