import type { TransactWriteItem } from '@aws-sdk/client-dynamodb';
import type { StoredCase } from '../../cases/case-record.js';
import { attributeMap } from './attribute-values.js';
import { ITEM_TYPES, keys } from './table-keys.js';

/**
 * The two actions that end a case's hold on its invoiceRef ("being chased" ends), shared by a
 * withdrawal (case-change-store.ts) and a close (recovery-store.ts) so both free it the same way:
 * the guard deleted only while it still names this case (a guard already gone has nothing to give
 * up), and the case left under its invoiceRef for the look-up. The ended item keeps the name
 * `WITHDRAWN_INVOICE_REF` for a closed case too; `withdrawnAt` is when the case gave it up.
 */
export function releaseInvoiceRefActions(tableName: string, before: StoredCase, endedAt: string): TransactWriteItem[] {
  const guard = keys.invoiceRefGuard(before.mode, before.companyId, before.invoiceRefKey);
  const ended = keys.withdrawnInvoiceRef(before.mode, before.companyId, before.invoiceRefKey, before.createdAt, before.caseId);
  return [
    {
      Delete: {
        TableName: tableName,
        Key: attributeMap(guard),
        ConditionExpression: 'attribute_not_exists(pk) OR caseId = :caseId',
        ExpressionAttributeValues: { ':caseId': { S: before.caseId } },
      },
    },
    {
      Put: {
        TableName: tableName,
        Item: attributeMap(keys.withTestDataListing(before.mode, before.companyId, ended), {
          type: ITEM_TYPES.withdrawnInvoiceRef,
          caseId: before.caseId,
          companyId: before.companyId,
          reference: before.reference,
          createdAt: before.createdAt,
          withdrawnAt: endedAt,
          mode: before.mode,
        }),
      },
    },
  ];
}
