import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { lambdaContext as sharedLambdaContext, restApiEvent } from '../../../infra/local/lambda-events.js';

/**
 * API Gateway REST proxy events and Lambda contexts for the benchmark's requests, and the case
 * payloads it submits, built with the shared infra/local/lambda-events.ts (plain data, no project
 * modules), so the benchmark's child processes load them cheaply.
 */
export type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

export interface EventOptions {
  method: 'GET' | 'POST';
  path: string;
  resource: string;
  apiKey: string;
  pathParameters?: Record<string, string>;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: string | null;
}

export function apiEvent(options: EventOptions): APIGatewayProxyEvent {
  const { apiKey, headers, ...rest } = options;
  return restApiEvent({
    ...rest,
    headers: { Authorization: `Bearer ${apiKey}`, 'User-Agent': 'pca-bench', ...headers },
    userAgent: 'pca-bench',
    apiId: 'bench',
  });
}

export function lambdaContext(memoryMb = 512): Context {
  return sharedLambdaContext({ functionName: 'bench', memoryMb, timeoutMs: 29_000 });
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
  return apiEvent({
    method: 'GET',
    path: `/api/v1/cases/${caseId}`,
    resource: '/api/v1/cases/{id}',
    apiKey,
    pathParameters: { id: caseId },
  });
}

export function withdrawCaseEvent(apiKey: string, caseId: string, reason?: string): APIGatewayProxyEvent {
  return apiEvent({
    method: 'POST',
    path: `/api/v1/cases/${caseId}/withdraw`,
    resource: '/api/v1/cases/{id}/withdraw',
    apiKey,
    pathParameters: { id: caseId },
    ...(reason === undefined ? {} : { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ reason }) }),
  });
}

export function recordPaymentEvent(apiKey: string, caseId: string, amount: number, idempotencyKey?: string): APIGatewayProxyEvent {
  return apiEvent({
    method: 'POST',
    path: `/api/v1/cases/${caseId}/payments`,
    resource: '/api/v1/cases/{id}/payments',
    apiKey,
    pathParameters: { id: caseId },
    headers: { 'Content-Type': 'application/json', ...(idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : {}) },
    body: JSON.stringify({ amount, paidAt: '2025-03-10' }),
  });
}

export function listCasesEvent(apiKey: string, query: Record<string, string> = {}): APIGatewayProxyEvent {
  return apiEvent({ method: 'GET', path: '/api/v1/cases', resource: '/api/v1/cases', apiKey, query });
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
