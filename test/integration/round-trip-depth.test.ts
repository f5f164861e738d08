import { CASES_PER_TRANSACTION } from '../../lib/adapters/dynamodb/case-writer.js';
import { CASE_LIST_SHARDS } from '../../lib/adapters/dynamodb/table-keys.js';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { restApiEvent } from '../../infra/local/lambda-events.js';
import { londonDate } from '../../lib/cases/dates.js';
import { config } from '../../lib/runtime/config.js';
import { issueFileKey } from '../../lib/uploads/file-key.js';
import { benchCases, createCasesEvent, lambdaContext, listCasesEvent } from '../support/storage-rig/events.js';
import { MemoryBackend } from '../support/storage-rig/memory-backend.js';
import { closeRig, makeRig, measure, measureUpload, SCENARIOS, type Rig, type ScenarioId } from '../support/storage-rig/scenarios.js';

/**
 * The latency design in numbers of storage round trips (docs/design.md, docs/performance.md):
 * the critical path of storage calls a request waits for one after another, recorded by an SDK
 * middleware on the DynamoDB and S3 clients. Counts only, no timings.
 *
 * All five requests run against the in-process store stand-in (bench/lib/memory-backend.ts: the
 * whole SDK pipeline, no network), where nothing depends on timing. The small requests also run
 * against DynamoDB Local + s3rver and must give the same depths; the 100-case batches are left to
 * `npm run bench` there, because DynamoDB Local queues transactions and a loaded machine can push
 * the last of 100 past the 3 s request timeout, and the retry that follows is a real extra trip.
 */
const scenario = (id: ScenarioId) => SCENARIOS.find((s) => s.id === id)!;

