import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROUTE_MANIFEST, type ApiFunctionId } from '../contract/routes/index.js';

/**
 * The sample API Gateway events in `events/`, generated: each file is the route's envelope (method,
 * resource, path and path parameters from the route manifest, infra/contract/routes/) filled from
 * one row of the table below (which key, the query, the body). `npm run events` rewrites `events/`
 * from it; a unit test fails when a file differs from what this renders, so the table is the
 * source and the files stay what `sam local invoke`, `npm run invoke` and the sample-events test
 * read. Placeholders (`{{API_KEY}}`, `{{CASE_ID}}`, ...) stand for what sample-events.ts
 * provisions, never secrets.
 */

/** The key a sample authenticates with: a placeholder provisioned by sample-events.ts, or none. */
type KeyPlaceholder = 'API_KEY' | 'READ_ONLY_API_KEY' | 'WRITE_ONLY_API_KEY' | 'WEBHOOKS_API_KEY';

export interface SampleEventRow {
  function: ApiFunctionId;
  status: number;
  description: string;
  /** The Bearer key (default API_KEY); `null` sends none. */
  key?: KeyPlaceholder | null;
  /** Sends the key in `X-Api-Key` instead of `Authorization: Bearer`. */
  xApiKey?: true;
  /** The `{id}` path parameter. */
  id?: string;
  /** Query parameters, each with all its values (the single-value map takes the last, as API Gateway does). */
  query?: Record<string, string[]>;
  /** A JSON body (sent as `application/json`), or a raw body with its content type. */
  body?: unknown;
  raw?: { contentType: string; body: string };
  headers?: Record<string, string>;
}

const UNKNOWN_CASE = 'case_0000000000000000000000';
const UNKNOWN_EVENT = 'evt_0000000000000000000000';
const UNKNOWN_ENDPOINT = 'we_0000000000000000000000';
/** A cursor this API never issued. */
const FOREIGN_CURSOR = 'AZ3q0b5mTqV8Xc1k9Yw2Lr7N4pGhS6dEfJ0uBvWxYz1aCqRtUiOpLkJhGfDsA';

/** A valid case for the sample company's uploaded invoice; `invoiceRef` unique per run. */
function sampleCase(invoiceRef: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    debtorName: 'Acme Widgets Ltd',
    debtorEmail: 'accounts@acme.example',
    invoiceRef,
    invoiceDate: '2025-01-10',
    dueDate: '2025-02-10',
    principalAmount: 1250.5,
    invoiceFileKey: '{{FILE_KEY}}',
    debtorCompanyNo: '01234567',
    attestation: { b2b: true, under10k: true, within6years: true, undisputed: true, attestedBy: 'Jane Smith, Credit Controller' },
    ...overrides,
  };
}
const cases = (...list: Record<string, unknown>[]) => ({ cases: list });
const run = (n: number) => `INV-{{RUN_ID}}-${n}`;
const pdf = { fileName: 'invoice.pdf', contentType: 'application/pdf', contentLength: 1000 };

