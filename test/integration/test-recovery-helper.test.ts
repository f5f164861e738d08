import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { handler as recoveryHelper } from '../../functions/test-apply-recovery-update.js';
import { handler as listHandler } from '../../functions/list-cases.js';
import { handler as withdrawHandler } from '../../functions/withdraw-case.js';
import { GSI2, keys } from '../../lib/adapters/dynamodb/table-keys.js';
import { caseChangeAdapters } from '../../lib/adapters/production-adapters.js';
import { settleCaseStatus } from '../../lib/cases/change-case.js';
import type { CaseEvent } from '../../lib/cases/case-lifecycle.js';
import { londonDate } from '../../lib/cases/dates.js';
import type { Mode } from '../../lib/mode.js';
import { config } from '../../lib/runtime/config.js';
import { checkedInvoke } from '../support/contract.js';
import { outcome, postCases, readCase, uploadInvoice, validCase } from '../support/cases.js';
import { apiEvent, bearer, ddb, extraKey, lambdaContext, newPartner, parse, type Partner, type ParsedResult } from '../support/fixtures.js';

/**
 * The test-mode recovery helper (product rules "Recovery and money", Test mode): a partner with a
 * test key rehearses every transition and every amount, through the real handler on DynamoDB
 * Local, each answer checked against docs/openapi.json.
 */
const TODAY = () => londonDate(Date.now());
const PAID_AT = '2025-03-01';

let partner: Partner;
let testKey: string;
let testFile: string;

beforeAll(async () => {
  // Auto-attested, and no debtorCompanyNo: a test case is READY once settled (readyTestCase).
  partner = await newPartner(['cases:read', 'cases:write'], { autoAttestation: true, mode: 'test' });
  testKey = partner.apiKey;
  testFile = await uploadInvoice(testKey);
});

