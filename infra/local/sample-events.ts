import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { AccountsService } from '../../lib/accounts/accounts-service.js';
import { parseApiKey, secretMatches } from '../../lib/auth/api-key.js';
import { hasScope } from '../../lib/auth/scopes.js';
import { config } from '../../lib/runtime/config.js';
import { tableAdapters } from '../../lib/adapters/production-adapters.js';
import { issueFileKey } from '../../lib/uploads/file-key.js';
import { s3Client } from '../../lib/adapters/s3/s3-client.js';
import { API_FUNCTION_IDS, API_FUNCTIONS, memoryOf, type ApiFunctionId } from '../contract/route-table.js';
import { loadFunction, localStackConfig } from './api-routes.js';
import { SAMPLE_EVENT_TABLE } from './sample-event-files.js';
import { invokeWithDeadline, type Invocation } from './invoke-with-deadline.js';
import { lambdaContext } from './lambda-events.js';

/**
 * The sample API Gateway events in `events/` (rendered from sample-event-files.ts): which function
 * each one is for and the status it documents. The same files feed `sam local invoke`, `npm run
 * invoke` and a test that runs every one of them. Events hold placeholders (`{{API_KEY}}`,
 * `{{CASE_ID}}`, ...) instead of secrets; `provisionEventValues` creates keys, an uploaded file and
 * a case in one company of the local stores (the given key's, or a reused sample company) and
 * returns the values to fill them with.
 */
/** Every API function's name (the manifest's), as `npm run invoke` takes it. */
export const FUNCTION_NAMES: readonly string[] = API_FUNCTION_IDS.map((id) => API_FUNCTIONS[id].name);
export type FunctionName = string;

export interface SampleEvent {
  function: FunctionName;
  status: number;
  description: string;
}

export const SAMPLE_EVENTS: Record<string, SampleEvent> = Object.fromEntries(
  Object.entries(SAMPLE_EVENT_TABLE).map(([file, row]) => [
    file,
    { function: API_FUNCTIONS[row.function].name, status: row.status, description: row.description },
  ]),
);

export type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

function functionIdOf(name: FunctionName): ApiFunctionId {
  const id = API_FUNCTION_IDS.find((candidate) => API_FUNCTIONS[candidate].name === name);
  if (!id) throw new Error(`${name} is not a function of route-table.ts`);
  return id;
}

/** Loads a function's handler; call after the environment points at the stores. */
export function loadHandler(name: FunctionName): Promise<Handler> {
  return loadFunction(functionIdOf(name));
}

export function readEventTemplate(file: string): unknown {
  return JSON.parse(readFileSync(resolve('events', file), 'utf8')) as unknown;
}

/** Replaces every `{{NAME}}` in the event's strings; an unknown placeholder is an error. */
export function fillEvent(template: unknown, values: Record<string, string>): APIGatewayProxyEvent {
  const fill = (node: unknown): unknown => {
    if (typeof node === 'string') {
      return node.replace(/\{\{([A-Z_]+)\}\}/g, (_m, name: string) => {
        const value = values[name];
        if (value === undefined) throw new Error(`no value for placeholder {{${name}}}`);
        return value;
      });
    }
    if (Array.isArray(node)) return node.map(fill);
    if (node && typeof node === 'object') return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, fill(v)]));
    return node;
  };
  const event = fill(template) as APIGatewayProxyEvent;
  // Each invocation is its own request.
  return { ...event, requestContext: { ...event.requestContext, requestId: randomUUID() } };
}

export interface InvokeSampleOptions {
  /** Another handler for the sample's function (tests use a deliberately slow one). */
  handler?: Handler;
  /** Another function timeout than the stack's, e.g. to see what a shorter one would do. */
  timeoutMs?: number;
}

/**
 * Runs a sample event through its function as Lambda behind API Gateway would: with the
 * function's timeout and memory from the stack (route-table.ts), and API Gateway's answer when
 * the function overruns, throws or returns a malformed result.
 */
export async function invokeSample(file: string, values: Record<string, string>, options: InvokeSampleOptions = {}): Promise<Invocation> {
  const sample = SAMPLE_EVENTS[file];
  if (!sample) throw new Error(`events/${file} is not listed in SAMPLE_EVENTS`);
  return invokeEvent(sample.function, readEventTemplate(file), values, options);
}

/**
 * Runs a function on an event template (any file, e.g. one outside events/) filled with values, as
 * Lambda behind API Gateway would: with the function's timeout and memory from the stack
 * (route-table.ts), and API Gateway's answer when the function overruns, throws or returns a
 * malformed result.
 */
export async function invokeEvent(
  name: FunctionName,
  template: unknown,
  values: Record<string, string>,
  options: InvokeSampleOptions = {},
): Promise<Invocation> {
  const fn = API_FUNCTIONS[functionIdOf(name)];
  const handler = options.handler ?? (await loadHandler(name));
  return invokeWithDeadline(handler, fillEvent(template, values), {
    functionName: fn.name,
    timeoutMs: options.timeoutMs ?? fn.timeoutSeconds * 1000,
    memoryMb: memoryOf(fn, localStackConfig()),
  });
}

