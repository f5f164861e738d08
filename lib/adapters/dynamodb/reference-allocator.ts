import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ReferenceAllocator } from '../../cases/ports.js';
import type { Deadline } from '../../deadline.js';
import { withRetries } from '../retry.js';
import { ITEM_TYPES, keys } from './table-keys.js';

/** Sequence numbers a process takes from the counter at once. */
export const REFERENCE_BLOCK_SIZE = 1_000;

/**
 * Case references come from one atomic counter for the whole service, so they are unique across
 * companies. A process does not write the counter for every batch (one item written by every
 * batch of every company would be the service's hottest partition): it takes a block of 1,000
 * numbers with one ADD and hands them out until they run out, so a batch's references are
 * consecutive and the counter is written once per 1,000 cases per Lambda instance. Numbers of a
 * block left unused when the instance ends, or reserved for cases then rejected, are gaps: a
 * reference stays unique, short and readable; it was never meant to count cases.
 */
export class DynamoReferenceAllocator implements ReferenceAllocator {
  private block = { next: 0, end: 0 };

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly blockSize: number = REFERENCE_BLOCK_SIZE,
  ) {}

  async reserve(count: number, deadline?: Deadline): Promise<number> {
    if (!Number.isInteger(count) || count < 1) throw new Error(`cannot reserve ${count} references`);
    if (this.block.end - this.block.next >= count) return this.take(count);
    const size = Math.max(count, this.blockSize);
    const command = new UpdateCommand({
      TableName: this.tableName,
      Key: keys.caseReferenceCounter(),
      UpdateExpression: 'ADD #seq :n SET #type = :type',
      ExpressionAttributeNames: { '#seq': 'sequence', '#type': 'type' },
      ExpressionAttributeValues: { ':n': size, ':type': ITEM_TYPES.counter },
      ReturnValues: 'UPDATED_NEW',
    });
    const out = await withRetries((options) => this.client.send(command, options), deadline);
    const last = Number(out.Attributes?.sequence);
    if (!Number.isSafeInteger(last)) throw new Error('reference counter returned no value');
    // Taken synchronously after the await: a request running alongside cannot take the same numbers.
    this.block = { next: last - size + 1, end: last + 1 };
    return this.take(count);
  }

  private take(count: number): number {
    const first = this.block.next;
    this.block.next += count;
    return first;
  }
}
