import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../lib/runtime/config.js';
import { documentClient } from '../../lib/adapters/dynamodb/dynamo-client.js';
import { DynamoCaseWriter } from '../../lib/adapters/dynamodb/case-writer.js';
import { ITEM_TYPES, keys } from '../../lib/adapters/dynamodb/table-keys.js';
import { DynamoIdempotencyStore } from '../../lib/adapters/dynamodb/idempotency-store.js';
import { DynamoReferenceAllocator } from '../../lib/adapters/dynamodb/reference-allocator.js';
import { buildCreateCasesHandler } from '../../functions/create-cases.js';
import { caseCreationAdapters } from '../../lib/adapters/production-adapters.js';
import { lambdaContext as functionContext } from '../../infra/local/lambda-events.js';
import type { ApiContext } from '../../lib/http/types.js';
import { newPartner, parse, type Partner } from '../support/fixtures.js';
import {
  checkStorageInvariants,
  createEvent,
  outcome,
  postCases,
  readCase,
  scanTable,
  uploadInvoice,
  validCase,
} from '../support/cases.js';
import { checkedInvoke } from '../support/contract.js';
import { faultyDocumentClient, type Fault, type FaultyClientOptions } from '../support/faulty-client.js';

/** A create handler whose storage calls go through a fault-injecting client. */
function handlerWithFaults(
  decide: (commandName: string, input: Record<string, unknown>) => Fault | Error | undefined,
  options: FaultyClientOptions = {},
) {
  const { client, counter, lateWrites } = faultyDocumentClient({ decide }, options);
  const table = config().tableName;
  const deps = caseCreationAdapters();
  const handler = buildCreateCasesHandler({
    ...deps,
    writer: new DynamoCaseWriter(client, table, { maxAttempts: 4, baseDelayMs: 5, maxDelayMs: 20 }),
    idempotency: new DynamoIdempotencyStore(client, table),
    // A block of one: the counter is on every batch's path, so a fault on it reaches each request.
    references: new DynamoReferenceAllocator(client, table, 1),
  });
  return { handler, counter, lateWrites };
}

/** The invoiceRefs a case transaction writes (the fault client hands plans plain items: test/support/plain-items.ts). */
function invoiceRefsOf(input: Record<string, unknown>): string[] {
  const items = (input.TransactItems ?? []) as { Put?: { Item?: Record<string, unknown> } }[];
  return items.flatMap((i) =>
    i.Put?.Item?.type === ITEM_TYPES.invoiceRefGuard && typeof i.Put.Item.invoiceRef === 'string' ? [i.Put.Item.invoiceRef] : [],
  );
}

