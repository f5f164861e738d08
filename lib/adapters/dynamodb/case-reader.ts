import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { StoredCase } from '../../cases/case-record.js';
import type { CaseReader } from '../../cases/ports.js';
import { storedMode, type Mode } from '../../mode.js';
import { keys } from './table-keys.js';
import type { Deadline } from '../../deadline.js';
import { withRetries } from '../retry.js';

export function caseFromItem(item: Record<string, unknown>): StoredCase {
  // Strip the storage-only attributes; the rest is the StoredCase written by the case writer.
  const { pk: _pk, sk: _sk, type: _type, gsi1pk: _gsi1pk, gsi1sk: _gsi1sk, gsi2pk: _gsi2pk, gsi2sk: _gsi2sk, ...rest } = item;
  return { ...rest, mode: storedMode(rest.mode) } as unknown as StoredCase;
}

export class DynamoCaseReader implements CaseReader {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async get(mode: Mode, caseId: string, deadline?: Deadline): Promise<StoredCase | undefined> {
    // Strongly consistent: a GET of an id just returned in a 201 must find the case (an eventually
    // consistent read may miss a write of the last second; DynamoDB Local never shows that).
    const command = new GetCommand({ TableName: this.tableName, Key: keys.case(mode, caseId), ConsistentRead: true });
    const out = await withRetries((options) => this.client.send(command, options), deadline);
    return out.Item ? caseFromItem(out.Item) : undefined;
  }
}
