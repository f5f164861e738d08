import { createHash } from 'node:crypto';
import { TransactWriteItemsCommand, type AttributeValue, type TransactWriteItem } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { convertToAttr } from '@aws-sdk/util-dynamodb';
import { lifecycleOf, type StoredCase } from '../../cases/case-record.js';
import type { CaseChange, CaseChangeStore, ConfirmationRecord } from '../../cases/ports.js';
import { standaloneDeadline, type Deadline } from '../../deadline.js';
import type { Mode } from '../../mode.js';
import { DEFAULT_RETRY_POLICY, isTransactionCancelled, withRetries, type RetryPolicy } from '../retry.js';
import { attributeMap } from './attribute-values.js';
import { DynamoCaseReader } from './case-reader.js';
import { eventItem } from './event-items.js';
import { releaseInvoiceRefActions } from './release-invoice-ref-actions.js';
import { ITEM_TYPES, keys } from './table-keys.js';

/** The case's update is the first action: its cancellation reason says whether another change won. */
const CASE_ACTION = 0;

/**
 * A case change as one TransactWriteItems (table-keys.ts, "Change a case"): the case updated only
 * while its lifecycle fields are those the rule saw, its event put, and the confirmation record
 * put (confirm) or the invoiceRef guard given up and the withdrawn case left under its invoiceRef
 * (withdraw). All or nothing: never an event without its change, never a change without its event.
 *
 * The condition is on `status`, `recoveryGate`, `debtorVerification.status` and `revision`: every
 * lifecycle change moves one of the first three forward and none returns to an earlier value, and
 * every change (a payment too: recovery-store.ts) writes the next revision, so "unchanged" means
 * "no other change happened". A failed condition is `stale` (the use case reads again).
 *
 * Lost answers: the transaction's ClientRequestToken is derived from its event id (new for every
 * change computed), so a retry of an attempt whose answer was lost is recognised by DynamoDB as
 * the same transaction for 10 minutes. When retries run out with the outcome unknown, this throws
 * ServiceUnavailableError; a later attempt of the same change reads the case again and finds it
 * made (no second event) or not.
 */
export class DynamoCaseChangeStore implements CaseChangeStore {
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

  async apply(change: CaseChange, deadline: Deadline = standaloneDeadline()): Promise<'applied' | 'stale'> {
    const command = new TransactWriteItemsCommand({
      TransactItems: this.actions(change),
      ClientRequestToken: createHash('sha256').update(change.event.id).digest('hex').slice(0, 36),
    });
    try {
      await withRetries((options) => this.client.send(command, options), deadline, this.policy);
      return 'applied';
    } catch (error) {
      const reasons = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons;
      if (!isTransactionCancelled(error) || !reasons) throw error;
      // Another change won the case (or confirmed it first): read again. Anything else refused is a bug, not a race.
      const refused = reasons.flatMap((reason, i) => (reason.Code === 'ConditionalCheckFailed' ? [i] : []));
      if (refused.includes(CASE_ACTION) || (change.confirmation && refused.length > 0 && refused.every((i) => i !== CASE_ACTION)))
        return 'stale';
      throw error;
    }
  }

  private actions(change: CaseChange): TransactWriteItem[] {
    const { before, after, event } = change;
    const TableName = this.tableName;
    const was = lifecycleOf(before);
    const actions: TransactWriteItem[] = [
      {
        Update: {
          TableName,
          Key: attributeMap(keys.case(before.mode, before.caseId)),
          UpdateExpression:
            'SET #status = :status, recoveryGate = :gate, debtorVerification = :dv, statusHistory = :history, updatedAt = :at, revision = :revision',
          ConditionExpression:
            'attribute_exists(pk) AND #status = :wasStatus AND recoveryGate = :wasGate AND ' +
            // The revision the change was computed from (recovery-store.ts: a payment changes nothing else the condition reads).
            (before.revision === undefined ? 'attribute_not_exists(revision) AND ' : 'revision = :wasRevision AND ') +
            // A case stored before the lifecycle existed has no debtorVerification: lifecycleOf gave it its default.
            (before.debtorVerification ? 'debtorVerification.#vstatus = :wasVerification' : 'attribute_not_exists(debtorVerification)'),
          ExpressionAttributeNames: { '#status': 'status', ...(before.debtorVerification ? { '#vstatus': 'status' } : {}) },
          ExpressionAttributeValues: {
            ':status': { S: after.status },
            ':gate': { S: after.recoveryGate },
            ':dv': convertToAttr(lifecycleOf(after).debtorVerification),
            ':history': convertToAttr(lifecycleOf(after).statusHistory),
            ':at': { S: after.updatedAt },
            ':revision': { N: String(after.revision ?? (before.revision ?? 0) + 1) },
            ...(before.revision === undefined ? {} : { ':wasRevision': { N: String(before.revision) } }),
            ':wasStatus': { S: was.status },
            ':wasGate': { S: was.recoveryGate },
            ...(before.debtorVerification ? { ':wasVerification': { S: was.debtorVerification.status } } : {}),
          },
        },
      },
      { Put: { TableName, Item: eventItem(event, before.companyId, before.mode), ConditionExpression: 'attribute_not_exists(pk)' } },
    ];
    if (change.confirmation) {
      actions.push({ Put: { TableName, Item: confirmationItem(change.confirmation), ConditionExpression: 'attribute_not_exists(pk)' } });
    }
    if (change.releaseInvoiceRef) actions.push(...releaseInvoiceRefActions(TableName, before, after.updatedAt));
    return actions;
  }
}

function confirmationItem(record: ConfirmationRecord): Record<string, AttributeValue> {
  const { confirmedBy, ...flat } = record;
  return {
    ...attributeMap(keys.withTestDataListing(record.mode, record.companyId, keys.confirmation(record.mode, record.caseId)), {
      type: ITEM_TYPES.confirmation,
    }),
    ...attributeMap(flat),
    confirmedBy: convertToAttr(confirmedBy),
  };
}
