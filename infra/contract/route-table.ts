import type { Scope } from '../../lib/auth/scopes.js';
import type { StackConfig } from './stack-config.js';

/**
 * What API Gateway and Lambda are told about each route and function, in one place: the CDK stack
 * builds its functions and REST resources from these tables, and the local server (`npm start`)
 * and `npm run invoke` read the same tables for the resource templates, the timeouts and the
 * payload limits they enforce. Plain data without CDK imports, so the local tools load it cheaply.
 */

/** API Gateway REST APIs end every integration after 29 s (the default and the regional maximum without a quota raise). */
export const API_GATEWAY_INTEGRATION_TIMEOUT_MS = 29_000;

/**
 * A synchronous Lambda invocation carries at most 6 MB of request payload, so no request body
 * larger than this reaches a function (API Gateway's own limit, 10 MB, is higher).
 */
export const LAMBDA_REQUEST_PAYLOAD_BYTES = 6 * 1024 * 1024;

/** The key of each function; also the key of the stack's `functions` and of the API's handlers. */
export type ApiFunctionId =
  | 'getCase'
  | 'listCases'
  | 'createCases'
  | 'createUpload'
  | 'listEvents'
  | 'getEvent'
  | 'withdrawCase'
  | 'confirmCases'
  | 'testConfirmCase'
  | 'createWebhookEndpoint'
  | 'listWebhookEndpoints'
  | 'getWebhookEndpoint'
  | 'updateWebhookEndpoint'
  | 'deleteWebhookEndpoint'
  | 'rotateWebhookEndpointSecret'
  | 'pingWebhookEndpoint'
  | 'redeliverWebhookEvent'
  | 'listWebhookDeliveries';

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
  memorySetting: 'functionMemoryMb' | 'createCasesMemoryMb';
}

export const API_FUNCTIONS: Readonly<Record<ApiFunctionId, ApiFunctionSpec>> = {
  getCase: {
    name: 'get-case',
    constructId: 'GetCase',
    entry: 'functions/get-case.ts',
    timeoutSeconds: 6,
    memorySetting: 'functionMemoryMb',
  },
  // One round of parallel index queries; a selective status/recoveryGate filter may take a few more.
  listCases: {
    name: 'list-cases',
    constructId: 'ListCases',
    entry: 'functions/list-cases.ts',
    timeoutSeconds: 6,
    memorySetting: 'functionMemoryMb',
  },
  // Up to 100 cases in a few rounds of TransactWriteItems (33 cases each) after one read of their upload
  // records, plus retries within the request's deadline; well inside API Gateway's 29 s.
  createCases: {
    name: 'create-cases',
    constructId: 'CreateCases',
    entry: 'functions/create-cases.ts',
    timeoutSeconds: 15,
    memorySetting: 'createCasesMemoryMb',
  },
  createUpload: {
    name: 'create-upload',
    constructId: 'CreateUpload',
    entry: 'functions/create-upload.ts',
    timeoutSeconds: 6,
    memorySetting: 'functionMemoryMb',
  },
  // As list-cases: one round of parallel index queries, a selective type or caseId filter a few more.
  listEvents: {
    name: 'list-events',
    constructId: 'ListEvents',
    entry: 'functions/list-events.ts',
    timeoutSeconds: 6,
    memorySetting: 'functionMemoryMb',
  },
  getEvent: {
    name: 'get-event',
    constructId: 'GetEvent',
    entry: 'functions/get-event.ts',
    timeoutSeconds: 6,
    memorySetting: 'functionMemoryMb',
  },
  // One read of the case (beside the key) and one transaction; a lost race reads and writes again.
  withdrawCase: {
    name: 'withdraw-case',
    constructId: 'WithdrawCase',
    entry: 'functions/withdraw-case.ts',
    timeoutSeconds: 6,
    memorySetting: 'functionMemoryMb',
  },
  // Up to 100 confirmations in parallel, each a read and a transaction (two round trips).
  confirmCases: {
    name: 'confirm-cases',
    constructId: 'ConfirmCases',
    entry: 'functions/confirm-cases.ts',
    timeoutSeconds: 10,
    memorySetting: 'functionMemoryMb',
  },
  testConfirmCase: {
    name: 'test-confirm-case',
    constructId: 'TestConfirmCase',
    entry: 'functions/test-confirm-case.ts',
    timeoutSeconds: 6,
    memorySetting: 'functionMemoryMb',
  },
  // Webhook endpoint management (product rules "Webhooks"): a few small reads and writes each;
  // creation and a URL change also resolve the URL's host name.
  ...webhookEndpointFunctions(),
  // The ping waits for the receiver: the sender's 10 s for the whole attempt, plus opening the
  // endpoint's secrets (the sealing key is read once per cold start) and the answer.
  pingWebhookEndpoint: {
    name: 'ping-webhook-endpoint',
    constructId: 'PingWebhookEndpoint',
    entry: 'functions/ping-webhook-endpoint.ts',
    timeoutSeconds: 15,
    memorySetting: 'functionMemoryMb',
  },
  // Two reads in parallel, one SQS message, one conditional write.
  redeliverWebhookEvent: {
    name: 'redeliver-webhook-event',
    constructId: 'RedeliverWebhookEvent',
    entry: 'functions/redeliver-webhook-event.ts',
    timeoutSeconds: 6,
    memorySetting: 'functionMemoryMb',
  },
  // One read of the endpoint and one Query of its delivery log.
  listWebhookDeliveries: {
    name: 'list-webhook-deliveries',
    constructId: 'ListWebhookDeliveries',
    entry: 'functions/list-webhook-deliveries.ts',
    timeoutSeconds: 6,
    memorySetting: 'functionMemoryMb',
  },
};

