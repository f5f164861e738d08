import { BatchWriteCommand, TransactWriteCommand, type BatchWriteCommandInput, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { TestModeItemStore } from '../../accounts/ports.js';
import { ServiceUnavailableError } from '../../errors.js';
import { DEFAULT_RETRY_POLICY, withRetries, withUnprocessedRetries, type RetryPolicy } from '../retry.js';
import { queryAll } from './item-operations.js';
import { GSI1, ITEM_TYPES, keys, type ItemKey } from './table-keys.js';

/** DynamoDB accepts at most 25 requests per BatchWriteItem. */
const BATCH = 25;
/** Case transactions sent at once: a few, so a large test world clears quickly without a burst. */
const PARALLEL_CASES = 8;
/** The operator waits: more patience with throttling than a partner request has. */
const OPERATOR_RETRY_POLICY: RetryPolicy = { ...DEFAULT_RETRY_POLICY, maxAttempts: 8, baseDelayMs: 50, maxDelayMs: 2_000 };

type Listed = Record<string, unknown> & ItemKey;
type WriteRequest = NonNullable<BatchWriteCommandInput['RequestItems']>[string][number];

/**
 * `company clear-test-data`, table part: one query of the company's test-data listing (gsi1
 * `TESTDATA#<companyId>`, written only on test items: table-keys.ts), then deletes by pk/sk. Each
 * listed item is checked again before it is deleted (its partition names the test mode and its
 * company is this one, and each delete is conditional on that company), so a listing gone wrong
 * could not take a live item with it.
 *
 * A case goes with its audit record and its invoiceRef guard in one transaction, as the case
 * writer created them: a run that stops part-way (a crash, throttling that outlasts the retries)
 * leaves whole cases, never a guard without its case or a case without its guard, and running the
 * command again clears the rest. Idempotency-Key claims stand alone and go in batches afterwards.
 */
export class DynamoTestModeItemStore implements TestModeItemStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly policy: RetryPolicy = OPERATOR_RETRY_POLICY,
  ) {}

  async clearTestItems(companyId: string): Promise<number> {
    const listed = await queryAll(this.client, {
      TableName: this.tableName,
      IndexName: GSI1,
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.testDataIndexPk(companyId) },
    });
    const targets = listed.filter(
      (item): item is Listed =>
        item.companyId === companyId && typeof item.pk === 'string' && typeof item.sk === 'string' && keys.isTestPartition(item.pk),
    );
    const { cases, claims } = groupByCase(companyId, targets);
    for (let i = 0; i < cases.length; i += PARALLEL_CASES) {
      // Every transaction of the group is waited for, not only until the first fails: the command
      // must not report a stop while deletions it started are still landing.
      const results = await Promise.allSettled(cases.slice(i, i + PARALLEL_CASES).map((items) => this.deleteTogether(companyId, items)));
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    }
    for (let i = 0; i < claims.length; i += BATCH) await this.deleteClaims(claims.slice(i, i + BATCH));
    return targets.length;
  }

  /** One case's items (case, audit record, guard: whichever are still there), all or none. */
  private async deleteTogether(companyId: string, items: readonly ItemKey[]): Promise<void> {
    const command = new TransactWriteCommand({
      TransactItems: items.map((item) => ({
        Delete: {
          TableName: this.tableName,
          Key: { pk: item.pk, sk: item.sk },
          // Gone already (another run) is fine; another company's item never is.
          ConditionExpression: 'attribute_not_exists(pk) OR companyId = :companyId',
          ExpressionAttributeValues: { ':companyId': companyId },
        },
      })),
    });
    await withRetries((options) => this.client.send(command, options), undefined, this.policy);
  }

  private async deleteClaims(batch: readonly ItemKey[]): Promise<void> {
    try {
      await withUnprocessedRetries(
        batch.map((key): WriteRequest => ({ DeleteRequest: { Key: { pk: key.pk, sk: key.sk } } })),
        async (requests, options) => {
          const out = await this.client.send(new BatchWriteCommand({ RequestItems: { [this.tableName]: [...requests] } }), options);
          return out.UnprocessedItems?.[this.tableName] ?? [];
        },
        undefined,
        this.policy,
      );
    } catch (error) {
      if (error instanceof ServiceUnavailableError)
        throw new Error(`test Idempotency-Key claims were not all deleted (throttled); run the command again`, { cause: error });
      throw error;
    }
  }
}

/**
 * The listed items by case: a case item and its audit record share the case's partition, and its
 * guard names the case (`caseId`). A listed case item also names all three of its keys itself, so
 * they go together even when the index has not caught up with one of them (a GSI is eventually
 * consistent: a guard missing from the listing must not be left behind without its case). A guard
 * whose case is already gone (cleared by an older version of this command that stopped part-way) is
 * a group of its own; claims are not tied to a case.
 */
function groupByCase(companyId: string, items: readonly Listed[]): { cases: ItemKey[][]; claims: ItemKey[] } {
  const byCase = new Map<string, Map<string, ItemKey>>();
  const claims: ItemKey[] = [];
  const add = (group: string, key: ItemKey) => {
    const keysOfGroup = byCase.get(group) ?? new Map<string, ItemKey>();
    keysOfGroup.set(`${key.pk}\u0000${key.sk}`, { pk: key.pk, sk: key.sk });
    byCase.set(group, keysOfGroup);
  };
  for (const item of items) {
    if (item.type === ITEM_TYPES.idempotencyClaim) claims.push({ pk: item.pk, sk: item.sk });
    else if (typeof item.caseId === 'string') {
      add(item.caseId, item);
      if (item.type === ITEM_TYPES.case && typeof item.invoiceRefKey === 'string') {
        add(item.caseId, keys.attestation('test', item.caseId));
        add(item.caseId, keys.invoiceRefGuard('test', companyId, item.invoiceRefKey));
      }
    } else add(`${item.pk}#${item.sk}`, item);
  }
  return { cases: [...byCase.values()].map((group) => [...group.values()]), claims };
}