export const SAMPLE_EVENT_TABLE: Readonly<Record<string, SampleEventRow>> = {
  'get-case.json': { function: 'getCase', status: 200, description: 'read a case with a Bearer key', id: '{{CASE_ID}}' },
  'get-case-x-api-key.json': {
    function: 'getCase',
    status: 200,
    description: 'read a case with the X-Api-Key header',
    id: '{{CASE_ID}}',
    xApiKey: true,
  },
  'get-case-missing-key.json': { function: 'getCase', status: 401, description: 'no API key', id: '{{CASE_ID}}', key: null },
  'get-case-wrong-scope.json': {
    function: 'getCase',
    status: 403,
    description: 'a key with only cases:write',
    id: '{{CASE_ID}}',
    key: 'WRITE_ONLY_API_KEY',
  },
  'get-case-unknown.json': { function: 'getCase', status: 404, description: 'a case id that does not exist', id: UNKNOWN_CASE },
  'list-cases.json': {
    function: 'listCases',
    status: 200,
    description: 'the first page of DRAFT cases, 10 a page',
    query: { limit: ['10'], status: ['DRAFT'] },
  },
  'list-cases-by-invoice-ref.json': {
    function: 'listCases',
    status: 200,
    description: 'find the sample case by its invoiceRef',
    key: 'READ_ONLY_API_KEY',
    query: { invoiceRef: ['{{EXISTING_INVOICE_REF}}'] },
  },
  'list-cases-invalid-query.json': {
    function: 'listCases',
    status: 400,
    description: 'limit 0, an unknown and a repeated parameter',
    query: { limit: ['0'], sort: ['createdAt'], status: ['DRAFT', 'DRAFT'] },
  },
  'list-cases-invalid-cursor.json': {
    function: 'listCases',
    status: 400,
    description: 'a cursor this API did not issue: INVALID_CURSOR',
    query: { cursor: [FOREIGN_CURSOR] },
  },
  'list-cases-wrong-scope.json': {
    function: 'listCases',
    status: 403,
    description: 'a key with only cases:write',
    key: 'WRITE_ONLY_API_KEY',
    query: { invoiceRef: ['{{EXISTING_INVOICE_REF}}'] },
  },
  'create-cases.json': {
    function: 'createCases',
    status: 201,
    description: 'two valid cases',
    body: cases(sampleCase(run(1)), sampleCase(run(2), { principalAmount: 420 })),
  },
  'create-cases-mixed.json': {
    function: 'createCases',
    status: 201,
    description: 'one valid, one due in the future, one failed attestation',
    body: cases(
      sampleCase(run(3)),
      sampleCase(run(4), { dueDate: '2099-01-01' }),
      sampleCase(run(5), {
        attestation: { b2b: true, under10k: true, within6years: true, undisputed: false, attestedBy: 'Jane Smith' },
      }),
    ),
  },
  'create-cases-all-rejected.json': {
    function: 'createCases',
    status: 200,
    description: 'nothing created: amount over 10,000',
    body: cases(sampleCase(run(6), { principalAmount: 10000.01 })),
  },
  'create-cases-duplicate.json': {
    function: 'createCases',
    status: 200,
    description: 'an invoiceRef already being chased: DUPLICATE',
    body: cases(sampleCase('{{EXISTING_INVOICE_REF}}')),
  },
  'create-cases-idempotency-replay.json': {
    function: 'createCases',
    status: 409,
    description: 'an Idempotency-Key used before',
    headers: { 'Idempotency-Key': '{{USED_IDEMPOTENCY_KEY}}' },
    body: cases(sampleCase(run(7))),
  },
  'create-cases-malformed-json.json': {
    function: 'createCases',
    status: 400,
    description: 'a body that is not JSON',
    raw: { contentType: 'application/json', body: '{"cases": [' },
  },
  'create-cases-empty-batch.json': { function: 'createCases', status: 400, description: 'zero cases: BATCH_EMPTY', body: cases() },
  'create-cases-missing-key.json': {
    function: 'createCases',
    status: 401,
    description: 'no API key',
    key: null,
    body: cases(sampleCase(run(8))),
  },
  'create-cases-wrong-scope.json': {
    function: 'createCases',
    status: 403,
    description: 'a key with only cases:read',
    key: 'READ_ONLY_API_KEY',
    body: cases(sampleCase(run(9))),
  },
  'create-cases-wrong-content-type.json': {
    function: 'createCases',
    status: 415,
    description: 'a form body instead of JSON',
    raw: { contentType: 'application/x-www-form-urlencoded', body: 'cases=1' },
  },
  'create-upload.json': {
    function: 'createUpload',
    status: 201,
    description: 'a presigned PUT for a PDF',
    body: { fileName: 'INV-2025-0042.pdf', contentType: 'application/pdf', contentLength: 48213 },
  },
  'create-upload-invalid.json': {
    function: 'createUpload',
    status: 400,
    description: 'bad content type and length',
    body: { fileName: 'invoice.exe', contentType: 'application/x-msdownload', contentLength: 0 },
  },
  'create-upload-wrong-scope.json': {
    function: 'createUpload',
    status: 403,
    description: 'a key with only cases:read',
    key: 'READ_ONLY_API_KEY',
    body: pdf,
  },
  'list-events.json': {
    function: 'listEvents',
    status: 200,
    description: 'the first page of case.created events, 10 a page',
    query: { type: ['case.created'], limit: ['10'] },
  },
  'list-events-invalid-query.json': {
    function: 'listEvents',
    status: 400,
    description: 'limit 0, an unknown and a repeated parameter',
    query: { limit: ['0'], status: ['DRAFT'], type: ['case.created', 'case.updated'] },
  },
  'list-events-invalid-cursor.json': {
    function: 'listEvents',
    status: 400,
    description: 'a cursor this API did not issue: INVALID_CURSOR',
    query: { cursor: [FOREIGN_CURSOR] },
  },
  'list-events-wrong-scope.json': {
    function: 'listEvents',
    status: 403,
    description: 'a key with only cases:write',
    key: 'WRITE_ONLY_API_KEY',
  },
  'get-event-unknown.json': {
    function: 'getEvent',
    status: 404,
    description: 'an event id that does not exist (or is older than 30 days)',
    id: UNKNOWN_EVENT,
  },
  'get-event-wrong-scope.json': {
    function: 'getEvent',
    status: 403,
    description: 'a key with only cases:write',
    key: 'WRITE_ONLY_API_KEY',
    id: UNKNOWN_EVENT,
  },
  'withdraw-case.json': {
    function: 'withdrawCase',
    status: 200,
    description: 'withdraw a case with a reason (again: 200, unchanged)',
    id: '{{WITHDRAW_CASE_ID}}',
    body: { reason: 'Paid directly by the debtor' },
  },
  'withdraw-case-invalid.json': {
    function: 'withdrawCase',
    status: 400,
    description: 'a reason over 500 characters',
    id: '{{WITHDRAW_CASE_ID}}',
    body: { reason: 'x'.repeat(501) },
  },
  'withdraw-case-unknown.json': {
    function: 'withdrawCase',
    status: 404,
    description: 'a case id that does not exist (no body)',
    id: UNKNOWN_CASE,
  },
  'withdraw-case-wrong-scope.json': {
    function: 'withdrawCase',
    status: 403,
    description: 'a key with only cases:read',
    key: 'READ_ONLY_API_KEY',
    id: '{{WITHDRAW_CASE_ID}}',
  },
  'record-payment.json': {
    function: 'recordPayment',
    status: 201,
    description: 'report a 1.00 GBP payment the debtor made directly (each invocation records one more)',
    id: '{{CASE_ID}}',
    body: { amount: 1, paidAt: '2025-03-10', reference: 'BACS 0042' },
  },
  'record-payment-invalid.json': {
    function: 'recordPayment',
    status: 400,
    description: 'an amount finer than a penny, a paidAt before the invoice date and an unknown field',
    id: '{{CASE_ID}}',
    body: { amount: 1.005, paidAt: '2020-01-01', method: 'cheque' },
  },
  'record-payment-unknown.json': {
    function: 'recordPayment',
    status: 404,
    description: 'a case id that does not exist',
    id: UNKNOWN_CASE,
    body: { amount: 1, paidAt: '2025-03-10' },
  },
  'list-case-payments.json': {
    function: 'listCasePayments',
    status: 200,
    description: "a case's payments, oldest first",
    id: '{{CASE_ID}}',
  },
  // The test helpers take test keys only; the sample keys are live ones, so these show the refusals.
  'test-apply-recovery-update-live-key.json': {
    function: 'testApplyRecoveryUpdate',
    status: 404,
    description: 'a live key: the test helper does not exist for it',
    id: '{{CASE_ID}}',
    body: { type: 'recovery_started' },
  },
  'test-apply-recovery-update-wrong-scope.json': {
    function: 'testApplyRecoveryUpdate',
    status: 403,
    description: 'a key with only cases:read',
    key: 'READ_ONLY_API_KEY',
    id: '{{CASE_ID}}',
    body: { type: 'recovery_started' },
  },
  // Webhook routes: the sample company has no endpoint (creating one resolves its URL's name), so these show the refusals.
  'ping-webhook-endpoint-unknown.json': {
    function: 'pingWebhookEndpoint',
    status: 404,
    description: 'an endpoint id that does not exist',
    key: 'WEBHOOKS_API_KEY',
    id: UNKNOWN_ENDPOINT,
  },
  'ping-webhook-endpoint-wrong-scope.json': {
    function: 'pingWebhookEndpoint',
    status: 403,
    description: 'a key without webhooks:manage',
    id: UNKNOWN_ENDPOINT,
  },
  'redeliver-webhook-event-invalid.json': {
    function: 'redeliverWebhookEvent',
    status: 400,
    description: 'an eventId that is not an event id',
    key: 'WEBHOOKS_API_KEY',
    id: UNKNOWN_ENDPOINT,
    body: { eventId: 'case_7Gk2mP9qR4sT8vW1xY3zA5' },
  },
  'redeliver-webhook-event-unknown.json': {
    function: 'redeliverWebhookEvent',
    status: 404,
    description: 'an endpoint id that does not exist',
    key: 'WEBHOOKS_API_KEY',
    id: UNKNOWN_ENDPOINT,
    body: { eventId: UNKNOWN_EVENT },
  },
  'redeliver-webhook-event-wrong-scope.json': {
    function: 'redeliverWebhookEvent',
    status: 403,
    description: 'a key without webhooks:manage',
    id: UNKNOWN_ENDPOINT,
    body: { eventId: UNKNOWN_EVENT },
  },
  'list-webhook-deliveries-unknown.json': {
    function: 'listWebhookDeliveries',
    status: 404,
    description: 'the delivery log of an endpoint id that does not exist',
    key: 'WEBHOOKS_API_KEY',
    id: UNKNOWN_ENDPOINT,
  },
  'list-webhook-deliveries-wrong-scope.json': {
    function: 'listWebhookDeliveries',
    status: 403,
    description: 'a key without webhooks:manage',
    id: UNKNOWN_ENDPOINT,
  },
};

