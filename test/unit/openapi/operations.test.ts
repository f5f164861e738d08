import { buildOpenApiDocument, OPERATIONS, partnerRoutes } from '../../../infra/contract/openapi/document.js';
import { ROUTE_TABLE, type RouteSpec } from '../../../infra/contract/route-table.js';
import { SCOPES } from '../../../lib/auth/scopes.js';
import { problemType } from '../../../lib/http/problem-details.js';

type Operation = { operationId: string; 'x-required-scope': string; responses: Record<string, unknown> };
const paths = buildOpenApiDocument().paths as Record<string, Record<string, Operation>>;
const documented = Object.entries(paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, op })));

describe('the operations of docs/openapi.json', () => {
  it('are exactly the partner routes of the route table, with their method, path, operation id and scope', () => {
    expect(documented.map(({ method, path, op }) => [method, path, op.operationId, op['x-required-scope']])).toEqual(
      partnerRoutes().map((r) => [
        r.method.toLowerCase(),
        r.resource,
        `${r.operationName[0]!.toLowerCase()}${r.operationName.slice(1)}`,
        r.scope,
      ]),
    );
    expect(Object.keys(OPERATIONS).sort()).toEqual(
      partnerRoutes()
        .map((r) => r.operationName)
        .sort(),
    );
    expect(ROUTE_TABLE.filter((r) => r.authorization === 'aws-iam').every((r) => !paths[r.resource])).toBe(true);
  });

  it('refuse to build when a partner route has no operation, or an operation no route', () => {
    const unknown: RouteSpec = {
      method: 'GET',
      resource: '/api/v1/things',
      function: 'getCase',
      operationName: 'GetThing',
      summary: 'Read a thing',
      scope: 'cases:read',
    };
    expect(() => buildOpenApiDocument([...ROUTE_TABLE, unknown])).toThrow(/no OpenAPI operation for GET \/api\/v1\/things/);
    expect(() => buildOpenApiDocument(ROUTE_TABLE.filter((r) => r.operationName !== 'GetCase'))).toThrow(
      /without a partner route: GetCase/,
    );
  });

  it('each answer 401, 403 for their scope, 429, 500 and a default problem', () => {
    for (const { op } of documented)
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['401', '403', '429', '500', 'default']));
  });

  it('each with a request body answer 413 and 415 for it, as the JSON envelope does before reading it', () => {
    const withBody = documented.filter(({ op }) => (op as { requestBody?: unknown }).requestBody !== undefined);
    expect(withBody.length).toBeGreaterThan(5);
    for (const { method, path, op } of withBody) {
      expect({ operation: `${method} ${path}`, statuses: Object.keys(op.responses) }).toEqual({
        operation: `${method} ${path}`,
        statuses: expect.arrayContaining(['413', '415']),
      });
    }
  });

  it('name the scopes a key can hold in requiredScope, and every problem type the one formula gives', () => {
    const document = buildOpenApiDocument() as unknown as {
      components: { schemas: Record<string, { properties?: Record<string, { enum?: string[] }> }> };
    };
    expect(document.components.schemas.InsufficientScopeProblem?.properties?.requiredScope?.enum).toEqual([...SCOPES]);
    const types = [
      ...JSON.stringify(document).matchAll(
        /"type":"(\/problems\/[^"]*)","title":"[^"]*","status":\d+,(?:"detail":"(?:[^"\\]|\\.)*",)?"code":"([A-Z_]+)"/g,
      ),
    ];
    expect(types.length).toBeGreaterThan(10);
    for (const [, type, code] of types) expect(type).toBe(problemType(code!));
  });
});
