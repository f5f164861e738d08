import { BatchWriteCommand, TransactWriteCommand, type BatchWriteCommandInput, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { TestModeItemStore } from '../../accounts/ports.js';
import { ServiceUnavailableError } from '../../errors.js';
import { DEFAULT_RETRY_POLICY, isTransactionCancelled, withRetries, withUnprocessedRetries, type RetryPolicy } from '../retry.js';
import { queryAll } from './item-operations.js';
import { GSI1, ITEM_TYPES, keys, type ItemKey } from './table-keys.js';

/** DynamoDB accepts at most 25 requests per BatchWriteItem. */
const BATCH = 25;
/** TransactWriteItems takes at most 100 actions. */
const MAX_TRANSACTION_ACTIONS = 100;
/** Case transactions sent at once: a few, so a large test world clears quickly without a burst. */
const PARALLEL_CASES = 8;
/** The operator waits: more patience with throttling than a partner request has. */
const OPERATOR_RETRY_POLICY: RetryPolicy = { ...DEFAULT_RETRY_POLICY, maxAttempts: 8, baseDelayMs: 50, maxDelayMs: 2_000 };

type Listed = Record<string, unknown> & ItemKey;

/**
 * An item to delete with its case. `onlyIfNamesCase`: an invoiceRef guard, deleted only while it
 * still names that case: once a case is withdrawn, its invoiceRef's guard may belong to a newer
 * case, which must not lose it (nor may a listing that has not caught up make it look otherwise).
 */
interface Target extends ItemKey {
  onlyIfNamesCase?: string;
}
type WriteRequest = NonNullable<BatchWriteCommandInput['RequestItems']>[string][number];

/**
 * `company clear-test-data`, table part: one query of the company's test-data listing (gsi1
 * `TESTDATA#<companyId>`, written only on test items: table-keys.ts), then deletes by pk/sk. Each
 * listed item is checked again before it is deleted (its partition names the test mode and its
 * company is this one, and each delete is conditional on that company), so a listing gone wrong
 * could not take a live item with it.
 *
 * A case goes with everything that names it in one transaction: its audit record and invoiceRef
 * guard (as the case writer created them), its events (`EVENT#`), its confirmation record and the
 * `WITHDRAWN#` item of its invoiceRef. A run that stops part-way (a crash, throttling that
 * outlasts the retries) leaves whole cases, never a guard without its case, a case without its
 * guard, or an event without its case, and running the command again clears the rest.
 * Idempotency-Key claims and webhook delivery records stand alone and go in batches afterwards.
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

  /**
   * One case's items (whichever are still there), all or none. A guard the case named that now
   * names another case (the case was withdrawn and its invoiceRef used again) is left to that case:
   * the transaction is cancelled by its condition and sent again without it.
   */
  private async deleteTogether(companyId: string, items: readonly Target[]): Promise<void> {
    // A case has a handful of items (its lifecycle bounds its events); a group beyond the action limit would be refused whole.
    if (items.length > MAX_TRANSACTION_ACTIONS) {
      for (let i = 0; i < items.length; i += MAX_TRANSACTION_ACTIONS)
        await this.deleteTogether(companyId, items.slice(i, i + MAX_TRANSACTION_ACTIONS));
      return;
    }
    const command = new TransactWriteCommand({
      TransactItems: items.map((item) => ({
        Delete: {
          TableName: this.tableName,
          Key: { pk: item.pk, sk: item.sk },
          // Gone already (another run) is fine; another company's item never is, nor another case's guard.
          ConditionExpression:
            item.onlyIfNamesCase === undefined
              ? 'attribute_not_exists(pk) OR companyId = :companyId'
              : 'attribute_not_exists(pk) OR (companyId = :companyId AND caseId = :caseId)',
          ExpressionAttributeValues: {
            ':companyId': companyId,
            ...(item.onlyIfNamesCase === undefined ? {} : { ':caseId': item.onlyIfNamesCase }),
          },
        },
      })),
    });
    try {
      await withRetries((options) => this.client.send(command, options), undefined, this.policy);
    } catch (error) {
      const reasons = isTransactionCancelled(error) ? (error.CancellationReasons ?? []) : [];
      const othersGuards = new Set(
        items.flatMap((item, i) => (item.onlyIfNamesCase !== undefined && reasons[i]?.Code === 'ConditionalCheckFailed' ? [i] : [])),
      );
      const refusedOtherwise = reasons.some((r, i) => r.Code !== undefined && r.Code !== 'None' && !othersGuards.has(i));
      if (othersGuards.size === 0 || refusedOtherwise) throw error;
      const rest = items.filter((_, i) => !othersGuards.has(i));
      if (rest.length > 0) await this.deleteTogether(companyId, rest);
    }
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
        throw new Error(`test Idempotency-Key claims or webhook deliveries were not all deleted (throttled); run the command again`, {
          cause: error,
        });
      throw error;
    }
  }
}

/**
 * The listed items by case: a case item, its audit record and its confirmation record share the
 * case's partition; its guard, its events and the `WITHDRAWN#` item of its invoiceRef name the
 * case (`caseId`). A listed case item also names its audit record and guard itself, so they go
 * together even when the index has not caught up with one of them (a GSI is eventually consistent:
 * a guard missing from the listing must not be left behind without its case). A guard is the one
 * item whose case can change (a withdrawn case gives it up and a new case takes it), so it is only
 * ever deleted while it names the case it is deleted with (see Target), however it was found. An
 * item whose case is already gone (cleared by a run that stopped part-way, or listed late) is a
 * group of its own; claims are not tied to a case.
 */
function groupByCase(companyId: string, items: readonly Listed[]): { cases: Target[][]; claims: ItemKey[] } {
  const byCase = new Map<string, Map<string, Target>>();
  // Claims and delivery records name no case and stand alone; a test world may hold thousands of
  // delivery records, which batches of 25 clear far faster than one transaction each.
  const claims: ItemKey[] = [];
  const add = (group: string, target: Target) => {
    const keysOfGroup = byCase.get(group) ?? new Map<string, Target>();
    keysOfGroup.set(`${target.pk}\u0000${target.sk}`, target);
    byCase.set(group, keysOfGroup);
  };
  for (const item of items) {
    if (item.type === ITEM_TYPES.idempotencyClaim || item.type === ITEM_TYPES.webhookDelivery) claims.push({ pk: item.pk, sk: item.sk });
    else if (typeof item.caseId === 'string') {
      const caseId = item.caseId;
      add(caseId, { pk: item.pk, sk: item.sk, ...(item.type === ITEM_TYPES.invoiceRefGuard ? { onlyIfNamesCase: caseId } : {}) });
      if (item.type === ITEM_TYPES.case && typeof item.invoiceRefKey === 'string') {
        add(caseId, keys.attestation('test', caseId));
        add(caseId, { ...keys.invoiceRefGuard('test', companyId, item.invoiceRefKey), onlyIfNamesCase: caseId });
      }
    } else add(`${item.pk}#${item.sk}`, { pk: item.pk, sk: item.sk });
  }
  return { cases: [...byCase.values()].map((group) => [...group.values()]), claims };
}
