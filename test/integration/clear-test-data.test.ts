import { DynamoTestModeItemStore } from '../../lib/adapters/dynamodb/test-mode-item-store.js';
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { eventItem } from '../../lib/adapters/dynamodb/event-items.js';
import { ITEM_TYPES, keys } from '../../lib/adapters/dynamodb/table-keys.js';
import { buildCaseEvent } from '../../lib/cases/case-lifecycle.js';
import type { CaseView } from '../../lib/cases/case-record.js';
import { invoiceRefKey } from '../../lib/cases/invoice-ref.js';
import type { Mode } from '../../lib/mode.js';
import { config } from '../../lib/runtime/config.js';
import { checkStorageInvariants, outcome, postCases, readCase, scanTable, uploadInvoice, validCase } from '../support/cases.js';
import { faultyDocumentClient } from '../support/faulty-client.js';
import { ddb, extraKey, newPartner } from '../support/fixtures.js';

/**
 * `company clear-test-data`'s table part stopped part-way: every write after the first three fails for
 * good (a crash, or throttling that outlasts the retries), against DynamoDB Local.
 */
const WRITES = new Set(['BatchWriteItemCommand', 'TransactWriteItemsCommand']);

async function testWorld() {
  const partner = await newPartner();
  const testKey = await extraKey(partner.companyId, ['cases:read', 'cases:write'], 'test');
  const file = await uploadInvoice(testKey);
  const res = await postCases(testKey, { cases: Array.from({ length: 10 }, () => validCase(file)) }, { 'Idempotency-Key': 'clear-me' });
  expect(outcome(res).created).toHaveLength(10);
  return partner.companyId;
}

async function testItemsOf(companyId: string) {
  return (await scanTable()).filter((i) => i.companyId === companyId && String(i.pk).includes('#TEST#'));
}

describe('clearing a company’s test data', () => {
  it('stopped part-way, leaves whole cases: never a guard without its case, nor a case without its guard or audit record; a second run clears the rest', async () => {
    const companyId = await testWorld();
    let writes = 0;
    const { client } = faultyDocumentClient({ decide: (name) => (WRITES.has(name) && ++writes > 3 ? 'internal' : undefined) });
    const fast = { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 5 };
    await expect(new DynamoTestModeItemStore(client, config().tableName, fast).clearTestItems(companyId)).rejects.toThrow();

    const left = await testItemsOf(companyId);
    const cases = left.filter((i) => i.type === ITEM_TYPES.case).map((i) => i.caseId);
    const guarded = new Set(left.filter((i) => i.type === ITEM_TYPES.invoiceRefGuard).map((i) => i.caseId));
    // What is left is whole, and part of the work was done.
    expect((await checkStorageInvariants(new Set([companyId]))).violations).toEqual([]);
    expect(cases.filter((caseId) => !guarded.has(caseId))).toEqual([]);
    expect(cases.length).toBeGreaterThan(0);
    expect(cases.length).toBeLessThan(10);

    const cleared = await new DynamoTestModeItemStore(ddb(), config().tableName).clearTestItems(companyId);
    expect(cleared).toBe(left.length);
    expect(await testItemsOf(companyId)).toEqual([]);
  }, 60_000);

  it('takes each case whole even when the index has not caught up with its guard (no guard left behind)', async () => {
    const companyId = await testWorld();
    // A GSI is eventually consistent: one guard is not in the test-data listing yet.
    const [guard] = (await testItemsOf(companyId)).filter((i) => i.type === ITEM_TYPES.invoiceRefGuard);
    await ddb().send(
      new UpdateCommand({
        TableName: config().tableName,
        Key: { pk: guard!.pk, sk: guard!.sk },
        UpdateExpression: 'REMOVE gsi1pk, gsi1sk',
      }),
    );
    await new DynamoTestModeItemStore(ddb(), config().tableName).clearTestItems(companyId);
    expect(await testItemsOf(companyId)).toEqual([]);
  }, 60_000);
});

/**
 * The items the lifecycle adds, written directly as their routes will write them (those routes are
 * built elsewhere): a confirmation record, a case.updated event, and a withdrawal, which gives the
 * invoiceRef's guard up and leaves a WITHDRAWN# item in its partition.
 */
const put = (item: Record<string, unknown>) => ddb().send(new PutCommand({ TableName: config().tableName, Item: item }));

async function confirm(mode: Mode, companyId: string, view: CaseView) {
  const at = new Date().toISOString();
  const event = buildCaseEvent({ ...view, recoveryGate: 'CONFIRMED', updatedAt: at }, at, { recoveryGate: 'AWAITING_CONFIRMATION' });
  await put(unmarshall(eventItem(event, companyId, mode)));
  await put({
    ...keys.withTestDataListing(mode, companyId, keys.confirmation(mode, view.id)),
    type: ITEM_TYPES.confirmation,
    caseId: view.id,
    companyId,
    mode,
    confirmedBy: { name: 'Jane Smith', email: 'jane@partner.example' },
    confirmedAt: at,
    requestId: 'req-confirm',
    source: 'operator',
    eventId: event.id,
  });
}

