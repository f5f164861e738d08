import { Match } from 'aws-cdk-lib/assertions';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import { API_FUNCTION_IDS, API_FUNCTIONS, ROUTE_MANIFEST } from '../../../infra/contract/route-table.js';
import { WRITABLE_ATTRIBUTES } from '../../../infra/stack/grants.js';
import { DynamoApiKeyStore } from '../../../lib/adapters/dynamodb/api-key-store.js';
import { DynamoCaseLister } from '../../../lib/adapters/dynamodb/case-lister.js';
import { DynamoEventStore } from '../../../lib/adapters/dynamodb/event-store.js';
import { DynamoWebhookEndpointStore } from '../../../lib/adapters/dynamodb/webhook-endpoint-store.js';
import { DynamoUploadRecords } from '../../../lib/adapters/dynamodb/upload-records.js';
import { keys } from '../../../lib/adapters/dynamodb/table-keys.js';
import { MODES } from '../../../lib/mode.js';
import { decide, decideValidated, itemRequestsOf, RecordingClient, type ItemRequest } from './dynamodb-iam.js';
import {
  CASE,
  COMPANY,
  confirmRequests,
  createCasesRequests,
  EVENT,
  FILE_KEY,
  put,
  remove,
  update,
  withdrawRequests,
} from './store-requests.js';
import {
  PLATFORM_ACTIONS,
  actionsOf,
  actionsOfFunction,
  dataActions,
  resourcesOfType,
  statementsOfFunction,
  synth,
  type Statement,
} from './synth.js';

/** Every API function, by construct id (the route manifest's). */
const FUNCTIONS = API_FUNCTION_IDS.map((id) => API_FUNCTIONS[id].constructId);
/** The internal functions (AWS IAM callers, no API key): by construct id. */
const INTERNAL_FUNCTIONS: readonly string[] = API_FUNCTION_IDS.filter((id) => ROUTE_MANIFEST[id].authorization === 'aws-iam').map(
  (id) => API_FUNCTIONS[id].constructId,
);
const tableArn = { 'Fn::GetAtt': [Match.stringLikeRegexp('^DataStoresTable'), 'Arn'] };
const invoiceObjects = ['/invoices/*', '/test-invoices/*'].map((suffix) => ({
  'Fn::Join': ['', [{ 'Fn::GetAtt': [Match.stringLikeRegexp('^DataStoresInvoiceBucket'), 'Arn'] }, suffix]],
}));

function statementWithSid(statements: Statement[], sid: string): Statement {
  const found = statements.filter((s) => s.Sid === sid);
  expect(found).toHaveLength(1);
  return found[0] as Statement;
}

const synthesised = synth();
type PolicyHolder = string;
const policyOf = (id: PolicyHolder) => statementsOfFunction(synthesised, id);
const may = (id: PolicyHolder, request: ItemRequest) => decide(policyOf(id), request);

