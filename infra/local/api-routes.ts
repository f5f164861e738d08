import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  API_FUNCTIONS,
  authorizationOf,
  memoryOf,
  ROUTE_TABLE,
  type ApiFunctionId,
  type RouteAuthorization,
  type RouteMethod,
} from '../contract/route-table.js';
import { DEFAULT_STACK_CONFIG, readStackConfig, type StageIndependentConfig } from '../contract/stack-config.js';
import type { LambdaHandler } from './invoke-with-deadline.js';

/**
 * The routes the local server serves: the stack's route table (route-table.ts) with each
 * function's timeout and memory, plus how to load its handler. Each handler is imported on first
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

const LOADERS: Record<ApiFunctionId, () => Promise<LambdaHandler>> = {
  getCase: async () => (await import('../../functions/get-case.js')).handler as unknown as LambdaHandler,
  listCases: async () => (await import('../../functions/list-cases.js')).handler as unknown as LambdaHandler,
  createCases: async () => (await import('../../functions/create-cases.js')).handler as unknown as LambdaHandler,
  createUpload: async () => (await import('../../functions/create-upload.js')).handler as unknown as LambdaHandler,
  listEvents: async () => (await import('../../functions/list-events.js')).handler as unknown as LambdaHandler,
  getEvent: async () => (await import('../../functions/get-event.js')).handler as unknown as LambdaHandler,
  withdrawCase: async () => (await import('../../functions/withdraw-case.js')).handler as unknown as LambdaHandler,
  confirmCases: async () => (await import('../../functions/confirm-cases.js')).handler as unknown as LambdaHandler,
  testConfirmCase: async () => (await import('../../functions/test-confirm-case.js')).handler as unknown as LambdaHandler,
  createWebhookEndpoint: async () => (await import('../../functions/create-webhook-endpoint.js')).handler as unknown as LambdaHandler,
  listWebhookEndpoints: async () => (await import('../../functions/list-webhook-endpoints.js')).handler as unknown as LambdaHandler,
  getWebhookEndpoint: async () => (await import('../../functions/get-webhook-endpoint.js')).handler as unknown as LambdaHandler,
  updateWebhookEndpoint: async () => (await import('../../functions/update-webhook-endpoint.js')).handler as unknown as LambdaHandler,
  deleteWebhookEndpoint: async () => (await import('../../functions/delete-webhook-endpoint.js')).handler as unknown as LambdaHandler,
  rotateWebhookEndpointSecret: async () =>
    (await import('../../functions/rotate-webhook-endpoint-secret.js')).handler as unknown as LambdaHandler,
  pingWebhookEndpoint: async () => (await import('../../functions/ping-webhook-endpoint.js')).handler as unknown as LambdaHandler,
  redeliverWebhookEvent: async () => (await import('../../functions/redeliver-webhook-event.js')).handler as unknown as LambdaHandler,
  listWebhookDeliveries: async () => (await import('../../functions/list-webhook-deliveries.js')).handler as unknown as LambdaHandler,
};

export function loadFunction(id: ApiFunctionId): Promise<LambdaHandler> {
  return LOADERS[id]();
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
      load: LOADERS[route.function],
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
