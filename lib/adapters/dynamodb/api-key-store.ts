import { GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { ApiKeyRecord, ApiKeyStore } from '../../auth/ports.js';
import { storedMode } from '../../mode.js';
import { queryAll, updateExisting } from './item-operations.js';
import { GSI1, ITEM_TYPES, keys } from './table-keys.js';
import type { Deadline } from '../../deadline.js';
import { withRetries } from '../retry.js';

function fromItem(item: Record<string, unknown>): ApiKeyRecord {
  return {
    keyId: item.keyId as string,
    companyId: item.companyId as string,
    scopes: [...((item.scopes as string[] | Set<string> | undefined) ?? [])],
    mode: storedMode(item.mode),
    secretHash: item.secretHash as string,
    revoked: item.revoked === true,
    createdAt: item.createdAt as string,
    ...(item.revokedAt ? { revokedAt: item.revokedAt as string } : {}),
    ...(item.lastUsedAt ? { lastUsedAt: item.lastUsedAt as string } : {}),
    ...(item.rotatedFrom ? { rotatedFrom: item.rotatedFrom as string } : {}),
  };
}

export class DynamoApiKeyStore implements ApiKeyStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async get(keyId: string, deadline?: Deadline): Promise<ApiKeyRecord | undefined> {
    // Strongly consistent: a revocation must take effect on the very next request.
    const command = new GetCommand({ TableName: this.tableName, Key: keys.apiKey(keyId), ConsistentRead: true });
    const out = await withRetries((options) => this.client.send(command, options), deadline);
    return out.Item ? fromItem(out.Item) : undefined;
  }

  async create(record: ApiKeyRecord): Promise<void> {
    await withRetries((options) =>
      this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            ...keys.apiKey(record.keyId),
            ...keys.apiKeyListing(record.companyId, record.createdAt, record.keyId),
            type: ITEM_TYPES.apiKey,
            ...record,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
        options,
      ),
    );
  }

  async listForCompany(companyId: string): Promise<ApiKeyRecord[]> {
    const items = await queryAll(this.client, {
      TableName: this.tableName,
      IndexName: GSI1,
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.companyKeysIndexPk(companyId) },
    });
    return items.map(fromItem);
  }

  revoke(keyId: string, at: string): Promise<boolean> {
    return updateExisting(this.client, {
      TableName: this.tableName,
      Key: keys.apiKey(keyId),
      UpdateExpression: 'SET revoked = :true, revokedAt = if_not_exists(revokedAt, :at)',
      ExpressionAttributeValues: { ':true': true, ':at': at },
    });
  }

  async touch(keyId: string, at: string, notAfter: string, deadline?: Deadline): Promise<void> {
    try {
      await withRetries(
        (options) =>
          this.client.send(
            new UpdateCommand({
              TableName: this.tableName,
              Key: keys.apiKey(keyId),
              UpdateExpression: 'SET lastUsedAt = :at',
              ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(lastUsedAt) OR lastUsedAt < :notAfter)',
              ExpressionAttributeValues: { ':at': at, ':notAfter': notAfter },
            }),
            options,
          ),
        deadline,
      );
    } catch (error) {
      // Another request recorded the use first: exactly what the condition is for.
      if (error instanceof ConditionalCheckFailedException) return;
      throw error;
    }
  }
}
