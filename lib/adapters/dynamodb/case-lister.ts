import { BatchGetCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { StoredCase } from '../../cases/case-record.js';
import type { CaseLister, CasePage, CasePageRequest } from '../../cases/ports.js';
import type { Deadline } from '../../deadline.js';
import type { Mode } from '../../mode.js';
import { withRetries, withUnprocessedRetries } from '../retry.js';
import { caseFromItem } from './case-reader.js';
import { pageShardedIndex } from './sharded-index-page.js';
import { CASE_LIST_SHARDS, TABLE_DEFINITION, keys } from './table-keys.js';

/** BatchGetItem takes at most 100 keys a call. */
const MAX_BATCH_GET_KEYS = 100;

const ALL_SHARDS = Array.from({ length: CASE_LIST_SHARDS }, (_, shard) => shard);

/**
 * A page of a company's cases from gsi2: every shard of the company, merged newest first
 * (sharded-index-page.ts, which the event list shares). The date range is the gsi2sk range;
 * status and recoveryGate are FilterExpressions, so a selective filter may take further rounds.
 */
export class DynamoCaseLister implements CaseLister {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  /**
   * One consistent Query of the invoiceRef's partition (its GUARD, naming the case that holds it,
   * and a `WITHDRAWN#` item per case that gave it up; table-keys.ts), then one consistent
   * BatchGetItem of those cases (keys left unprocessed are asked again: retry.ts). A partition
   * holds one item per case that ever had the invoiceRef, so the Query is one page in practice;
   * further pages are followed all the same.
   */
  async findByInvoiceRef(mode: Mode, companyId: string, invoiceRefKey: string, deadline?: Deadline): Promise<StoredCase[]> {
    const caseIds = new Set<string>();
    let startKey: Record<string, unknown> | undefined;
    do {
      const command = new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeNames: { '#pk': TABLE_DEFINITION.partitionKey },
        ExpressionAttributeValues: { ':pk': keys.invoiceRefGuard(mode, companyId, invoiceRefKey).pk },
        ConsistentRead: true,
        ...(startKey ? { ExclusiveStartKey: startKey } : {}),
      });
      const out = await withRetries((options) => this.client.send(command, options), deadline);
      for (const item of out.Items ?? []) if (typeof item.caseId === 'string') caseIds.add(item.caseId);
      startKey = out.LastEvaluatedKey;
    } while (startKey);

    const found: StoredCase[] = [];
    const ids = [...caseIds];
    type CaseKey = ReturnType<typeof keys.case>;
    for (let i = 0; i < ids.length; i += MAX_BATCH_GET_KEYS) {
      await withUnprocessedRetries<CaseKey>(
        ids.slice(i, i + MAX_BATCH_GET_KEYS).map((id) => keys.case(mode, id)),
        async (wanted, options) => {
          const read = new BatchGetCommand({ RequestItems: { [this.tableName]: { Keys: [...wanted], ConsistentRead: true } } });
          const out = await this.client.send(read, options);
          for (const item of out.Responses?.[this.tableName] ?? []) found.push(caseFromItem(item));
          return (out.UnprocessedKeys?.[this.tableName]?.Keys ?? []) as CaseKey[];
        },
        deadline,
      );
    }
    // Newest first, in the list's order (its gsi2sk, compared as DynamoDB compares strings: by code unit).
    const position = (c: StoredCase) => keys.caseListPosition(c.createdAt, c.caseId);
    return found
      .filter((stored) => stored.companyId === companyId)
      .sort((a, b) => (position(a) < position(b) ? 1 : position(a) > position(b) ? -1 : 0));
  }

  async page(request: CasePageRequest, deadline?: Deadline): Promise<CasePage> {
    const { mode, companyId, filters, limit, position } = request;
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = {};
    const conditions: string[] = [];
    if (filters.status !== undefined) {
      names['#status'] = 'status';
      values[':status'] = filters.status;
      conditions.push('#status = :status');
    }
    if (filters.recoveryGate !== undefined) {
      names['#gate'] = 'recoveryGate';
      values[':gate'] = filters.recoveryGate;
      conditions.push('#gate = :gate');
    }
    const { items, next } = await pageShardedIndex(
      {
        client: this.client,
        tableName: this.tableName,
        shards: ALL_SHARDS,
        partitionOf: (shard) => keys.caseListPartition(mode, companyId, shard),
        ...(filters.createdFrom !== undefined ? { lower: keys.caseListBound(filters.createdFrom) } : {}),
        ...(filters.createdBefore !== undefined ? { before: keys.caseListBound(filters.createdBefore) } : {}),
        ...(conditions.length > 0 ? { filter: { expression: conditions.join(' AND '), names, values } } : {}),
        limit,
        ...(position ? { position } : {}),
      },
      deadline,
    );
    return { cases: items.map(caseFromItem), next };
  }
}
