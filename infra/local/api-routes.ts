import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  API_FUNCTIONS,
  authorizationOf,
  memoryOf,
  ROUTE_MANIFEST,
  ROUTE_TABLE,
  type ApiFunctionId,
  type RouteAuthorization,
  type RouteMethod,
} from '../contract/route-table.js';
import { DEFAULT_STACK_CONFIG, readStackConfig, type StageIndependentConfig } from '../contract/stack-config.js';
import type { LambdaHandler } from './invoke-with-deadline.js';

/**
 * The routes the local server serves: the route manifest (infra/contract/routes/) with each
 * function's timeout and memory, and its handler loaded by the manifest's `load`. Each handler is imported on first
 * use, after the environment points at the local stores (the handlers read their configuration
 * once, when loaded).
 */
export type { LambdaHandler };

export interface ApiRoute {
  method: RouteMethod;
  /** API Gateway resource template, e.g. `/api/v1/cases/{id}`. */
  resource: string;
  functionName: string;
  /** The function's timeout: the context counts down from it, and overrunning it is a 502. */
  timeoutMs: number;
  memoryMb: number;
  /** `aws-iam`: the local server verifies a SigV4 signature before the handler runs, as API Gateway does. */
  authorization?: RouteAuthorization;
  load: () => Promise<LambdaHandler>;
}

/** Imports a function's handler (the manifest's `load`, typed there). */
export async function loadFunction(id: ApiFunctionId): Promise<LambdaHandler> {
  return (await ROUTE_MANIFEST[id].load()).handler;
}

/** The stack settings `cdk synth -c stage=dev` would use: cdk.json's context over the defaults. */
export function localStackConfig(cdkJsonPath = resolve('cdk.json')): StageIndependentConfig {
  let context: Record<string, unknown> = {};
  try {
    context = (JSON.parse(readFileSync(cdkJsonPath, 'utf8')) as { context?: Record<string, unknown> }).context ?? {};
  } catch {
    return DEFAULT_STACK_CONFIG;
  }
  // The local stack mirrors the dev stage (its timeouts and memory), whatever cdk.json pins.
  return readStackConfig({ tryGetContext: (key) => (key === 'stage' ? 'dev' : context[key]) });
}

export function apiRoutes(config: StageIndependentConfig = localStackConfig()): ApiRoute[] {
  return ROUTE_TABLE.map((route) => {
    const fn = API_FUNCTIONS[route.function];
    return {
      method: route.method,
      resource: route.resource,
      functionName: fn.name,
      timeoutMs: fn.timeoutSeconds * 1000,
      memoryMb: memoryOf(fn, config),
      authorization: authorizationOf(route),
      load: () => loadFunction(route.function),
    };
  });
}

export const API_ROUTES: ApiRoute[] = apiRoutes();

export interface RouteMatch {
  route: ApiRoute;
  pathParameters: Record<string, string> | null;
}

function matchResource(resource: string, path: string): Record<string, string> | null | undefined {
  const templateParts = resource.split('/');
  const pathParts = path.split('/');
  if (templateParts.length !== pathParts.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < templateParts.length; i++) {
    const t = templateParts[i] as string;
    const p = pathParts[i] as string;
    const param = /^\{(\w+)\}$/.exec(t);
    if (param) {
      if (p === '') return undefined;
      try {
        params[param[1] as string] = decodeURIComponent(p);
      } catch {
        return undefined;
      }
    } else if (t !== p) {
      return undefined;
    }
  }
  return Object.keys(params).length ? params : null;
}

/** The route for a method and path; `allowed` lists the methods of a known path. */
export function findRoute(routes: readonly ApiRoute[], method: string, path: string): { match?: RouteMatch; allowed: string[] } {
  const allowed: string[] = [];
  for (const route of routes) {
    const params = matchResource(route.resource, path);
    if (params === undefined) continue;
    allowed.push(route.method);
    if (route.method === method) return { match: { route, pathParameters: params }, allowed };
  }
  return { allowed };
}
