import { createHash } from 'node:crypto';
import { TransactWriteItemsCommand, type AttributeValue, type TransactWriteItem } from '@aws-sdk/client-dynamodb';
import { GetCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { convertToAttr } from '@aws-sdk/util-dynamodb';
import { lifecycleOf, type StoredCase } from '../../cases/case-record.js';
import type { RecoveryChange, RecoveryStore, RecoveryUpdateRecord } from '../../cases/ports.js';
import type { StoredPayment } from '../../cases/recovery.js';
import { standaloneDeadline, type Deadline } from '../../deadline.js';
import { ServiceUnavailableError } from '../../errors.js';
import { storedMode, type Mode } from '../../mode.js';
import { DEFAULT_RETRY_POLICY, isTransactionCancelled, withRetries, type RetryPolicy } from '../retry.js';
import { attributeMap } from './attribute-values.js';
import { DynamoCaseReader } from './case-reader.js';
import { eventItem } from './event-items.js';
import { releaseInvoiceRefActions } from './release-invoice-ref-actions.js';
import { claimCompletionAction } from './idempotency-store.js';
import { ITEM_TYPES, PAYMENT_SK_PREFIX, TABLE_DEFINITION, keys } from './table-keys.js';

/** The case's update is the first action: its cancellation reason says whether another change won. */
const CASE_ACTION = 0;

/** The attributes a recovery change sets on the case (infra/stack/grants.ts allows these and no other). */
export const RECOVERY_CASE_ATTRIBUTES = ['status', 'statusHistory', 'updatedAt', 'revision', 'paymentFacts', 'closure'] as const;

/**
 * A recovery change as one TransactWriteItems (table-keys.ts, "A recovery change"): the case updated
 * only while its `revision` and `status` are those the rule saw (every change writes the next
 * revision, so two changes decided from one read never both land), its `case.updated` event, the
 * payment's immutable item, the completion of the request's Idempotency-Key claim, the back-office update's record (attribute_not_exists: an updateId is
 * applied once, forever) and, when the change closes the case, the invoiceRef given up exactly as a
 * withdrawal gives it up (case-change-store.ts). All or nothing.
 *
 * The case keeps its payments' facts (date and pence) in `paymentFacts`, so a read of the case
 * computes its amounts from that one item; the payment items serve the payment list only.
 *
 * Lost answers: the ClientRequestToken is derived from the event id, as in case-change-store.ts.
 */
export class DynamoRecoveryStore implements RecoveryStore {
  private readonly reader: DynamoCaseReader;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly policy: RetryPolicy = DEFAULT_RETRY_POLICY,
  ) {
    this.reader = new DynamoCaseReader(client, tableName);
  }

  get(mode: Mode, caseId: string, deadline?: Deadline): Promise<StoredCase | undefined> {
    return this.reader.get(mode, caseId, deadline);
  }

  async findUpdate(mode: Mode, companyId: string, updateId: string, deadline?: Deadline): Promise<RecoveryUpdateRecord | undefined> {
    const command = new GetCommand({
      TableName: this.tableName,
      Key: keys.recoveryUpdate(mode, companyId, updateId),
      ConsistentRead: true,
    });
    const out = await withRetries((options) => this.client.send(command, options), deadline ?? standaloneDeadline(), this.policy);
    if (!out.Item) return undefined;
    const { pk: _pk, sk: _sk, type: _type, gsi1pk: _g1, gsi1sk: _g2, ...record } = out.Item;
    return { ...record, mode: storedMode(record.mode) } as unknown as RecoveryUpdateRecord;
  }

  async listPayments(mode: Mode, caseId: string, deadline?: Deadline): Promise<StoredPayment[]> {
    const payments: StoredPayment[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const command = new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :payment)',
        ExpressionAttributeNames: { '#pk': TABLE_DEFINITION.partitionKey, '#sk': TABLE_DEFINITION.sortKey },
        ExpressionAttributeValues: { ':pk': keys.case(mode, caseId).pk, ':payment': PAYMENT_SK_PREFIX },
        ConsistentRead: true,
        ...(startKey ? { ExclusiveStartKey: startKey } : {}),
      });
      const out = await withRetries((options) => this.client.send(command, options), deadline ?? standaloneDeadline(), this.policy);
      for (const item of out.Items ?? []) {
        const { pk: _pk, sk: _sk, type: _type, gsi1pk: _g1, gsi1sk: _g2, ...payment } = item;
        payments.push({ ...payment, mode: storedMode(payment.mode) } as unknown as StoredPayment);
      }
      startKey = out.LastEvaluatedKey;
    } while (startKey);
    // The sort key's zero-padded sequence is the order recorded; sort anyway, as the contract says.
    return payments.sort((a, b) => a.sequence - b.sequence);
  }

  async apply(change: RecoveryChange, deadline: Deadline = standaloneDeadline()): Promise<'applied' | 'stale' | 'already_applied'> {
    const actions = this.actions(change);
    const updateAction = change.update ? actions.findIndex((a) => a.Put?.Item?.type?.S === ITEM_TYPES.recoveryUpdate) : -1;
    const claimAction = change.completeClaim ? actions.length - 1 : -1;
    const command = new TransactWriteItemsCommand({
      TransactItems: actions,
      ClientRequestToken: createHash('sha256').update(change.event.id).digest('hex').slice(0, 36),
    });
    try {
      await withRetries((options) => this.client.send(command, options), deadline, this.policy);
      return 'applied';
    } catch (error) {
      const reasons = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons;
      if (!isTransactionCancelled(error) || !reasons) throw error;
      const refused = reasons.flatMap((reason, i) => (reason.Code === 'ConditionalCheckFailed' ? [i] : []));
      // The update's record exists: this updateId was applied (by an earlier request, or one racing this one).
      if (updateAction >= 0 && refused.includes(updateAction)) return 'already_applied';
      // Another change won the case (a payment item of the same sequence comes with it): read again.
      if (refused.includes(CASE_ACTION)) return 'stale';
      // The Idempotency-Key's claim is no longer this request's (it outlived its horizon and was taken
      // over): nothing was written, and this request may not write under that key.
      if (claimAction >= 0 && refused.includes(claimAction)) throw new ServiceUnavailableError(error);
      throw error;
    }
  }

  private actions(change: RecoveryChange): TransactWriteItem[] {
    const { before, after, event } = change;
    const TableName = this.tableName;
    const closing = after.closure !== undefined && before.closure === undefined;
    const actions: TransactWriteItem[] = [
      {
        Update: {
          TableName,
          Key: attributeMap(keys.case(before.mode, before.caseId)),
          UpdateExpression:
            'SET #status = :status, statusHistory = :history, updatedAt = :at, revision = :revision, paymentFacts = :facts' +
            (closing ? ', closure = :closure' : ''),
          ConditionExpression:
            'attribute_exists(pk) AND #status = :wasStatus AND ' +
            (before.revision === undefined ? 'attribute_not_exists(revision)' : 'revision = :wasRevision'),
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':status': { S: after.status },
            ':history': convertToAttr(lifecycleOf(after).statusHistory),
            ':at': { S: after.updatedAt },
            ':revision': { N: String(after.revision ?? 1) },
            ':facts': convertToAttr(after.paymentFacts ?? []),
            ...(closing ? { ':closure': convertToAttr(after.closure, { removeUndefinedValues: true }) } : {}),
            ':wasStatus': { S: before.status },
            ...(before.revision === undefined ? {} : { ':wasRevision': { N: String(before.revision) } }),
          },
        },
      },
      { Put: { TableName, Item: eventItem(event, before.companyId, before.mode), ConditionExpression: 'attribute_not_exists(pk)' } },
    ];
    if (change.payment)
      actions.push({ Put: { TableName, Item: paymentItem(change.payment), ConditionExpression: 'attribute_not_exists(pk)' } });
    if (change.update)
      actions.push({ Put: { TableName, Item: recoveryUpdateItem(change.update), ConditionExpression: 'attribute_not_exists(pk)' } });
    if (change.releaseInvoiceRef) actions.push(...releaseInvoiceRefActions(TableName, before, after.updatedAt));
    // Last, so its index is known: the key's answer lands with the change or not at all.
    if (change.completeClaim) actions.push(claimCompletionAction(TableName, change.completeClaim));
    return actions;
  }
}

function paymentItem(payment: StoredPayment): Record<string, AttributeValue> {
  return attributeMap(
    keys.withTestDataListing(payment.mode, payment.companyId, keys.payment(payment.mode, payment.caseId, payment.sequence)),
    { type: ITEM_TYPES.payment },
    payment,
  );
}

function recoveryUpdateItem(record: RecoveryUpdateRecord): Record<string, AttributeValue> {
  const { update, by, ...flat } = record;
  return {
    ...attributeMap(
      keys.withTestDataListing(record.mode, record.companyId, keys.recoveryUpdate(record.mode, record.companyId, record.updateId)),
      {
        type: ITEM_TYPES.recoveryUpdate,
      },
    ),
    ...attributeMap(flat),
    update: convertToAttr(update, { removeUndefinedValues: true }),
    by: convertToAttr(by),
  };
}
