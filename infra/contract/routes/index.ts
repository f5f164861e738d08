import { CASE_CHANGE_ROUTES, CASE_ROUTES } from './cases.js';
import { EVENT_ROUTES } from './events.js';
import type { RouteEntry } from './route-entry.js';
import { UPLOAD_ROUTES } from './uploads.js';
import { WEBHOOK_ENDPOINT_ROUTES } from './webhook-endpoints.js';

/**
 * The route manifest: every API function and its route, declared once, one file per resource.
 * Everything else is derived from it:
 * - the stack's functions (construct ids, entry, timeout, memory), REST resources and methods,
 *   405 answers and IAM authorisation (infra/stack/partner-case-api-stack.ts, http-api.ts);
 * - each function's grants (`grants`, through infra/stack/grants.ts `GRANTS`);
 * - the local server's routes and handler loaders (infra/local/api-routes.ts), `npm run invoke`;
 * - the sample events' skeletons (infra/local/sample-event-files.ts renders `events/`);
 * - the views older code reads (route-table.ts: `ApiFunctionId`, `API_FUNCTIONS`, `ROUTE_TABLE`);
 * - the infra tests' function lists (test/unit/infra/*).
 *
 * Adding a route:
 * 1. its entry in the resource's file here (or a new file, spread below): name, construct id,
 *    method and resource, operation name and summary, scope (or `authorization: 'aws-iam'`),
 *    timeout and memory when not the defaults, its grants, and `load` of its handler;
 * 2. its handler, `functions/<name>.ts`, exporting `handler` (`load` does not compile otherwise);
 * 3. its use case in lib/;
 * 4. its docs (docs/api.md; its OpenAPI operation, keyed by the operation name, in
 *    infra/contract/openapi/, then `npm run openapi`);
 * and a new kind of table access only if none of grants.ts `GRANTS` fits (the compiler then
 * asks for its statements). Nothing else lists routes: a sample event for it is a row of
 * infra/local/sample-event-files.ts if you want one. (Tried on a scratch branch with a
 * `GET /api/v1/cases/{id}/timeline`: cases.ts, the handler and the use case were the only files
 * the compiler and the unit tests asked for.)
 *
 * Order matters only for what API Gateway shows: a resource's methods are listed in this order in
 * its 405 answer's `Allow` header.
 */
export const ROUTE_MANIFEST = {
  ...UPLOAD_ROUTES,
  ...CASE_ROUTES,
  ...EVENT_ROUTES,
  ...CASE_CHANGE_ROUTES,
  ...WEBHOOK_ENDPOINT_ROUTES,
} satisfies Record<string, RouteEntry>;

/** The key of each API function; also the key of the stack's `functions` and of the API's handlers. */
export type ApiFunctionId = keyof typeof ROUTE_MANIFEST;

export const API_FUNCTION_IDS = Object.keys(ROUTE_MANIFEST) as ApiFunctionId[];

export type {
  ApiHandler,
  ApiHandlerModule,
  FunctionGrants,
  InvoiceBucketAccess,
  RouteAuthorization,
  RouteEntry,
  RouteMethod,
  TableAccess,
} from './route-entry.js';