describe('concurrent submissions', () => {
  let partner: Partner;
  let fileKey: string;
  beforeAll(async () => {
    partner = await newPartner();
    fileKey = await uploadInvoice(partner.apiKey);
  });

  it('create exactly one case when 10 requests carry the same invoiceRef at once', async () => {
    const results = await Promise.all(
      Array.from({ length: 10 }, () => postCases(partner.apiKey, { cases: [validCase(fileKey, { invoiceRef: 'INV-RACE' })] })),
    );
    const created = results.flatMap((r) => outcome(r).created);
    const rejected = results.flatMap((r) => outcome(r).rejected);
    expect(created).toHaveLength(1);
    expect(rejected).toHaveLength(9);
    expect(new Set(rejected.map((r) => r.code))).toEqual(new Set(['DUPLICATE']));
    expect(new Set(rejected.map((r) => r.existingCaseId))).toEqual(new Set([created[0]!.id]));
  });

  it('create exactly 150 cases when two 100-case batches sharing 50 invoiceRefs race, through transaction conflicts, and answer each case exactly', async () => {
    // The first attempt of every transaction round is refused as a TransactionConflict (DynamoDB
    // Local serialises transactions, so a real conflict never happens here); the retry then meets
    // whatever the other batch committed meanwhile.
    const conflicted = new Set<string>();
    const { handler, counter } = handlerWithFaults((name, input) => {
      if (name !== 'TransactWriteItemsCommand') return undefined;
      const token = String(input.ClientRequestToken);
      if (conflicted.has(token)) return undefined;
      conflicted.add(token);
      return 'conflict';
    });
    const shared = Array.from({ length: 50 }, (_, i) => `RACE-S-${i}`);
    const own = (tag: string) => Array.from({ length: 50 }, (_, i) => `RACE-${tag}-${i}`);
    // Interleaved, and the shared refs in opposite orders: each batch's shared refs are spread over all four of its transactions.
    const refsA = shared.flatMap((ref, i) => [ref, own('A')[i]!]);
    const refsB = [...shared].reverse().flatMap((ref, i) => [own('B')[i]!, ref]);
    const [resA, resB] = await Promise.all(
      [refsA, refsB].map((refs) =>
        postCases(partner.apiKey, { cases: refs.map((invoiceRef) => validCase(fileKey, { invoiceRef })) }, {}, handler),
      ),
    );
    const a = outcome(resA!);
    const b = outcome(resB!);
    // One conflict per round: the 8 first rounds, and at least one further round, because each
    // duplicate was dropped from a cancelled transaction that also held cases of the batch's own.
    expect(counter.injected.conflict).toBeGreaterThan(8);

    const createdBy = new Map<string, { id: string; reference: string }>();
    for (const c of [...a.created, ...b.created]) {
      expect(createdBy.has(c.invoiceRef as string)).toBe(false);
      createdBy.set(c.invoiceRef as string, { id: c.id, reference: c.reference });
    }
    expect(createdBy.size).toBe(150);
    for (const { created, rejected, refs, own: ownRefs } of [
      { ...a, refs: refsA, own: own('A') },
      { ...b, refs: refsB, own: own('B') },
    ]) {
      expect([...created, ...rejected].map((item) => item.index).sort((x, y) => x - y)).toEqual(refs.map((_, i) => i));
      for (const ref of ownRefs) expect(created.map((c) => c.invoiceRef)).toContain(ref);
      for (const r of rejected) {
        const winner = createdBy.get(r.invoiceRef as string)!;
        expect({ ref: r.invoiceRef, code: r.code, existingCaseId: r.existingCaseId, existingReference: r.existingReference }).toEqual({
          ref: r.invoiceRef,
          code: 'DUPLICATE',
          existingCaseId: winner.id,
          existingReference: winner.reference,
        });
      }
    }
    expect(a.rejected.length + b.rejected.length).toBe(50);

    const cases = (await scanTable()).filter(
      (item) => item.type === ITEM_TYPES.case && item.companyId === partner.companyId && String(item.invoiceRef).startsWith('RACE-'),
    );
    expect(cases).toHaveLength(150);
    expect(new Set(cases.map((c) => c.invoiceRef)).size).toBe(150);
    for (const c of cases) expect(createdBy.get(c.invoiceRef as string)?.id).toBe(c.caseId);
    expect((await checkStorageInvariants(new Set([partner.companyId]))).violations).toEqual([]);
  }, 30_000); // 200 cases in conflicting transactions, beside the verification worker reading the same stream: not a timing target.

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

  it('report the cases of a transaction that keeps failing as TEMPORARY_FAILURE, create the rest, and let a resubmission create them once', async () => {
    // 100 cases are four transactions of 25; the first three each hold one of these refs and keep failing.
    const failing: Record<string, Fault> = { 'INV-F-THROTTLE': 'throttle', 'INV-F-CONFLICT': 'conflict', 'INV-F-TIMEOUT': 'timeout' };
    const { handler, counter } = handlerWithFaults((name, input) =>
      name === 'TransactWriteItemsCommand'
        ? invoiceRefsOf(input)
            .map((ref) => failing[ref])
            .find((f) => f !== undefined)
        : undefined,
    );
    const refs = Array.from({ length: 100 }, (_, i) =>
      i === 0 ? 'INV-F-THROTTLE' : i === 25 ? 'INV-F-CONFLICT' : i === 50 ? 'INV-F-TIMEOUT' : `INV-F-OK-${i}`,
    );
    const cases = refs.map((invoiceRef) => validCase(fileKey, { invoiceRef }));
    const res = await postCases(partner.apiKey, { cases }, {}, handler);
    expect(res.statusCode).toBe(201);
    const { created, rejected } = outcome(res);
    expect(created.map((c) => c.invoiceRef)).toEqual(refs.slice(75));
    expect(rejected.map((r) => r.invoiceRef)).toEqual(refs.slice(0, 75));
    expect(new Set(rejected.map((r) => r.code))).toEqual(new Set(['TEMPORARY_FAILURE']));
    // 3 transactions x 4 attempts, and one more for the timed-out one, 5 s after its first: a
    // timeout may be a transaction still being applied, and only an answer to its token settles it.
    expect(counter.injected.throttle + counter.injected.conflict).toBe(8);
    expect(counter.injected.timeout).toBe(5);
    // Throttled and conflicting attempts were answered, so nothing was written for their cases; the
    // timed-out transaction was never answered, so its cases may exist, and the answer says so.
    for (const r of rejected.slice(0, 50)) expect(r.message).toMatch(/nothing was written for this case/);
    for (const r of rejected.slice(50)) expect(r.message).toMatch(/could not confirm whether this case was written/);
    expect((await checkStorageInvariants(new Set([partner.companyId]))).violations).toEqual([]);

    const retry = await postCases(partner.apiKey, { cases });
    const again = outcome(retry);
    expect(again.created.map((c) => c.invoiceRef)).toEqual(refs.slice(0, 75));
    expect(again.rejected.map((r) => [r.invoiceRef, r.code])).toEqual(refs.slice(75).map((ref) => [ref, 'DUPLICATE']));
  }, 30_000);

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

  it('answer 503 and give the Idempotency-Key back only when no write of the batch can still land', async () => {
    const key = `idem-refused-${Date.now()}`;
    // Every attempt is refused outright (throttled): DynamoDB answered each, nothing is in flight.
    const { handler } = handlerWithFaults((name) => (name === 'TransactWriteItemsCommand' ? 'throttle' : undefined));
    const failed = await postCases(
      partner.apiKey,
      { cases: [validCase(fileKey, { invoiceRef: 'INV-REFUSED' })] },
      { 'Idempotency-Key': key },
      handler,
    );
    expect([failed.statusCode, failed.body.code]).toEqual([503, 'SERVICE_UNAVAILABLE']);
    expect(await claimOf(partner, key)).toBeUndefined();
  });
});

