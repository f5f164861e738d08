import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { grantStatements } from '../../../infra/stack/grants.js';
import type { TableAccess } from '../../../infra/contract/routes/index.js';
import { DynamoApiKeyStore } from '../../../lib/adapters/dynamodb/api-key-store.js';
import { DynamoRecoveryStore } from '../../../lib/adapters/dynamodb/recovery-store.js';
import { keys } from '../../../lib/adapters/dynamodb/table-keys.js';
import { applyRecoveryUpdate } from '../../../lib/cases/apply-recovery-update.js';
import type { StoredCase } from '../../../lib/cases/case-record.js';
import { listCasePayments } from '../../../lib/cases/list-case-payments.js';
import { recordPayment } from '../../../lib/cases/record-payment.js';
import type { Mode } from '../../../lib/mode.js';
import { decide, RecordingClient, TABLE_ARN, type ItemRequest } from './dynamodb-iam.js';
import { CASE, COMPANY, put, remove, update } from './store-requests.js';
import type { Statement } from './synth.js';

/**
 * The grant sets of Recovery and money (infra/stack/grants.ts GRANTS: record-payments, read-payments,
 * apply-recovery-updates, apply-test-recovery-updates), declared before their routes: each must allow
 * every request the real stores send for its work, and nothing the work does not need.
 */
const statementsOf = (access: TableAccess): Statement[] =>
  grantStatements(access, { table: { tableArn: TABLE_ARN } as ITable }).map((s) => s.toStatementJson() as Statement);
const may = (access: TableAccess, request: ItemRequest) => decide(statementsOf(access), request);

const CASE_ID = 'case_7Gk2mP9qR4sT8vW1xY3zA5';
const at = '2025-06-01T10:00:00.000Z';

function storedCase(mode: Mode, status: StoredCase['status'] = 'IN_RECOVERY'): StoredCase {
  return {
    caseId: CASE_ID,
    companyId: COMPANY,
    mode,
    reference: 'PC-1',
    status,
    recoveryGate: 'AUTO_ATTESTED',
    debtorName: 'Acme Widgets Ltd',
    debtorEmail: 'ap@acme.example',
    invoiceRef: 'INV-1',
    invoiceRefKey: 'inv-1',
    principalPence: 10_000,
    claimStatutoryInterest: false,
    invoiceDate: '2025-01-01',
    dueDate: '2025-01-31',
    invoiceFileKey: 'invoices/x.pdf',
    currency: 'GBP',
    createdAt: at,
    updatedAt: at,
    createdByKeyId: 'k_1',
    requestId: 'r',
    debtorVerification: { status: 'NOT_REQUESTED' },
    statusHistory: [{ status: 'DRAFT', at }],
  };
}

/** The requests a closing payment sends (the case read, then one transaction with every part a recovery change can have). */
async function closingPaymentRequests(mode: Mode): Promise<ItemRequest[]> {
  const client = new RecordingClient((name) =>
    name === 'GetCommand' ? { Item: { ...keys.case(mode, CASE_ID), ...storedCase(mode) } } : {},
  );
  const store = new DynamoRecoveryStore(client as unknown as DynamoDBDocumentClient, 't');
  await new DynamoApiKeyStore(client as unknown as DynamoDBDocumentClient, 't').touch('k_1', at, '2025-06-01T09:59:00Z');
  const { case: view } = await recordPayment(
    { store },
    { companyId: COMPANY, mode, caseId: CASE_ID, payment: { amount: 100, paidAt: '2025-03-01' }, requestId: 'r', now: new Date() },
  );
  expect(view.status).toBe('CLOSED');
  return client.requests;
}

async function backOfficeRequests(mode: Mode, withUpdateId: boolean): Promise<ItemRequest[]> {
  // With an updateId, the first read is of its record: none yet.
  let gets = 0;
  const client = new RecordingClient((name) =>
    name !== 'GetCommand' ? {} : withUpdateId && gets++ === 0 ? {} : { Item: { ...keys.case(mode, CASE_ID), ...storedCase(mode) } },
  );
  const store = new DynamoRecoveryStore(client as unknown as DynamoDBDocumentClient, 't');
  const outcome = await applyRecoveryUpdate(
    { store },
    {
      companyId: COMPANY,
      mode,
      update: {
        caseId: CASE_ID,
        type: 'payment_collected',
        amount: 100,
        paidAt: '2025-03-01',
        ...(withUpdateId ? { updateId: 'u-1', by: { name: 'R', email: 'r@example.com' } } : {}),
      },
      requestId: 'r',
      now: new Date(),
      source: withUpdateId ? 'back-office' : 'test-helper',
    },
  );
  expect(outcome.result).toBe('applied');
  // The update record was looked up first (with an updateId), then the case read, then the transaction.
  return client.requests;
}

const describeRequest = (r: ItemRequest) =>
  `${r.action}${r.enclosingOperation ? ' in transaction' : ''} ${r.leadingKeys[0]!.split('#')[0]}`;