describe('least-privilege IAM', () => {
  it('get-case may only read table items and record API-key use', () => {
    expect(dataActions(actionsOfFunction(synthesised, 'GetCase'))).toEqual([
      'dynamodb:BatchWriteItem',
      'dynamodb:DeleteItem',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
    ]);
    const allowed = policyOf('GetCase')
      .filter((s) => s.Effect === 'Allow')
      .flatMap(actionsOf);
    expect([...new Set(allowed)].sort()).toEqual([...PLATFORM_ACTIONS, 'dynamodb:GetItem', 'dynamodb:UpdateItem'].sort());
  });

  it('list-cases may only read API keys, query the case-list index and invoiceRef partitions, batch-read cases, record API-key use and read the cursor secret', () => {
    const allowed = policyOf('ListCases')
      .filter((s) => s.Effect === 'Allow')
      .flatMap(actionsOf);
    expect([...new Set(allowed)].sort()).toEqual(
      [
        ...PLATFORM_ACTIONS,
        'dynamodb:BatchGetItem',
        'dynamodb:GetItem',
        'dynamodb:Query',
        'dynamodb:UpdateItem',
        'secretsmanager:DescribeSecret',
        'secretsmanager:GetSecretValue',
      ].sort(),
    );
    const query = statementWithSid(policyOf('ListCases'), 'ListCasesByCompany');
    expect(query).toEqual({
      Sid: 'ListCasesByCompany',
      Effect: 'Allow',
      Action: 'dynamodb:Query',
      Resource: expect.anything(),
      Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['CASES#*'] } },
    });
    expect(Match.objectLike({ r: { 'Fn::Join': ['', [tableArn, '/index/gsi2']] } }).test({ r: query.Resource }).isSuccess).toBe(true);
    // The look-up by invoiceRef: a Query of the table only on invoiceRef partitions (its guard and WITHDRAWN# items).
    const lookUp = statementWithSid(policyOf('ListCases'), 'FindCasesByInvoiceRef');
    expect(lookUp).toMatchObject({
      Effect: 'Allow',
      Action: 'dynamodb:Query',
      Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['INVREF#*'] } },
    });
    expect(Match.objectLike({ r: tableArn }).test({ r: lookUp.Resource }).isSuccess).toBe(true);
    const secret = policyOf('ListCases').filter((s) => actionsOf(s).some((a) => a.startsWith('secretsmanager:')));
    expect(secret).toHaveLength(1);
    expect(secret[0]!.Resource).toEqual({ Ref: expect.stringMatching(/^CursorSecret/) });
  });

  it('get-event may only read table items (API key, events) and record API-key use', () => {
    const allowed = policyOf('GetEvent')
      .filter((s) => s.Effect === 'Allow')
      .flatMap(actionsOf);
    expect([...new Set(allowed)].sort()).toEqual([...PLATFORM_ACTIONS, 'dynamodb:GetItem', 'dynamodb:UpdateItem'].sort());
  });

  it('list-events may only query the event list\u2019s index partitions, record API-key use and read the cursor secret', () => {
    const allowed = policyOf('ListEvents')
      .filter((s) => s.Effect === 'Allow')
      .flatMap(actionsOf);
    expect([...new Set(allowed)].sort()).toEqual(
      [
        ...PLATFORM_ACTIONS,
        'dynamodb:GetItem',
        'dynamodb:Query',
        'dynamodb:UpdateItem',
        'secretsmanager:DescribeSecret',
        'secretsmanager:GetSecretValue',
      ].sort(),
    );
    const query = statementWithSid(policyOf('ListEvents'), 'ListEventsByCompany');
    expect(query).toEqual({
      Sid: 'ListEventsByCompany',
      Effect: 'Allow',
      Action: 'dynamodb:Query',
      Resource: expect.anything(),
      Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['EVENTS#*'] } },
    });
    expect(Match.objectLike({ r: { 'Fn::Join': ['', [tableArn, '/index/gsi2']] } }).test({ r: query.Resource }).isSuccess).toBe(true);
    expect(policyOf('ListEvents').filter((s) => actionsOf(s).includes('dynamodb:Query'))).toEqual([query]);
  });

  it('only the list functions may query (list-cases: the case-list index and invoiceRef partitions of the table; list-events: the event list; the webhook endpoint and delivery lists), and no function may scan', () => {
    // ListCasePayments: one Query of its own case's partition (read-payments). RedeliverWebhookEvent: its endpoint's
    // waiting list (`WHW#`), read by the fill that queues the redelivery when a slot is free.
    const lists = ['ListCases', 'ListEvents', 'ListWebhookEndpoints', 'ListWebhookDeliveries', 'ListCasePayments', 'RedeliverWebhookEvent'];
    for (const id of FUNCTIONS) {
      const allowed = policyOf(id)
        .filter((s) => s.Effect === 'Allow')
        .flatMap(actionsOf);
      expect({ id, query: allowed.includes('dynamodb:Query') }).toEqual({ id, query: lists.includes(id) });
      expect(allowed).not.toContain('dynamodb:Scan');
    }
  });

  it('create-upload may only authenticate and presign invoice PUTs, live and test', () => {
    const allowed = policyOf('CreateUpload')
      .filter((s) => s.Effect === 'Allow')
      .flatMap(actionsOf);
    expect([...new Set(dataActions(allowed))].sort()).toEqual(['dynamodb:GetItem', 'dynamodb:UpdateItem', 's3:PutObject']);
    const presign = statementWithSid(policyOf('CreateUpload'), 'PresignInvoiceUploads');
    expect(presign).toEqual({ Sid: 'PresignInvoiceUploads', Effect: 'Allow', Action: 's3:PutObject', Resource: expect.anything() });
    expect(Match.objectLike({ r: invoiceObjects }).test({ r: presign.Resource }).isSuccess).toBe(true);
  });

  it('create-cases may only write to the table and HEAD invoice files, live and test (with ListBucket, so a missing file is a 404, not a 403), and holds no ConditionCheckItem', () => {
    const allowed = policyOf('CreateCases')
      .filter((s) => s.Effect === 'Allow')
      .flatMap(actionsOf);
    expect([...new Set(dataActions(allowed))].sort()).toEqual([
      'dynamodb:BatchGetItem',
      'dynamodb:DeleteItem',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      's3:GetObject',
      's3:ListBucket',
    ]);
    const head = statementWithSid(policyOf('CreateCases'), 'CheckInvoiceUploads');
    expect(head.Action).toBe('s3:GetObject');
    expect(Match.objectLike({ r: invoiceObjects }).test({ r: head.Resource }).isSuccess).toBe(true);
    const list = statementWithSid(policyOf('CreateCases'), 'TellMissingInvoicesApart');
    expect(list).toEqual({
      Sid: 'TellMissingInvoicesApart',
      Effect: 'Allow',
      Action: 's3:ListBucket',
      Resource: { 'Fn::GetAtt': [expect.stringMatching(/^DataStoresInvoiceBucket/), 'Arn'] },
    });
  });

  it.each(FUNCTIONS)(
    '%s: every DynamoDB statement names the table itself (the list query its one index), with no wildcard action',
    (id) => {
      for (const statement of policyOf(id)) {
        for (const action of actionsOf(statement)) expect(action).not.toContain('*');
        if (statement.Sid === 'ListCasesByCompany' || statement.Sid === 'ListEventsByCompany') continue; // checked above: gsi2 only
        if (statement.Sid === 'FindCasesByInvoiceRef') continue; // checked above: the table, invoiceRef partitions only
        expect(JSON.stringify(statement.Resource)).not.toContain('/index');
        if (actionsOf(statement).some((a) => a.startsWith('dynamodb:'))) {
          expect(Match.objectLike({ r: tableArn }).test({ r: statement.Resource }).isSuccess).toBe(true);
        }
        if (statement.Resource === '*') expect(actionsOf(statement).sort()).toEqual(['xray:PutTelemetryRecords', 'xray:PutTraceSegments']);
      }
    },
  );

  it.each(FUNCTIONS)('%s may send the segments its tracer records to X-Ray, and nothing else on "*"', (id) => {
    const anyResource = policyOf(id).filter((s) => s.Resource === '*');
    expect(anyResource).toEqual([expect.objectContaining({ Effect: 'Allow', Resource: '*' })]);
    expect(actionsOf(anyResource[0]!).sort()).toEqual(['xray:PutTelemetryRecords', 'xray:PutTraceSegments']);
  });

  it.each(FUNCTIONS)('%s writes logs only to its own log group', (id) => {
    const logs = policyOf(id).filter((s) => actionsOf(s).some((a) => a.startsWith('logs:')));
    expect(logs).toHaveLength(1);
    expect(logs[0]?.Resource).toEqual({ 'Fn::GetAtt': [expect.stringMatching(new RegExp(`^${id}LogGroup`)), 'Arn'] });
  });

  it('function roles carry no managed policies and trust only Lambda', () => {
    const roles = Object.entries(resourcesOfType(synthesised.template, 'AWS::IAM::Role')).filter(([logicalId]) =>
      FUNCTIONS.some((id) => logicalId.startsWith(`${id}Role`)),
    );
    expect(roles).toHaveLength(FUNCTIONS.length);
    for (const [, role] of roles) {
      expect(role.Properties.ManagedPolicyArns).toBeUndefined();
      expect(role.Properties.AssumeRolePolicyDocument).toEqual({
        Version: '2012-10-17',
        Statement: [{ Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' } }],
      });
    }
  });
});

