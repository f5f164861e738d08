import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { CompanyStore } from '../../accounts/ports.js';
import type { ApiKeyStore } from '../../auth/ports.js';
import type { CaseLister, CaseReader, EventLister, EventReader } from '../../cases/ports.js';
import { DynamoApiKeyStore } from './api-key-store.js';
import { DynamoCaseLister } from './case-lister.js';
import { DynamoCaseReader } from './case-reader.js';
import { DynamoCompanyStore } from './company-store.js';
import { DynamoEventStore } from './event-store.js';

/** The table-backed stores, built over one DocumentClient. Tests pass their own client. */
export interface TableStores {
  client: DynamoDBDocumentClient;
  keys: ApiKeyStore;
  companies: CompanyStore;
  caseReader: CaseReader;
  caseLister: CaseLister;
  /** The event routes' reads (GET /api/v1/events, GET /api/v1/events/{id}). */
  events: EventReader & EventLister;
}

export function tableStores(client: DynamoDBDocumentClient, tableName: string): TableStores {
  return {
    client,
    keys: new DynamoApiKeyStore(client, tableName),
    companies: new DynamoCompanyStore(client, tableName),
    caseReader: new DynamoCaseReader(client, tableName),
    caseLister: new DynamoCaseLister(client, tableName),
    events: new DynamoEventStore(client, tableName),
  };
}
