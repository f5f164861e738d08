import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoApiKeyStore } from '../../../lib/adapters/dynamodb/api-key-store.js';
import { DynamoCaseChangeStore } from '../../../lib/adapters/dynamodb/case-change-store.js';
import { DynamoCaseWriter } from '../../../lib/adapters/dynamodb/case-writer.js';
import { DynamoIdempotencyStore } from '../../../lib/adapters/dynamodb/idempotency-store.js';
import { DynamoReferenceAllocator } from '../../../lib/adapters/dynamodb/reference-allocator.js';
import { DynamoUploadRecords } from '../../../lib/adapters/dynamodb/upload-records.js';
import { keys } from '../../../lib/adapters/dynamodb/table-keys.js';
import type { StoredCase } from '../../../lib/cases/case-record.js';
import { confirmCases, withdrawCaseFor } from '../../../lib/cases/change-case.js';
import type { NewCase } from '../../../lib/cases/ports.js';
import type { Mode } from '../../../lib/mode.js';
import { RecordingClient, type ItemRequest } from './dynamodb-iam.js';

/**
 * The item requests the real stores send for the work of each function, recorded instead of sent,
 * for iam.test.ts to evaluate against the synthesised policies, and the request builders it uses.
 */
export const COMPANY = 'co_7f3a';
export const CASE = 'case_01HZX';
export const EVENT = 'evt_01HZX';
export const FILE_KEY = `invoices/${COMPANY}/F1.pdf`;
export const put = (key: { pk: string; sk: string }, attributes: string[], enclosingOperation?: 'TransactWriteItems'): ItemRequest => ({
  action: 'dynamodb:PutItem',
  leadingKeys: [key.pk],
  attributes: ['pk', 'sk', ...attributes],
  ...(enclosingOperation ? { enclosingOperation } : {}),
});
export const update = (key: { pk: string; sk: string }, attributes: string[], enclosingOperation?: 'TransactWriteItems'): ItemRequest => ({
  action: 'dynamodb:UpdateItem',
  leadingKeys: [key.pk],
  attributes: ['pk', 'sk', ...attributes],
  ...(enclosingOperation ? { enclosingOperation } : {}),
});
export const remove = (key: { pk: string; sk: string }, enclosingOperation?: 'TransactWriteItems'): ItemRequest => ({
  action: 'dynamodb:DeleteItem',
  leadingKeys: [key.pk],
  attributes: ['pk', 'sk'],
  ...(enclosingOperation ? { enclosingOperation } : {}),
});

/** Every request withdraw-case sends for one withdrawal: the key's use, the case read, the one transaction. */
export async function withdrawRequests(mode: Mode): Promise<ItemRequest[]> {
  const at = '2025-06-01T10:00:00.000Z';
  const stored = {
    caseId: CASE,
    companyId: COMPANY,
    mode,
    reference: 'PC-1',
    status: 'DRAFT',
    recoveryGate: 'AWAITING_CONFIRMATION',
    debtorName: 'Acme Widgets Ltd',
    invoiceRef: 'INV-1',
    invoiceRefKey: 'inv-1',
    principalPence: 100,
    invoiceDate: '2025-01-01',
    dueDate: '2025-01-31',
    currency: 'GBP',
    createdAt: at,
    updatedAt: at,
    debtorVerification: { status: 'PENDING' },
    statusHistory: [{ status: 'DRAFT', at }],
  } as unknown as StoredCase;
  const client = new RecordingClient((name) => (name === 'GetCommand' ? { Item: { ...keys.case(mode, CASE), ...stored } } : {}));
  const ddb = client as unknown as DynamoDBDocumentClient;
  await new DynamoApiKeyStore(ddb, 't').touch('k_1', at, '2025-06-01T09:59:00Z');
  const withdrawn = await withdrawCaseFor(
    { store: new DynamoCaseChangeStore(ddb, 't'), now: () => new Date('2025-06-01T10:05:00Z') },
    { mode, companyId: COMPANY, caseId: CASE, reason: 'sent in error' },
  );
  expect(withdrawn.status).toBe('WITHDRAWN');
  return client.requests;
}

