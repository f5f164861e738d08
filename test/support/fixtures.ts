import type { APIGatewayProxyEvent } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import { AccountsService } from '../../lib/accounts/accounts-service.js';
import type { Scope } from '../../lib/auth/scopes.js';
import { config } from '../../lib/config.js';
import { documentClient } from '../../lib/data/dynamo-client.js';
import { defaultTableStores } from '../../lib/data/stores.js';
import type { ApiContext } from '../../lib/middleware/types.js';

/** Helpers shared by the integration tests. They use the real local stores. */
export function stores() {
  return defaultTableStores(config());
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

export async function newPartner(scopes: Scope[] = ['cases:read', 'cases:write'], options: { autoAttestation?: boolean; name?: string } = {}): Promise<Partner> {
  const service = accounts();
  const company = await service.createCompany(options.name ?? `Test Co ${randomUUID().slice(0, 8)}`, options.autoAttestation ?? false);
  const key = await service.createKey(company.companyId, scopes);
  return { companyId: company.companyId, keyId: key.keyId, apiKey: key.apiKey };
}

export async function extraKey(companyId: string, scopes: Scope[]): Promise<string> {
  return (await accounts().createKey(companyId, scopes)).apiKey;
}

export function ddb() {
  return documentClient(config());
}

export interface EventOptions {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
  path: string;
  resource: string;
  pathParameters?: Record<string, string>;
  headers?: Record<string, string>;
  body?: string | null;
  isBase64Encoded?: boolean;
  sourceIp?: string;
}

/** An API Gateway REST proxy event, as Lambda receives it. */
export function apiEvent(options: EventOptions): APIGatewayProxyEvent {
  const headers = options.headers ?? {};
  const multiValueHeaders: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(headers)) multiValueHeaders[k] = [v];
  const requestId = randomUUID();
  return {
    resource: options.resource,
    path: options.path,
    httpMethod: options.method,
    headers,
    multiValueHeaders,
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: options.pathParameters ?? null,
    stageVariables: null,
    body: options.body ?? null,
    isBase64Encoded: options.isBase64Encoded ?? false,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      authorizer: null,
      protocol: 'HTTP/1.1',
      httpMethod: options.method,
      identity: { sourceIp: options.sourceIp ?? '203.0.113.7', userAgent: 'jest' } as APIGatewayProxyEvent['requestContext']['identity'],
      path: `/prod${options.path}`,
      stage: 'prod',
      requestId,
      requestTimeEpoch: Date.now(),
      resourceId: 'local',
      resourcePath: options.resource,
    },
  };
}

export function lambdaContext(): ApiContext {
  const awsRequestId = randomUUID();
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: 'test',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:eu-west-2:000000000000:function:test',
    memoryLimitInMB: '256',
    awsRequestId,
    logGroupName: '/aws/lambda/test',
    logStreamName: 'test',
    getRemainingTimeInMillis: () => 15_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  } as unknown as ApiContext;
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
