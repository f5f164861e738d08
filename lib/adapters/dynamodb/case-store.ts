import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { StoredCase } from '../../cases/case-record.js';
import type { CaseReader } from '../../cases/ports.js';
import { keys } from './table-keys.js';

export function caseFromItem(item: Record<string, unknown>): StoredCase {
  // Strip the storage-only attributes; the rest is the StoredCase written by the case writer.
  const { pk: _pk, sk: _sk, type: _type, gsi2pk: _gsi2pk, gsi2sk: _gsi2sk, ...rest } = item;
  return rest as unknown as StoredCase;
}

export class DynamoCaseReader implements CaseReader {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async get(caseId: string): Promise<StoredCase | undefined> {
    const out = await this.client.send(new GetCommand({ TableName: this.tableName, Key: keys.case(caseId) }));
    return out.Item ? caseFromItem(out.Item) : undefined;
  }
}
