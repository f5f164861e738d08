import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ReferenceAllocator } from '../../cases/ports.js';
import { ITEM_TYPES, keys } from './table-keys.js';
import type { Deadline } from '../../deadline.js';
import { withRetries } from '../retry.js';

/**
 * One atomic counter for the whole service: a batch reserves its block with a single ADD, so
 * references are unique across companies and consecutive within a batch. Numbers reserved for
 * cases that are then rejected (a duplicate found at write time) are simply not used.
 */
export class DynamoReferenceAllocator implements ReferenceAllocator {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async reserve(count: number, deadline?: Deadline): Promise<number> {
    if (!Number.isInteger(count) || count < 1) throw new Error(`cannot reserve ${count} references`);
    const command = new UpdateCommand({
      TableName: this.tableName,
      Key: keys.caseReferenceCounter(),
      UpdateExpression: 'ADD #seq :n SET #type = :type',
      ExpressionAttributeNames: { '#seq': 'sequence', '#type': 'type' },
      ExpressionAttributeValues: { ':n': count, ':type': ITEM_TYPES.counter },
      ReturnValues: 'UPDATED_NEW',
    });
    const out = await withRetries((options) => this.client.send(command, options), deadline);
    const last = Number(out.Attributes?.sequence);
    if (!Number.isSafeInteger(last)) throw new Error('reference counter returned no value');
    return last - count + 1;
  }
}
