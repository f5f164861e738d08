import type { Scope } from '../../lib/auth/scopes.js';
import {
  API_FUNCTION_IDS,
  ROUTE_MANIFEST,
  type ApiFunctionId,
  type RouteAuthorization,
  type RouteEntry,
  type RouteMethod,
} from './routes/index.js';
import type { StackConfig } from './stack-config.js';

/**
 * Views of the route manifest (routes/index.ts, where each route is declared once) in the shapes
 * the stack, the local server (`npm start`), `npm run invoke` and the OpenAPI document read, and
 * the platform limits they all enforce. Plain data without CDK imports, so the local tools load it
 * cheaply.
 */

/** API Gateway REST APIs end every integration after 29 s (the default and the regional maximum without a quota raise). */
export const API_GATEWAY_INTEGRATION_TIMEOUT_MS = 29_000;

/**
 * A synchronous Lambda invocation carries at most 6 MB of request payload, so no request body
 * larger than this reaches a function (API Gateway's own limit, 10 MB, is higher).
 */
export const LAMBDA_REQUEST_PAYLOAD_BYTES = 6 * 1024 * 1024;

export type { ApiFunctionId, RouteAuthorization, RouteMethod } from './routes/index.js';
export { API_FUNCTION_IDS, ROUTE_MANIFEST } from './routes/index.js';

/** A function's deployment facts, as the stack and the local tools read them (a view of the manifest). */
export interface ApiFunctionSpec {
  /** The name the local tools report (context.functionName, log lines, `npm run invoke -- <name>`). */
  name: string;
  /** Construct id in the stack. */
  constructId: string;
  /** Handler file, relative to the project root; it exports `handler`. */
  entry: string;
  /** Lambda's function timeout. */
  timeoutSeconds: number;
  /** The stack setting that holds the function's memory size (see stack-config.ts). */
  memorySetting: RouteEntry['memorySetting'];
}

/** One value for each API function, keyed by its id: complete by construction. */
export function byApiFunction<T>(value: (id: ApiFunctionId) => T): Record<ApiFunctionId, T> {
  return Object.fromEntries(API_FUNCTION_IDS.map((id) => [id, value(id)])) as Record<ApiFunctionId, T>;
}

export const API_FUNCTIONS: Readonly<Record<ApiFunctionId, ApiFunctionSpec>> = byApiFunction((id) => {
  const { name, constructId, timeoutSeconds, memorySetting } = ROUTE_MANIFEST[id];
  return { name, constructId, entry: `functions/${name}.ts`, timeoutSeconds, memorySetting };
});

/**
 * How long an Idempotency-Key may stay IN_PROGRESS before another request may take it over
 * (product rules "Availability and deadlines"): create-cases' timeout plus a margin for clock skew
 * between Lambda hosts. A request always answers before its timeout, so its claim is completed or
 * released by then, or was abandoned by a function that died.
 */
export const IDEMPOTENCY_CLAIM_HORIZON_SECONDS = API_FUNCTIONS.createCases.timeoutSeconds + 5;

export function memoryOf(fn: ApiFunctionSpec, config: Pick<StackConfig, ApiFunctionSpec['memorySetting']>): number {
  return config[fn.memorySetting];
}

export interface RouteSpec {
  method: RouteMethod;
  /** API Gateway resource template, e.g. `/api/v1/cases/{id}`. */
  resource: string;
  function: ApiFunctionId;
  /** API Gateway operation name (also the OpenAPI operationId). */
  operationName: string;
  /** The OpenAPI operation's summary. */
  summary: string;
  /** The scope the handler requires (functions/*.ts enforce it; a test holds the two equal). */
  scope?: Scope;
  /** Who may call the route (routes/route-entry.ts); absent means `api-key`. */
  authorization?: RouteAuthorization;
}

export function authorizationOf(route: Pick<RouteSpec, 'authorization'>): RouteAuthorization {
  return route.authorization ?? 'api-key';
}

/** Every route, in manifest order (a view of the manifest). */
export const ROUTE_TABLE: readonly RouteSpec[] = API_FUNCTION_IDS.map((id) => {
  const { method, resource, operationName, summary, scope, authorization } = ROUTE_MANIFEST[id];
  return {
    method,
    resource,
    function: id,
    operationName,
    summary,
    ...(scope ? { scope } : {}),
    ...(authorization ? { authorization } : {}),
  };
});

/** Every resource that has at least one method, in table order. */
export function routedResources(routes: readonly Pick<RouteSpec, 'resource'>[] = ROUTE_TABLE): string[] {
  return [...new Set(routes.map((r) => r.resource))];
}

/** The methods a resource has, in table order: the `Allow` header of its 405. */
export function methodsOf(resource: string, routes: readonly Pick<RouteSpec, 'resource' | 'method'>[] = ROUTE_TABLE): string[] {
  return routes.filter((r) => r.resource === resource).map((r) => r.method);
}

/** `{id}` in `/api/v1/cases/{id}` → `id`. */
export function pathParametersOf(resource: string): string[] {
  return [...resource.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
}
