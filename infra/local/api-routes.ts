import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';

/**
 * The routes the local server serves, mirroring the API Gateway resources of the CDK stack. Each
 * handler is imported on first use, after the environment points at the local stores (the
 * handlers read their configuration once, when loaded).
 */
export type LambdaHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

export interface ApiRoute {
  method: 'GET' | 'POST';
  /** API Gateway resource template, e.g. `/api/v1/cases/{id}`. */
  resource: string;
  functionName: string;
  load: () => Promise<LambdaHandler>;
}

export const API_ROUTES: ApiRoute[] = [
  { method: 'POST', resource: '/api/v1/uploads', functionName: 'create-upload', load: async () => (await import('../../functions/create-upload.js')).handler as unknown as LambdaHandler },
  { method: 'POST', resource: '/api/v1/cases', functionName: 'create-cases', load: async () => (await import('../../functions/create-cases.js')).handler as unknown as LambdaHandler },
  { method: 'GET', resource: '/api/v1/cases/{id}', functionName: 'get-case', load: async () => (await import('../../functions/get-case.js')).handler as unknown as LambdaHandler },
];

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
