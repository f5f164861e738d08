import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { buildApplyRecoveryUpdatesHandler, handler as recoveryUpdatesHandler } from '../../functions/apply-recovery-updates.js';
import { API_ROUTES } from '../../infra/local/api-routes.js';
import { newLocalIamCredential } from '../../infra/local/execute-api-signature.js';
import { createLocalServer } from '../../infra/local/http-adapter.js';
import { caseChangeAdapters } from '../../lib/adapters/production-adapters.js';
import { DynamoRecoveryStore } from '../../lib/adapters/dynamodb/recovery-store.js';
import { GSI2, keys } from '../../lib/adapters/dynamodb/table-keys.js';
import { RECOVERY_RETRY_MESSAGE } from '../../lib/cases/apply-recovery-update.js';
import type { CaseEvent } from '../../lib/cases/case-lifecycle.js';
import { confirmCases, withdrawCaseFor } from '../../lib/cases/change-case.js';
import { recoveryUpdatesResponseSchema } from '../../lib/cases/recovery-updates-request.js';
import { randomBase62 } from '../../lib/random-id.js';
import { config } from '../../lib/runtime/config.js';
import { outcome, postCases, readCase, uploadInvoice, validCase } from '../support/cases.js';
import { faultyDocumentClient } from '../support/faulty-client.js';
import { apiEvent, bearer, ddb, extraKey, lambdaContext, newPartner, parse, type Partner } from '../support/fixtures.js';
import { signedHeaders } from '../support/iam-signing.js';

/**
 * The recovery back office's route (product rules "Recovery and money"): the real handler as API
 * Gateway invokes it after the IAM check, on DynamoDB Local; then (last block) the local server,
 * where only a valid SigV4 signature reaches it and a partner's key never does.
 */
// Each test makes its cases through the partner route and the confirmation first (a few round trips
// each, serialised by DynamoDB Local): on a shared 2-core machine that can pass jest's default 5 s.
jest.setTimeout(20_000);

const BACK_OFFICE_ARN = 'arn:aws:iam::123456789012:role/recovery-back-office';
const BY = { name: 'Rita Recovery', email: 'rita@recovery.example' };
/** After every case's invoiceDate (2025-01-10), before today. */
const PAID_AT = '2025-03-01';
const newUpdateId = () => `bo-${randomBase62(12)}`;