describe.each(MODES)('what the policies allow in %s mode, evaluated as IAM evaluates them', (m) => {
  const seg = m === 'test' ? 'TEST#' : '';
  it('create-cases may send every request the real stores send for a batch: key use, claim, completion (plain and gzipped), release, references, case transaction, the read-back of its guards, the upload records', async () => {
    const requests = await createCasesRequests(m);
    expect(requests.map((r) => `${r.action}${r.enclosingOperation ? ' in transaction' : ''} ${r.leadingKeys[0]}`)).toEqual([
      'dynamodb:UpdateItem KEY#k_1',
      `dynamodb:PutItem IDEMPOTENCY#${seg}${COMPANY}#idem-1`,
      `dynamodb:UpdateItem IDEMPOTENCY#${seg}${COMPANY}#idem-1`,
      `dynamodb:UpdateItem IDEMPOTENCY#${seg}${COMPANY}#idem-2`,
      `dynamodb:DeleteItem IDEMPOTENCY#${seg}${COMPANY}#idem-1`,
      'dynamodb:UpdateItem COUNTER#CASE_REFERENCE',
      `dynamodb:PutItem in transaction INVREF#${seg}${COMPANY}#inv-1`,
      `dynamodb:PutItem in transaction CASE#${seg}${CASE}`,
      `dynamodb:PutItem in transaction CASE#${seg}${CASE}`,
      `dynamodb:PutItem in transaction EVENT#${seg}${EVENT}`,
      `dynamodb:BatchGetItem UPLOAD#${FILE_KEY}`,
      `dynamodb:PutItem in transaction INVREF#${seg}${COMPANY}#inv-1`,
      `dynamodb:PutItem in transaction CASE#${seg}${CASE}`,
      `dynamodb:PutItem in transaction CASE#${seg}${CASE}`,
      `dynamodb:PutItem in transaction EVENT#${seg}${EVENT}`,
      `dynamodb:BatchGetItem INVREF#${seg}${COMPANY}#inv-1`,
    ]);
    for (const request of requests) expect({ request, decision: may('CreateCases', request) }).toEqual({ request, decision: 'allow' });
  });

  // The test helper confirms test cases only (its live-mode refusal is in "IAM as AWS evaluates it" below).
  it.each(m === 'test' ? (['ConfirmCases', 'TestConfirmCase'] as const) : (['ConfirmCases'] as const))(
    '%s may send the confirmation transaction (case lifecycle fields, event, confirmation record), for a case stored before or after the lifecycle',
    async (id) => {
      for (const verification of [undefined, { status: 'PENDING' as const }]) {
        const requests = await confirmRequests(m, verification);
        expect(requests.map((r) => `${r.action}${r.enclosingOperation ? ' in transaction' : ''} ${r.leadingKeys[0]}`)).toEqual([
          `dynamodb:UpdateItem in transaction CASE#${seg}${CASE}`,
          expect.stringMatching(new RegExp(`^dynamodb:PutItem in transaction EVENT#${seg}evt_`)),
          `dynamodb:PutItem in transaction CASE#${seg}${CASE}`,
        ]);
        for (const request of requests) expect({ request, decision: may(id, request) }).toEqual({ request, decision: 'allow' });
      }
    },
  );

  it.each(['ConfirmCases', 'TestConfirmCase'] as const)(
    '%s cannot create a case, change a case beyond its lifecycle, change one outside a transaction, or touch a guard, a claim or a company',
    (id) => {
      const tx = 'TransactWriteItems' as const;
      const caseKey = keys.case(m, CASE);
      const refused: ItemRequest[] = [
        put(caseKey, ['type', 'caseId', 'companyId', 'debtorName', 'principalPence'], tx),
        { ...update(caseKey, ['principalPence', 'status']), enclosingOperation: tx },
        update(caseKey, ['status', 'recoveryGate']),
        remove(caseKey),
        { ...remove(keys.invoiceRefGuard(m, COMPANY, 'inv-1')), enclosingOperation: tx },
        put(keys.idempotencyClaim(m, COMPANY, 'idem-1'), ['state']),
        put(keys.event(m, 'evt_1'), ['payload']),
        { action: 'dynamodb:GetItem', leadingKeys: [keys.company(COMPANY).pk], attributes: ['pk', 'sk'] },
      ];
      for (const request of refused)
        expect({ request, decision: may(id, request) }).toEqual({ request, decision: expect.not.stringMatching(/^allow$/) });
    },
  );

  it('the internal functions read no API key and record no key use: their callers are IAM principals', () => {
    const keyRead: ItemRequest = { action: 'dynamodb:GetItem', leadingKeys: [keys.apiKey('k_1').pk], attributes: ['pk', 'sk'] };
    expect(INTERNAL_FUNCTIONS).toEqual(['ConfirmCases', 'ApplyRecoveryUpdates']);
    for (const id of INTERNAL_FUNCTIONS)
      expect({ id, decision: may(id, keyRead) }).toEqual({ id, decision: expect.not.stringMatching(/^allow$/) });
    expect(may('TestConfirmCase', keyRead)).toBe('allow');
  });

  it.each(['GetCase', 'ListCases', 'CreateUpload', 'ListEvents', 'GetEvent', 'WithdrawCase', 'TestConfirmCase'] as const)(
    '%s may record API-key use exactly as the key store does it',
    async (id) => {
      const client = new RecordingClient();
      await new DynamoApiKeyStore(client as unknown as DynamoDBDocumentClient, 't').touch(
        'k_1',
        '2025-06-01T10:00:00Z',
        '2025-06-01T09:59:00Z',
      );
      expect(client.requests.map((r) => may(id, r))).toEqual(['allow']);
    },
  );

  it.each(FUNCTIONS)('%s can never create, delete or change an API key beyond its last use', (id) => {
    const key = keys.apiKey('k_1');
    // The internal functions' callers are IAM principals: they have no key to record the use of.
    expect(may(id, update(key, ['lastUsedAt']))).toBe(INTERNAL_FUNCTIONS.includes(id) ? 'implicit-deny' : 'allow');
    expect(may(id, update(key, ['revoked', 'revokedAt']))).toBe('explicit-deny');
    expect(may(id, update(key, ['scopes']))).toBe('explicit-deny');
    expect(may(id, update(key, ['lastUsedAt', 'secretHash']))).toBe('explicit-deny');
    expect(may(id, put(key, ['secretHash', 'scopes'], 'TransactWriteItems'))).toBe('explicit-deny');
    expect(may(id, put(key, ['secretHash', 'scopes']))).toBe('explicit-deny');
    expect(may(id, remove(key))).toBe('explicit-deny');
  });

  it.each(FUNCTIONS)(
    '%s can never delete a case or an attestation audit record, update one outside a transaction or beyond its lifecycle fields, nor create one outside the case transaction',
    (id) => {
      for (const key of [keys.case(m, CASE), keys.attestation(m, CASE)]) {
        expect(may(id, update(key, ['status']))).toBe('explicit-deny');
        expect(may(id, update(key, ['principalPence'], 'TransactWriteItems'))).toBe('explicit-deny');
        expect(may(id, update(key, ['status', 'debtorName'], 'TransactWriteItems'))).toBe('explicit-deny');
        expect(may(id, remove(key))).toBe('explicit-deny');
        expect(may(id, remove(key, 'TransactWriteItems'))).toBe('explicit-deny');
        expect(may(id, put(key, ['attestedBy']))).toBe('explicit-deny');
      }
    },
  );

  it('withdraw-case may send every request the real stores send for a withdrawal: key use, the case read, the case change, its event, the guard given up, the withdrawn case kept under its invoiceRef', async () => {
    const requests = await withdrawRequests(m);
    expect(requests.map((r) => `${r.action}${r.enclosingOperation ? ' in transaction' : ''} ${r.leadingKeys[0]}`)).toEqual([
      'dynamodb:UpdateItem KEY#k_1',
      `dynamodb:GetItem CASE#${seg}${CASE}`,
      `dynamodb:UpdateItem in transaction CASE#${seg}${CASE}`,
      expect.stringMatching(new RegExp(`^dynamodb:PutItem in transaction EVENT#${seg}evt_`)),
      `dynamodb:DeleteItem in transaction INVREF#${seg}${COMPANY}#inv-1`,
      `dynamodb:PutItem in transaction INVREF#${seg}${COMPANY}#inv-1`,
    ]);
    for (const request of requests) expect({ request, decision: may('WithdrawCase', request) }).toEqual({ request, decision: 'allow' });
    // No other partner function gains any of the withdrawal's writes.
    for (const request of requests.filter((r) => r.enclosingOperation)) {
      for (const id of ['GetCase', 'ListCases', 'CreateUpload', 'CreateCases', 'ListEvents', 'GetEvent'] as const) {
        const decision = may(id, request);
        // create-cases writes guards (any item of an INVREF# partition: IAM cannot see the sort key) and case.created events
        // in its own transaction.
        if (id === 'CreateCases' && request.action === 'dynamodb:PutItem' && /^(INVREF|EVENT)#/.test(request.leadingKeys[0]!)) continue;
        expect({ id, request, decision }).toEqual({ id, request, decision: expect.stringMatching(/deny$/) });
      }
    }
  });

  it('withdraw-case writes each part only inside a transaction, and never a guard, a case or an audit record of its own', async () => {
    const requests = await withdrawRequests(m);
    for (const request of requests.filter((r) => r.enclosingOperation)) {
      const { enclosingOperation: _, ...alone } = request;
      expect({ alone, decision: may('WithdrawCase', alone) }).toEqual({ alone, decision: expect.stringMatching(/deny$/) });
    }
    const guard = keys.invoiceRefGuard(m, COMPANY, 'inv-1');
    // A guard (no withdrawnAt) cannot be written through the withdrawn-invoiceRef grant.
    expect(
      may('WithdrawCase', put(guard, ['type', 'companyId', 'invoiceRef', 'caseId', 'reference', 'createdAt'], 'TransactWriteItems')),
    ).toBe('implicit-deny');
    expect(may('WithdrawCase', put(guard, ['type', 'caseId', 'withdrawnAt', 'invoiceRef'], 'TransactWriteItems'))).toBe('implicit-deny');
    for (const key of [keys.case(m, CASE), keys.attestation(m, CASE)]) {
      expect(may('WithdrawCase', put(key, ['caseId'], 'TransactWriteItems'))).not.toBe('allow');
    }
    expect(may('WithdrawCase', put(keys.event(m, 'evt_1'), ['payload', 'secretHash'], 'TransactWriteItems'))).toBe('implicit-deny');
    for (const key of [
      keys.idempotencyClaim(m, COMPANY, 'idem-1'),
      keys.company(COMPANY),
      keys.caseReferenceCounter(),
      keys.upload(FILE_KEY),
    ]) {
      expect(may('WithdrawCase', put(key, ['caseId'], 'TransactWriteItems'))).toBe('implicit-deny');
      expect(may('WithdrawCase', remove(key, 'TransactWriteItems'))).toBe('implicit-deny');
    }
  });

  it('list-cases queries the invoiceRef\u2019s partition and batch-reads only cases (the look-up by invoiceRef), exactly as the lister does', async () => {
    const client = new RecordingClient((name) => (name === 'QueryCommand' ? { Items: [{ caseId: CASE }] } : { Responses: {} }));
    await new DynamoCaseLister(client as unknown as DynamoDBDocumentClient, 't').findByInvoiceRef(m, COMPANY, 'inv-1');
    expect(client.requests.map((r) => `${r.action} ${r.leadingKeys[0]}`)).toEqual([
      `dynamodb:Query INVREF#${seg}${COMPANY}#inv-1`,
      `dynamodb:BatchGetItem CASE#${seg}${CASE}`,
    ]);
    for (const request of client.requests) expect(may('ListCases', request)).toBe('allow');
    for (const key of [keys.invoiceRefGuard(m, COMPANY, 'inv-1'), keys.idempotencyClaim(m, COMPANY, 'idem-1'), keys.apiKey('k_1')]) {
      expect(may('ListCases', { action: 'dynamodb:BatchGetItem', leadingKeys: [key.pk], attributes: ['pk', 'sk'] })).toBe('implicit-deny');
    }
  });

  it('create-cases creates cases, audit records, guards and case events only inside the case transaction; the others cannot at all', () => {
    for (const key of [keys.case(m, CASE), keys.attestation(m, CASE), keys.invoiceRefGuard(m, COMPANY, 'inv-1'), keys.event(m, EVENT)]) {
      expect(may('CreateCases', put(key, ['caseId'], 'TransactWriteItems'))).toBe('allow');
      expect(may('GetCase', put(key, ['caseId'], 'TransactWriteItems'))).toBe('implicit-deny');
      expect(may('ListCases', put(key, ['caseId'], 'TransactWriteItems'))).toBe('implicit-deny');
      expect(may('CreateUpload', put(key, ['caseId'], 'TransactWriteItems'))).toBe('implicit-deny');
    }
    expect(may('CreateCases', put(keys.invoiceRefGuard(m, COMPANY, 'inv-1'), ['caseId', 'reference']))).toBe('implicit-deny');
    expect(may('CreateCases', put(keys.event(m, EVENT), ['caseId', 'payload']))).toBe('implicit-deny');
  });

  it('create-cases batch-reads invoiceRef guards and upload records only; no other function may batch-read a guard', () => {
    const batchGet = (key: { pk: string; sk: string }): ItemRequest => ({
      action: 'dynamodb:BatchGetItem',
      leadingKeys: [key.pk],
      attributes: ['pk', 'sk'],
    });
    expect(may('CreateCases', batchGet(keys.invoiceRefGuard('live', COMPANY, 'inv-1')))).toBe('allow');
    expect(may('CreateCases', batchGet(keys.upload(FILE_KEY)))).toBe('allow');
    for (const key of [
      keys.case('live', CASE),
      keys.idempotencyClaim('live', COMPANY, 'idem-1'),
      keys.apiKey('k_1'),
      keys.company(COMPANY),
    ]) {
      expect(may('CreateCases', batchGet(key))).toBe('implicit-deny');
    }
    for (const id of ['GetCase', 'ListCases', 'CreateUpload', 'WithdrawCase'] as const)
      expect(may(id, batchGet(keys.invoiceRefGuard('live', COMPANY, 'inv-1')))).toBe('implicit-deny');
  });

  it('record-upload may only put upload records, present or tombstoned, exactly as the store writes them, and nothing else', async () => {
    const client = new RecordingClient();
    const records = new DynamoUploadRecords(client as unknown as DynamoDBDocumentClient, 't');
    await records.record({
      fileKey: FILE_KEY,
      companyId: COMPANY,
      size: 10,
      uploadedAt: '2026-03-01T12:00:00.000Z',
      sequencer: '0055AED6DCD90281E5',
    });
    await records.recordRemoval({
      fileKey: FILE_KEY,
      companyId: COMPANY,
      removedAt: '2026-03-01T12:01:00.000Z',
      sequencer: '0055AED6DCD90281E6',
    });
    expect(client.requests.map((r) => `${r.action} ${r.leadingKeys[0]}`)).toEqual([
      `dynamodb:PutItem UPLOAD#${FILE_KEY}`,
      `dynamodb:PutItem UPLOAD#${FILE_KEY}`,
    ]);
    expect(client.requests[1]!.attributes).toContain('ttl');
    for (const request of client.requests)
      expect({ request, decision: may('RecordUpload', request) }).toEqual({ request, decision: 'allow' });
    expect(may('RecordUpload', remove(keys.upload(FILE_KEY)))).toBe('implicit-deny');
    expect(may('RecordUpload', put(keys.upload(FILE_KEY), ['fileKey', 'secretHash']))).toBe('implicit-deny');
    for (const key of [
      keys.case('live', CASE),
      keys.invoiceRefGuard('live', COMPANY, 'inv-1'),
      keys.apiKey('k_1'),
      keys.company(COMPANY),
      keys.idempotencyClaim('live', COMPANY, 'idem-1'),
    ]) {
      expect(may('RecordUpload', put(key, ['fileKey']))).not.toBe('allow');
      expect(may('RecordUpload', remove(key))).not.toBe('allow');
      expect(may('RecordUpload', { action: 'dynamodb:GetItem', leadingKeys: [key.pk], attributes: [] })).toBe('implicit-deny');
    }
    const allowed = policyOf('RecordUpload')
      .filter((s) => s.Effect === 'Allow')
      .flatMap(actionsOf);
    // And sending a failed event to its on-failure queue (upload-record-delivery.test.ts: that queue only).
    expect([...new Set(dataActions(allowed))].sort()).toEqual([
      'dynamodb:PutItem',
      'sqs:GetQueueAttributes',
      'sqs:GetQueueUrl',
      'sqs:SendMessage',
    ]);
  });

  it('create-cases updates only the claim-completion, reference-counter and key last-use attributes', () => {
    const claim = keys.idempotencyClaim(m, COMPANY, 'idem-1');
    expect(may('CreateCases', update(claim, ['state', 'response', 'completedAt', 'requestId']))).toBe('allow');
    expect(may('CreateCases', update(claim, ['state', 'responseGz', 'completedAt', 'requestId']))).toBe('allow');
    expect(may('CreateCases', update(claim, ['ttl']))).toBe('implicit-deny');
    expect(may('CreateCases', update(keys.company(COMPANY), ['autoAttestation']))).toBe('implicit-deny');
    expect(may('CreateCases', update(keys.caseReferenceCounter(), ['sequence', 'type']))).toBe('allow');
    expect(may('CreateCases', update(keys.caseReferenceCounter(), ['sequence', 'lockedBy']))).toBe('implicit-deny');
    expect(may('CreateCases', remove(keys.caseReferenceCounter()))).toBe('implicit-deny');
    for (const id of ['GetCase', 'ListCases', 'CreateUpload'] as const) {
      expect(may(id, update(claim, ['state', 'response', 'completedAt', 'requestId']))).toBe('implicit-deny');
      expect(may(id, update(keys.caseReferenceCounter(), ['sequence', 'type']))).toBe('implicit-deny');
    }
  });

  it('create-cases writes claims only claim-shaped, outside transactions as the store does', () => {
    const claim = keys.idempotencyClaim(m, COMPANY, 'idem-1');
    expect(may('CreateCases', put(claim, WRITABLE_ATTRIBUTES.idempotencyClaim.slice(2)))).toBe('allow');
    expect(may('CreateCases', put(claim, ['state', 'response', 'name']))).toBe('implicit-deny');
  });

  // Each function reads only the kinds of item its code reads (the integration test
  // function-item-reads.test.ts records them from the real handlers); GetItem used to be granted
  // on the whole table, so any function could read key hashes, other companies' profiles and
  // stored idempotency responses.
  it.each([
    ['GetCase', ['apiKey', 'case']],
    ['ListCases', ['apiKey']],
    ['WithdrawCase', ['apiKey', 'case']],
    ['CreateUpload', ['apiKey']],
    ['CreateCases', ['apiKey', 'company']],
    ['GetEvent', ['apiKey', 'event']],
    ['ListEvents', ['apiKey']],
  ] as const)('%s may GetItem only the items it reads: %j', (id, readable) => {
    const getItem = (key: { pk: string }): ItemRequest => ({ action: 'dynamodb:GetItem', leadingKeys: [key.pk], attributes: [] });
    const items = {
      apiKey: keys.apiKey('k_1'),
      case: keys.case(m, CASE),
      attestation: keys.attestation(m, CASE),
      company: keys.company('co_other'),
      invoiceRefGuard: keys.invoiceRefGuard(m, COMPANY, 'inv-1'),
      idempotencyClaim: keys.idempotencyClaim(m, COMPANY, 'idem-1'),
      referenceCounter: keys.caseReferenceCounter(),
      upload: keys.upload(FILE_KEY),
      event: keys.event(m, EVENT),
    };
    // IAM sees partitions only: a case's audit record shares its partition, so whoever reads cases reads both.
    const expected = (kind: string) => (readable as readonly string[]).includes(kind === 'attestation' ? 'case' : kind);
    for (const [kind, key] of Object.entries(items)) {
      expect({ kind, decision: may(id, getItem(key)) }).toEqual({ kind, decision: expected(kind) ? 'allow' : 'implicit-deny' });
    }
    expect(may('RecordUpload', getItem(items.upload))).toBe('implicit-deny');
  });

  it('no function holds ConditionCheckItem', () => {
    for (const id of FUNCTIONS) {
      expect(
        may(id, {
          action: 'dynamodb:ConditionCheckItem',
          leadingKeys: [keys.case(m, CASE).pk],
          attributes: ['pk', 'sk'],
        }),
      ).toBe('implicit-deny');
    }
  });

  // Claims and guards each have a partition of their own, so IAM can tell them apart: releasing
  // a claim is granted on claims only, and no grant reaches a guard or a company profile outside
  // the case transaction.
  it('create-cases may release an idempotency claim, and delete nothing else: no guard, no company profile', () => {
    expect(may('CreateCases', remove(keys.idempotencyClaim(m, COMPANY, 'idem-1')))).toBe('allow');
    expect(may('CreateCases', remove(keys.invoiceRefGuard(m, COMPANY, 'inv-1')))).toBe('implicit-deny');
    expect(may('CreateCases', remove(keys.company(COMPANY)))).toBe('implicit-deny');
    expect(may('CreateCases', put(keys.company(COMPANY), ['name']))).toBe('implicit-deny');
    expect(may('GetCase', remove(keys.idempotencyClaim(m, COMPANY, 'idem-1')))).toBe('implicit-deny');
  });
});

describe('IAM as AWS evaluates it', () => {
  const query = (leadingKey: string, index?: string): ItemRequest => ({
    action: 'dynamodb:Query',
    leadingKeys: [leadingKey],
    attributes: [],
    ...(index ? { index } : {}),
  });

  it.each(MODES)(
    'list-cases may query its own company\u2019s case list shards exactly as the lister does (%s), and no event-list partition or other index',
    async (m) => {
      const client = new RecordingClient(() => ({ Items: [] }));
      await new DynamoCaseLister(client as unknown as DynamoDBDocumentClient, 't').page({
        mode: m,
        companyId: COMPANY,
        filters: {},
        limit: 10,
      });
      expect(client.requests.length).toBeGreaterThan(0);
      for (const request of client.requests) {
        expect(request).toMatchObject({ action: 'dynamodb:Query', index: 'gsi2' });
        expect({ request, decision: may('ListCases', request) }).toEqual({ request, decision: 'allow' });
      }
      // The grant was on the index with no LeadingKeys condition: any partition of gsi2 could be read.
      expect(may('ListCases', query(keys.eventListPartition(m, COMPANY, 0), 'gsi2'))).toBe('implicit-deny');
      expect(may('ListCases', query(keys.case(m, CASE).pk, 'gsi2'))).toBe('implicit-deny');
      expect(may('ListCases', query(keys.caseListPartition(m, COMPANY, 0), 'gsi1'))).toBe('implicit-deny');
    },
  );

  it.each(MODES)('list-events may query the event list on gsi2 only (%s): the same partition on another index is refused', async (m) => {
    const client = new RecordingClient(() => ({ Items: [] }));
    await new DynamoEventStore(client as unknown as DynamoDBDocumentClient, 't').page({
      mode: m,
      companyId: COMPANY,
      filters: {},
      limit: 10,
    });
    for (const request of client.requests)
      expect({ request, decision: may('ListEvents', request) }).toEqual({ request, decision: 'allow' });
    // An evaluator that saw only "an index" let a grant on gsi2 read gsi1 (the operator's test-data listing).
    expect(may('ListEvents', query(keys.eventListPartition(m, COMPANY, 0), 'gsi1'))).toBe('implicit-deny');
    expect(may('ListEvents', query(keys.eventListPartition(m, COMPANY, 0)))).toBe('implicit-deny');
    expect(may('ListEvents', query(keys.caseListPartition(m, COMPANY, 0), 'gsi2'))).toBe('implicit-deny');
  });

  it('a batch read is one request judged over all its keys: one case and one API key together are refused, the case alone allowed', () => {
    const batch = (...keyList: { pk: string; sk: string }[]) =>
      itemRequestsOf(new BatchGetCommand({ RequestItems: { t: { Keys: keyList, ConsistentRead: true } } }) as never);
    const mixed = batch(keys.case('live', CASE), keys.apiKey('k_1'));
    expect(mixed).toEqual([{ action: 'dynamodb:BatchGetItem', leadingKeys: ['CASE#' + CASE, 'KEY#k_1'], attributes: ['pk', 'sk'] }]);
    expect(may('ListCases', mixed[0]!)).toBe('implicit-deny');
    expect(batch(keys.case('live', CASE), keys.case('test', CASE)).map((r) => may('ListCases', r))).toEqual(['allow']);
    expect(batch(keys.invoiceRefGuard('live', COMPANY, 'inv-1'), keys.case('live', CASE)).map((r) => may('CreateCases', r))).toEqual([
      'implicit-deny',
    ]);
  });

  it.each(MODES)(
    'the endpoint list, the fan-out and the planning worker send Select SPECIFIC_ATTRIBUTES with their projection (%s); the same Query without it is refused',
    async (m) => {
      const client = new RecordingClient(() => ({ Items: [] }));
      await new DynamoWebhookEndpointStore(client as unknown as DynamoDBDocumentClient, 't').list(m, COMPANY);
      const [sent] = client.requests as [ItemRequest];
      expect(sent).toMatchObject({ action: 'dynamodb:Query', select: 'SPECIFIC_ATTRIBUTES' });
      const { select: _, ...withoutSelect } = sent;
      for (const id of ['ListWebhookEndpoints', 'WebhookFanOut', 'WebhookPlan'] as const) {
        expect({ id, decision: may(id, sent) }).toEqual({ id, decision: 'allow' });
        // AWS does not document what dynamodb:Select holds when a request sends none: the grant requires it named.
        expect({ id, decision: may(id, withoutSelect) }).toEqual({ id, decision: 'implicit-deny' });
        expect({ id, decision: may(id, { ...withoutSelect, attributes: [] }) }).toEqual({ id, decision: 'implicit-deny' });
        expect({ id, decision: may(id, { ...sent, select: 'ALL_ATTRIBUTES' }) }).toEqual({ id, decision: 'implicit-deny' });
      }
    },
  );

  it('the test helper, deployed in prod too, can read and confirm test cases only: every part of a live confirmation is refused', async () => {
    const live = await confirmRequests('live');
    expect(live).toHaveLength(3);
    for (const request of live) {
      expect({ request, decision: may('TestConfirmCase', request) }).toEqual({ request, decision: 'implicit-deny' });
      expect({ request, decision: may('ConfirmCases', request) }).toEqual({ request, decision: 'allow' });
    }
    const tx = 'TransactWriteItems' as const;
    expect(may('TestConfirmCase', update(keys.case('live', CASE), ['status', 'recoveryGate'], tx))).toBe('implicit-deny');
    expect(may('TestConfirmCase', update(keys.case('test', CASE), ['status', 'recoveryGate'], tx))).toBe('allow');
    const getItem = (pk: string): ItemRequest => ({ action: 'dynamodb:GetItem', leadingKeys: [pk], attributes: ['pk', 'sk'] });
    expect(may('TestConfirmCase', getItem(keys.case('live', CASE).pk))).toBe('implicit-deny');
    expect(may('TestConfirmCase', getItem(keys.case('test', CASE).pk))).toBe('allow');
  });

  // IAM user guide, "Condition operators" and "Multivalued context keys": a key missing from the request
  // satisfies ForAllValues (vacuously) and a negated operator (StringNotEquals), never ForAnyValue nor a
  // plain StringEquals. grants.ts leans on each: the guardrails' denies of an update outside a transaction,
  // and the Select the endpoint Query must name.
  it('a missing context key is judged as IAM documents it: ForAllValues and StringNotEquals hold, ForAnyValue and StringEquals do not', () => {
    const statement = (Condition: Record<string, unknown>): Statement[] => [
      { Effect: 'Allow', Action: 'dynamodb:UpdateItem', Resource: { 'Fn::GetAtt': ['DataStoresTable', 'Arn'] }, Condition },
    ];
    const plain: ItemRequest = { action: 'dynamodb:UpdateItem', leadingKeys: ['CASE#x'], attributes: [] };
    const key = 'dynamodb:Attributes';
    expect(decide(statement({ 'ForAllValues:StringEquals': { [key]: ['status'] } }), plain)).toBe('allow');
    expect(decide(statement({ 'ForAnyValue:StringEquals': { [key]: ['status'] } }), plain)).toBe('implicit-deny');
    expect(decide(statement({ StringNotEquals: { 'dynamodb:EnclosingOperation': 'TransactWriteItems' } }), plain)).toBe('allow');
    expect(decide(statement({ StringEquals: { 'dynamodb:EnclosingOperation': 'TransactWriteItems' } }), plain)).toBe('implicit-deny');
    expect(decide(statement({ StringEqualsIfExists: { 'dynamodb:ReturnValues': 'NONE' } }), plain)).toBe('allow');
  });

  it('the synchronous evaluation agrees with iam-simulate\u2019s fully validated runSimulation on every request above', async () => {
    const requests: [PolicyHolder, ItemRequest][] = [];
    for (const m of MODES) {
      for (const r of await createCasesRequests(m)) requests.push(['CreateCases', r], ['GetCase', r]);
      for (const r of await withdrawRequests(m)) requests.push(['WithdrawCase', r], ['ListCases', r]);
      for (const r of await confirmRequests(m)) requests.push(['TestConfirmCase', r], ['ConfirmCases', r]);
      requests.push(['ListCases', query(keys.eventListPartition(m, COMPANY, 0), 'gsi2')]);
      requests.push(['ListEvents', query(keys.eventListPartition(m, COMPANY, 0), 'gsi1')]);
      // The guardrails' explicit denies: a case changed outside its transaction, an API key rewritten.
      requests.push(['WithdrawCase', update(keys.case(m, CASE), ['status'])], ['GetCase', update(keys.apiKey('k_1'), ['scopes'])]);
    }
    const decisions = new Set<string>();
    for (const [id, request] of requests) {
      const validated = await decideValidated(policyOf(id), request);
      decisions.add(validated);
      expect({ id, request, decision: may(id, request) }).toEqual({ id, request, decision: validated });
    }
    expect([...decisions].sort()).toEqual(['allow', 'explicit-deny', 'implicit-deny']);
  }, 60_000); // a few hundred validated simulations: seconds on a shared machine
});
