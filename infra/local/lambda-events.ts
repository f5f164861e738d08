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
  /** Headers by name (one value each); use `rawHeaders` for repeated headers as they arrived. */
  headers?: Record<string, string>;
  /** Header name/value pairs in arrival order (Node's `rawHeaders`), repeats included. */
  rawHeaders?: readonly string[];
  /**
   * Query parameters as the gateway decodes them: name/value pairs in arrival order (a
   * URLSearchParams), or a map whose list values are repeated parameters.
   */
  query?: Iterable<[string, string]> | Record<string, string | string[]>;
  pathParameters?: Record<string, string> | null;
  body?: string | null;
  isBase64Encoded?: boolean;
  sourceIp?: string;
  userAgent?: string;
  stage?: string;
  apiId?: string;
  requestId?: string;
  protocol?: string;
  domainName?: string;
  /** Epoch ms of the request (default now). */
  at?: number;
  /** The IAM caller API Gateway verified (AWS_IAM methods); absent on partner routes. */
  iamIdentity?: { userArn: string; accessKey: string; accountId: string; caller: string };
}

/**
 * A name from the request (`__proto__`, `constructor`, ...) as an own property, as API Gateway's
 * JSON event has it: a plain assignment would set the map's prototype or reach Object.prototype.
 */
function setOwn<T>(map: Record<string, T>, name: string, value: T): void {
  Object.defineProperty(map, name, { value, enumerable: true, writable: true, configurable: true });
}

function appendOwn(map: Record<string, string[]>, name: string, value: string): void {
  if (Object.hasOwn(map, name)) (map[name] as string[]).push(value);
  else setOwn(map, name, [value]);
}

/** API Gateway's `requestContext.requestTime` format: `09/Apr/2015:12:34:56 +0000`. */
export function requestTime(epochMs: number): string {
  const [, day, month, year, time] = /^\w+, (\d\d) (\w+) (\d+) (\S+) GMT$/.exec(new Date(epochMs).toUTCString()) ?? [];
  return `${day}/${month}/${year}:${time} +0000`;
}

function queryPairs(query: RestEventOptions['query']): [string, string][] {
  if (!query) return [];
  if (Symbol.iterator in query) return [...(query as Iterable<[string, string]>)];
  return Object.entries(query).flatMap(([k, v]) => (Array.isArray(v) ? v : [v]).map((value): [string, string] => [k, value]));
}

export function restApiEvent(options: RestEventOptions): APIGatewayProxyEvent {
  // Null-prototype maps: a header or parameter named `__proto__` is data, never the prototype.
  const headers: Record<string, string> = Object.create(null) as Record<string, string>;
  const multiValueHeaders: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
  const pairs = options.rawHeaders ?? Object.entries(options.headers ?? {}).flat();
  for (let i = 0; i + 1 < pairs.length; i += 2) {
    const name = pairs[i] as string;
    const value = pairs[i + 1] as string;
    setOwn(headers, name, value); // API Gateway keeps the last value in `headers`
    appendOwn(multiValueHeaders, name, value);
  }
  const query: Record<string, string> = Object.create(null) as Record<string, string>;
  const multiQuery: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
  for (const [k, v] of queryPairs(options.query)) {
    setOwn(query, k, v);
    appendOwn(multiQuery, k, v);
  }
  const stage = options.stage ?? 'prod';
  const apiId = options.apiId ?? 'local';
  const at = options.at ?? Date.now();
  return {
    resource: options.resource,
    path: options.path,
    httpMethod: options.method,
    headers,
    multiValueHeaders,
    queryStringParameters: Object.keys(query).length ? query : null,
    multiValueQueryStringParameters: Object.keys(multiQuery).length ? multiQuery : null,
    pathParameters: options.pathParameters ?? null,
    stageVariables: null,
    body: options.body ?? null,
    isBase64Encoded: options.isBase64Encoded ?? false,
    requestContext: {
      accountId: '000000000000',
      apiId,
      authorizer: null,
      protocol: options.protocol ?? 'HTTP/1.1',
      httpMethod: options.method,
      identity: {
        accessKey: options.iamIdentity?.accessKey ?? null,
        accountId: options.iamIdentity?.accountId ?? null,
        apiKey: null,
        apiKeyId: null,
        caller: options.iamIdentity?.caller ?? null,
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp: options.sourceIp ?? '203.0.113.7',
        user: options.iamIdentity?.caller ?? null,
        userAgent: options.userAgent ?? null,
        userArn: options.iamIdentity?.userArn ?? null,
      },
      path: `/${stage}${options.path}`,
      stage,
      requestId: options.requestId ?? randomUUID(),
      extendedRequestId: randomUUID(),
      domainName: options.domainName ?? 'localhost',
      requestTime: requestTime(at),
      requestTimeEpoch: at,
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