function internalEvent(body: unknown, userArn: string | null = BACK_OFFICE_ARN) {
  const event = apiEvent({
    method: 'POST',
    path: '/internal/v1/recovery-updates',
    resource: '/internal/v1/recovery-updates',
    headers: { 'Content-Type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  event.requestContext.identity.userArn = userArn;
  return event;
}

async function send(body: unknown, handler = recoveryUpdatesHandler) {
  return parse(await handler(internalEvent(body), lambdaContext()));
}

type Update = Record<string, unknown>;
const update = (caseId: string, fields: Update, updateId = newUpdateId()): Update => ({ updateId, caseId, by: BY, ...fields });

/** A live case as the partner submits it, without statutory interest (outstanding is exactly the principal, 1250.50). */
async function createCase(partner: Partner, fileKey: string): Promise<string> {
  const res = await postCases(partner.apiKey, { cases: [validCase(fileKey, { claimStatutoryInterest: false })] });
  const { created } = outcome(res);
  if (created.length !== 1) throw new Error(`case not created: ${JSON.stringify(res.body)}`);
  return created[0]!.id;
}

/** A READY case: created, then confirmed as the dashboard confirms it (no debtorCompanyNo, so no verification). */
async function readyCase(partner: Partner, fileKey: string): Promise<string> {
  const caseId = await createCase(partner, fileKey);
  const [confirmed] = await confirmCases(caseChangeAdapters().changes, {
    mode: 'live',
    companyId: partner.companyId,
    caseIds: [caseId],
    confirmedBy: { name: 'Jane Smith', email: 'jane@partner.example' },
    requestId: 'req-confirm',
    source: 'operator',
    principal: 'operator:test',
  });
  expect(confirmed).toMatchObject({ result: 'confirmed', stored: { status: 'READY' } });
  return caseId;
}

async function inRecoveryCase(partner: Partner, fileKey: string): Promise<string> {
  const caseId = await readyCase(partner, fileKey);
  expect((await send({ companyId: partner.companyId, updates: [update(caseId, { type: 'recovery_started' })] })).body).toMatchObject({
    results: [{ result: 'applied' }],
  });
  return caseId;
}

/** Every case.updated event of a case, oldest first. */
async function updatedEventsOf(companyId: string, caseId: string): Promise<CaseEvent[]> {
  const out = await ddb().send(
    new QueryCommand({
      TableName: config().tableName,
      IndexName: GSI2,
      KeyConditionExpression: 'gsi2pk = :pk',
      FilterExpression: 'caseId = :caseId AND eventType = :type',
      ExpressionAttributeValues: {
        ':pk': keys.eventListPartition('live', companyId, keys.caseListShard(caseId)),
        ':caseId': caseId,
        ':type': 'case.updated',
      },
    }),
  );
  return (out.Items ?? [])
    .map((item) => JSON.parse(String(item.payload)) as CaseEvent)
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}

async function updateRecord(companyId: string, updateId: string): Promise<Record<string, unknown> | undefined> {
  const out = await ddb().send(
    new GetCommand({ TableName: config().tableName, Key: keys.recoveryUpdate('live', companyId, updateId), ConsistentRead: true }),
  );
  return out.Item;
}

const payments = (caseId: string) => new DynamoRecoveryStore(ddb(), config().tableName).listPayments('live', caseId);

describe('POST /internal/v1/recovery-updates (the handler, as API Gateway invokes it after the IAM check)', () => {
  let partner: Partner;
  let fileKey: string;

  beforeAll(async () => {
    partner = await newPartner();
    fileKey = await uploadInvoice(partner.apiKey);
  });

  it('starts recovery on a READY case and closes it with a reason: one case.updated per update with the earlier status and closure, and an immutable record of each', async () => {
    const caseId = await readyCase(partner, fileKey);
    const eventsBefore = (await updatedEventsOf(partner.companyId, caseId)).length;
    const started = update(caseId, { type: 'recovery_started', note: 'File opened' });
    const closed = update(caseId, { type: 'closed', reason: 'SETTLED', note: 'Agreed 800.00 with the debtor' });
    const res = await send({ companyId: partner.companyId, updates: [started, closed] });
    expect(res.statusCode).toBe(200);
    expect(recoveryUpdatesResponseSchema.parse(res.body)).toEqual({
      results: [
        { updateId: started.updateId, result: 'applied' },
        { updateId: closed.updateId, result: 'applied' },
      ],
    });

    const read = (await readCase(partner.apiKey, caseId)).body;
    expect(read).toMatchObject({
      status: 'CLOSED',
      closure: { reason: 'SETTLED', note: 'Agreed 800.00 with the debtor', at: expect.any(String) },
      amounts: { outstanding: '1250.50' },
    });
    expect((read.statusHistory as { status: string }[]).map((h) => h.status)).toEqual(['DRAFT', 'READY', 'IN_RECOVERY', 'CLOSED']);
    const events = (await updatedEventsOf(partner.companyId, caseId)).slice(eventsBefore);
    expect(events.map((e) => e.type === 'case.updated' && [e.data.object.status, e.data.previousAttributes])).toEqual([
      ['IN_RECOVERY', { status: 'READY' }],
      ['CLOSED', { status: 'IN_RECOVERY', closure: null }],
    ]);
    const record = await updateRecord(partner.companyId, String(started.updateId));
    expect(record).toMatchObject({
      updateId: started.updateId,
      caseId,
      companyId: partner.companyId,
      update: { type: 'recovery_started', note: 'File opened' },
      by: BY,
      source: 'back-office',
      requestId: expect.any(String),
      eventId: events[0]!.id,
    });
    expect(Date.parse(String(record!.appliedAt))).not.toBeNaN();
  });

  it('refuses recovery_started except from READY (a DRAFT case, one already IN_RECOVERY, a closed one) with invalid_state, changing nothing', async () => {
    const draft = await createCase(partner, fileKey);
    const inRecovery = await inRecoveryCase(partner, fileKey);
    const withdrawn = await readyCase(partner, fileKey);
    await withdrawCaseFor(caseChangeAdapters().changes, { mode: 'live', companyId: partner.companyId, caseId: withdrawn });
    const counts = await Promise.all(
      [draft, inRecovery, withdrawn].map(async (id) => (await updatedEventsOf(partner.companyId, id)).length),
    );

    const updates = [draft, inRecovery, withdrawn].map((id) => update(id, { type: 'recovery_started' }));
    const res = await send({ companyId: partner.companyId, updates });
    expect(res.body).toEqual({
      results: [
        { updateId: updates[0]!.updateId, result: 'invalid_state', message: 'Recovery starts only from READY; the case is DRAFT.' },
        { updateId: updates[1]!.updateId, result: 'invalid_state', message: 'Recovery starts only from READY; the case is IN_RECOVERY.' },
        { updateId: updates[2]!.updateId, result: 'invalid_state', message: expect.stringMatching(/WITHDRAWN/) },
      ],
    });
    expect((await readCase(partner.apiKey, draft)).body).toMatchObject({ status: 'DRAFT' });
    expect((await readCase(partner.apiKey, inRecovery)).body).toMatchObject({ status: 'IN_RECOVERY' });
    expect((await readCase(partner.apiKey, withdrawn)).body).toMatchObject({ status: 'WITHDRAWN' });
    const after = await Promise.all(
      [draft, inRecovery, withdrawn].map(async (id) => (await updatedEventsOf(partner.companyId, id)).length),
    );
    expect(after).toEqual(counts);
    // A refused update leaves no record: the same updateId may be sent again once the case allows it.
    for (const u of updates) expect(await updateRecord(partner.companyId, String(u.updateId))).toBeUndefined();
  });

  it('records payment_collected as a COLLECTED payment in any open status, up to the outstanding amount, each with one event carrying the earlier amounts', async () => {
    const draft = await createCase(partner, fileKey);
    const inRecovery = await inRecoveryCase(partner, fileKey);
    const onDraft = update(draft, { type: 'payment_collected', amount: 250.5, paidAt: PAID_AT, reference: 'BO-PAY-1' });
    const tooMuch = update(inRecovery, { type: 'payment_collected', amount: 1250.51, paidAt: PAID_AT });
    const onRecovery = update(inRecovery, { type: 'payment_collected', amount: 1000, paidAt: PAID_AT });
    const before = (await updatedEventsOf(partner.companyId, inRecovery)).length;
    const res = await send({ companyId: partner.companyId, updates: [onDraft, tooMuch, onRecovery] });
    expect(res.body).toEqual({
      results: [
        { updateId: onDraft.updateId, result: 'applied' },
        { updateId: tooMuch.updateId, result: 'invalid_state', message: expect.stringContaining('1250.50') },
        { updateId: onRecovery.updateId, result: 'applied' },
      ],
    });
    expect((await readCase(partner.apiKey, draft)).body).toMatchObject({
      status: 'DRAFT',
      amounts: { principal: '1250.50', paid: '250.50', outstanding: '1000.00' },
    });
    expect(await payments(draft)).toMatchObject([{ source: 'COLLECTED', amountPence: 25_050, paidAt: PAID_AT, reference: 'BO-PAY-1' }]);
    expect((await readCase(partner.apiKey, inRecovery)).body).toMatchObject({
      status: 'IN_RECOVERY',
      amounts: { paid: '1000.00', outstanding: '250.50' },
    });
    const events = (await updatedEventsOf(partner.companyId, inRecovery)).slice(before);
    expect(events).toHaveLength(1);
    expect(events[0]!.data).toMatchObject({
      object: { status: 'IN_RECOVERY', amounts: { paid: '1000.00', outstanding: '250.50' } },
      previousAttributes: { amounts: { paid: '0.00', outstanding: '1250.50' } },
    });
    expect(events[0]!.type === 'case.updated' && events[0]!.data.previousAttributes.status).toBeUndefined();
  });

  it('closes the case PAID_IN_FULL when a collected payment leaves 0.00 outstanding, in one event; nothing is taken after it', async () => {
    const caseId = await inRecoveryCase(partner, fileKey);
    const before = (await updatedEventsOf(partner.companyId, caseId)).length;
    const rest = update(caseId, { type: 'payment_collected', amount: 1250.5, paidAt: PAID_AT });
    const more = update(caseId, { type: 'payment_collected', amount: 1, paidAt: PAID_AT });
    const res = await send({ companyId: partner.companyId, updates: [rest, more] });
    expect(res.body).toEqual({
      results: [
        { updateId: rest.updateId, result: 'applied' },
        { updateId: more.updateId, result: 'invalid_state', message: expect.stringMatching(/CLOSED/) },
      ],
    });
    expect((await readCase(partner.apiKey, caseId)).body).toMatchObject({
      status: 'CLOSED',
      closure: { reason: 'PAID_IN_FULL' },
      amounts: { paid: '1250.50', outstanding: '0.00' },
    });
    const events = (await updatedEventsOf(partner.companyId, caseId)).slice(before);
    expect(events.map((e) => e.type === 'case.updated' && e.data.previousAttributes)).toEqual([
      { status: 'IN_RECOVERY', closure: null, amounts: expect.objectContaining({ paid: '0.00', outstanding: '1250.50' }) },
    ]);
  });

  it('refuses closed outside IN_RECOVERY and PAID_IN_FULL with money outstanding (invalid_state), and a closed update without a reason (invalid)', async () => {
    const ready = await readyCase(partner, fileKey);
    const inRecovery = await inRecoveryCase(partner, fileKey);
    const updates = [
      update(ready, { type: 'closed', reason: 'UNRECOVERABLE' }),
      update(inRecovery, { type: 'closed', reason: 'PAID_IN_FULL' }),
      update(inRecovery, { type: 'closed' }),
      update(inRecovery, { type: 'closed', reason: 'GONE_FISHING' }),
    ];
    const res = await send({ companyId: partner.companyId, updates });
    expect(res.body).toEqual({
      results: [
        {
          updateId: updates[0]!.updateId,
          result: 'invalid_state',
          message: 'Only a case IN_RECOVERY can be closed by the recovery team; the case is READY.',
        },
        {
          updateId: updates[1]!.updateId,
          result: 'invalid_state',
          message: 'PAID_IN_FULL needs outstanding 0.00; the case has 1250.50 outstanding.',
        },
        { updateId: updates[2]!.updateId, result: 'invalid', message: 'reason: reason is required for closed' },
        {
          updateId: updates[3]!.updateId,
          result: 'invalid',
          message: expect.stringMatching(/^reason: reason must be one of PAID_IN_FULL/),
        },
      ],
    });
    expect((await readCase(partner.apiKey, ready)).body).toMatchObject({ status: 'READY', closure: null });
    expect((await readCase(partner.apiKey, inRecovery)).body).toMatchObject({ status: 'IN_RECOVERY', closure: null });
  });

  it('answers the same updateId again already_applied and changes nothing, even sent with other fields', async () => {
    const caseId = await inRecoveryCase(partner, fileKey);
    const pay = update(caseId, { type: 'payment_collected', amount: 100, paidAt: PAID_AT });
    expect((await send({ companyId: partner.companyId, updates: [pay] })).body).toEqual({
      results: [{ updateId: pay.updateId, result: 'applied' }],
    });
    const record = await updateRecord(partner.companyId, String(pay.updateId));
    const events = (await updatedEventsOf(partner.companyId, caseId)).length;
    const again = await send({
      companyId: partner.companyId,
      updates: [pay, { ...pay, amount: 5 }, { ...pay, type: 'closed', reason: 'DISPUTED', amount: undefined, paidAt: undefined }],
    });
    expect(again.body).toEqual({
      results: [
        { updateId: pay.updateId, result: 'already_applied' },
        { updateId: pay.updateId, result: 'already_applied' },
        { updateId: pay.updateId, result: 'already_applied' },
      ],
    });
    expect((await readCase(partner.apiKey, caseId)).body).toMatchObject({ status: 'IN_RECOVERY', amounts: { paid: '100.00' } });
    expect(await payments(caseId)).toHaveLength(1);
    expect((await updatedEventsOf(partner.companyId, caseId)).length).toBe(events);
    expect(await updateRecord(partner.companyId, String(pay.updateId))).toEqual(record);
  });

  it('applies the same updateId sent in two requests at once exactly once: one applied, one already_applied, one payment', async () => {
    const caseId = await inRecoveryCase(partner, fileKey);
    const events = (await updatedEventsOf(partner.companyId, caseId)).length;
    const pay = update(caseId, { type: 'payment_collected', amount: 300, paidAt: PAID_AT });
    const both = await Promise.all([
      send({ companyId: partner.companyId, updates: [pay] }),
      send({ companyId: partner.companyId, updates: [pay] }),
    ]);
    expect(both.map((r) => r.statusCode)).toEqual([200, 200]);
    expect(both.map((r) => (r.body.results as { result: string }[])[0]!.result).sort()).toEqual(['already_applied', 'applied']);
    expect(await payments(caseId)).toMatchObject([{ amountPence: 30_000, source: 'COLLECTED' }]);
    expect((await readCase(partner.apiKey, caseId)).body).toMatchObject({ amounts: { paid: '300.00' } });
    expect((await updatedEventsOf(partner.companyId, caseId)).length).toBe(events + 1);
  });

  it('answers a malformed update invalid, naming its fields, and still applies the good ones around it', async () => {
    const [a, b] = [await readyCase(partner, fileKey), await readyCase(partner, fileKey)];
    const good1 = update(a, { type: 'recovery_started' });
    const good2 = update(b, { type: 'recovery_started' });
    const res = await send({
      companyId: partner.companyId,
      updates: [
        good1,
        update(a, { type: 'payment_collected', amount: 10.001, paidAt: '2025-02-30', colour: 'red' }, 'bad-1'),
        'not an update',
        { caseId: b, type: 'recovery_started', by: { name: 'X' } },
        good2,
      ],
    });
    expect(res.statusCode).toBe(200);
    const results = res.body.results as { updateId: string | null; result: string; message?: string }[];
    expect(results.map((r) => [r.updateId, r.result])).toEqual([
      [good1.updateId, 'applied'],
      ['bad-1', 'invalid'],
      [null, 'invalid'],
      [null, 'invalid'],
      [good2.updateId, 'applied'],
    ]);
    expect(results[1]!.message).toMatch(/colour/);
    expect(results[1]!.message).toMatch(/amount: amount must have at most 2 decimal places/);
    expect(results[1]!.message).toMatch(/paidAt: paidAt must be a real date/);
    expect(results[3]!.message).toMatch(/updateId/);
    expect(results[3]!.message).toMatch(/by\.email/);
    expect((await readCase(partner.apiKey, a)).body).toMatchObject({ status: 'IN_RECOVERY', amounts: { paid: '0.00' } });
    expect((await readCase(partner.apiKey, b)).body).toMatchObject({ status: 'IN_RECOVERY' });
  });

  it("answers not_found for an unknown case, another company's case and a test case, and changes none of them", async () => {
    const other = await newPartner();
    const foreign = await readyCase(other, await uploadInvoice(other.apiKey));
    const testKey = await extraKey(partner.companyId, ['cases:read', 'cases:write'], 'test');
    const testCase = outcome(await postCases(testKey, { cases: [validCase(await uploadInvoice(testKey))] })).created[0]!.id;
    const ids = ['case_0000000000000000000000', foreign, testCase];
    const updates = ids.map((id) => update(id, { type: 'payment_collected', amount: 1, paidAt: PAID_AT }));
    const res = await send({ companyId: partner.companyId, updates });
    expect((res.body.results as { result: string }[]).map((r) => r.result)).toEqual(['not_found', 'not_found', 'not_found']);
    expect((await readCase(other.apiKey, foreign)).body).toMatchObject({ status: 'READY', amounts: { paid: '0.00' } });
    expect((await readCase(testKey, testCase)).body).toMatchObject({ amounts: { paid: '0.00' } });
  });

  it('refuses a bad envelope with 400 naming each field, and applies nothing', async () => {
    const caseId = await readyCase(partner, fileKey);
    const one = update(caseId, { type: 'recovery_started' });
    const tooMany = await send({ companyId: partner.companyId, updates: Array.from({ length: 101 }, () => one) });
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.body).toMatchObject({
      code: 'INVALID_REQUEST',
      errors: [{ field: 'updates', message: 'updates must hold at most 100 updates' }],
    });
    const empty = await send({ companyId: partner.companyId, updates: [] });
    expect(empty.body).toMatchObject({ errors: [{ field: 'updates', message: 'updates must hold at least 1 update' }] });
    const bad = await send({ companyId: 'acme', updates: one, dryRun: true });
    expect(bad.statusCode).toBe(400);
    expect((bad.body.errors as { field: string }[]).map((e) => e.field).sort()).toEqual(['companyId', 'dryRun', 'updates']);
    const missing = await send({});
    expect(missing.body).toMatchObject({
      errors: expect.arrayContaining([
        { field: 'companyId', message: 'companyId is required' },
        { field: 'updates', message: 'updates is required' },
      ]),
    });
    for (const body of ['[]', 'null', '"x"', '{"companyId":']) expect((await send(body)).statusCode).toBe(400);
    expect((await readCase(partner.apiKey, caseId)).body).toMatchObject({ status: 'READY' });
    expect(await updateRecord(partner.companyId, String(one.updateId))).toBeUndefined();
  });

  it('answers retry for the one update a transient storage fault hit, applies the others, and the same updateId sent again applies it', async () => {
    const [first, unlucky, last] = [
      await readyCase(partner, fileKey),
      await readyCase(partner, fileKey),
      await readyCase(partner, fileKey),
    ];
    // Every attempt of the unlucky case's transaction is throttled, until the store's retries run out.
    const { client, counter } = faultyDocumentClient({
      decide: (command, input) =>
        command === 'TransactWriteItemsCommand' && JSON.stringify(input).includes(unlucky) ? 'throttle' : undefined,
    });
    const store = new DynamoRecoveryStore(client, config().tableName, { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20 });
    const faulty = buildApplyRecoveryUpdatesHandler({ recovery: { store }, now: () => new Date() });
    const updates = [first, unlucky, last].map((id) => update(id, { type: 'recovery_started' }));
    const res = await send({ companyId: partner.companyId, updates }, faulty);
    expect(counter.injected.throttle).toBe(3);
    expect(res.statusCode).toBe(200);
    expect(recoveryUpdatesResponseSchema.parse(res.body)).toEqual({
      results: [
        { updateId: updates[0]!.updateId, result: 'applied' },
        { updateId: updates[1]!.updateId, result: 'retry', message: RECOVERY_RETRY_MESSAGE },
        { updateId: updates[2]!.updateId, result: 'applied' },
      ],
    });
    expect((await readCase(partner.apiKey, unlucky)).body).toMatchObject({ status: 'READY' });
    expect(await updateRecord(partner.companyId, String(updates[1]!.updateId))).toBeUndefined();
    const again = await send({ companyId: partner.companyId, updates });
    expect((again.body.results as { result: string }[]).map((r) => r.result)).toEqual(['already_applied', 'applied', 'already_applied']);
    expect((await readCase(partner.apiKey, unlucky)).body).toMatchObject({ status: 'IN_RECOVERY' });
  });

  it('refuses an event without an IAM caller with 403 problem details, and applies nothing (defence in depth)', async () => {
    const caseId = await readyCase(partner, fileKey);
    const one = update(caseId, { type: 'recovery_started' });
    const res = parse(await recoveryUpdatesHandler(internalEvent({ companyId: partner.companyId, updates: [one] }, null), lambdaContext()));
    expect(res.statusCode).toBe(403);
    expect(res.headers['content-type']).toBe('application/problem+json');
    expect(res.body).toMatchObject({ code: 'FORBIDDEN', status: 403 });
    expect((await readCase(partner.apiKey, caseId)).body).toMatchObject({ status: 'READY' });
  });
});

describe('POST /internal/v1/recovery-updates on the local server (npm start): only a valid SigV4 signature reaches the function', () => {
  const credential = newLocalIamCredential('test-recovery-back-office');
  let server: Server;
  let url: string;
  let partner: Partner;
  let fileKey: string;

  beforeAll(async () => {
    server = createLocalServer({ routes: API_ROUTES, iam: { credentials: [credential], region: 'eu-west-2' } });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/internal/v1/recovery-updates`;
    partner = await newPartner();
    fileKey = await uploadInvoice(partner.apiKey);
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  async function post(body: string, headers: Record<string, string>) {
    // Lower case, as the signer names it: a second spelling would make fetch send the value twice.
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    return { status: res.status, type: res.headers.get('content-type'), body: (await res.json()) as Record<string, unknown> };
  }

  it('applies an update with a valid signature', async () => {
    const caseId = await readyCase(partner, fileKey);
    const one = update(caseId, { type: 'recovery_started' });
    const body = JSON.stringify({ companyId: partner.companyId, updates: [one] });
    const res = await post(body, await signedHeaders(url, 'POST', body, credential));
    expect(res).toMatchObject({ status: 200, body: { results: [{ updateId: one.updateId, result: 'applied' }] } });
    expect((await readCase(partner.apiKey, caseId)).body).toMatchObject({ status: 'IN_RECOVERY' });
  });

  it("refuses a partner's API key (Bearer or X-Api-Key), a signature of another secret and an unknown access key, and nothing changes", async () => {
    const caseId = await readyCase(partner, fileKey);
    const body = JSON.stringify({ companyId: partner.companyId, updates: [update(caseId, { type: 'recovery_started' })] });
    expect(await post(body, bearer(partner.apiKey))).toMatchObject({
      status: 403,
      type: 'application/problem+json',
      body: { code: 'FORBIDDEN', status: 403 },
    });
    // Sent as X-Api-Key there is no signature at all: API Gateway answers as for an unknown path.
    expect(await post(body, { 'X-Api-Key': partner.apiKey })).toMatchObject({ status: 404, body: { code: 'NOT_FOUND' } });
    const otherSecret = await post(
      body,
      await signedHeaders(url, 'POST', body, credential, { secretAccessKey: 'not-the-secret-not-the-secret-0000' }),
    );
    expect(otherSecret).toMatchObject({ status: 403, body: { code: 'FORBIDDEN' } });
    const stranger = await post(body, await signedHeaders(url, 'POST', body, newLocalIamCredential('stranger')));
    expect(stranger).toMatchObject({ status: 403, body: { code: 'FORBIDDEN' } });
    expect((await readCase(partner.apiKey, caseId)).body).toMatchObject({ status: 'READY' });
  });
});
