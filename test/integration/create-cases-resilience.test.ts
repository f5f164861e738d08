import { config } from '../../lib/runtime/config.js';
import { DynamoCaseWriter } from '../../lib/adapters/dynamodb/case-writer.js';
import { DynamoIdempotencyStore } from '../../lib/adapters/dynamodb/idempotency-store.js';
import { DynamoReferenceAllocator } from '../../lib/adapters/dynamodb/reference-counter.js';
import { buildCreateCasesHandler } from '../../functions/create-cases.js';
import { caseCreationAdapters } from '../../lib/adapters/production-adapters.js';
import { newPartner, type Partner } from '../support/fixtures.js';
import { checkStorageInvariants, outcome, postCases, uploadInvoice, validCase } from '../support/cases.js';
import { faultyDocumentClient, type Fault } from '../support/faulty-client.js';

/** A create handler whose storage calls go through a fault-injecting client. */
function handlerWithFaults(decide: (commandName: string, input: Record<string, unknown>) => Fault | undefined) {
  const { client, counter } = faultyDocumentClient({ decide });
  const table = config().tableName;
  const deps = caseCreationAdapters();
  const handler = buildCreateCasesHandler({
    ...deps,
    writer: new DynamoCaseWriter(client, table, { maxAttempts: 4, baseDelayMs: 5, maxDelayMs: 20 }),
    idempotency: new DynamoIdempotencyStore(client, table),
    // A block of one: the counter is on every batch's path, so a fault on it reaches each request.
    references: new DynamoReferenceAllocator(client, table, 1),
  });
  return { handler, counter };
}

function invoiceRefOf(input: Record<string, unknown>): string | undefined {
  // At the initialize step the DocumentClient's input is not marshalled yet.
  const items = input.TransactItems as { Put?: { Item?: Record<string, unknown> } }[] | undefined;
  const ref = items?.[0]?.Put?.Item?.invoiceRef;
  return typeof ref === 'string' ? ref : undefined;
}

describe('concurrent submissions', () => {
  let partner: Partner;
  let fileKey: string;
  beforeAll(async () => {
    partner = await newPartner();
    fileKey = await uploadInvoice(partner.apiKey);
  });

  it('create exactly one case when 10 requests carry the same invoiceRef at once', async () => {
    const results = await Promise.all(Array.from({ length: 10 }, () => postCases(partner.apiKey, { cases: [validCase(fileKey, { invoiceRef: 'INV-RACE' })] })));
    const created = results.flatMap((r) => outcome(r).created);
    const rejected = results.flatMap((r) => outcome(r).rejected);
    expect(created).toHaveLength(1);
    expect(rejected).toHaveLength(9);
    expect(new Set(rejected.map((r) => r.code))).toEqual(new Set(['DUPLICATE']));
    expect(new Set(rejected.map((r) => r.existingCaseId))).toEqual(new Set([created[0]!.id]));
  });

  it('let exactly one of 8 requests with one Idempotency-Key proceed', async () => {
    const key = `idem-race-${Date.now()}`;
    const batch = { cases: [validCase(fileKey), validCase(fileKey), validCase(fileKey)] };
    const results = await Promise.all(Array.from({ length: 8 }, () => postCases(partner.apiKey, batch, { 'Idempotency-Key': key })));
    const statuses = results.map((r) => r.statusCode).sort();
    expect(statuses).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
    const winner = results.find((r) => r.statusCode === 201)!;
    expect(outcome(winner).created).toHaveLength(3);
    for (const loser of results.filter((r) => r.statusCode === 409)) {
      expect(loser.body.code).toBe('IDEMPOTENCY_KEY_REUSED');
      expect(['IN_PROGRESS', 'COMPLETED']).toContain(loser.body.state);
      if (loser.body.state === 'IN_PROGRESS') expect(loser.headers['retry-after']).toBeDefined();
    }
    const report = await checkStorageInvariants(new Set([partner.companyId]));
    expect(report.violations).toEqual([]);
  });
});

