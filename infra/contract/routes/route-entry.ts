import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type { Scope } from '../../../lib/auth/scopes.js';

/**
 * The shape of one entry of the route manifest (index.ts): everything the stack, the local
 * server, `npm run invoke`, the sample events and the infra tests need to know about one API
 * function and its one route. Plain data, plus the `load` thunk the local world calls (the stack
 * never does), so the contract still loads no CDK and no handler until asked.
 */

export type RouteMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/**
 * Who may call the route. `api-key`: partners, with the key the handler checks (`scope`); API
 * Gateway lets every request through to it. `aws-iam`: internal callers only; API Gateway
 * requires a SigV4 signature of a principal allowed `execute-api:Invoke` on the route (the
 * method's AuthorizationType AWS_IAM; locally, infra/local verifies the signature), and such a
 * route is not in the partner-facing OpenAPI document.
 */
export type RouteAuthorization = 'api-key' | 'aws-iam';

/**
 * How a function may use the table: a key of infra/stack/grants.ts `GRANTS`, which says
 * exactly which statements each one holds (GRANTS is typed by this union: the compiler keeps the two equal).
 */
export type TableAccess =
  | 'authenticate'
  | 'read'
  | 'list-cases'
  | 'write-cases'
  | 'withdraw-case'
  | 'record-uploads'
  | 'read-events'
  | 'list-events'
  | 'confirm-cases'
  | 'confirm-test-cases'
  | 'webhook-endpoints-list'
  | 'webhook-endpoints-create'
  | 'webhook-endpoints-read'
  | 'webhook-endpoints-change'
  | 'webhook-endpoints-delete'
  | 'webhook-endpoints-ping'
  | 'webhook-deliveries-list'
  | 'webhook-deliveries-redeliver'
  | 'webhook-fan-out'
  | 'webhook-deliver'
  | 'webhook-sweep'
  | 'verify-debtors'
  // Recovery and money (issue 33): one grant set per recovery function.
  | 'record-payments'
  | 'read-payments'
  | 'apply-recovery-updates'
  | 'apply-test-recovery-updates';

/**
 * How a function may use the invoice bucket:
 * - `issue-uploads`: presign PUTs (s3:PutObject).
 * - `check-uploads`: HEAD an uploaded invoice (s3:GetObject, and s3:ListBucket for the 404).
 */
export type InvoiceBucketAccess = 'issue-uploads' | 'check-uploads';

/** What a function may reach besides its own logs and traces (least privilege: infra/stack/grants.ts). */
export interface FunctionGrants {
  table: TableAccess;
  invoiceBucket?: InvoiceBucketAccess;
  cursorSecret?: true;
  /** The key sealing webhook endpoint secrets (only the routes that make or use a secret). */
  webhookSecretKey?: true;
  /** Sending new deliveries to the fast delivery lane (the redeliver route). */
  webhookRedeliveries?: true;
}

/**
 * What a route's handler module exports: the Lambda handler API Gateway's proxy integration calls.
 * Declared as a method so that its context parameter is compared bivariantly: the handlers are
 * middy chains whose middleware completes the plain Lambda context into the extended one their
 * core reads (lib/http/types.ts ApiContext), so they are called with a plain `Context`.
 */
export interface ApiHandlerModule {
  handler: {
    invoke(event: APIGatewayProxyEvent, context: Context, options?: { signal: AbortSignal }): Promise<APIGatewayProxyResult>;
  }['invoke'];
}

export type ApiHandler = ApiHandlerModule['handler'];

export interface RouteEntry {
  /** Kebab-case; the handler is `functions/<name>.ts`, and the local tools report this name. */
  name: string;
  /** Construct id in the stack (part of every CloudFormation logical id of the function: never rename). */
  constructId: string;
  method: RouteMethod;
  /** API Gateway resource template, e.g. `/api/v1/cases/{id}`. */
  resource: string;
  /** API Gateway operation name (also the OpenAPI operationId). */
  operationName: string;
  /** The OpenAPI operation's summary. */
  summary: string;
  /**
   * The scope the handler requires (the handler enforces it; this copy lets the manifest be read on
   * its own, and a test holds the two equal). Absent on `aws-iam` routes.
   */
  scope?: Scope;
  /** Default `api-key`. */
  authorization?: RouteAuthorization;
  /** Lambda's function timeout. */
  timeoutSeconds: number;
  /** The stack setting that holds the function's memory size (see stack-config.ts). */
  memorySetting: 'functionMemoryMb' | 'createCasesMemoryMb';
  grants: FunctionGrants;
  /** Imports the handler module (the local server and `npm run invoke`); typed, so a wrong handler does not compile. */
  load: () => Promise<ApiHandlerModule>;
}

/** The defaults most routes share: an API-key route of 6 s on the standard memory size. */
export function route(entry: Omit<RouteEntry, 'timeoutSeconds' | 'memorySetting'> & Partial<RouteEntry>): RouteEntry {
  return { timeoutSeconds: 6, memorySetting: 'functionMemoryMb', ...entry };
}
