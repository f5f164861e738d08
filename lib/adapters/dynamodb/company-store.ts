import { GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { CompanyRecord, CompanyStore } from '../../accounts/ports.js';
import { queryAll, updateExisting } from './item-operations.js';
import { GSI1, ITEM_TYPES, keys } from './table-keys.js';
import type { Deadline } from '../../deadline.js';
import { withRetries } from '../retry.js';

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

  async get(companyId: string, deadline?: Deadline): Promise<CompanyRecord | undefined> {
    const command = new GetCommand({ TableName: this.tableName, Key: keys.company(companyId), ConsistentRead: true });
    const out = await withRetries((options) => this.client.send(command, options), deadline);
    return out.Item ? fromItem(out.Item) : undefined;
  }

  async create(record: CompanyRecord): Promise<void> {
    await withRetries((options) =>
      this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            ...keys.company(record.companyId),
            ...keys.companyListing(record.createdAt, record.companyId),
            type: ITEM_TYPES.company,
            ...record,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
        options,
      ),
    );
  }

  async list(): Promise<CompanyRecord[]> {
    const items = await queryAll(this.client, {
      TableName: this.tableName,
      IndexName: GSI1,
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.companiesIndexPk() },
    });
    return items.map(fromItem);
  }

  setAutoAttestation(companyId: string, enabled: boolean, at: string): Promise<boolean> {
    return updateExisting(this.client, {
      TableName: this.tableName,
      Key: keys.company(companyId),
      UpdateExpression: 'SET autoAttestation = :enabled, updatedAt = :at',
      ExpressionAttributeValues: { ':enabled': enabled, ':at': at },
    });
  }
}