describe('round-trip depth (in-process store stand-in)', () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await makeRig('depth', config(), new MemoryBackend());
  });
  afterAll(() => closeRig(rig));

  it('reads a case in one round trip: the API key and the case are fetched in parallel', async () => {
    const m = await measure(rig, scenario('get'));
    expect(m.depth).toBe(1);
    expect(m.byCommand).toEqual({ 'dynamodb:GetItem': 2 });
  });

  it('adds the lastUsedAt write after the key lookup on the first use of a key in a minute', async () => {
    const m = await measure(rig, scenario('get'), { warmKey: false });
    expect(m.depth).toBe(2);
    expect(m.path).toBe('GetItem → UpdateItem');
  });

  /** The reference counter is written only when the process's block of 1,000 runs out (at most once here). */
  const withoutCounter = (byCommand: Record<string, number>) => {
    const { 'dynamodb:UpdateItem': counterWrites = 0, ...rest } = byCommand;
    expect(counterWrites).toBeLessThanOrEqual(1);
    return rest;
  };

  it('creates 1 case in three round trips: key, then claim/company/counter/upload record in parallel, then the transaction', async () => {
    const m = await measure(rig, scenario('create-1'));
    expect(m.depth).toBe(3);
    expect(withoutCounter(m.byCommand)).toEqual({ 'dynamodb:GetItem': 2, 'dynamodb:BatchGetItem': 1, 'dynamodb:TransactWriteItems': 1 });
  });

  it('creates 100 cases in the same three round trips: the depth does not grow with the batch', async () => {
    const m = await measure(rig, scenario('create-100'));
    expect(m.depth).toBe(3);
    expect(m.sdkRetries).toBe(0);
  });

  it('sends a 100-case batch in 7 SDK requests: the key, the company, one read of the upload records, four transactions of 25 cases', async () => {
    const m = await measure(rig, scenario('create-100'));
    // Every case cites its own invoice file, each with an upload record: no HEAD at all.
    expect(withoutCounter(m.byCommand)).toEqual({
      'dynamodb:GetItem': 2,
      'dynamodb:BatchGetItem': 1,
      'dynamodb:TransactWriteItems': Math.ceil(100 / CASES_PER_TRANSACTION),
    });
    expect(m.calls - (m.byCommand['dynamodb:UpdateItem'] ?? 0)).toBe(7);
  });

  it('HEADs only the files whose upload record has not arrived, one round trip later', async () => {
    const fileKey = issueFileKey(rig.partner.companyId, 'application/pdf');
    const body = Buffer.from('%PDF-1.4\n% not recorded yet\n');
    // Uploaded, but S3's report of it (the upload record) has not arrived.
    await rig.fixtures.s3.send(
      new PutObjectCommand({
        Bucket: config().bucketName,
        Key: fileKey,
        Body: body,
        ContentType: 'application/pdf',
        ContentLength: body.length,
      }),
    );
    const mixed = {
      ...scenario('create-1'),
      event: (r: Rig, tag: string) =>
        createCasesEvent(r.partner.apiKey, benchCases(tag, 3, [r.partner.fileKeys[0]!, fileKey, r.partner.fileKeys[1]!])),
      check: (result: Awaited<ReturnType<Rig['handlers']['createCases']>>) =>
        expect(JSON.parse(result.body as string)).toMatchObject({ created: [{}, {}, {}], rejected: [] }),
    };
    const m = await measure(rig, mixed);
    expect(withoutCounter(m.byCommand)).toEqual({
      'dynamodb:GetItem': 2,
      'dynamodb:BatchGetItem': 1,
      's3:HeadObject': 1,
      'dynamodb:TransactWriteItems': 1,
    });
    // The HEAD waits for the records read (the company read beside it may end last and be named instead).
    expect(m.depth).toBe(4);
    expect(m.path).toMatch(/^GetItem → (Batch)?GetItem → HeadObject → TransactWriteItems$/);
  });

  it('writes the reference counter once per 1,000 references, not once per batch (no item written by every request)', async () => {
    let counterWrites = 0;
    for (let batch = 0; batch < 20; batch++)
      counterWrites += (await measure(rig, scenario('create-100'))).byCommand['dynamodb:UpdateItem'] ?? 0;
    // 2,000 references: two blocks, plus at most one for the block in use when the loop began.
    expect(counterWrites).toBeGreaterThanOrEqual(2);
    expect(counterWrites).toBeLessThanOrEqual(3);
    // 20 batches of 100: the default 5 s is tight on a loaded machine; counts only, nothing timed.
  }, 120_000);

  it('adds exactly one round trip for an Idempotency-Key: completing the claim', async () => {
    const m = await measure(rig, scenario('create-100-key'));
    expect(m.depth).toBe(4);
    expect(m.path).toMatch(/^GetItem → \w+ → TransactWriteItems → UpdateItem$/);
    expect(m.byCommand['dynamodb:PutItem']).toBe(1);
  });

  it('answers 100 duplicates in three round trips: the guards cancel each transaction and return the existing cases, with no further round', async () => {
    const m = await measure(rig, scenario('create-100-dup'));
    expect(m.depth).toBe(3);
    expect(m.errors).toEqual({ TransactionCanceledException: 4 });
    expect(m.byCommand['dynamodb:TransactWriteItems']).toBe(4);
  });

  it('keeps the lastUsedAt write off the critical path of a create', async () => {
    const m = await measure(rig, scenario('create-100'), { warmKey: false });
    // The key-use write, and the reference counter if this batch began a new block.
    expect([1, 2]).toContain(m.byCommand['dynamodb:UpdateItem']);
    expect(m.depth).toBe(3);
  });

  it('withdraws a case in two round trips: the case read beside the key, then the one transaction (at most 2 after the key)', async () => {
    const m = await measure(rig, scenario('withdraw'));
    expect({ depth: m.depth, path: m.path, byCommand: m.byCommand }).toEqual({
      depth: 2,
      path: 'GetItem → TransactWriteItems',
      byCommand: { 'dynamodb:GetItem': 2, 'dynamodb:TransactWriteItems': 1 },
    });
  });

  it('records a payment in two round trips: the case read beside the key, then the one transaction (at most 2 after the key)', async () => {
    const m = await measure(rig, scenario('payment'));
    expect({ depth: m.depth, path: m.path, byCommand: m.byCommand }).toEqual({
      depth: 2,
      path: 'GetItem → TransactWriteItems',
      byCommand: { 'dynamodb:GetItem': 2, 'dynamodb:TransactWriteItems': 1 },
    });
  });

  it('records a payment with an Idempotency-Key in two round trips after the key: the claim, then the transaction that completes it', async () => {
    const m = await measure(rig, scenario('payment-key'));
    expect({ depth: m.depth, path: m.path, byCommand: m.byCommand }).toEqual({
      depth: 3,
      path: 'GetItem → PutItem → TransactWriteItems',
      byCommand: { 'dynamodb:GetItem': 2, 'dynamodb:PutItem': 1, 'dynamodb:TransactWriteItems': 1 },
    });
  });

  it('reads a case holding 100 payments, amounts included, in one round trip (the payments are never read)', async () => {
    const m = await measure(rig, scenario('get-100-payments'));
    expect(m.depth).toBe(1);
    expect(m.byCommand).toEqual({ 'dynamodb:GetItem': 2 });
  }, 60_000);

  it('issues an upload URL with the key lookup as the only storage call (presigning is local)', async () => {
    const m = await measureUpload(rig);
    expect(m.depth).toBe(1);
    expect(m.byCommand).toEqual({ 'dynamodb:GetItem': 1 });
  });
});