async function withdraw(mode: Mode, companyId: string, view: CaseView) {
  const at = new Date().toISOString();
  const refKey = invoiceRefKey(view.invoiceRef);
  await ddb().send(new DeleteCommand({ TableName: config().tableName, Key: keys.invoiceRefGuard(mode, companyId, refKey) }));
  await ddb().send(
    new UpdateCommand({
      TableName: config().tableName,
      Key: keys.case(mode, view.id),
      UpdateExpression: 'SET #status = :withdrawn',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':withdrawn': 'WITHDRAWN' },
    }),
  );
  await put({
    ...keys.withTestDataListing(mode, companyId, keys.withdrawnInvoiceRef(mode, companyId, refKey, view.createdAt, view.id)),
    type: ITEM_TYPES.withdrawnInvoiceRef,
    caseId: view.id,
    companyId,
    invoiceRef: view.invoiceRef,
    reference: view.reference,
    createdAt: view.createdAt,
    withdrawnAt: at,
  });
  const event = buildCaseEvent({ ...view, status: 'WITHDRAWN', updatedAt: at }, at, { status: view.status });
  await put(unmarshall(eventItem(event, companyId, mode)));
}

describe('clearing a company’s test data of the lifecycle’s items', () => {
  it('removes its test events, confirmation records and WITHDRAWN# invoiceRef items, and not one live item, not even one listed as test data', async () => {
    const partner = await newPartner();
    const testKey = await extraKey(partner.companyId, ['cases:read', 'cases:write'], 'test');
    const [testFile, liveFile] = await Promise.all([uploadInvoice(testKey), uploadInvoice(partner.apiKey)]);
    const testCases = outcome(await postCases(testKey, { cases: [validCase(testFile), validCase(testFile)] })).created;
    const liveCases = outcome(await postCases(partner.apiKey, { cases: [validCase(liveFile), validCase(liveFile)] })).created;
    const views = async (key: string, ids: { id: string }[]) =>
      Promise.all(ids.map(async ({ id }) => (await readCase(key, id)).body as unknown as CaseView));
    const [testA, testB] = await views(testKey, testCases);
    const [liveA, liveB] = await views(partner.apiKey, liveCases);
    await confirm('test', partner.companyId, testA!);
    await withdraw('test', partner.companyId, testB!);
    await confirm('live', partner.companyId, liveA!);
    await withdraw('live', partner.companyId, liveB!);
    // A live event wrongly carrying a test-data listing: the command still must not touch it.
    const stray = buildCaseEvent(liveA!, new Date().toISOString(), { status: 'DRAFT' });
    await put({ ...unmarshall(eventItem(stray, partner.companyId, 'live')), gsi1pk: keys.testDataIndexPk(partner.companyId), gsi1sk: 'x' });

    const mine = async () => (await scanTable()).filter((i) => i.companyId === partner.companyId);
    const before = await mine();
    const testTypes = before.filter((i) => keys.isTestPartition(String(i.pk))).map((i) => i.type);
    for (const type of [ITEM_TYPES.event, ITEM_TYPES.confirmation, ITEM_TYPES.withdrawnInvoiceRef])
      expect({ type, listed: testTypes.includes(type) }).toEqual({ type, listed: true });
    const live = before.filter((i) => !keys.isTestPartition(String(i.pk)) && i.type !== ITEM_TYPES.idempotencyClaim);

    await new DynamoTestModeItemStore(ddb(), config().tableName).clearTestItems(partner.companyId);
    const after = await mine();
    expect(after.filter((i) => keys.isTestPartition(String(i.pk)))).toEqual([]);
    const byKey = (items: Record<string, unknown>[]) => items.map((i) => `${String(i.pk)} ${String(i.sk)}`).sort();
    expect(byKey(after.filter((i) => i.type !== ITEM_TYPES.idempotencyClaim))).toEqual(byKey(live));
    expect(live.filter((i) => i.type === ITEM_TYPES.event)).toHaveLength(5);
  }, 60_000);

  it('leaves the guard of a newer case that took a withdrawn case’s invoiceRef, even when it stops before that case', async () => {
    const partner = await newPartner();
    const testKey = await extraKey(partner.companyId, ['cases:read', 'cases:write'], 'test');
    const file = await uploadInvoice(testKey);
    const [older] = outcome(await postCases(testKey, { cases: [validCase(file, { invoiceRef: 'INV-AGAIN' })] })).created;
    await withdraw('test', partner.companyId, (await readCase(testKey, older!.id)).body as unknown as CaseView);
    const [newer] = outcome(await postCases(testKey, { cases: [validCase(file, { invoiceRef: 'inv-again' })] })).created;
    expect(newer).toBeDefined();

    // Every transaction holding the newer case fails for good: the run stops with it still there.
    const newerCase = keys.case('test', newer!.id).pk;
    const { client } = faultyDocumentClient({
      decide: (name, input) =>
        name === 'TransactWriteItemsCommand' && JSON.stringify(input.TransactItems).includes(newerCase) ? 'internal' : undefined,
    });
    const fast = { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 5 };
    await expect(new DynamoTestModeItemStore(client, config().tableName, fast).clearTestItems(partner.companyId)).rejects.toThrow();

    const left = await testItemsOf(partner.companyId);
    expect(left.filter((i) => i.caseId === older!.id)).toEqual([]);
    expect(left.filter((i) => i.type === ITEM_TYPES.invoiceRefGuard).map((i) => i.caseId)).toEqual([newer!.id]);
    expect((await checkStorageInvariants(new Set([partner.companyId]))).violations).toEqual([]);

    await new DynamoTestModeItemStore(ddb(), config().tableName).clearTestItems(partner.companyId);
    expect(await testItemsOf(partner.companyId)).toEqual([]);
  }, 60_000);
});