describe('recovery grants', () => {
  it('record-payments allows every request a closing payment sends: key use, the case read, case, event, payment, guard released, ref kept', async () => {
    const requests = await closingPaymentRequests('live');
    expect(requests.map(describeRequest)).toEqual([
      'dynamodb:UpdateItem KEY',
      'dynamodb:GetItem CASE',
      'dynamodb:UpdateItem in transaction CASE',
      'dynamodb:PutItem in transaction EVENT',
      'dynamodb:PutItem in transaction CASE',
      'dynamodb:DeleteItem in transaction INVREF',
      'dynamodb:PutItem in transaction INVREF',
    ]);
    for (const request of requests) expect({ request, decision: may('record-payments', request) }).toEqual({ request, decision: 'allow' });
    // Each part only inside the transaction.
    for (const request of requests.filter((r) => r.enclosingOperation)) {
      const { enclosingOperation: _, ...alone } = request;
      expect(may('record-payments', alone)).not.toBe('allow');
    }
  });

  it('record-payments can neither change a case beyond its recovery fields nor create a case or an audit record through the payment grant', () => {
    const caseKey = keys.case('live', CASE);
    expect(may('record-payments', update(caseKey, ['principalPence'], 'TransactWriteItems'))).toBe('explicit-deny');
    expect(may('record-payments', update(caseKey, ['status', 'debtorName'], 'TransactWriteItems'))).toBe('explicit-deny');
    expect(may('record-payments', put(caseKey, ['caseId', 'debtorName', 'principalPence'], 'TransactWriteItems'))).toBe('implicit-deny');
    expect(may('record-payments', put(caseKey, ['caseId', 'attestedBy'], 'TransactWriteItems'))).toBe('implicit-deny');
    expect(may('record-payments', put(caseKey, ['caseId', 'amountPence'], 'TransactWriteItems'))).toBe('implicit-deny');
    expect(may('record-payments', remove(caseKey, 'TransactWriteItems'))).toBe('explicit-deny');
    expect(may('record-payments', put(keys.recoveryUpdate('live', COMPANY, 'u'), ['updateId'], 'TransactWriteItems'))).toBe(
      'implicit-deny',
    );
  });

  it('apply-recovery-updates allows the update record look-up, the case read and the closing transaction with the update record; no partner key', async () => {
    const requests = await backOfficeRequests('live', true);
    expect(requests.map(describeRequest)).toEqual([
      'dynamodb:GetItem RECOVERY',
      'dynamodb:GetItem CASE',
      'dynamodb:UpdateItem in transaction CASE',
      'dynamodb:PutItem in transaction EVENT',
      'dynamodb:PutItem in transaction CASE',
      'dynamodb:PutItem in transaction RECOVERY',
      // The collected payment left nothing outstanding: the case closed and gave its invoiceRef up.
      'dynamodb:DeleteItem in transaction INVREF',
      'dynamodb:PutItem in transaction INVREF',
    ]);
    for (const request of requests)
      expect({ request, decision: may('apply-recovery-updates', request) }).toEqual({ request, decision: 'allow' });
    expect(may('apply-recovery-updates', update(keys.apiKey('k_1'), ['lastUsedAt']))).toBe('implicit-deny');
    expect(may('record-payments', requests[0]!)).toBe('implicit-deny');
  });

  it('apply-test-recovery-updates changes test cases only: the same work on a live case is refused', async () => {
    const test = await backOfficeRequests('test', false);
    for (const request of test)
      expect({ request, decision: may('apply-test-recovery-updates', request) }).toEqual({ request, decision: 'allow' });
    const live = await backOfficeRequests('live', false);
    for (const request of live.filter((r) => r.enclosingOperation))
      expect({ request, decision: may('apply-test-recovery-updates', request) }).toEqual({
        request,
        decision: expect.stringMatching(/deny$/),
      });
    const closing = await closingPaymentRequests('test');
    for (const request of closing.filter((r) => r.enclosingOperation))
      expect({ request, decision: may('apply-test-recovery-updates', request) }).toEqual({ request, decision: 'allow' });
  });

  it('read-payments reads the case and queries its partition, and writes nothing', async () => {
    const client = new RecordingClient((name) =>
      name === 'GetCommand' ? { Item: { ...keys.case('live', CASE_ID), ...storedCase('live') } } : { Items: [] },
    );
    const store = new DynamoRecoveryStore(client as unknown as DynamoDBDocumentClient, 't');
    expect(await listCasePayments({ store }, { companyId: COMPANY, mode: 'live', caseId: CASE_ID })).toEqual([]);
    expect(client.requests.map(describeRequest).sort()).toEqual(['dynamodb:GetItem CASE', 'dynamodb:Query CASE']);
    for (const request of client.requests) expect(may('read-payments', request)).toBe('allow');
    expect(may('read-payments', put(keys.payment('live', CASE, 1), ['paymentId'], 'TransactWriteItems'))).toBe('implicit-deny');
    expect(may('read-payments', update(keys.case('live', CASE), ['status'], 'TransactWriteItems'))).not.toBe('allow');
  });
});
