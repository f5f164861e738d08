import { GetCommand, PutCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GSI1, ITEM_TYPES, keys } from './table-keys.js';

export interface CompanyRecord {
  companyId: string;
  name: string;
  /** Agreed when access was approved: cases created through the API may progress automatically. */
  autoAttestation: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface CompanyStore {
  get(companyId: string): Promise<CompanyRecord | undefined>;
  create(record: CompanyRecord): Promise<void>;
  list(): Promise<CompanyRecord[]>;
  /** Returns false when the company does not exist. */
  setAutoAttestation(companyId: string, enabled: boolean, at: string): Promise<boolean>;
}

function fromItem(item: Record<string, unknown>): CompanyRecord {
  return {
    companyId: item.companyId as string,
    name: item.name as string,
    autoAttestation: item.autoAttestation === true,
    createdAt: item.createdAt as string,
    updatedAt: item.updatedAt as string,
  };
}

export class DynamoCompanyStore implements CompanyStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async get(companyId: string): Promise<CompanyRecord | undefined> {
    const out = await this.client.send(new GetCommand({ TableName: this.tableName, Key: keys.company(companyId), ConsistentRead: true }));
    return out.Item ? fromItem(out.Item) : undefined;
  }

  async create(record: CompanyRecord): Promise<void> {
    await this.client.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...keys.company(record.companyId), ...keys.companyListing(record.createdAt, record.companyId), type: ITEM_TYPES.company, ...record },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  async list(): Promise<CompanyRecord[]> {
    const items: CompanyRecord[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const out = await this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: GSI1,
          KeyConditionExpression: 'gsi1pk = :pk',
          ExpressionAttributeValues: { ':pk': keys.companiesIndexPk() },
          ExclusiveStartKey: startKey,
        }),
      );
      items.push(...(out.Items ?? []).map(fromItem));
      startKey = out.LastEvaluatedKey;
    } while (startKey);
    return items;
  }

  async setAutoAttestation(companyId: string, enabled: boolean, at: string): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.company(companyId),
          UpdateExpression: 'SET autoAttestation = :enabled, updatedAt = :at',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':enabled': enabled, ':at': at },
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }
}
