import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { buildCreateCasesHandler } from '../../functions/create-cases.js';
import { buildGetCaseHandler } from '../../functions/get-case.js';
import { invokeWithDeadline, type LambdaHandler } from '../../infra/local/invoke-with-deadline.js';
import { DynamoApiKeyStore } from '../../lib/adapters/dynamodb/api-key-store.js';
import { DynamoCaseReader } from '../../lib/adapters/dynamodb/case-reader.js';
import { DynamoCaseWriter } from '../../lib/adapters/dynamodb/case-writer.js';
import { DynamoCompanyStore } from '../../lib/adapters/dynamodb/company-store.js';
import { documentClient } from '../../lib/adapters/dynamodb/dynamo-client.js';
import { DynamoIdempotencyStore } from '../../lib/adapters/dynamodb/idempotency-store.js';
import { DynamoReferenceAllocator } from '../../lib/adapters/dynamodb/reference-allocator.js';
import { keys } from '../../lib/adapters/dynamodb/table-keys.js';
import { caseCreationAdapters } from '../../lib/adapters/production-adapters.js';
import { config } from '../../lib/runtime/config.js';
import { createEvent, outcome, uploadInvoice, validCase } from '../support/cases.js';
import { faultyDocumentClient, type Fault } from '../support/faulty-client.js';
import { apiEvent, bearer, newPartner, parse, type Partner } from '../support/fixtures.js';
import { recordCounts } from './summary.js';

/**
 * Product rules "Availability and deadlines", against DynamoDB Local made to behave as DynamoDB
 * can: reads that are eventually consistent, and calls slower than the request has time for.
 */
let invariantsChecked = 0;
afterAll(() => recordCounts('deadlines-and-consistency', { invariantsChecked }));

const table = () => config().tableName;
let partner: Partner;
let fileKey: string;
beforeAll(async () => {
  partner = await newPartner();
  fileKey = await uploadInvoice(partner.apiKey);
});

/** Both handlers over one faulty client, as one Lambda container's stores would share one. */
function handlersOver(client: ReturnType<typeof faultyDocumentClient>['client']) {
  const t = table();
  const stores = {
    ...caseCreationAdapters(),
    keys: new DynamoApiKeyStore(client, t),
    companies: new DynamoCompanyStore(client, t),
    writer: new DynamoCaseWriter(client, t),
    idempotency: new DynamoIdempotencyStore(client, t),
    // A block of one: the counter is on every batch's path, so a slow counter reaches each request.
    references: new DynamoReferenceAllocator(client, t, 1),
  };
  return {
    create: buildCreateCasesHandler(stores) as unknown as LambdaHandler,
    get: buildGetCaseHandler({ keys: stores.keys, caseReader: new DynamoCaseReader(client, t) }) as unknown as LambdaHandler,
  };
}

describe('read-your-writes under eventual consistency', () => {
  const ROUNDS = process.env.DEEP ? 5_000 : 1_000;

  it(`never answers 404 for a case just reported created, over ${ROUNDS} create-then-read rounds`, async () => {
    // Every write of this client stays invisible to inconsistent reads for a minute: far longer
    // than DynamoDB's usual lag, so any read on the partner's path that is not strongly
    // consistent misses the case it follows.
    const { client, counter } = faultyDocumentClient({ decide: () => undefined }, { staleReadWindowMs: 60_000 });
    const { create, get } = handlersOver(client);
    const statuses: Record<number, number> = {};
    const round = async (i: number) => {
      const created = await invokeWithDeadline(
        create,
        createEvent(partner.apiKey, { cases: [validCase(fileKey, { invoiceRef: `RYW-${Date.now()}-${i}` })] }),
        { functionName: 'create-cases', timeoutMs: 15_000 },
      );
      expect(created.result.statusCode).toBe(201);
      const id = outcome(parse(created.result)).created[0]!.id;
      const read = await invokeWithDeadline(
        get,
        apiEvent({
          method: 'GET',
          path: `/api/v1/cases/${id}`,
          resource: '/api/v1/cases/{id}',
          pathParameters: { id },
          headers: bearer(partner.apiKey),
        }),
        { functionName: 'get-case', timeoutMs: 6_000 },
      );
      statuses[read.result.statusCode] = (statuses[read.result.statusCode] ?? 0) + 1;
      invariantsChecked++;
      return id;
    };
    const ids: string[] = [];
    for (let start = 0; start < ROUNDS; start += 10) {
      ids.push(...(await Promise.all(Array.from({ length: Math.min(10, ROUNDS - start) }, (_, k) => round(start + k)))));
    }
    expect(statuses).toEqual({ 200: ROUNDS });
    // The mode is live: an eventually consistent read of the same items would have missed them. The newest case is
    // asked: the first one's write may be older than the 60 s window when a busy machine takes over a minute for the rounds.
    const stale = await client.send(new GetCommand({ TableName: table(), Key: keys.case('live', ids[ids.length - 1]!) }));
    expect(stale.Item).toBeUndefined();
    expect(counter.staleReads).toBeGreaterThan(0);
  }, 300_000);
});

