import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { buildConfirmCasesHandler, handler as confirmHandler } from '../../functions/confirm-cases.js';
import { handler as testConfirmHandler } from '../../functions/test-confirm-case.js';
import { API_ROUTES } from '../../infra/local/api-routes.js';
import { newLocalIamCredential } from '../../infra/local/execute-api-signature.js';
import { createLocalServer } from '../../infra/local/http-adapter.js';
import { caseChangeAdapters } from '../../lib/adapters/production-adapters.js';
import { DynamoCaseChangeStore } from '../../lib/adapters/dynamodb/case-change-store.js';
import { GSI2, keys } from '../../lib/adapters/dynamodb/table-keys.js';
import type { CaseEvent } from '../../lib/cases/case-lifecycle.js';
import { CONFIRM_RETRY_MESSAGE, withdrawCaseFor } from '../../lib/cases/change-case.js';
import { confirmationResponseSchema } from '../../lib/cases/confirmation-request.js';
import type { Mode } from '../../lib/mode.js';
import { config } from '../../lib/runtime/config.js';
import { checkedInvoke } from '../support/contract.js';
import { faultyDocumentClient } from '../support/faulty-client.js';
import { outcome, postCases, readCase, uploadInvoice, validCase } from '../support/cases.js';
import { apiEvent, bearer, ddb, extraKey, lambdaContext, newPartner, parse, type Partner } from '../support/fixtures.js';
import { signedHeaders, type SignOptions } from '../support/iam-signing.js';

/**
 * Confirmation (product rules "Case lifecycle", spec rule 4) through its three doors: the
 * dashboard's internal route (AWS IAM; locally a verified SigV4 signature), the test-mode helper
 * route, and (admin-cli.test.ts) the operator's command. Real handlers, DynamoDB Local.
 */
const DASHBOARD_ARN = 'arn:aws:iam::123456789012:role/dashboard';
const CONFIRMED_BY = { name: 'Jane Smith', email: 'jane@partner.example' };