/** The Idempotency-Key claim as stored, read consistently. */
async function claimOf(partner: Partner, key: string) {
  const read = new GetCommand({
    TableName: config().tableName,
    Key: keys.idempotencyClaim('live', partner.companyId, key),
    ConsistentRead: true,
  });
  return (await documentClient(config()).send(read)).Item;
}

/** A request run with a function timeout of `timeoutMs` (the deadline counts down from it). */
async function postWithTimeout(
  handler: NonNullable<Parameters<typeof postCases>[3]>,
  apiKey: string,
  body: unknown,
  headers: Record<string, string>,
  timeoutMs: number,
) {
  const context = functionContext({ functionName: 'create-cases', memoryMb: 256, timeoutMs }) as ApiContext;
  return parse(await checkedInvoke(handler, createEvent(apiKey, body, headers), context));
}

describe('a case transaction that may still land after the client gave up on it', () => {
  let partner: Partner;
  let fileKey: string;
  beforeAll(async () => {
    partner = await newPartner();
    fileKey = await uploadInvoice(partner.apiKey);
  });

  /** The first attempt of every transaction is given up on by the client and lands `lateCommitMs` later; same-token attempts meanwhile answer TransactionInProgress. */
  function handlerLandingLate(lateCommitMs: number) {
    const tried = new Set<string>();
    return handlerWithFaults(
      (name, input) => {
        if (name !== 'TransactWriteItemsCommand' || tried.has(String(input.ClientRequestToken))) return undefined;
        tried.add(String(input.ClientRequestToken));
        return 'late-commit';
      },
      { lateCommitMs },
    );
  }

  it('is reported as "could not confirm", never "nothing was written", and keeps its Idempotency-Key, when there is no time to settle it', async () => {
    // A 4 s function: its deadline leaves no time for a same-token attempt 5 s after the first.
    const { handler, counter, lateWrites } = handlerLandingLate(1_000);
    const key = `idem-late-${Date.now()}`;
    const cases = [validCase(fileKey, { invoiceRef: 'INV-LATE-1' })];
    const first = await postWithTimeout(handler, partner.apiKey, { cases }, { 'Idempotency-Key': key }, 4_000);
    expect(counter.injected['late-commit']).toBe(1);
    expect(counter.injected['in-progress']).toBeGreaterThan(0);
    expect(first.statusCode).toBe(200);
    const [rejected] = outcome(first).rejected;
    expect(rejected).toMatchObject({
      code: 'TEMPORARY_FAILURE',
      message: expect.stringMatching(/could not confirm whether this case was written/),
    });
    expect(rejected!.message).not.toMatch(/nothing was written/);
    // The key is completed with that answer, not given back: a retry with it creates nothing.
    expect(await claimOf(partner, key)).toMatchObject({ state: 'COMPLETED' });
    const replay = await postCases(partner.apiKey, { cases }, { 'Idempotency-Key': key });
    expect([replay.statusCode, replay.body.state]).toEqual([409, 'COMPLETED']);

    // DynamoDB finishes the transaction: the case exists, and a resubmission names it.
    await lateWrites();
    expect(counter.landed).toBe(1);
    const again = outcome(await postCases(partner.apiKey, { cases }));
    expect(again.rejected[0]).toMatchObject({ code: 'DUPLICATE', existingCaseId: expect.stringMatching(/^case_/) });
    expect((await readCase(partner.apiKey, again.rejected[0]!.existingCaseId!)).statusCode).toBe(200);
    expect((await checkStorageInvariants(new Set([partner.companyId]))).violations).toEqual([]);
  });

  it('stays "could not confirm" when a later attempt is cancelled for a conflict while the first is still on its way', async () => {
    // The first attempt is given up on before DynamoDB has seen it; the retry meets a conflict and
    // then throttling. A conflict says nothing of the attempt still travelling, which lands later.
    const tries = new Map<string, number>();
    const { handler, counter, lateWrites } = handlerWithFaults(
      (name, input) => {
        if (name !== 'TransactWriteItemsCommand') return undefined;
        const token = String(input.ClientRequestToken);
        const n = (tries.get(token) ?? 0) + 1;
        tries.set(token, n);
        return n === 1 ? 'late-commit' : n === 2 ? 'conflict' : 'throttle';
      },
      { lateCommitMs: 1_000, lateCommitUnseen: true },
    );
    const key = `idem-unseen-${Date.now()}`;
    const cases = [validCase(fileKey, { invoiceRef: 'INV-LATE-UNSEEN' })];
    const first = await postWithTimeout(handler, partner.apiKey, { cases }, { 'Idempotency-Key': key }, 4_000);
    expect([counter.injected['late-commit'], counter.injected.conflict]).toEqual([1, 1]);
    expect(first.statusCode).toBe(200);
    expect(outcome(first).rejected[0]).toMatchObject({
      code: 'TEMPORARY_FAILURE',
      message: expect.stringMatching(/could not confirm whether this case was written/),
    });
    expect(await claimOf(partner, key)).toMatchObject({ state: 'COMPLETED' });
    await lateWrites();
    expect(counter.landed).toBe(1);
    const again = outcome(await postCases(partner.apiKey, { cases }));
    expect(again.rejected[0]).toMatchObject({ code: 'DUPLICATE' });
  });

  it('is settled by one more same-token attempt 5 s after the first, and its case reported created', async () => {
    const { handler, counter, lateWrites } = handlerLandingLate(1_000);
    const key = `idem-settled-${Date.now()}`;
    const started = Date.now();
    const res = await postCases(
      partner.apiKey,
      { cases: [validCase(fileKey, { invoiceRef: 'INV-LATE-2' })] },
      { 'Idempotency-Key': key },
      handler,
    );
    await lateWrites();
    expect(counter.landed).toBe(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(5_000);
    expect(res.statusCode).toBe(201);
    const [created] = outcome(res).created;
    expect(created?.invoiceRef).toBe('INV-LATE-2');
    expect((await readCase(partner.apiKey, created!.id)).statusCode).toBe(200);
    expect(await claimOf(partner, key)).toMatchObject({ state: 'COMPLETED' });
  }, 20_000);
});

describe('a transaction DynamoDB refuses for one of its cases', () => {
  let partner: Partner;
  let fileKey: string;
  beforeAll(async () => {
    partner = await newPartner();
    fileKey = await uploadInvoice(partner.apiKey);
  });

  it('fails that case alone and creates the others of its transaction', async () => {
    // DynamoDB cancels any transaction holding INV-V-BAD: a ValidationError on that case's record, no reason for the rest.
    const { handler } = handlerWithFaults((name, input) => {
      if (name !== 'TransactWriteItemsCommand') return undefined;
      const items = (input.TransactItems ?? []) as { Put?: { Item?: Record<string, unknown> } }[];
      const bad = items.findIndex((i) => i.Put?.Item?.type === ITEM_TYPES.case && i.Put.Item.invoiceRef === 'INV-V-BAD');
      if (bad < 0) return undefined;
      return new TransactionCanceledException({
        message: 'Transaction cancelled, please refer cancellation reasons for specific reasons [None, ValidationError, None]',
        $metadata: { httpStatusCode: 400 },
        CancellationReasons: items.map((_, i) =>
          i === bad ? { Code: 'ValidationError', Message: 'Item size has exceeded the maximum allowed size' } : { Code: 'None' },
        ),
      });
    });
    const refs = ['INV-V-1', 'INV-V-BAD', 'INV-V-2'];
    const res = await postCases(partner.apiKey, { cases: refs.map((invoiceRef) => validCase(fileKey, { invoiceRef })) }, {}, handler);
    expect(res.statusCode).toBe(201);
    const { created, rejected } = outcome(res);
    expect(created.map((c) => c.invoiceRef)).toEqual(['INV-V-1', 'INV-V-2']);
    expect(rejected.map((r) => [r.invoiceRef, r.code])).toEqual([['INV-V-BAD', 'TEMPORARY_FAILURE']]);
    expect(rejected[0]!.message).toMatch(/nothing was written/);
    expect((await checkStorageInvariants(new Set([partner.companyId]))).violations).toEqual([]);
  });

  it('fails a case whose event DynamoDB refuses, writing neither the case nor its event, and creates the others each with its event', async () => {
    // The refused item is INV-V-EVT's event (the fourth action of its case): its case must not exist without it.
    const { handler } = handlerWithFaults((name, input) => {
      if (name !== 'TransactWriteItemsCommand') return undefined;
      const items = (input.TransactItems ?? []) as { Put?: { Item?: Record<string, unknown> } }[];
      const bad = items.findIndex((i) => i.Put?.Item?.type === ITEM_TYPES.event && String(i.Put.Item.payload).includes('"INV-V-EVT"'));
      if (bad < 0) return undefined;
      return new TransactionCanceledException({
        message: 'Transaction cancelled, please refer cancellation reasons for specific reasons',
        $metadata: { httpStatusCode: 400 },
        CancellationReasons: items.map((_, i) =>
          i === bad ? { Code: 'ValidationError', Message: 'Item size has exceeded the maximum allowed size' } : { Code: 'None' },
        ),
      });
    });
    const refs = ['INV-V-EVT-OK-1', 'INV-V-EVT', 'INV-V-EVT-OK-2'];
    const res = await postCases(partner.apiKey, { cases: refs.map((invoiceRef) => validCase(fileKey, { invoiceRef })) }, {}, handler);
    const { created, rejected } = outcome(res);
    expect(created.map((c) => c.invoiceRef)).toEqual(['INV-V-EVT-OK-1', 'INV-V-EVT-OK-2']);
    expect(rejected.map((r) => [r.invoiceRef, r.code])).toEqual([['INV-V-EVT', 'TEMPORARY_FAILURE']]);
    const items = (await scanTable()).filter((i) => i.companyId === partner.companyId);
    expect(items.filter((i) => i.invoiceRef === 'INV-V-EVT')).toEqual([]);
    const events = items.filter((i) => i.type === ITEM_TYPES.event).map((i) => i.caseId);
    for (const c of created) expect(events).toContain(c.id);
    expect((await checkStorageInvariants(new Set([partner.companyId]))).violations).toEqual([]);
  });
});
