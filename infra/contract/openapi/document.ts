import { OpenAPIRegistry, OpenApiGeneratorV31, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import { SCOPES, type Scope } from '../../../lib/auth/scopes.js';
import { MAX_CASES_PER_REQUEST } from '../../../lib/cases/batch-size.js';
import { EVENT_RETENTION_DAYS } from '../../../lib/cases/event-retention.js';
import { ROUTE_TABLE, type RouteSpec } from '../route-table.js';
import { CASE_OPERATIONS } from './cases.js';
import { errorResponses, IDEMPOTENCY_HOURS, IDEMPOTENCY_KEY_PARAMETER, SECURITY_SCHEMES, type OperationDoc } from './components.js';
import { EVENT_OPERATIONS } from './events.js';
import { TEST_HELPER_OPERATIONS } from './test-helpers.js';
import { UPLOAD_OPERATIONS } from './uploads.js';
import { WEBHOOK_ENDPOINT_OPERATIONS } from './webhook-endpoints.js';
import { registerWebhookEvents } from './webhook-events.js';

/**
 * The partner contract as an OpenAPI 3.1 document. Each partner route of the route table
 * (infra/contract/route-table.ts: method, path, operation name, scope) becomes one operation, with
 * the detail its resource's file gives under its operation name (cases.ts, events.ts, uploads.ts,
 * test-helpers.ts, webhook-endpoints.ts): request bodies and query parameters from the zod schemas
 * the handlers validate with, responses from the response schemas (lib/http/response-schemas.ts
 * and the domain types' own), error responses from each operation's problem codes (components.ts).
 *
 * `npm run openapi` writes it to docs/openapi.json; test/integration/openapi-document.test.ts
 * fails when the committed file differs from a fresh generation, the contract tests validate
 * every response the integration tests receive against the committed file, and
 * test/integration/openapi-proxy.test.ts puts it in front of the local API as a validating proxy.
 */

export const OPENAPI_FILE = 'docs/openapi.json';

/** Every partner operation's detail, by the route table's operation name. */
export const OPERATIONS: Readonly<Record<string, OperationDoc>> = {
  ...UPLOAD_OPERATIONS,
  ...CASE_OPERATIONS,
  ...EVENT_OPERATIONS,
  ...TEST_HELPER_OPERATIONS,
  ...WEBHOOK_ENDPOINT_OPERATIONS,
};

/** The routes the partner document describes: every route a partner's API key can call (not the IAM-signed internal ones). */
export const partnerRoutes = (routes: readonly RouteSpec[] = ROUTE_TABLE) =>
  routes.filter((route) => (route.authorization ?? 'api-key') === 'api-key');

const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  'cases:write':
    'upload invoices (`POST /api/v1/uploads`), create cases (`POST /api/v1/cases`) and withdraw them (`POST /api/v1/cases/{id}/withdraw`)',
  'cases:read':
    'read, list and look up cases (`GET /api/v1/cases/{id}`, `GET /api/v1/cases`) and read their events (`GET /api/v1/events`, `GET /api/v1/events/{id}`)',
  'webhooks:manage': 'manage webhook endpoints (`/api/v1/webhook-endpoints`)',
};

const DESCRIPTION = `Partners upload invoice files, submit overdue business-to-business invoices as recovery cases in batches of up to ${MAX_CASES_PER_REQUEST}, read a case's status, and list or look up their cases.

## Authentication

Every request carries your API key, either as \`Authorization: Bearer <key>\` or as \`X-Api-Key: <key>\` (if both are sent they must be the same key). A missing, malformed, unknown or revoked key gets \`401 UNAUTHENTICATED\`; a valid key without the operation's scope gets \`403 INSUFFICIENT_SCOPE\`. Keys belong to one company and see only its data.

## Scopes

A key holds exactly the scopes given when it was created. Each operation names the scope it requires (in its description and as \`x-required-scope\`).

| Scope | Grants |
|---|---|
${SCOPES.map((scope) => `| \`${scope}\` | ${SCOPE_DESCRIPTIONS[scope]} |`).join('\n')}

## Errors