function webhookEndpointFunctions(): Record<
  | 'createWebhookEndpoint'
  | 'listWebhookEndpoints'
  | 'getWebhookEndpoint'
  | 'updateWebhookEndpoint'
  | 'deleteWebhookEndpoint'
  | 'rotateWebhookEndpointSecret',
  ApiFunctionSpec
> {
  const spec = (name: string, constructId: string): ApiFunctionSpec => ({
    name,
    constructId,
    entry: `functions/${name}.ts`,
    timeoutSeconds: 6,
    memorySetting: 'functionMemoryMb',
  });
  return {
    createWebhookEndpoint: spec('create-webhook-endpoint', 'CreateWebhookEndpoint'),
    listWebhookEndpoints: spec('list-webhook-endpoints', 'ListWebhookEndpoints'),
    getWebhookEndpoint: spec('get-webhook-endpoint', 'GetWebhookEndpoint'),
    updateWebhookEndpoint: spec('update-webhook-endpoint', 'UpdateWebhookEndpoint'),
    deleteWebhookEndpoint: spec('delete-webhook-endpoint', 'DeleteWebhookEndpoint'),
    rotateWebhookEndpointSecret: spec('rotate-webhook-endpoint-secret', 'RotateWebhookEndpointSecret'),
  };
}

export const API_FUNCTION_IDS = Object.keys(API_FUNCTIONS) as ApiFunctionId[];

/** One value for each API function, keyed by its id: complete by construction. */
export function byApiFunction<T>(value: (id: ApiFunctionId) => T): Record<ApiFunctionId, T> {
  return Object.fromEntries(API_FUNCTION_IDS.map((id) => [id, value(id)])) as Record<ApiFunctionId, T>;
}

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

export type RouteMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