describe('storage slower than the request has time for', () => {
  const TIMEOUT_MS = 4_000;
  /** A client whose calls matching `slow` take a minute, unless the request's deadline aborts them. */
  function slowWhere(slow: (name: string, input: Record<string, unknown>) => boolean) {
    return faultyDocumentClient(
      { decide: (name, input): Fault | undefined => (slow(name, input) ? 'slow' : undefined) },
      { slowCallMs: 60_000 },
    );
  }
  const isClaim = (input: Record<string, unknown>) => JSON.stringify(input.Key ?? input.Item ?? {}).includes('IDEMPOTENCY#');
  const invoke = (handler: LambdaHandler, cases: unknown[], key: string) =>
    invokeWithDeadline(handler, createEvent(partner.apiKey, { cases }, { 'Idempotency-Key': key }), {
      functionName: 'create-cases',
      timeoutMs: TIMEOUT_MS,
    });
  const claimState = async (key: string) =>
    (
      await documentClient(config()).send(
        new GetCommand({ TableName: table(), Key: keys.idempotencyClaim('live', partner.companyId, key), ConsistentRead: true }),
      )
    ).Item;

  it('answers 503 with Retry-After before the timeout when the claim cannot be made in time, and leaves the key free', async () => {
    const { client, counter } = slowWhere((name, input) => name === 'PutItemCommand' && isClaim(input));
    const key = `slow-claim-${Date.now()}`;
    const run = await invoke(handlersOver(client).create, [validCase(fileKey)], key);
    expect(run.outcome).toBe('answered');
    expect(run.result.statusCode).toBe(503);
    expect(parse(run.result)).toMatchObject({
      headers: { 'retry-after': expect.stringMatching(/^\d+$/) },
      body: { code: 'SERVICE_UNAVAILABLE' },
    });
    expect(counter.injected.slow).toBeGreaterThan(0);
    expect(await claimState(key)).toBeUndefined();
    invariantsChecked++;
  });

  it('answers TEMPORARY_FAILURE items before the timeout when the case writes cannot be made in time, and completes the key', async () => {
    const { client } = slowWhere((name) => name === 'TransactWriteItemsCommand');
    const key = `slow-write-${Date.now()}`;
    const cases = [validCase(fileKey), validCase(fileKey)];
    const run = await invoke(handlersOver(client).create, cases, key);
    expect(run.outcome).toBe('answered');
    expect(run.result.statusCode).toBe(200);
    const { rejected } = outcome(parse(run.result));
    expect(rejected.map((r) => r.code)).toEqual(['TEMPORARY_FAILURE', 'TEMPORARY_FAILURE']);
    // Cut off in flight, a transaction may still land: the answer promises only that resubmitting is safe.
    for (const r of rejected) expect(r.message).toMatch(/could not confirm/);
    expect(await claimState(key)).toMatchObject({ state: 'COMPLETED' });
    // Resubmitting is safe and creates each case once.
    const again = parse((await invoke(handlersOver(documentClient(config())).create, cases, `${key}-retry`)).result);
    expect(outcome(again).created).toHaveLength(2);
    invariantsChecked++;
  });

  it('completes the Idempotency-Key even when reading back an unconfirmed write stalls until the answer must leave', async () => {
    // Every case transaction times out (its outcome unknown); the read-back of its guards then hangs.
    const isGuardRead = (name: string, input: Record<string, unknown>) =>
      name === 'BatchGetItemCommand' && JSON.stringify(input.RequestItems ?? {}).includes('INVREF#');
    const { client, counter } = faultyDocumentClient({
      decide: (name, input): Fault | undefined =>
        name === 'TransactWriteItemsCommand' ? 'timeout' : isGuardRead(name, input) ? 'slow' : undefined,
    });
    const key = `slow-read-back-${Date.now()}`;
    const run = await invoke(handlersOver(client).create, [validCase(fileKey)], key);
    expect(run.outcome).toBe('answered');
    expect(counter.injected.slow).toBeGreaterThan(0);
    expect(run.result.statusCode).toBe(200);
    const { rejected } = outcome(parse(run.result));
    expect(rejected[0]).toMatchObject({ code: 'TEMPORARY_FAILURE', message: expect.stringMatching(/could not confirm/) });
    // The read-back had only its share of the clean-up time: the key still got its answer.
    expect(await claimState(key)).toMatchObject({ state: 'COMPLETED' });
    invariantsChecked++;
  });

  it('never leaves an Idempotency-Key IN_PROGRESS beyond its horizon, even when clean-up cannot reach storage', async () => {
    // The claim is made, then everything else stalls, including giving the claim back.
    const { client } = slowWhere(
      (name, input) => !(name === 'PutItemCommand' && isClaim(input)) && !JSON.stringify(input.Key ?? {}).includes('KEY#'),
    );
    const key = `slow-all-${Date.now()}`;
    const cases = [validCase(fileKey)];
    const run = await invoke(handlersOver(client).create, cases, key);
    expect(run.outcome).toBe('answered');
    expect(run.result.statusCode).toBe(503);
    expect(await claimState(key)).toMatchObject({ state: 'IN_PROGRESS' });

    // Within the horizon a retry is told when to come back: no later than the horizon.
    const horizon = config().claimHorizonSeconds;
    const early = parse((await invoke(handlersOver(documentClient(config())).create, cases, key)).result);
    expect(early.statusCode).toBe(409);
    expect(early.body).toMatchObject({ state: 'IN_PROGRESS', sameRequest: true });
    expect(Number(early.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(early.headers['retry-after'])).toBeLessThanOrEqual(horizon);

    // Past the horizon the key is free again: the retry goes through.
    const later = new Date(Date.now() + (horizon + 1) * 1000);
    const t = table();
    const ddb = documentClient(config());
    const afterHorizon = buildCreateCasesHandler({
      ...caseCreationAdapters(),
      idempotency: new DynamoIdempotencyStore(ddb, t),
      now: () => later,
    }) as unknown as LambdaHandler;
    const retried = parse((await invoke(afterHorizon, cases, key)).result);
    expect(retried.statusCode).toBe(201);
    invariantsChecked++;
  });
});