Every non-2xx response is RFC 9457 problem details (\`application/problem+json\`) with a stable \`code\` to switch on and a \`requestId\` to quote. Checks run in this order: authentication (401), scope (403), request envelope (413, 415, 400), then the work. Per-case problems in \`POST /api/v1/cases\` are not HTTP errors: they are items in \`rejected\`, each with a \`RejectionCode\`.

## Retries

Send an \`Idempotency-Key\` with each batch: a repeat within ${IDEMPOTENCY_HOURS} hours gets \`409\` and creates nothing. Independently, a case whose \`invoiceRef\` your company already has is rejected as \`DUPLICATE\`. A retry never creates a second case.

## Versioning

The version is in the path (\`/api/v1\`). Additive changes (new optional response members, new enum values, new operations) may appear within v1: ignore members you do not know.`;

function operationOf(route: RouteSpec): RouteConfig {
  const doc = OPERATIONS[route.operationName];
  if (!doc)
    throw new Error(`no OpenAPI operation for ${route.method} ${route.resource} (${route.operationName}): add it to its resource's file`);
  const scope = route.scope;
  if (!scope) throw new Error(`the partner route ${route.operationName} names no scope`);
  return {
    method: route.method.toLowerCase() as RouteConfig['method'],
    path: route.resource,
    operationId: `${route.operationName[0]?.toLowerCase()}${route.operationName.slice(1)}`,
    tags: [doc.tag],
    summary: route.summary,
    description: `${doc.description}\n\nRequires the scope \`${scope}\`.`,
    // OpenAPI 3.1 lets a requirement on a non-OAuth scheme list "roles"; the scope is also stated in
    // the description and in x-required-scope for tools that ignore them.
    security: [{ bearerAuth: [scope] }, { apiKeyHeader: [scope] }],
    'x-required-scope': scope,
    ...(doc.parameters ? { parameters: doc.parameters as RouteConfig['parameters'] } : {}),
    ...(doc.request ? { request: doc.request } : {}),
    responses: { ...doc.responses, ...errorResponses(scope, doc.problems, doc.problemResponses) },
  };
}

export type OpenApiDocument = ReturnType<OpenApiGeneratorV31['generateDocument']>;

export function buildOpenApiDocument(routes: readonly RouteSpec[] = ROUTE_TABLE): OpenApiDocument {
  const registry = new OpenAPIRegistry();
  for (const [name, scheme] of Object.entries(SECURITY_SCHEMES)) registry.registerComponent('securitySchemes', name, scheme);
  registry.registerComponent('parameters', 'IdempotencyKey', IDEMPOTENCY_KEY_PARAMETER);
  const documented = partnerRoutes(routes);
  for (const route of documented) registry.registerPath(operationOf(route));
  const unrouted = Object.keys(OPERATIONS).filter((name) => !documented.some((route) => route.operationName === name));
  if (unrouted.length > 0) throw new Error(`OpenAPI operations without a partner route: ${unrouted.join(', ')}`);
  registerWebhookEvents(registry);
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: { title: 'Partner Case API', version: '1.0.0', description: DESCRIPTION, contact: { name: 'Partner integrations' } },
    servers: [
      {
        url: 'https://{apiId}.execute-api.{region}.amazonaws.com/{stage}',
        description: 'A deployed stack (the `ApiUrl` output of the CDK stack).',
        variables: { apiId: { default: 'abc123defg' }, region: { default: 'eu-west-2' }, stage: { default: 'prod' } },
      },
      { url: 'http://localhost:3000', description: 'Local development (`npm start`).' },
    ],
    tags: [
      { name: 'Uploads', description: 'Upload the invoice file first; its `fileKey` goes into the case.' },
      { name: 'Cases', description: 'Create cases in batches, read their status, list and look them up.' },
      {
        name: 'Events',
        description: `What happened to your cases: one event per creation and per change, kept ${EVENT_RETENTION_DAYS} days.`,
      },
      { name: 'Test helpers', description: 'Test-mode keys only: make in the sandbox what other systems do to live cases.' },
      {
        name: 'Webhooks',
        description: 'Endpoints that receive your case events, signed per Standard Webhooks. Test keys manage test endpoints only.',
      },
    ],
  });
}

/** The file contents: stable key order as generated, two-space indent, trailing newline. */
export function renderOpenApiDocument(): string {
  return `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`;
}
