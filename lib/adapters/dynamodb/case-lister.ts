import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { StoredCase } from '../../cases/case-record.js';
import type { CaseLister, CasePage, CasePageRequest } from '../../cases/ports.js';
import type { Deadline } from '../../deadline.js';
import type { Mode } from '../../mode.js';
import { withRetries } from '../retry.js';
import { caseFromItem } from './case-reader.js';
import { pageShardedIndex } from './sharded-index-page.js';
import { CASE_LIST_SHARDS, keys } from './table-keys.js';

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

  async findByInvoiceRef(mode: Mode, companyId: string, invoiceRefKey: string, deadline?: Deadline): Promise<StoredCase | undefined> {
    const guardRead = new GetCommand({
      TableName: this.tableName,
      Key: keys.invoiceRefGuard(mode, companyId, invoiceRefKey),
      ConsistentRead: true,
    });
    const guard = await withRetries((options) => this.client.send(guardRead, options), deadline);
    const caseId = guard.Item?.caseId;
    if (typeof caseId !== 'string') return undefined;
    const caseRead = new GetCommand({ TableName: this.tableName, Key: keys.case(mode, caseId), ConsistentRead: true });
    const found = await withRetries((options) => this.client.send(caseRead, options), deadline);
    if (!found.Item) return undefined;
    const stored = caseFromItem(found.Item);
    return stored.companyId === companyId ? stored : undefined;
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
