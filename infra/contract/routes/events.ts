import { route } from './route-entry.js';

/** `/api/v1/events`: case events. */
export const EVENT_ROUTES = {
  // As list-cases: one round of parallel index queries, a selective type or caseId filter a few more.
  listEvents: route({
    name: 'list-events',
    constructId: 'ListEvents',
    method: 'GET',
    resource: '/api/v1/events',
    operationName: 'ListEvents',
    summary: 'List events',
    scope: 'cases:read',
    grants: { table: 'list-events', cursorSecret: true },
    load: () => import('../../../functions/list-events.js'),
  }),
  getEvent: route({
    name: 'get-event',
    constructId: 'GetEvent',
    method: 'GET',
    resource: '/api/v1/events/{id}',
    operationName: 'GetEvent',
    summary: 'Read an event',
    scope: 'cases:read',
    grants: { table: 'read-events' },
    load: () => import('../../../functions/get-event.js'),
  }),
};
