import { DynamoTestModeItemStore } from '../../lib/adapters/dynamodb/test-mode-item-store.js';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ITEM_TYPES } from '../../lib/adapters/dynamodb/table-keys.js';
import { config } from '../../lib/runtime/config.js';
import { checkStorageInvariants, outcome, postCases, scanTable, uploadInvoice, validCase } from '../support/cases.js';
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
