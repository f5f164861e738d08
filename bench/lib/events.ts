import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';

/**
 * API Gateway REST proxy events and Lambda contexts for the benchmark's requests, and the case
 * payloads it submits. Self-contained (no test/ imports) so the benchmark and its child processes
 * share one definition; plain data only, no project modules.
 */
export type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

export interface EventOptions {
  method: 'GET' | 'POST';
  path: string;
  resource: string;
  apiKey: string;
  pathParameters?: Record<string, string>;
  headers?: Record<string, string>;
  body?: string | null;
}

export function apiEvent(options: EventOptions): APIGatewayProxyEvent {
  const headers: Record<string, string> = { Authorization: `Bearer ${options.apiKey}`, 'User-Agent': 'pca-bench', ...options.headers };
  const multiValueHeaders: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(headers)) multiValueHeaders[k] = [v];
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
    isBase64Encoded: false,
    requestContext: {
      accountId: '000000000000',
      apiId: 'bench',
      authorizer: null,
      protocol: 'HTTP/1.1',
      httpMethod: options.method,
      identity: { sourceIp: '203.0.113.7', userAgent: 'pca-bench' } as APIGatewayProxyEvent['requestContext']['identity'],
      path: `/prod${options.path}`,
      stage: 'prod',
      requestId: randomUUID(),
      requestTimeEpoch: Date.now(),
      resourceId: 'bench',
      resourcePath: options.resource,
    },
  };
}

export function lambdaContext(memoryMb = 512): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: 'bench',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:eu-west-2:000000000000:function:bench',
    memoryLimitInMB: String(memoryMb),
    awsRequestId: randomUUID(),
    logGroupName: '/aws/lambda/bench',
    logStreamName: 'bench',
    getRemainingTimeInMillis: () => 29_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** A valid case (every rule passes) citing `invoiceFileKey`, about 400 bytes of JSON. */
export function benchCase(invoiceRef: string, invoiceFileKey: string): Record<string, unknown> {
  return {
    debtorName: 'Acme Widgets Ltd',
    debtorEmail: 'accounts@acme.example',
    invoiceRef,
    invoiceDate: '2025-01-10',
    dueDate: '2025-02-10',
    principalAmount: 1250.5,
    invoiceFileKey,
    debtorCompanyNo: '01234567',
    debtorAddress: '1 High Street, Leeds LS1 1AA',
    description: 'Widgets delivered in January, invoice unpaid.',
    attestation: { b2b: true, under10k: true, within6years: true, undisputed: true, attestedBy: 'Jane Smith, Credit Controller' },
  };
}

/** `count` cases with fresh invoiceRefs `<prefix>-<i>`, case i citing fileKeys[i % fileKeys.length]. */
export function benchCases(prefix: string, count: number, fileKeys: readonly string[]): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, i) => benchCase(`${prefix}-${i}`, fileKeys[i % fileKeys.length]!));
}

export function createCasesEvent(apiKey: string, cases: unknown[], idempotencyKey?: string): APIGatewayProxyEvent {
  return apiEvent({
    method: 'POST',
    path: '/api/v1/cases',
    resource: '/api/v1/cases',
    apiKey,
    headers: { 'Content-Type': 'application/json', ...(idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : {}) },
    body: JSON.stringify({ cases }),
  });
}

export function getCaseEvent(apiKey: string, caseId: string): APIGatewayProxyEvent {
  return apiEvent({ method: 'GET', path: `/api/v1/cases/${caseId}`, resource: '/api/v1/cases/{id}', apiKey, pathParameters: { id: caseId } });
}

export function createUploadEvent(apiKey: string): APIGatewayProxyEvent {
  return apiEvent({
    method: 'POST',
    path: '/api/v1/uploads',
    resource: '/api/v1/uploads',
    apiKey,
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ fileName: 'invoice.pdf', contentType: 'application/pdf', contentLength: 2048 }),
  });
}