function internalEvent(body: unknown, userArn: string | null = DASHBOARD_ARN) {
  const event = apiEvent({
    method: 'POST',
    path: '/internal/v1/confirmations',
    resource: '/internal/v1/confirmations',
    headers: { 'Content-Type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  event.requestContext.identity.userArn = userArn;
  return event;
}

async function confirm(body: unknown, userArn?: string | null) {
  return parse(await confirmHandler(internalEvent(body, userArn), lambdaContext()));
}

async function createCase(partner: Partner, fileKey: string, overrides: Record<string, unknown> = {}): Promise<string> {
  const res = await postCases(partner.apiKey, { cases: [validCase(fileKey, overrides)] });
  const { created } = outcome(res);
  if (created.length !== 1) throw new Error(`case not created: ${JSON.stringify(res.body)}`);
  return created[0]!.id;
}

async function updatedEventsOf(mode: Mode, companyId: string, caseId: string): Promise<CaseEvent[]> {
  const out = await ddb().send(
    new QueryCommand({
      TableName: config().tableName,
      IndexName: GSI2,
      KeyConditionExpression: 'gsi2pk = :pk',
      FilterExpression: 'caseId = :caseId AND eventType = :type',
      ExpressionAttributeValues: {
        ':pk': keys.eventListPartition(mode, companyId, keys.caseListShard(caseId)),
        ':caseId': caseId,
        ':type': 'case.updated',
      },
    }),
  );
  return (out.Items ?? []).map((item) => JSON.parse(String(item.payload)) as CaseEvent);
}

async function confirmationRecord(mode: Mode, caseId: string): Promise<Record<string, unknown> | undefined> {
  const out = await ddb().send(
    new GetCommand({ TableName: config().tableName, Key: keys.confirmation(mode, caseId), ConsistentRead: true }),
  );
  return out.Item;
}

describe('POST /internal/v1/confirmations (the handler, as API Gateway invokes it after the IAM check)', () => {
  let partner: Partner;
  let fileKey: string;

  beforeAll(async () => {
    partner = await newPartner();
    fileKey = await uploadInvoice(partner.apiKey);
  });

  it('confirms a case awaiting confirmation: READY, one case.updated event, one confirmation record naming who, when, the request and the IAM principal', async () => {
    const caseId = await createCase(partner, fileKey, { invoiceRef: 'CONF-READY-1' });
    const res = await confirm({ companyId: partner.companyId, caseIds: [caseId], confirmedBy: CONFIRMED_BY });
    expect(res.statusCode).toBe(200);
    expect(confirmationResponseSchema.strict().parse(res.body)).toEqual({ results: [{ caseId, result: 'confirmed', status: 'READY' }] });

    const read = await readCase(partner.apiKey, caseId);
    expect(read.body).toMatchObject({ status: 'READY', recoveryGate: 'CONFIRMED' });
    const events = await updatedEventsOf('live', partner.companyId, caseId);
    expect(events).toHaveLength(1);
    expect(events[0]!.data).toMatchObject({
      object: { id: caseId, status: 'READY', recoveryGate: 'CONFIRMED' },
      previousAttributes: { status: 'DRAFT', recoveryGate: 'AWAITING_CONFIRMATION' },
    });
    const record = await confirmationRecord('live', caseId);
    expect(record).toMatchObject({
      caseId,
      companyId: partner.companyId,
      confirmedBy: CONFIRMED_BY,
      source: 'dashboard',
      principal: DASHBOARD_ARN,
      eventId: events[0]!.id,
    });
    expect(typeof record!.requestId).toBe('string');
    expect(Date.parse(String(record!.confirmedAt))).not.toBeNaN();
  });

  it('keeps a confirmed case DRAFT while its debtor is still being verified (PENDING)', async () => {
    const caseId = await createCase(partner, fileKey, { invoiceRef: 'CONF-PENDING-1', debtorCompanyNo: '01000408' });
    const res = await confirm({ companyId: partner.companyId, caseIds: [caseId], confirmedBy: CONFIRMED_BY });
    expect(res.body).toEqual({ results: [{ caseId, result: 'confirmed', status: 'DRAFT' }] });
    expect((await readCase(partner.apiKey, caseId)).body).toMatchObject({
      status: 'DRAFT',
      recoveryGate: 'CONFIRMED',
      debtorVerification: { status: 'PENDING' },
    });
    expect(await updatedEventsOf('live', partner.companyId, caseId)).toHaveLength(1);
  });

  it('answers already_confirmed the second time, writing nothing more', async () => {
    const caseId = await createCase(partner, fileKey, { invoiceRef: 'CONF-TWICE-1' });
    await confirm({ companyId: partner.companyId, caseIds: [caseId], confirmedBy: CONFIRMED_BY });
    const first = await confirmationRecord('live', caseId);
    const again = await confirm({
      companyId: partner.companyId,
      caseIds: [caseId],
      confirmedBy: { name: 'Someone Else', email: 'x@y.example' },
    });
    expect(again.body).toEqual({ results: [{ caseId, result: 'already_confirmed', status: 'READY' }] });
    expect(await updatedEventsOf('live', partner.companyId, caseId)).toHaveLength(1);
    expect(await confirmationRecord('live', caseId)).toEqual(first);
  });

  it('answers not_awaiting for an auto-attested case and for a withdrawn one, and changes neither', async () => {
    const auto = await newPartner(['cases:read', 'cases:write'], { autoAttestation: true });
    const autoCase = await createCase(auto, await uploadInvoice(auto.apiKey), { invoiceRef: 'CONF-AUTO-1' });
    const withdrawn = await createCase(partner, fileKey, { invoiceRef: 'CONF-WITHDRAWN-1' });
    await withdrawCaseFor(caseChangeAdapters().changes, { mode: 'live', companyId: partner.companyId, caseId: withdrawn });

    const a = await confirm({ companyId: auto.companyId, caseIds: [autoCase], confirmedBy: CONFIRMED_BY });
    const w = await confirm({ companyId: partner.companyId, caseIds: [withdrawn], confirmedBy: CONFIRMED_BY });
    // An auto-attested case without a debtor is DRAFT until the worker settles it READY (it reads the table's stream meanwhile).
    expect(a.body).toEqual({ results: [{ caseId: autoCase, result: 'not_awaiting', status: expect.stringMatching(/^(DRAFT|READY)$/) }] });
    expect(w.body).toEqual({ results: [{ caseId: withdrawn, result: 'not_awaiting', status: 'WITHDRAWN' }] });
    expect(await confirmationRecord('live', autoCase)).toBeUndefined();
    expect(await confirmationRecord('live', withdrawn)).toBeUndefined();
    // None of confirm's: the worker's settling (DRAFT → READY) is the only change an auto-attested case may have had.
    expect(
      (await updatedEventsOf('live', auto.companyId, autoCase)).filter(
        (e) => e.type === 'case.updated' && e.data.previousAttributes.recoveryGate !== undefined,
      ),
    ).toEqual([]);
  });

  it("answers not_found for an unknown case, another company's case and a test case, one result per id in the order given", async () => {
    const other = await newPartner();
    const foreign = await createCase(other, await uploadInvoice(other.apiKey), { invoiceRef: 'CONF-FOREIGN-1' });
    const testKey = await extraKey(partner.companyId, ['cases:read', 'cases:write'], 'test');
    const testRes = await postCases(testKey, { cases: [validCase(await uploadInvoice(testKey), { invoiceRef: 'CONF-TESTMODE-1' })] });
    const testCase = outcome(testRes).created[0]!.id;
    const mine = await createCase(partner, fileKey, { invoiceRef: 'CONF-MIXED-1' });
    const unknown = 'case_0000000000000000000000';

    const res = await confirm({ companyId: partner.companyId, caseIds: [unknown, foreign, mine, testCase], confirmedBy: CONFIRMED_BY });
    expect(res.body).toEqual({
      results: [
        { caseId: unknown, result: 'not_found' },
        { caseId: foreign, result: 'not_found' },
        { caseId: mine, result: 'confirmed', status: 'READY' },
        { caseId: testCase, result: 'not_found' },
      ],
    });
    expect((await readCase(other.apiKey, foreign)).body).toMatchObject({ recoveryGate: 'AWAITING_CONFIRMATION' });
    expect((await readCase(testKey, testCase)).body).toMatchObject({ recoveryGate: 'AWAITING_CONFIRMATION' });
  });

  it('refuses 101 case ids, a case id given twice, a malformed id and unknown fields with 400, naming each field', async () => {
    const ids = Array.from({ length: 101 }, (_, i) => `case_${String(i).padStart(22, '0')}`);
    const tooMany = await confirm({ companyId: partner.companyId, caseIds: ids, confirmedBy: CONFIRMED_BY });
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.body).toMatchObject({
      code: 'INVALID_REQUEST',
      errors: [{ field: 'caseIds', message: 'caseIds must hold at most 100 case ids' }],
    });

    const id = 'case_0000000000000000000001';
    const bad = await confirm({
      companyId: 'acme',
      caseIds: [id, 'nope', id],
      confirmedBy: { name: ' ', email: 'not-an-address', role: 'admin' },
      extra: 1,
    });
    expect(bad.statusCode).toBe(400);
    const fields = (bad.body.errors as { field: string }[]).map((e) => e.field).sort();
    expect(fields).toEqual(['caseIds.1', 'caseIds.2', 'companyId', 'confirmedBy.email', 'confirmedBy.name', 'confirmedBy.role', 'extra']);

    const empty = await confirm({ companyId: partner.companyId, caseIds: [], confirmedBy: CONFIRMED_BY });
    expect(empty.body).toMatchObject({ errors: [{ field: 'caseIds', message: 'caseIds must hold at least 1 case id' }] });
  });

  it('a transient failure on one case answers that case retry and keeps the others confirmed: 200, not 503 after the rest were written', async () => {
    const [first, unlucky, last] = [
      await createCase(partner, fileKey, { invoiceRef: 'CONF-RETRY-1' }),
      await createCase(partner, fileKey, { invoiceRef: 'CONF-RETRY-2' }),
      await createCase(partner, fileKey, { invoiceRef: 'CONF-RETRY-3' }),
    ];
    // Every attempt of the unlucky case's transaction is throttled, until the store's retries run out.
    const { client, counter } = faultyDocumentClient({
      decide: (command, input) =>
        command === 'TransactWriteItemsCommand' && JSON.stringify(input).includes(unlucky) ? 'throttle' : undefined,
    });
    const store = new DynamoCaseChangeStore(client, config().tableName, { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20 });
    const handler = buildConfirmCasesHandler({ changes: { store, now: () => new Date() } });
    const body = { companyId: partner.companyId, caseIds: [first, unlucky, last], confirmedBy: CONFIRMED_BY };
    const res = parse(await handler(internalEvent(body), lambdaContext()));
    expect(counter.injected.throttle).toBe(3);
    expect(res.statusCode).toBe(200);
    expect(confirmationResponseSchema.strict().parse(res.body)).toEqual({
      results: [
        { caseId: first, result: 'confirmed', status: 'READY' },
        { caseId: unlucky, result: 'retry', message: CONFIRM_RETRY_MESSAGE },
        { caseId: last, result: 'confirmed', status: 'READY' },
      ],
    });
    expect((await readCase(partner.apiKey, unlucky)).body).toMatchObject({ status: 'DRAFT', recoveryGate: 'AWAITING_CONFIRMATION' });
    expect(await confirmationRecord('live', unlucky)).toBeUndefined();
    // Sent again, as the result says: the unlucky case is confirmed, the others answer already_confirmed.
    const again = await confirm(body);
    expect(again.body).toEqual({
      results: [
        { caseId: first, result: 'already_confirmed', status: 'READY' },
        { caseId: unlucky, result: 'confirmed', status: 'READY' },
        { caseId: last, result: 'already_confirmed', status: 'READY' },
      ],
    });
  });

  it('refuses an event without an IAM caller with 403 problem details, and confirms nothing (defence in depth)', async () => {
    const caseId = await createCase(partner, fileKey, { invoiceRef: 'CONF-NOIAM-1' });
    const res = await confirm({ companyId: partner.companyId, caseIds: [caseId], confirmedBy: CONFIRMED_BY }, null);
    expect(res.statusCode).toBe(403);
    expect(res.headers['content-type']).toBe('application/problem+json');
    expect(res.body).toMatchObject({ code: 'FORBIDDEN', status: 403 });
    expect((await readCase(partner.apiKey, caseId)).body).toMatchObject({ recoveryGate: 'AWAITING_CONFIRMATION' });
  });
});

describe('POST /internal/v1/confirmations on the local server (npm start): only a valid SigV4 signature reaches the function', () => {
  const credential = newLocalIamCredential('test-dashboard');
  let server: Server;
  let url: string;
  let partner: Partner;
  let fileKey: string;

  beforeAll(async () => {
    server = createLocalServer({ routes: API_ROUTES, iam: { credentials: [credential], region: 'eu-west-2' } });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/internal/v1/confirmations`;
    partner = await newPartner();
    fileKey = await uploadInvoice(partner.apiKey);
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  async function send(body: string, headers: Record<string, string>) {
    // Lower case, as the signer names it: a second spelling would make fetch send the value twice.
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    return { status: res.status, type: res.headers.get('content-type'), body: (await res.json()) as Record<string, unknown> };
  }

  async function signed(body: string, options: SignOptions = {}) {
    return send(body, await signedHeaders(url, 'POST', body, credential, options));
  }

  async function unchanged(caseId: string) {
    expect((await readCase(partner.apiKey, caseId)).body).toMatchObject({ recoveryGate: 'AWAITING_CONFIRMATION' });
    expect(await confirmationRecord('live', caseId)).toBeUndefined();
  }

  it('confirms with a valid signature and records the signing principal', async () => {
    const caseId = await createCase(partner, fileKey, { invoiceRef: 'SIG-OK-1' });
    const res = await signed(JSON.stringify({ companyId: partner.companyId, caseIds: [caseId], confirmedBy: CONFIRMED_BY }));
    expect(res).toMatchObject({ status: 200, body: { results: [{ caseId, result: 'confirmed', status: 'READY' }] } });
    expect(await confirmationRecord('live', caseId)).toMatchObject({ principal: credential.userArn, source: 'dashboard' });
  });

  it("refuses a partner's API key (Bearer) with 403 problem details, and nothing changes", async () => {
    const caseId = await createCase(partner, fileKey, { invoiceRef: 'SIG-BEARER-1' });
    const body = JSON.stringify({ companyId: partner.companyId, caseIds: [caseId], confirmedBy: CONFIRMED_BY });
    const res = await send(body, bearer(partner.apiKey));
    expect(res).toMatchObject({ status: 403, type: 'application/problem+json', body: { code: 'FORBIDDEN', status: 403 } });
    // Sent as X-Api-Key there is no signature at all: API Gateway answers as for an unknown path.
    const asHeader = await send(body, { 'X-Api-Key': partner.apiKey });
    expect(asHeader).toMatchObject({ status: 404, type: 'application/problem+json', body: { code: 'NOT_FOUND' } });
    await unchanged(caseId);
  });

  it('refuses a signature made with another secret, one made for another body (with and without the payload-hash header) and one dated 20 minutes ago', async () => {
    const caseId = await createCase(partner, fileKey, { invoiceRef: 'SIG-BAD-1' });
    const body = JSON.stringify({ companyId: partner.companyId, caseIds: [caseId], confirmedBy: CONFIRMED_BY });
    const otherBody = JSON.stringify({ companyId: partner.companyId, caseIds: ['case_0000000000000000000000'], confirmedBy: CONFIRMED_BY });
    const attempts = [
      await signed(body, { secretAccessKey: 'not-the-secret-not-the-secret-0000' }),
      await signed(body, { signedBody: otherBody }),
      await signed(body, { signedBody: otherBody, payloadHashHeader: false }),
      await signed(body, { signingDate: new Date(Date.now() - 20 * 60 * 1000) }),
      await signed(body, { region: 'us-east-1' }),
    ];
    for (const res of attempts) expect(res).toMatchObject({ status: 403, type: 'application/problem+json', body: { code: 'FORBIDDEN' } });
    await unchanged(caseId);
  });

  it('refuses an unknown access key with 403', async () => {
    const body = JSON.stringify({ companyId: partner.companyId, caseIds: ['case_0000000000000000000000'], confirmedBy: CONFIRMED_BY });
    const stranger = newLocalIamCredential('stranger');
    const res = await send(body, await signedHeaders(url, 'POST', body, stranger));
    expect(res).toMatchObject({ status: 403, body: { code: 'FORBIDDEN' } });
  });
});

describe('POST /api/v1/test-helpers/cases/{id}/confirm', () => {
  let partner: Partner;
  let testKey: string;
  let testFile: string;

  beforeAll(async () => {
    partner = await newPartner();
    testKey = await extraKey(partner.companyId, ['cases:read', 'cases:write'], 'test');
    testFile = await uploadInvoice(testKey);
  });

  function helperEvent(apiKey: string, id: string) {
    return apiEvent({
      method: 'POST',
      path: `/api/v1/test-helpers/cases/${id}/confirm`,
      resource: '/api/v1/test-helpers/cases/{id}/confirm',
      pathParameters: { id },
      headers: bearer(apiKey),
    });
  }
  const help = async (apiKey: string, id: string) =>
    parse(await checkedInvoke(testConfirmHandler, helperEvent(apiKey, id), lambdaContext()));

  it('confirms a test case with a test key: 200 with the case record after the change, and a confirmation record of source test-helper', async () => {
    const created = outcome(await postCases(testKey, { cases: [validCase(testFile, { invoiceRef: 'HELPER-1' })] })).created[0]!;
    const res = await help(testKey, created.id);
    expect(res.statusCode).toBe(200);
    expect(res.body).toMatchObject({ id: created.id, status: 'READY', recoveryGate: 'CONFIRMED', livemode: false });
    expect(await confirmationRecord('test', created.id)).toMatchObject({ source: 'test-helper', confirmedBy: { name: 'test helper' } });
    expect(await updatedEventsOf('test', partner.companyId, created.id)).toHaveLength(1);
    // Again: the case as it is, nothing written.
    expect((await help(testKey, created.id)).body).toMatchObject({ status: 'READY', recoveryGate: 'CONFIRMED' });
    expect(await updatedEventsOf('test', partner.companyId, created.id)).toHaveLength(1);
  });

  it('does not exist for a live key (404), even for its own live case, and a read-only test key gets 403', async () => {
    const liveCase = await createCase(partner, await uploadInvoice(partner.apiKey), { invoiceRef: 'HELPER-LIVE-1' });
    const live = await help(partner.apiKey, liveCase);
    expect(live.statusCode).toBe(404);
    expect((await readCase(partner.apiKey, liveCase)).body).toMatchObject({ recoveryGate: 'AWAITING_CONFIRMATION' });

    const created = outcome(await postCases(testKey, { cases: [validCase(testFile, { invoiceRef: 'HELPER-RO-1' })] })).created[0]!;
    const readOnly = await extraKey(partner.companyId, ['cases:read'], 'test');
    const refused = await help(readOnly, created.id);
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toMatchObject({ code: 'INSUFFICIENT_SCOPE' });
    expect((await readCase(testKey, created.id)).body).toMatchObject({ recoveryGate: 'AWAITING_CONFIRMATION' });
  });

  it("answers 404 for another company's test case", async () => {
    const other = await newPartner();
    const otherTest = await extraKey(other.companyId, ['cases:read', 'cases:write'], 'test');
    const theirs = outcome(await postCases(otherTest, { cases: [validCase(await uploadInvoice(otherTest), { invoiceRef: 'HELPER-F-1' })] }))
      .created[0]!;
    expect((await help(testKey, theirs.id)).statusCode).toBe(404);
    expect((await readCase(otherTest, theirs.id)).body).toMatchObject({ recoveryGate: 'AWAITING_CONFIRMATION' });
  });
});