export interface RouteSpec {
  method: RouteMethod;
  /** API Gateway resource template, e.g. `/api/v1/cases/{id}`. */
  resource: string;
  function: ApiFunctionId;
  /** API Gateway operation name (also the OpenAPI operationId). */
  operationName: string;
  /**
   * The scope the handler requires. The handler enforces it (functions/*.ts); this copy lets the
   * route table be read on its own, and a test holds the two equal.
   */
  scope?: Scope;
  /**
   * Who may call the route. `api-key` (the default): partners, with the key the handler checks;
   * API Gateway lets every request through to it. `aws-iam`: internal callers only; API Gateway
   * requires a SigV4 signature of a principal allowed `execute-api:Invoke` on the route (the
   * method's AuthorizationType AWS_IAM; locally, infra/local verifies the signature), and such a
   * route is not in the partner-facing OpenAPI document.
   */
  authorization?: RouteAuthorization;
}

export type RouteAuthorization = 'api-key' | 'aws-iam';

export function authorizationOf(route: Pick<RouteSpec, 'authorization'>): RouteAuthorization {
  return route.authorization ?? 'api-key';
}

export const ROUTE_TABLE: readonly RouteSpec[] = [
  { method: 'POST', resource: '/api/v1/uploads', function: 'createUpload', operationName: 'CreateUpload', scope: 'cases:write' },
  { method: 'POST', resource: '/api/v1/cases', function: 'createCases', operationName: 'CreateCases', scope: 'cases:write' },
  { method: 'GET', resource: '/api/v1/cases', function: 'listCases', operationName: 'ListCases', scope: 'cases:read' },
  { method: 'GET', resource: '/api/v1/cases/{id}', function: 'getCase', operationName: 'GetCase', scope: 'cases:read' },
  { method: 'GET', resource: '/api/v1/events', function: 'listEvents', operationName: 'ListEvents', scope: 'cases:read' },
  { method: 'GET', resource: '/api/v1/events/{id}', function: 'getEvent', operationName: 'GetEvent', scope: 'cases:read' },
  {
    method: 'POST',
    resource: '/api/v1/cases/{id}/withdraw',
    function: 'withdrawCase',
    operationName: 'WithdrawCase',
    scope: 'cases:write',
  },
  {
    method: 'POST',
    resource: '/api/v1/test-helpers/cases/{id}/confirm',
    function: 'testConfirmCase',
    operationName: 'TestConfirmCase',
    scope: 'cases:write',
  },
  {
    method: 'POST',
    resource: '/internal/v1/confirmations',
    function: 'confirmCases',
    operationName: 'ConfirmCases',
    authorization: 'aws-iam',
  },
  ...webhookEndpointRoutes(),
];

function webhookEndpointRoutes(): RouteSpec[] {
  const collection = '/api/v1/webhook-endpoints';
  const one = `${collection}/{id}`;
  const scope: Scope = 'webhooks:manage';
  return [
    { method: 'POST', resource: collection, function: 'createWebhookEndpoint', operationName: 'CreateWebhookEndpoint', scope },
    { method: 'GET', resource: collection, function: 'listWebhookEndpoints', operationName: 'ListWebhookEndpoints', scope },
    { method: 'GET', resource: one, function: 'getWebhookEndpoint', operationName: 'GetWebhookEndpoint', scope },
    { method: 'PATCH', resource: one, function: 'updateWebhookEndpoint', operationName: 'UpdateWebhookEndpoint', scope },
    { method: 'DELETE', resource: one, function: 'deleteWebhookEndpoint', operationName: 'DeleteWebhookEndpoint', scope },
    {
      method: 'POST',
      resource: `${one}/rotate-secret`,
      function: 'rotateWebhookEndpointSecret',
      operationName: 'RotateWebhookEndpointSecret',
      scope,
    },
    { method: 'POST', resource: `${one}/ping`, function: 'pingWebhookEndpoint', operationName: 'PingWebhookEndpoint', scope },
    { method: 'POST', resource: `${one}/redeliver`, function: 'redeliverWebhookEvent', operationName: 'RedeliverWebhookEvent', scope },
    { method: 'GET', resource: `${one}/deliveries`, function: 'listWebhookDeliveries', operationName: 'ListWebhookDeliveries', scope },
  ];
}

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
