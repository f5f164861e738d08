import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Deadline } from '../../deadline.js';
import type { RecordedRemoval, RecordedUpload, UploadRecords } from '../../uploads/ports.js';
import { REMOVAL_REMEMBERED_DAYS } from '../../uploads/record-uploads.js';
import { withRetries, withUnprocessedRetries } from '../retry.js';
import { ITEM_TYPES, keys, TTL_ATTRIBUTE } from './table-keys.js';

/** BatchGetItem takes at most 100 keys. */
const KEYS_PER_BATCH_GET = 100;

/** The record's `state`: only `present` vouches for an object. */
export const UPLOAD_RECORD_STATES = { present: 'present', removed: 'removed' } as const;

/**
 * Written only over nothing, over a record from before sequencers were kept, or over an older
 * event: `sequencer` is stored fixed-width (object-sequencer.ts), so `<` is S3's order.
 */
const NEWER_THAN_RECORD = 'attribute_not_exists(pk) OR attribute_not_exists(#sequencer) OR #sequencer < :sequencer';

const DAY_SECONDS = 86_400;

/**
 * Upload records: one item per invoice object S3 reported, written by the record-upload function
 * (and, locally, by the local S3's own events), read by batch creation in one BatchGetItem so an
 * invoice file is confirmed without a HEAD each. Each item holds the key's latest known event: a
 * present record (the object exists) or a tombstone (removed as of its sequencer, expiring through
 * the table's TTL). Every write is conditional on being newer, so a duplicate or late event is a
 * no-op; a tombstone replaced by a newer creation (the same key uploaded again) loses its TTL.
 */
export class DynamoUploadRecords implements UploadRecords {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly now: () => number = Date.now,
  ) {}

  record(upload: RecordedUpload, deadline?: Deadline): Promise<boolean> {
    return this.putIfNewer({ ...upload, state: UPLOAD_RECORD_STATES.present }, deadline);
  }

  recordRemoval(removal: RecordedRemoval, deadline?: Deadline): Promise<boolean> {
    // Counted from when the removal is written, not from when it happened: however late it was
    // processed, it is remembered for the whole span a late creation could still arrive in.
    const expiresAt = Math.floor(this.now() / 1000) + REMOVAL_REMEMBERED_DAYS * DAY_SECONDS;
    return this.putIfNewer({ ...removal, state: UPLOAD_RECORD_STATES.removed, [TTL_ATTRIBUTE]: expiresAt }, deadline);
  }

  private async putIfNewer(item: Record<string, unknown> & { fileKey: string; sequencer: string }, deadline?: Deadline): Promise<boolean> {
    const command = new PutCommand({
      TableName: this.tableName,
      Item: { ...keys.upload(item.fileKey), type: ITEM_TYPES.upload, ...item },
      ConditionExpression: NEWER_THAN_RECORD,
      ExpressionAttributeNames: { '#sequencer': 'sequencer' },
      ExpressionAttributeValues: { ':sequencer': item.sequencer },
    });
    try {
      await withRetries((options) => this.client.send(command, options), deadline);
      return true;
    } catch (error) {
      // The record already holds this event or a later one: the key's state is already newer.
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  /**
   * The keys whose record says the object is present, strongly consistent (a record written before
   * the request is seen). A tombstone, or a record from before sequencers were kept (which a late
   * creation event may have left), vouches for nothing: those keys are asked of the object store.
   */
  async recorded(fileKeys: readonly string[], deadline?: Deadline): Promise<ReadonlySet<string>> {
    const found = new Set<string>();
    const chunks: string[][] = [];
    for (let i = 0; i < fileKeys.length; i += KEYS_PER_BATCH_GET) chunks.push(fileKeys.slice(i, i + KEYS_PER_BATCH_GET));
    await Promise.all(
      chunks.map((chunk) =>
        withUnprocessedRetries(
          chunk.map((fileKey): Record<string, unknown> => ({ ...keys.upload(fileKey) })),
          async (wanted, options) => {
            const command = new BatchGetCommand({
              RequestItems: {
                [this.tableName]: {
                  Keys: [...wanted],
                  ConsistentRead: true,
                  ProjectionExpression: 'fileKey, #state',
                  ExpressionAttributeNames: { '#state': 'state' },
                },
              },
            });
            const out = await this.client.send(command, options);
            for (const item of out.Responses?.[this.tableName] ?? []) {
              if (typeof item.fileKey === 'string' && item.state === UPLOAD_RECORD_STATES.present) found.add(item.fileKey);
            }
            return out.UnprocessedKeys?.[this.tableName]?.Keys ?? [];
          },
          deadline,
        ),
      ),
    );
    return found;
  }
}
