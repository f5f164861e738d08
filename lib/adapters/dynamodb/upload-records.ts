import { BatchGetCommand, DeleteCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Deadline } from '../../deadline.js';
import type { RecordedUpload, UploadRecords } from '../../uploads/ports.js';
import { ServiceUnavailableError } from '../../errors.js';
import { backoffMs, DEFAULT_RETRY_POLICY, sleep, withRetries } from '../retry.js';
import { ITEM_TYPES, keys } from './table-keys.js';

/** BatchGetItem takes at most 100 keys. */
const KEYS_PER_BATCH_GET = 100;
/** Rounds for keys DynamoDB leaves unprocessed (it sheds load that way) before the read counts as failed. */
const UNPROCESSED_ROUNDS = 5;

/**
 * Upload records: one item per invoice object S3 reported, written by the record-upload function
 * (and, locally, by the local S3's own events), read by batch creation in one BatchGetItem so an
 * invoice file is confirmed without a HEAD each. The put and the delete are idempotent: an event
 * delivered twice writes the same item again.
 */
export class DynamoUploadRecords implements UploadRecords {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async record(upload: RecordedUpload, deadline?: Deadline): Promise<void> {
    const command = new PutCommand({ TableName: this.tableName, Item: { ...keys.upload(upload.fileKey), type: ITEM_TYPES.upload, ...upload } });
    await withRetries((options) => this.client.send(command, options), deadline);
  }

  async forget(fileKey: string, deadline?: Deadline): Promise<void> {
    const command = new DeleteCommand({ TableName: this.tableName, Key: keys.upload(fileKey) });
    await withRetries((options) => this.client.send(command, options), deadline);
  }

  /** The keys that have a record, strongly consistent (a record written before the request is seen). */
  async recorded(fileKeys: readonly string[], deadline?: Deadline): Promise<ReadonlySet<string>> {
    const found = new Set<string>();
    const chunks: string[][] = [];
    for (let i = 0; i < fileKeys.length; i += KEYS_PER_BATCH_GET) chunks.push(fileKeys.slice(i, i + KEYS_PER_BATCH_GET));
    await Promise.all(
      chunks.map(async (chunk) => {
        let wanted: Record<string, unknown>[] = chunk.map((fileKey) => ({ ...keys.upload(fileKey) }));
        for (let round = 0; wanted.length > 0; round++) {
          if (round === UNPROCESSED_ROUNDS) throw new ServiceUnavailableError();
          // Unprocessed keys are DynamoDB shedding load: ask again after a backoff, not at once.
          if (round > 0) await sleep(backoffMs(round, DEFAULT_RETRY_POLICY));
          const command = new BatchGetCommand({ RequestItems: { [this.tableName]: { Keys: wanted, ConsistentRead: true, ProjectionExpression: 'fileKey' } } });
          const out = await withRetries((options) => this.client.send(command, options), deadline);
          for (const item of out.Responses?.[this.tableName] ?? []) if (typeof item.fileKey === 'string') found.add(item.fileKey);
          wanted = out.UnprocessedKeys?.[this.tableName]?.Keys ?? [];
        }
      }),
    );
    return found;
  }
}