/** What `npm run invoke` prints for an invocation, and its exit code (1 when the function failed). */
export function reportInvocation(file: string, invocation: Invocation): { stdout: string; stderr: string[]; exitCode: number } {
  const { result } = invocation;
  let body: unknown = result.body;
  try {
    body = JSON.parse(result.body);
  } catch {
    // not JSON: print as is
  }
  const stdout = JSON.stringify({ statusCode: result.statusCode, headers: result.headers, body }, null, 2);
  const sample = SAMPLE_EVENTS[file];
  const documented = sample
    ? `(documented status for ${file}: ${sample.status} — ${sample.description})`
    : `(${file} is not one of the sample events in events/: no documented status to check)`;
  if (invocation.outcome === 'answered') return { stdout, stderr: [documented], exitCode: 0 };
  return {
    stdout,
    stderr: [
      `${invocation.outcome}: ${invocation.failure ?? ''}`,
      `API Gateway answers the caller ${result.statusCode} (above).`,
      documented,
    ],
    exitCode: 1,
  };
}

/** The one company the sample events use when no API_KEY is given; found again on every run. */
export const SAMPLE_COMPANY_NAME = 'Sample Events Ltd';

export interface ProvisionOptions {
  /** A read+write key of the local stack: then every value belongs to that key's company. */
  apiKey?: string;
}

/**
 * Everything the sample events refer to, all in one company: four keys (read+write, read-only,
 * write-only, webhooks:manage), an uploaded invoice, one case, and an Idempotency-Key already used. With
 * `apiKey` the company is that key's and the key itself is the read+write one; without, it is
 * the sample company (created on the first run only). The one-scope keys are new on each run.
 */
export async function provisionEventValues(options: ProvisionOptions = {}): Promise<Record<string, string>> {
  const cfg = config();
  const stores = tableAdapters(cfg);
  const accounts = new AccountsService(stores.companies, stores.keys);
  let companyId: string;
  let readWriteKey: string;
  if (options.apiKey) {
    // Never repeat the key in an error: it is a secret.
    const parsed = parseApiKey(options.apiKey);
    const record = parsed ? await stores.keys.get(parsed.keyId) : undefined;
    if (!parsed || !record || record.revoked || !secretMatches(parsed.secret, record.secretHash)) {
      throw new Error('API_KEY is not a usable key of this local stack (mistyped, unknown or revoked); unset it to use the sample company');
    }
    if (!hasScope(record.scopes, 'cases:read') || !hasScope(record.scopes, 'cases:write')) {
      throw new Error(`API_KEY (key ${parsed.keyId}) needs both cases:read and cases:write to fill the sample events`);
    }
    companyId = record.companyId;
    readWriteKey = options.apiKey;
  } else {
    const existing = (await accounts.listCompanies()).find((c) => c.name === SAMPLE_COMPANY_NAME);
    companyId = existing?.companyId ?? (await accounts.createCompany(SAMPLE_COMPANY_NAME)).companyId;
    readWriteKey = (await accounts.createKey(companyId, ['cases:read', 'cases:write'])).apiKey;
  }
  const [readOnly, writeOnly, webhooks] = await Promise.all([
    accounts.createKey(companyId, ['cases:read']),
    accounts.createKey(companyId, ['cases:write']),
    accounts.createKey(companyId, ['webhooks:manage']),
  ]);
  const fileKey = issueFileKey(companyId, 'application/pdf');
  await s3Client(cfg).send(
    new PutObjectCommand({ Bucket: cfg.bucketName, Key: fileKey, Body: '%PDF-1.4\n% sample invoice\n', ContentType: 'application/pdf' }),
  );

  const runId = randomUUID().slice(0, 8);
  const values: Record<string, string> = {
    API_KEY: readWriteKey,
    READ_ONLY_API_KEY: readOnly.apiKey,
    WRITE_ONLY_API_KEY: writeOnly.apiKey,
    WEBHOOKS_API_KEY: webhooks.apiKey,
    FILE_KEY: fileKey,
    RUN_ID: runId,
    EXISTING_INVOICE_REF: `INV-${runId}-EXISTING`,
    USED_IDEMPOTENCY_KEY: `sample-${runId}`,
  };

  // The case that get-case reads, list-cases-by-invoice-ref finds and create-cases-duplicate collides with, created with the
  // Idempotency-Key that create-cases-idempotency-replay then reuses.
  const create = await loadHandler('create-cases');
  const template = readEventTemplate('create-cases-duplicate.json') as APIGatewayProxyEvent;
  const seed = fillEvent(
    {
      ...template,
      headers: { ...template.headers, 'Idempotency-Key': '{{USED_IDEMPOTENCY_KEY}}' },
      multiValueHeaders: { ...template.multiValueHeaders, 'Idempotency-Key': ['{{USED_IDEMPOTENCY_KEY}}'] },
    },
    values,
  );
  const seeded = await create(seed, lambdaContext({ functionName: 'create-cases' }));
  const created = (JSON.parse(seeded.body) as { created?: { id: string }[] }).created?.[0];
  if (seeded.statusCode !== 201 || !created) throw new Error(`could not create the sample case: ${seeded.statusCode} ${seeded.body}`);
  values.CASE_ID = created.id;

  // A case of its own for withdraw-case, so withdrawing it leaves the one above holding its invoiceRef.
  const toWithdraw = await create(
    fillEvent(template, { ...values, EXISTING_INVOICE_REF: `INV-${runId}-TO-WITHDRAW` }),
    lambdaContext({ functionName: 'create-cases' }),
  );
  const withdrawable = (JSON.parse(toWithdraw.body) as { created?: { id: string }[] }).created?.[0];
  if (toWithdraw.statusCode !== 201 || !withdrawable)
    throw new Error(`could not create the case to withdraw: ${toWithdraw.statusCode} ${toWithdraw.body}`);
  values.WITHDRAW_CASE_ID = withdrawable.id;
  return values;
}