/** The API Gateway REST proxy event of one row: the route's envelope from the manifest, the row's key, query and body. */
export function renderSampleEvent(row: SampleEventRow): Record<string, unknown> {
  const route = ROUTE_MANIFEST[row.function];
  const path = row.id === undefined ? route.resource : route.resource.replace('{id}', row.id);
  if (row.id === undefined && route.resource.includes('{id}')) throw new Error(`${route.resource} needs an id`);
  const key = row.key === undefined ? 'API_KEY' : row.key;
  const headers: Record<string, string> = {};
  const contentType = row.raw?.contentType ?? (row.body === undefined ? undefined : 'application/json');
  if (contentType) headers['Content-Type'] = contentType;
  if (key) headers[row.xApiKey ? 'X-Api-Key' : 'Authorization'] = row.xApiKey ? `{{${key}}}` : `Bearer {{${key}}}`;
  Object.assign(headers, row.headers);
  const query = row.query;
  return {
    resource: route.resource,
    path,
    httpMethod: route.method,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])),
    queryStringParameters: query ? Object.fromEntries(Object.entries(query).map(([name, values]) => [name, values.at(-1)])) : null,
    multiValueQueryStringParameters: query ?? null,
    pathParameters: row.id === undefined ? null : { id: row.id },
    stageVariables: null,
    requestContext: {
      resourceId: 'abc123',
      resourcePath: route.resource,
      httpMethod: route.method,
      extendedRequestId: 'Xyz1AbCdLPEF0Ag=',
      requestTime: '22/Nov/2026:10:00:00 +0000',
      path: `/prod${path}`,
      accountId: '123456789012',
      protocol: 'HTTP/1.1',
      stage: 'prod',
      domainPrefix: 'api',
      requestTimeEpoch: 1795341600000,
      requestId: 'c6af9ac6-7b61-11e6-9a41-93e8deadbeef',
      identity: {
        ...{ cognitoIdentityPoolId: null, accountId: null, cognitoIdentityId: null, caller: null, sourceIp: '203.0.113.10' },
        ...{ principalOrgId: null, accessKey: null, cognitoAuthenticationType: null, cognitoAuthenticationProvider: null },
        ...{ userArn: null, userAgent: 'curl/8.5.0', user: null },
      },
      domainName: 'api.example.com',
      apiId: 'a1b2c3d4e5',
      authorizer: null,
    },
    body: row.raw?.body ?? (row.body === undefined ? null : JSON.stringify(row.body)),
    isBase64Encoded: false,
  };
}

/** A file's text: the event as JSON, two-space indented. */
export function sampleEventText(row: SampleEventRow): string {
  return `${JSON.stringify(renderSampleEvent(row), null, 2)}\n`;
}

/** `npm run events`: rewrites `events/` from the table (and removes files no row names). */
function writeSampleEvents(dir = resolve('events')): void {
  for (const file of readdirSync(dir)) if (file.endsWith('.json') && !SAMPLE_EVENT_TABLE[file]) rmSync(resolve(dir, file));
  for (const [file, row] of Object.entries(SAMPLE_EVENT_TABLE)) writeFileSync(resolve(dir, file), sampleEventText(row));
  console.log(`wrote ${Object.keys(SAMPLE_EVENT_TABLE).length} sample events to ${dir}`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) writeSampleEvents();