describe('round-trip depth (DynamoDB Local + s3rver)', () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await makeRig('depth-local', config());
  }, 60_000);
  afterAll(() => closeRig(rig));

  it.each([
    ['get', true, 1],
    ['get', false, 2],
    ['create-1', true, 3],
    ['create-1', false, 3],
    ['withdraw', true, 2],
    ['payment', true, 2],
    ['payment-key', true, 3],
  ] as const)('%s (warm key: %s) has depth %d, as with the stand-in', async (id, warmKey, depth) => {
    const m = await measure(rig, scenario(id), { warmKey });
    expect({ depth: m.depth, retries: m.sdkRetries }).toEqual({ depth, retries: 0 });
  });

  // With a cold key the lastUsedAt write starts beside the withdraw's transaction (the stand-in
  // above holds that at depth 2). On DynamoDB Local, with no simulated latency, the write can end
  // before the handler has built the change and its event, and the recorder then sees it as a step
  // of its own: the only third step allowed is that write, never a second read or write of the case.
  it('withdraw (warm key: false) waits for two storage steps, the key-use write at most beside them', async () => {
    const m = await measure(rig, scenario('withdraw'), { warmKey: false });
    expect(m.sdkRetries).toBe(0);
    // Depth 2 (either of the two last calls may be the one the path ends on), or 3 through that write.
    expect(m.path).toMatch(/^GetItem → (TransactWriteItems|UpdateItem|UpdateItem → TransactWriteItems)$/);
    expect(m.byCommand['dynamodb:TransactWriteItems']).toBe(1);
  });

  // The in-process stand-in has no Query, so the list is measured here only.
  async function measureList(query: Record<string, string>) {
    await rig.fixtures.warmKey(rig.partner.keyId);
    rig.handlers.recorder.reset();
    const result = await rig.handlers.listCases(listCasesEvent(rig.partner.apiKey, query), lambdaContext());
    if (result.statusCode !== 200) throw new Error(`unexpected list response ${result.statusCode}: ${result.body.slice(0, 300)}`);
    return { summary: rig.handlers.recorder.summary(), body: JSON.parse(result.body) as { data: unknown[]; nextCursor: string | null } };
  }

  it('lists a page in one round trip after the key: every shard of the company queried in parallel', async () => {
    const { summary, body } = await measureList({ limit: '25' });
    expect(body.data).toHaveLength(25);
    expect({ depth: summary.depth, path: summary.path, retries: summary.sdkRetries }).toEqual({
      depth: 2,
      path: 'GetItem → Query',
      retries: 0,
    });
    expect(summary.byCommand).toEqual({ 'dynamodb:GetItem': 1, 'dynamodb:Query': CASE_LIST_SHARDS });
    const next = await measureList({ limit: '25', cursor: body.nextCursor! });
    expect(next.body.data).toHaveLength(25);
    expect(next.summary.depth).toBe(2);
  });

  it('looks cases up by invoiceRef in two round trips after the key: the invoiceRef\u2019s partition, then its cases in one batch read', async () => {
    const { summary, body } = await measureList({ invoiceRef: rig.duplicateCases[0]!.invoiceRef as string });
    expect(body.data).toHaveLength(1);
    expect({ depth: summary.depth, path: summary.path, byCommand: summary.byCommand }).toEqual({
      depth: 3,
      path: 'GetItem → Query → BatchGetItem',
      byCommand: { 'dynamodb:GetItem': 1, 'dynamodb:Query': 1, 'dynamodb:BatchGetItem': 1 },
    });
  });

  // One case: with several, each case's read and transaction run beside the others' (two round
  // trips each), but the recorder's one timeline would chain one case's transaction after another's
  // read that happened to end later (DynamoDB Local also runs transactions one at a time).
  it('confirms a case in two round trips: the case read, then its transaction (no API key on the internal route)', async () => {
    const res = await rig.handlers.createCases(
      createCasesEvent(rig.partner.apiKey, benchCases(`confirm-${Date.now()}`, 1, rig.partner.fileKeys)),
      lambdaContext(),
    );
    const ids = (JSON.parse(res.body) as { created: { id: string }[] }).created.map((c) => c.id);
    expect(ids).toHaveLength(1);
    const event = restApiEvent({
      method: 'POST',
      path: '/internal/v1/confirmations',
      resource: '/internal/v1/confirmations',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ companyId: rig.partner.companyId, caseIds: ids, confirmedBy: { name: 'Depth', email: 'depth@example.com' } }),
      iamIdentity: { userArn: 'arn:aws:iam::123456789012:role/dashboard', accessKey: 'AKIA', accountId: '123456789012', caller: 'AKIA' },
    });
    rig.handlers.recorder.reset();
    const confirmed = await rig.handlers.confirmCases(event, lambdaContext());
    expect(JSON.parse(confirmed.body)).toMatchObject({ results: ids.map((caseId) => ({ caseId, result: 'confirmed' })) });
    const summary = rig.handlers.recorder.summary();
    expect({ depth: summary.depth, path: summary.path, byCommand: summary.byCommand, retries: summary.sdkRetries }).toEqual({
      depth: 2,
      path: 'GetItem → TransactWriteItems',
      byCommand: { 'dynamodb:GetItem': 1, 'dynamodb:TransactWriteItems': 1 },
      retries: 0,
    });
  });

  it('applies a back-office update in three round trips: its updateId looked up, the case read, then its transaction (no API key)', async () => {
    const res = await rig.handlers.createCases(
      createCasesEvent(rig.partner.apiKey, benchCases(`recovery-${Date.now()}`, 1, rig.partner.fileKeys)),
      lambdaContext(),
    );
    const [caseId] = (JSON.parse(res.body) as { created: { id: string }[] }).created.map((c) => c.id);
    expect(caseId).toBeDefined();
    const updateId = `depth-${Date.now()}`;
    const event = restApiEvent({
      method: 'POST',
      path: '/internal/v1/recovery-updates',
      resource: '/internal/v1/recovery-updates',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        companyId: rig.partner.companyId,
        // A payment is taken in any open status: the new case is DRAFT.
        updates: [
          {
            updateId,
            caseId,
            type: 'payment_collected',
            amount: 1,
            paidAt: londonDate(Date.now()),
            by: { name: 'Depth', email: 'depth@example.com' },
          },
        ],
      }),
      iamIdentity: { userArn: 'arn:aws:iam::123456789012:role/back-office', accessKey: 'AKIA', accountId: '123456789012', caller: 'AKIA' },
    });
    rig.handlers.recorder.reset();
    const applied = await rig.handlers.applyRecoveryUpdates(event, lambdaContext());
    expect(JSON.parse(applied.body)).toEqual({ results: [{ updateId, result: 'applied' }] });
    const summary = rig.handlers.recorder.summary();
    expect({ depth: summary.depth, path: summary.path, byCommand: summary.byCommand, retries: summary.sdkRetries }).toEqual({
      depth: 3,
      path: 'GetItem → GetItem → TransactWriteItems',
      byCommand: { 'dynamodb:GetItem': 2, 'dynamodb:TransactWriteItems': 1 },
      retries: 0,
    });
  });

  it('creates 1 case with an Idempotency-Key in four round trips', async () => {
    const withKey = {
      ...scenario('create-1'),
      event: (r: Rig, tag: string) => createCasesEvent(r.partner.apiKey, benchCases(tag, 1, r.partner.fileKeys), `key-${tag}`),
    };
    const m = await measure(rig, withKey);
    expect({ depth: m.depth, retries: m.sdkRetries }).toEqual({ depth: 4, retries: 0 });
  });
});