/** Every request the real stores send while create-cases does its work, recorded instead of sent. */
export async function createCasesRequests(mode: Mode): Promise<ItemRequest[]> {
  const client = new RecordingClient((name) => (name === 'UpdateCommand' ? { Attributes: { sequence: 42 } } : {}));
  const ddb = client as unknown as DynamoDBDocumentClient;
  const now = new Date('2025-06-01T10:00:00Z');
  await new DynamoApiKeyStore(ddb, 't').touch('k_1', now.toISOString(), '2025-06-01T09:59:00Z');
  const idempotency = new DynamoIdempotencyStore(ddb, 't');
  await idempotency.claim({
    mode,
    companyId: COMPANY,
    idempotencyKey: 'idem-1',
    requestId: 'r1',
    now,
    ttlSeconds: 86400,
    staleAfterSeconds: 60,
    requestHash: 'h',
  });
  await idempotency.complete(mode, COMPANY, 'idem-1', 'r1', { created: [], rejected: [] }, now);
  // An answer too large for a plain map is stored gzipped under another attribute.
  const large = {
    created: [],
    rejected: Array.from({ length: 100 }, (_, i) => ({ index: i, invoiceRef: `${i}`.repeat(2000), code: 'INVALID_FIELD', message: 'x' })),
  };
  await idempotency.complete(mode, COMPANY, 'idem-2', 'r2', large, now);
  await idempotency.release(mode, COMPANY, 'idem-1', 'r1');
  await new DynamoReferenceAllocator(ddb, 't').reserve(5);
  const newCase = {
    stored: {
      caseId: CASE,
      companyId: COMPANY,
      mode,
      invoiceRef: 'INV-1',
      invoiceRefKey: 'inv-1',
      reference: 'PC-1',
      createdAt: now.toISOString(),
    },
    audit: { caseId: CASE, companyId: COMPANY, mode, attestedBy: 'Jane Smith' },
    event: { id: EVENT, type: 'case.created', createdAt: now.toISOString(), livemode: mode === 'live', data: { object: { id: CASE } } },
  } as unknown as NewCase;
  await new DynamoCaseWriter(ddb, 't').write(newCase);
  // A transaction whose answer is lost, then read back: the guards in one BatchGetItem.
  const lost = new RecordingClient((name) => {
    if (name === 'TransactWriteItemsCommand') throw Object.assign(new Error('Request timed out'), { name: 'TimeoutError' });
    return {};
  });
  // (Its settling attempt, the same transaction again, is left out: it would come 5 s later.)
  await new DynamoCaseWriter(
    lost as unknown as DynamoDBDocumentClient,
    't',
    { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
    { settleAfterMs: 60_000 },
  ).write(newCase);
  await new DynamoUploadRecords(ddb, 't').recorded([FILE_KEY]);
  return [...client.requests, ...lost.requests];
}

/** Every request a confirmation sends (the change store's one transaction), recorded instead of sent. */
export async function confirmRequests(mode: Mode, debtorVerification?: StoredCase['debtorVerification']): Promise<ItemRequest[]> {
  const client = new RecordingClient();
  const store = new DynamoCaseChangeStore(client as unknown as DynamoDBDocumentClient, 't');
  const at = '2025-06-01T10:00:00.000Z';
  const stored = {
    caseId: CASE,
    companyId: COMPANY,
    mode,
    reference: 'PC-1',
    status: 'DRAFT',
    recoveryGate: 'AWAITING_CONFIRMATION',
    invoiceRef: 'INV-1',
    invoiceRefKey: 'inv-1',
    principalPence: 100,
    invoiceDate: '2025-01-01',
    dueDate: '2025-01-31',
    createdAt: at,
    updatedAt: at,
    ...(debtorVerification ? { debtorVerification, statusHistory: [{ status: 'DRAFT', at }] } : {}),
  } as unknown as StoredCase;
  const [outcome] = await confirmCases(
    { store: { get: async () => stored, apply: (change) => store.apply(change) }, now: () => new Date('2025-06-01T11:00:00Z') },
    {
      mode,
      companyId: COMPANY,
      caseIds: [CASE],
      confirmedBy: { name: 'Jane Smith', email: 'jane@example.com' },
      requestId: 'r1',
      source: 'dashboard',
      principal: 'arn:aws:iam::123456789012:role/dashboard',
    },
  );
  expect(outcome?.result).toBe('confirmed');
  return client.requests;
}
