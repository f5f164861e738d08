import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';

/**
 * The one builder of API Gateway REST proxy events and Lambda contexts outside AWS: used by the
 * local server, `npm run invoke`, the tests and the benchmark, so all of them hand the handlers
 * the same shape Lambda does. Plain data only (no project modules), so the benchmark's child
 * processes can load it cheaply.
 */
export interface RestEventOptions {
  method: string;
  path: string;
  resource: string;
  headers?: Record<string, string>;
  pathParameters?: Record<string, string> | null;
  /** Query parameters as the gateway decodes them; a list value is a repeated parameter. */
  query?: Record<string, string | string[]>;
  body?: string | null;
  isBase64Encoded?: boolean;
  sourceIp?: string;
  userAgent?: string;
  stage?: string;
  apiId?: string;
}

export function restApiEvent(options: RestEventOptions): APIGatewayProxyEvent {
  const headers = options.headers ?? {};
  const multiValueHeaders: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(headers)) multiValueHeaders[k] = [v];
  // API Gateway's two views of the query string: the last value of each name, and every value.
  const entries = Object.entries(options.query ?? {}).map(([k, v]) => [k, Array.isArray(v) ? v : [v]] as const);
  const query = entries.length ? Object.fromEntries(entries.map(([k, v]) => [k, v[v.length - 1] as string])) : null;
  const multiQuery = entries.length ? Object.fromEntries(entries.map(([k, v]) => [k, [...v]])) : null;
  const stage = options.stage ?? 'prod';
  const apiId = options.apiId ?? 'local';
  return {
    resource: options.resource,
    path: options.path,
    httpMethod: options.method,
    headers,
    multiValueHeaders,
    queryStringParameters: query,
    multiValueQueryStringParameters: multiQuery,
    pathParameters: options.pathParameters ?? null,
    stageVariables: null,
    body: options.body ?? null,
    isBase64Encoded: options.isBase64Encoded ?? false,
    requestContext: {
      accountId: '000000000000',
      apiId,
      authorizer: null,
      protocol: 'HTTP/1.1',
      httpMethod: options.method,
      identity: { sourceIp: options.sourceIp ?? '203.0.113.7', userAgent: options.userAgent ?? null } as APIGatewayProxyEvent['requestContext']['identity'],
      path: `/${stage}${options.path}`,
      stage,
      requestId: randomUUID(),
      requestTimeEpoch: Date.now(),
      resourceId: apiId,
      resourcePath: options.resource,
    },
  };
}

export interface ContextOptions {
  functionName?: string;
  memoryMb?: number;
  /** The function's timeout: getRemainingTimeInMillis counts down from it. */
  timeoutMs?: number;
  /** When the invocation ends (epoch ms), if the caller already fixed it; else now + timeoutMs. */
  deadlineMs?: number;
}

export function lambdaContext(options: ContextOptions = {}): Context {
  const functionName = options.functionName ?? 'local';
  const deadline = options.deadlineMs ?? Date.now() + (options.timeoutMs ?? 30_000);
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:eu-west-2:000000000000:function:${functionName}`,
    memoryLimitInMB: String(options.memoryMb ?? 512),
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
