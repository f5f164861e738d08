import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { EventLister, EventPage, EventPageRequest, EventReader, StoredEvent } from '../../cases/ports.js';
import type { Deadline } from '../../deadline.js';
import type { Mode } from '../../mode.js';
import { withRetries } from '../retry.js';
import { eventFromItem } from './event-items.js';
import { pageShardedIndex } from './sharded-index-page.js';
import { CASE_LIST_SHARDS, keys } from './table-keys.js';

const ALL_SHARDS = Array.from({ length: CASE_LIST_SHARDS }, (_, shard) => shard);

/**
 * The event routes' storage (event items: event-items.ts; keys: table-keys.ts).
 * - Read: GetItem `EVENT#<m><eventId>`, strongly consistent (an event is read by the id a webhook
 *   or a list gave; it exists as soon as its change committed).
 * - List: gsi2 `EVENTS#<m><companyId>#<shard>`, every shard merged newest first
 *   (sharded-index-page.ts, shared with the case list). An event is listed in its case's shard, so
 *   a `caseId` filter reads that one shard only, with a FilterExpression on `caseId` (other cases
 *   share the shard); `type` is a FilterExpression too. The date range (which the use case starts
 *   no earlier than the retention period) is the gsi2sk range.
 */
export class DynamoEventStore implements EventReader, EventLister {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async get(mode: Mode, eventId: string, deadline?: Deadline): Promise<StoredEvent | undefined> {
    const command = new GetCommand({ TableName: this.tableName, Key: keys.event(mode, eventId), ConsistentRead: true });
    const out = await withRetries((options) => this.client.send(command, options), deadline);
    return out.Item ? eventFromItem(out.Item) : undefined;
  }

  async page(request: EventPageRequest, deadline?: Deadline): Promise<EventPage> {
    const { mode, companyId, filters, limit, position } = request;
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = {};
    const conditions: string[] = [];
    if (filters.type !== undefined) {
      names['#eventType'] = 'eventType';
      values[':eventType'] = filters.type;
      conditions.push('#eventType = :eventType');
    }
    if (filters.caseId !== undefined) {
      names['#caseId'] = 'caseId';
      values[':caseId'] = filters.caseId;
      conditions.push('#caseId = :caseId');
    }
    const { items, next } = await pageShardedIndex(
      {
        client: this.client,
        tableName: this.tableName,
        shards: filters.caseId === undefined ? ALL_SHARDS : [keys.caseListShard(filters.caseId)],
        partitionOf: (shard) => keys.eventListPartition(mode, companyId, shard),
        ...(filters.createdFrom !== undefined ? { lower: keys.eventListBound(filters.createdFrom) } : {}),
        ...(filters.createdBefore !== undefined ? { before: keys.eventListBound(filters.createdBefore) } : {}),
        ...(conditions.length > 0 ? { filter: { expression: conditions.join(' AND '), names, values } } : {}),
        limit,
        ...(position ? { position } : {}),
      },
      deadline,
    );
    return { events: items.map(eventFromItem), next };
  }
}
