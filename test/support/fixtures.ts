import type { APIGatewayProxyEvent } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import { AccountsService } from '../../lib/accounts/accounts-service.js';
import type { Scope } from '../../lib/auth/scopes.js';
import type { Mode } from '../../lib/mode.js';
import { config } from '../../lib/runtime/config.js';
import { documentClient } from '../../lib/adapters/dynamodb/dynamo-client.js';
import { tableAdapters } from '../../lib/adapters/production-adapters.js';
import type { ApiContext } from '../../lib/http/types.js';
import { lambdaContext as sharedLambdaContext, restApiEvent } from '../../infra/local/lambda-events.js';

/** Helpers shared by the integration tests. They use the real local stores. */
export function stores() {
  return tableAdapters(config());
}

export function accounts(): AccountsService {
  const s = stores();
  return new AccountsService(s.companies, s.keys);
}

export interface Partner {
  companyId: string;
  keyId: string;
  apiKey: string;
}

export async function newPartner(
  scopes: Scope[] = ['cases:read', 'cases:write'],
  options: { autoAttestation?: boolean; name?: string; mode?: Mode } = {},
): Promise<Partner> {
  const service = accounts();
  const company = await service.createCompany(options.name ?? `Test Co ${randomUUID().slice(0, 8)}`, options.autoAttestation ?? false);
  const key = await service.createKey(company.companyId, scopes, undefined, options.mode ?? 'live');
  return { companyId: company.companyId, keyId: key.keyId, apiKey: key.apiKey };
}

export async function extraKey(companyId: string, scopes: Scope[], mode: Mode = 'live'): Promise<string> {
  return (await accounts().createKey(companyId, scopes, undefined, mode)).apiKey;
}

export function ddb() {
  return documentClient(config());
}

export interface EventOptions {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
  path: string;
  resource: string;
  pathParameters?: Record<string, string>;
  /** Query parameters; a list value is a repeated parameter. */
  query?: Record<string, string | string[]>;
  headers?: Record<string, string>;
  body?: string | null;
  isBase64Encoded?: boolean;
  sourceIp?: string;
}

/** An API Gateway REST proxy event, as Lambda receives it. */
export function apiEvent(options: EventOptions): APIGatewayProxyEvent {
  return restApiEvent({ ...options, userAgent: 'jest' });
}

/** A Lambda context for a route's handler; `timeoutMs` is the function's time left as the invocation starts. */
export function lambdaContext(timeoutMs = 15_000): ApiContext {
  return sharedLambdaContext({ functionName: 'test', memoryMb: 256, timeoutMs }) as ApiContext;
}

export function bearer(apiKey: string): Record<string, string> {
  return { Authorization: `Bearer ${apiKey}` };
}

export interface ParsedResult {
  statusCode: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

export function parse(result: { statusCode: number; headers?: Record<string, unknown>; body: string }): ParsedResult {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(result.headers ?? {})) headers[k.toLowerCase()] = String(v);
  return { statusCode: result.statusCode, headers, body: JSON.parse(result.body) as Record<string, unknown> };
}
