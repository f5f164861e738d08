import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config, type AppConfig } from '../config.js';
import { DynamoApiKeyStore, type ApiKeyStore } from './api-key-store.js';
import { DynamoCaseReader, type CaseReader } from './case-store.js';
import { DynamoCompanyStore, type CompanyStore } from './company-store.js';
import { documentClient } from './dynamo-client.js';

/** The table-backed stores, built over one DocumentClient. Tests pass their own client. */
export interface TableStores {
  client: DynamoDBDocumentClient;
  keys: ApiKeyStore;
  companies: CompanyStore;
  caseReader: CaseReader;
}

export function tableStores(client: DynamoDBDocumentClient, tableName: string): TableStores {
  return {
    client,
    keys: new DynamoApiKeyStore(client, tableName),
    companies: new DynamoCompanyStore(client, tableName),
    caseReader: new DynamoCaseReader(client, tableName),
  };
}

/** Stores for the running process, from the environment (read once, failing fast). */
export function defaultTableStores(cfg: AppConfig = config()): TableStores {
  return tableStores(documentClient(cfg), cfg.tableName);
}
