import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { TestModeItemStore } from '../../accounts/ports.js';
import { sleep, withRetries } from '../retry.js';
import { queryAll } from './item-operations.js';
import { GSI1, keys } from './table-keys.js';

/** DynamoDB accepts at most 25 requests per BatchWriteItem. */
const BATCH = 25;
const MAX_UNPROCESSED_ROUNDS = 8;

/**
 * `company clear-test-data`, table part: one query of the company's test-data listing (gsi1
 * `TESTDATA#<companyId>`, written only on test items: table-keys.ts), then deletes by pk/sk. Each
 * listed item is checked again before it is deleted (its partition names the test mode and its
 * company is this one), so a listing gone wrong could not take a live item with it.
 */
export class DynamoTestModeItemStore implements TestModeItemStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async clearTestItems(companyId: string): Promise<number> {
    const listed = await queryAll(this.client, {
      TableName: this.tableName,
      IndexName: GSI1,
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.testDataIndexPk(companyId) },
    });
    const targets = listed
      .filter((item) => item.companyId === companyId && typeof item.pk === 'string' && keys.isTestPartition(item.pk))
      .map((item) => ({ pk: item.pk as string, sk: item.sk as string }));
    for (let i = 0; i < targets.length; i += BATCH) await this.deleteBatch(targets.slice(i, i + BATCH));
    return targets.length;
  }

  private async deleteBatch(batch: { pk: string; sk: string }[]): Promise<void> {
    let requests = batch.map((key) => ({ DeleteRequest: { Key: key } }));
    for (let round = 1; requests.length > 0; round++) {
      const command = new BatchWriteCommand({ RequestItems: { [this.tableName]: requests } });
      const out = await withRetries((options) => this.client.send(command, options));
      requests = (out.UnprocessedItems?.[this.tableName] ?? []) as typeof requests;
      if (requests.length === 0) return;
      // Unprocessed items are DynamoDB asking us to slow down.
      if (round >= MAX_UNPROCESSED_ROUNDS) throw new Error(`${requests.length} test items were not deleted (throttled); run the command again`);
      await sleep(50 * 2 ** round);
    }
  }
}