describe('storage faults during creation', () => {
  let partner: Partner;
  let fileKey: string;
  beforeAll(async () => {
    partner = await newPartner();
    fileKey = await uploadInvoice(partner.apiKey);
  });

  it('report cases whose transaction keeps failing as TEMPORARY_FAILURE, create the rest, and let a resubmission create them once', async () => {
    const failing: Record<string, Fault> = { 'INV-F-THROTTLE': 'throttle', 'INV-F-CONFLICT': 'conflict', 'INV-F-TIMEOUT': 'timeout' };
    const { handler, counter } = handlerWithFaults((name, input) => (name === 'TransactWriteItemsCommand' ? failing[invoiceRefOf(input) ?? ''] : undefined));
    const refs = ['INV-F-OK-1', 'INV-F-THROTTLE', 'INV-F-CONFLICT', 'INV-F-OK-2', 'INV-F-TIMEOUT'];
    const cases = refs.map((invoiceRef) => validCase(fileKey, { invoiceRef }));
    const res = await postCases(partner.apiKey, { cases }, {}, handler);
    expect(res.statusCode).toBe(201);
    const { created, rejected } = outcome(res);
    expect(created.map((c) => c.invoiceRef)).toEqual(['INV-F-OK-1', 'INV-F-OK-2']);
    expect(rejected.map((r) => [r.invoiceRef, r.code])).toEqual([
      ['INV-F-THROTTLE', 'TEMPORARY_FAILURE'],
      ['INV-F-CONFLICT', 'TEMPORARY_FAILURE'],
      ['INV-F-TIMEOUT', 'TEMPORARY_FAILURE'],
    ]);
    expect(counter.injected.throttle + counter.injected.conflict + counter.injected.timeout).toBe(12); // 3 cases x 4 attempts
    expect((await checkStorageInvariants(new Set([partner.companyId]))).violations).toEqual([]);

    const retry = await postCases(partner.apiKey, { cases });
    const again = outcome(retry);
    expect(again.created.map((c) => c.invoiceRef)).toEqual(['INV-F-THROTTLE', 'INV-F-CONFLICT', 'INV-F-TIMEOUT']);
    expect(again.rejected.map((r) => [r.invoiceRef, r.code])).toEqual([
      ['INV-F-OK-1', 'DUPLICATE'],
      ['INV-F-OK-2', 'DUPLICATE'],
    ]);
  });

  it('retry a transaction conflict and succeed without the partner noticing', async () => {
    let conflicts = 0;
    const { handler } = handlerWithFaults((name) => (name === 'TransactWriteItemsCommand' && conflicts++ < 2 ? 'conflict' : undefined));
    const res = await postCases(partner.apiKey, { cases: [validCase(fileKey)] }, {}, handler);
    expect(outcome(res).created).toHaveLength(1);
  });

  it('count a case as created when the write committed but its response was lost', async () => {
    let lost = false;
    const { handler, counter } = handlerWithFaults((name) => {
      if (name !== 'TransactWriteItemsCommand' || lost) return undefined;
      lost = true;
      return 'lost-response';
    });
    const res = await postCases(partner.apiKey, { cases: [validCase(fileKey, { invoiceRef: 'INV-LOST-1' })] }, {}, handler);
    expect(counter.injected['lost-response']).toBe(1);
    expect(outcome(res).created.map((c) => c.invoiceRef)).toEqual(['INV-LOST-1']);
    expect((await checkStorageInvariants(new Set([partner.companyId]))).violations).toEqual([]);
  });

  it('answer 503 with Retry-After and release the Idempotency-Key when storage fails before any case was written', async () => {
    const key = `idem-release-${Date.now()}`;
    const { handler } = handlerWithFaults((name, input) =>
      name === 'UpdateItemCommand' && JSON.stringify(input.Key).includes('COUNTER#') ? 'internal' : undefined,
    );
    const failed = await postCases(partner.apiKey, { cases: [validCase(fileKey)] }, { 'Idempotency-Key': key }, handler);
    expect([failed.statusCode, failed.body.code]).toEqual([503, 'SERVICE_UNAVAILABLE']);
    expect(failed.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
    expect(JSON.stringify(failed.body)).not.toMatch(/COUNTER|Internal server error|partner-case-api-local/);
    const retry = await postCases(partner.apiKey, { cases: [validCase(fileKey)] }, { 'Idempotency-Key': key });
    expect(retry.statusCode).toBe(201);
  });
});