function helperEvent(apiKey: string, id: string, body: unknown) {
  return apiEvent({
    method: 'POST',
    path: `/api/v1/test-helpers/cases/${id}/recovery`,
    resource: '/api/v1/test-helpers/cases/{id}/recovery',
    pathParameters: { id },
    headers: { ...bearer(apiKey), 'Content-Type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}
const rehearse = async (id: string, body: unknown, apiKey = testKey): Promise<ParsedResult> =>
  parse(await checkedInvoke(recoveryHelper, helperEvent(apiKey, id, body), lambdaContext()));

const withdraw = async (id: string, apiKey = testKey): Promise<ParsedResult> =>
  parse(
    await checkedInvoke(
      withdrawHandler,
      apiEvent({
        method: 'POST',
        path: `/api/v1/cases/${id}/withdraw`,
        resource: '/api/v1/cases/{id}/withdraw',
        pathParameters: { id },
        headers: bearer(apiKey),
      }),
      lambdaContext(),
    ),
  );

/** A READY case (test mode unless asked) of 1,250.50 (without statutory interest unless asked, so every amount is exact); its id. */
async function readyTestCase(
  overrides: Record<string, unknown> = {},
  apiKey = testKey,
  fileKey = testFile,
  mode: Mode = 'test',
): Promise<string> {
  const res = await postCases(apiKey, { cases: [validCase(fileKey, { claimStatutoryInterest: false, ...overrides })] });
  const { created } = outcome(res);
  if (created.length !== 1) throw new Error(`case not created: ${JSON.stringify(res.body)}`);
  const id = created[0]!.id;
  // The verifier's worker settles a new case (DRAFT → READY when its gates are satisfied) from the
  // stream, in this process but in its own time; settling it here too makes it READY now (the
  // second of the two changes nothing).
  await settleCaseStatus(caseChangeAdapters().changes, mode, id);
  return id;
}

/** A `case.updated` event, as its item's payload holds it. */
type UpdatedEvent = CaseEvent & { data: { previousAttributes: Record<string, unknown> } };

/** The case's `case.updated` events after it settled (the DRAFT → READY one left out), oldest first. */
async function updatedEventsOf(caseId: string, companyId = partner.companyId): Promise<UpdatedEvent[]> {
  const out = await ddb().send(
    new QueryCommand({
      TableName: config().tableName,
      IndexName: GSI2,
      KeyConditionExpression: 'gsi2pk = :pk',
      FilterExpression: 'caseId = :caseId AND eventType = :type',
      ExpressionAttributeValues: {
        ':pk': keys.eventListPartition('test', companyId, keys.caseListShard(caseId)),
        ':caseId': caseId,
        ':type': 'case.updated',
      },
    }),
  );
  return (out.Items ?? [])
    .map((item) => JSON.parse(String(item.payload)) as UpdatedEvent)
    .filter((e) => e.data.previousAttributes.status !== 'DRAFT')
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}

const caseNow = async (id: string) => (await readCase(testKey, id)).body;

describe('a partner rehearses recovery with a test key', () => {
  it('moves a case READY → IN_RECOVERY → payments → CLOSED, each answer the case after it, each step one case.updated event', async () => {
    const id = await readyTestCase();
    expect(await caseNow(id)).toMatchObject({ status: 'READY', livemode: false, amounts: { outstanding: '1250.50' } });

    const started = await rehearse(id, { type: 'recovery_started', note: 'Letter before action sent' });
    expect(started.statusCode).toBe(200);
    expect(started.body).toMatchObject({ id, status: 'IN_RECOVERY', closure: null, livemode: false });
    expect((started.body.statusHistory as { status: string }[]).map((h) => h.status)).toEqual(['DRAFT', 'READY', 'IN_RECOVERY']);

    const first = await rehearse(id, { type: 'payment_collected', amount: 250.5, paidAt: PAID_AT, reference: 'BACS 1' });
    expect(first.statusCode).toBe(200);
    expect(first.body).toMatchObject({ status: 'IN_RECOVERY', amounts: { principal: '1250.50', paid: '250.50', outstanding: '1000.00' } });

    const second = await rehearse(id, { type: 'payment_collected', amount: 0.01, paidAt: TODAY() });
    expect(second.body).toMatchObject({ status: 'IN_RECOVERY', amounts: { paid: '250.51', outstanding: '999.99' } });

    const closed = await rehearse(id, { type: 'closed', reason: 'SETTLED', note: 'Debtor agreed 250.51 in full settlement' });
    expect(closed.statusCode).toBe(200);
    expect(closed.body).toMatchObject({
      status: 'CLOSED',
      closure: { reason: 'SETTLED', note: 'Debtor agreed 250.51 in full settlement' },
      amounts: { paid: '250.51', outstanding: '999.99', asOf: TODAY() },
    });
    expect(await caseNow(id)).toEqual(closed.body);

    const events = await updatedEventsOf(id);
    expect(events.map((e) => [e.data.object.status, e.data.previousAttributes])).toEqual([
      ['IN_RECOVERY', { status: 'READY' }],
      ['IN_RECOVERY', { amounts: expect.objectContaining({ paid: '0.00', outstanding: '1250.50' }) }],
      ['IN_RECOVERY', { amounts: expect.objectContaining({ paid: '250.50', outstanding: '1000.00' }) }],
      ['CLOSED', { status: 'IN_RECOVERY', closure: null }],
    ]);
    expect(events.every((e) => e.livemode === false)).toBe(true);
  });

  it('closes the case PAID_IN_FULL with a payment of everything outstanding, from READY, in one event', async () => {
    // With statutory compensation and interest: the closing amount is what the case says today.
    const id = await readyTestCase({ claimStatutoryInterest: true });
    const outstanding = ((await caseNow(id)).amounts as { outstanding: string }).outstanding;
    expect(Number(outstanding)).toBeGreaterThan(1250.5 + 70);

    const paid = await rehearse(id, { type: 'payment_collected', amount: Number(outstanding), paidAt: TODAY() });
    expect(paid.statusCode).toBe(200);
    expect(paid.body).toMatchObject({
      status: 'CLOSED',
      closure: { reason: 'PAID_IN_FULL' },
      amounts: { paid: outstanding, outstanding: '0.00' },
    });
    const events = await updatedEventsOf(id);
    expect(events).toHaveLength(1);
    expect(events[0]!.data.previousAttributes).toMatchObject({ status: 'READY', closure: null, amounts: { paid: '0.00', outstanding } });
  });

  it('withdraws a case IN_RECOVERY; withdrawing it again is 200 unchanged, and the helper then answers 409 CASE_NOT_OPEN', async () => {
    const id = await readyTestCase();
    expect((await rehearse(id, { type: 'recovery_started' })).statusCode).toBe(200);
    const withdrawn = await withdraw(id);
    expect(withdrawn.statusCode).toBe(200);
    expect(withdrawn.body).toMatchObject({ status: 'WITHDRAWN' });
    expect((await withdraw(id)).body).toEqual(withdrawn.body);

    const refused = await rehearse(id, { type: 'payment_collected', amount: 10, paidAt: PAID_AT });
    expect(refused.statusCode).toBe(409);
    expect(refused.body).toMatchObject({ code: 'CASE_NOT_OPEN', status: 409, caseStatus: 'WITHDRAWN' });
    expect(await caseNow(id)).toEqual(withdrawn.body);
    expect((await updatedEventsOf(id)).map((e) => e.data.object.status)).toEqual(['IN_RECOVERY', 'WITHDRAWN']);
  });

  it('refuses to withdraw a CLOSED case (409 CASE_NOT_OPEN) and refuses every further update of it, the case unchanged', async () => {
    const id = await readyTestCase();
    await rehearse(id, { type: 'recovery_started' });
    const closed = (await rehearse(id, { type: 'closed', reason: 'UNRECOVERABLE' })).body;
    expect(closed).toMatchObject({ status: 'CLOSED', closure: { reason: 'UNRECOVERABLE' } });

    const withdrawal = await withdraw(id);
    expect(withdrawal.statusCode).toBe(409);
    expect(withdrawal.body).toMatchObject({ code: 'CASE_NOT_OPEN', caseStatus: 'CLOSED' });
    for (const body of [
      { type: 'recovery_started' },
      { type: 'payment_collected', amount: 1, paidAt: PAID_AT },
      { type: 'closed', reason: 'DISPUTED' },
    ]) {
      const res = await rehearse(id, body);
      expect({ body, status: res.statusCode, code: res.body.code, caseStatus: res.body.caseStatus }).toEqual({
        body,
        status: 409,
        code: 'CASE_NOT_OPEN',
        caseStatus: 'CLOSED',
      });
    }
    expect(await caseNow(id)).toEqual(closed);
    expect(await updatedEventsOf(id)).toHaveLength(2);
  });
});

describe('what the rules refuse answers 409 and leaves the case unchanged', () => {
  it('INVALID_TRANSITION: recovery not from READY, closing before recovery started, PAID_IN_FULL with money outstanding, starting twice', async () => {
    // Not auto-attested: the case waits for confirmation in DRAFT.
    const draftCompany = await newPartner(['cases:read', 'cases:write'], { mode: 'test' });
    const draft = await readyTestCase({}, draftCompany.apiKey, await uploadInvoice(draftCompany.apiKey));
    const fromDraft = parse(
      await checkedInvoke(recoveryHelper, helperEvent(draftCompany.apiKey, draft, { type: 'recovery_started' }), lambdaContext()),
    );
    expect(fromDraft.statusCode).toBe(409);
    expect(fromDraft.body).toMatchObject({ code: 'INVALID_TRANSITION', caseStatus: 'DRAFT' });
    expect((await readCase(draftCompany.apiKey, draft)).body).toMatchObject({ status: 'DRAFT' });

    const id = await readyTestCase();
    const before = await caseNow(id);
    const closeFromReady = await rehearse(id, { type: 'closed', reason: 'SETTLED' });
    expect(closeFromReady.statusCode).toBe(409);
    expect(closeFromReady.body).toMatchObject({ code: 'INVALID_TRANSITION', caseStatus: 'READY' });
    expect(await caseNow(id)).toEqual(before);

    const started = (await rehearse(id, { type: 'recovery_started' })).body;
    const again = await rehearse(id, { type: 'recovery_started' });
    expect(again.statusCode).toBe(409);
    expect(again.body).toMatchObject({ code: 'INVALID_TRANSITION', caseStatus: 'IN_RECOVERY' });
    const paidInFull = await rehearse(id, { type: 'closed', reason: 'PAID_IN_FULL' });
    expect(paidInFull.statusCode).toBe(409);
    expect(paidInFull.body).toMatchObject({ code: 'INVALID_TRANSITION', caseStatus: 'IN_RECOVERY' });
    expect(paidInFull.body.detail).toContain('1250.50');
    expect(await caseNow(id)).toEqual(started);
    expect(await updatedEventsOf(id)).toHaveLength(1);
  });

  it('PAYMENT_EXCEEDS_OUTSTANDING: a penny more than outstanding, with outstanding in the answer; nothing recorded', async () => {
    const id = await readyTestCase();
    await rehearse(id, { type: 'payment_collected', amount: 1000, paidAt: PAID_AT });
    const before = await caseNow(id);
    const res = await rehearse(id, { type: 'payment_collected', amount: 250.51, paidAt: PAID_AT });
    expect(res.statusCode).toBe(409);
    expect(res.body).toMatchObject({ code: 'PAYMENT_EXCEEDS_OUTSTANDING', outstanding: '250.50' });
    expect(await caseNow(id)).toEqual(before);
    expect(await updatedEventsOf(id)).toHaveLength(1);
  });
});

describe('who may call it, and what it takes', () => {
  it('does not exist for a live key (404), even for its own live case, which stays as it was', async () => {
    const live = await newPartner(['cases:read', 'cases:write'], { autoAttestation: true });
    const liveCase = await readyTestCase({}, live.apiKey, await uploadInvoice(live.apiKey), 'live');
    const res = parse(
      await checkedInvoke(recoveryHelper, helperEvent(live.apiKey, liveCase, { type: 'recovery_started' }), lambdaContext()),
    );
    expect(res.statusCode).toBe(404);
    expect(res.body).toMatchObject({ code: 'NOT_FOUND' });
    expect((await readCase(live.apiKey, liveCase)).body).toMatchObject({ status: 'READY' });
    // Whatever it sends: a bad body is not looked at either.
    expect(parse(await checkedInvoke(recoveryHelper, helperEvent(live.apiKey, liveCase, { type: 'x' }), lambdaContext())).statusCode).toBe(
      404,
    );
  });

  it('answers 403 to a read-only test key and 404 for an unknown or another company\u2019s test case', async () => {
    const id = await readyTestCase();
    const readOnly = await extraKey(partner.companyId, ['cases:read'], 'test');
    const refused = await rehearse(id, { type: 'recovery_started' }, readOnly);
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toMatchObject({ code: 'INSUFFICIENT_SCOPE' });

    const other = await newPartner(['cases:read', 'cases:write'], { autoAttestation: true, mode: 'test' });
    const theirs = await readyTestCase({}, other.apiKey, await uploadInvoice(other.apiKey));
    expect((await rehearse(theirs, { type: 'recovery_started' })).statusCode).toBe(404);
    expect((await readCase(other.apiKey, theirs)).body).toMatchObject({ status: 'READY' });
    expect((await rehearse('case_0000000000000000000000', { type: 'recovery_started' })).statusCode).toBe(404);
    expect((await rehearse('not-a-case-id', { type: 'recovery_started' })).statusCode).toBe(404);
    expect(await caseNow(id)).toMatchObject({ status: 'READY' });
  });

  it.each([
    ['no type', { amount: 10 }, 'type'],
    ['an unknown type', { type: 'recovery_finished' }, 'type'],
    ['a payment without amount', { type: 'payment_collected', paidAt: PAID_AT }, 'amount'],
    ['a payment without paidAt', { type: 'payment_collected', amount: 10 }, 'paidAt'],
    ['an amount of three decimals', { type: 'payment_collected', amount: 10.005, paidAt: PAID_AT }, 'amount'],
    ['a negative amount', { type: 'payment_collected', amount: -1, paidAt: PAID_AT }, 'amount'],
    ['an amount as a string', { type: 'payment_collected', amount: '10.00', paidAt: PAID_AT }, 'amount'],
    ['a paidAt that is not a date', { type: 'payment_collected', amount: 10, paidAt: '2025-02-30' }, 'paidAt'],
    ['a paidAt after today', { type: 'payment_collected', amount: 10, paidAt: '2099-01-01' }, 'paidAt'],
    ['a paidAt before the invoice date', { type: 'payment_collected', amount: 10, paidAt: '2024-12-31' }, 'paidAt'],
    ['a close without reason', { type: 'closed' }, 'reason'],
    ['an unknown reason', { type: 'closed', reason: 'GAVE_UP' }, 'reason'],
    ['a field the type does not take', { type: 'recovery_started', amount: 10 }, 'amount'],
    ['an updateId (the back office\u2019s field)', { type: 'recovery_started', updateId: 'u-1' }, 'updateId'],
    ['a note over 500 characters', { type: 'recovery_started', note: 'x'.repeat(501) }, 'note'],
  ])('refuses %s with 400 INVALID_REQUEST naming the field, the case unchanged', async (_name, body, field) => {
    const id = await readyTestCase();
    const before = await caseNow(id);
    const res = await rehearse(id, body);
    expect(res.statusCode).toBe(400);
    expect(res.body).toMatchObject({ code: 'INVALID_REQUEST', errors: expect.arrayContaining([expect.objectContaining({ field })]) });
    expect(await caseNow(id)).toEqual(before);
    expect(await updatedEventsOf(id)).toEqual([]);
  });

  it('refuses a body that is not a JSON object with 400', async () => {
    const id = await readyTestCase();
    for (const body of ['{"type": ', '[]', '"recovery_started"']) expect((await rehearse(id, body)).statusCode).toBe(400);
    expect(await caseNow(id)).toMatchObject({ status: 'READY' });
  });
});

describe('the case list after a rehearsal', () => {
  it('filters by the new statuses IN_RECOVERY and CLOSED through GET /api/v1/cases, in test mode only', async () => {
    const company = await newPartner(['cases:read', 'cases:write'], { autoAttestation: true, mode: 'test' });
    const file = await uploadInvoice(company.apiKey);
    const [inRecovery, closed, ready] = [
      await readyTestCase({}, company.apiKey, file),
      await readyTestCase({}, company.apiKey, file),
      await readyTestCase({}, company.apiKey, file),
    ];
    const help = (id: string, body: unknown) =>
      checkedInvoke(recoveryHelper, helperEvent(company.apiKey, id, body), lambdaContext()).then(parse);
    expect((await help(inRecovery, { type: 'recovery_started' })).statusCode).toBe(200);
    expect((await help(closed, { type: 'payment_collected', amount: 1250.5, paidAt: PAID_AT })).body).toMatchObject({ status: 'CLOSED' });

    const list = async (status: string, apiKey = company.apiKey) => {
      const res = parse(
        await checkedInvoke(
          listHandler,
          apiEvent({ method: 'GET', path: '/api/v1/cases', resource: '/api/v1/cases', headers: bearer(apiKey), query: { status } }),
          lambdaContext(),
        ),
      );
      expect(res.statusCode).toBe(200);
      return (res.body.data as { id: string; status: string; livemode: boolean }[]).map((c) => [c.id, c.status, c.livemode]);
    };
    expect(await list('IN_RECOVERY')).toEqual([[inRecovery, 'IN_RECOVERY', false]]);
    expect(await list('CLOSED')).toEqual([[closed, 'CLOSED', false]]);
    expect(await list('READY')).toEqual([[ready, 'READY', false]]);
    // The company's live key sees none of its test cases.
    const liveKey = await extraKey(company.companyId, ['cases:read'], 'live');
    expect(await list('IN_RECOVERY', liveKey)).toEqual([]);
    expect(await list('CLOSED', liveKey)).toEqual([]);
  }, 30_000); // three cases created, settled and changed, six list requests: seconds on a shared machine
});
