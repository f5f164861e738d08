import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { handler as listPaymentsHandler } from '../../functions/list-case-payments.js';
import { handler as recordPaymentHandler } from '../../functions/record-payment.js';
import { handler as withdrawHandler } from '../../functions/withdraw-case.js';
import { keys } from '../../lib/adapters/dynamodb/table-keys.js';
import { londonDate } from '../../lib/cases/dates.js';
import { MAX_PAYMENTS_PER_CASE } from '../../lib/cases/case-record.js';
import { config } from '../../lib/runtime/config.js';
import { checkedInvoke } from '../support/contract.js';
import { outcome, postCases, readCase, uploadInvoice, validCase } from '../support/cases.js';
import { apiEvent, bearer, ddb, extraKey, lambdaContext, newPartner, parse, type ParsedResult, type Partner } from '../support/fixtures.js';

/**
 * POST and GET /api/v1/cases/{id}/payments through the real handlers over DynamoDB Local (product
 * rules "Recovery and money", Payments, and "Idempotency-Key"). Every answer is checked against
 * docs/openapi.json by checkedInvoke.
 */
function pay(apiKey: string, id: string, body: unknown, headers: Record<string, string> = {}): Promise<ParsedResult> {
  const event = apiEvent({
    method: 'POST',
    path: `/api/v1/cases/${id}/payments`,
    resource: '/api/v1/cases/{id}/payments',
    pathParameters: { id },
    headers: { ...bearer(apiKey), 'Content-Type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return checkedInvoke(recordPaymentHandler, event, lambdaContext()).then(parse);
}

function payments(apiKey: string, id: string): Promise<ParsedResult> {
  const event = apiEvent({
    method: 'GET',
    path: `/api/v1/cases/${id}/payments`,
    resource: '/api/v1/cases/{id}/payments',
    pathParameters: { id },
    headers: bearer(apiKey),
  });
  return checkedInvoke(listPaymentsHandler, event, lambdaContext()).then(parse);
}

function withdraw(apiKey: string, id: string): Promise<ParsedResult> {
  const event = apiEvent({
    method: 'POST',
    path: `/api/v1/cases/${id}/withdraw`,
    resource: '/api/v1/cases/{id}/withdraw',
    pathParameters: { id },
    headers: bearer(apiKey),
    body: null,
  });
  return checkedInvoke(withdrawHandler, event, lambdaContext()).then(parse);
}

type Amounts = Record<string, string | null>;
const amountsOf = (body: Record<string, unknown>) => body.amounts as Amounts;
const pence = (decimal: string | null | undefined) => Math.round(Number(decimal) * 100);
const PAID_AT = '2025-03-10';

describe('recording a payment the debtor made directly', () => {
  let partner: Partner;
  let fileKey: string;
  beforeAll(async () => {
    partner = await newPartner(['cases:read', 'cases:write']);
    fileKey = await uploadInvoice(partner.apiKey);
  });

  async function createCase(overrides: Record<string, unknown> = {}, who: Partner = partner, file = fileKey) {
    const res = await postCases(who.apiKey, { cases: [validCase(file, overrides)] });
    expect(res.statusCode).toBe(201);
    return outcome(res).created[0]!;
  }

  it('answers 201 with the payment and the case as GET returns it after the payment, and lists it', async () => {
    const created = await createCase();
    const before = amountsOf((await readCase(partner.apiKey, created.id)).body);
    const res = await pay(partner.apiKey, created.id, { amount: 250.5, paidAt: PAID_AT, reference: 'BACS 0042' });
    expect(res.statusCode).toBe(201);
    const payment = res.body.payment as Record<string, unknown>;
    expect(payment).toEqual({
      id: expect.stringMatching(/^pay_/),
      caseId: created.id,
      source: 'DIRECT',
      amount: '250.50',
      paidAt: PAID_AT,
      reference: 'BACS 0042',
      recordedAt: expect.any(String),
      livemode: true,
    });
    const after = res.body.case as Record<string, unknown>;
    expect(after).toEqual((await readCase(partner.apiKey, created.id)).body);
    expect(amountsOf(after).paid).toBe('250.50');
    // Paid from 10 March 2025 on, the principal accrues less interest: the claim shrinks as well.
    expect(pence(amountsOf(after).outstanding)).toBe(pence(amountsOf(after).claimed) - 25_050);
    expect(pence(amountsOf(after).claimed)).toBeLessThan(pence(before.claimed));
    expect(after.status).toBe('DRAFT');

    const list = await payments(partner.apiKey, created.id);
    expect(list.statusCode).toBe(200);
    expect(list.body).toEqual({ data: [payment] });
  });

  it('lists every payment oldest first, with reference null when none was given', async () => {
    const created = await createCase();
    const first = await pay(partner.apiKey, created.id, { amount: 1, paidAt: '2025-03-11' });
    const second = await pay(partner.apiKey, created.id, { amount: 2.05, paidAt: '2025-03-01' });
    const list = await payments(partner.apiKey, created.id);
    expect((list.body.data as { id: string }[]).map((p) => p.id)).toEqual([
      (first.body.payment as { id: string }).id,
      (second.body.payment as { id: string }).id,
    ]);
    expect((list.body.data as { reference: unknown }[])[0]!.reference).toBeNull();
    expect(amountsOf((await readCase(partner.apiKey, created.id)).body).paid).toBe('3.05');
  });

  it('closes the case PAID_IN_FULL with a payment of exactly the outstanding amount, and frees its invoiceRef', async () => {
    const created = await createCase({ invoiceRef: `INV-FULL-${Date.now()}` });
    const outstanding = amountsOf((await readCase(partner.apiKey, created.id)).body).outstanding!;
    const res = await pay(partner.apiKey, created.id, { amount: Number(outstanding), paidAt: PAID_AT });
    expect(res.statusCode).toBe(201);
    const after = res.body.case as Record<string, unknown>;
    expect(after.status).toBe('CLOSED');
    expect(after.closure).toMatchObject({ reason: 'PAID_IN_FULL' });
    expect(amountsOf(after).outstanding).toBe('0.00');
    // The invoiceRef is no longer being chased: the same invoice can be submitted again.
    const again = await postCases(partner.apiKey, { cases: [validCase(fileKey, { invoiceRef: after.invoiceRef })] });
    expect(again.statusCode).toBe(201);
    // And the closed case takes no further payment.
    const refused = await pay(partner.apiKey, created.id, { amount: 1, paidAt: PAID_AT });
    expect(refused.statusCode).toBe(409);
    expect(refused.body).toMatchObject({ code: 'CASE_NOT_OPEN', caseStatus: 'CLOSED' });
  });

  it('refuses a payment on a withdrawn case with 409 CASE_NOT_OPEN naming its status, and records nothing', async () => {
    const created = await createCase();
    expect((await withdraw(partner.apiKey, created.id)).statusCode).toBe(200);
    const res = await pay(partner.apiKey, created.id, { amount: 1, paidAt: PAID_AT });
    expect(res.statusCode).toBe(409);
    expect(res.body).toMatchObject({ code: 'CASE_NOT_OPEN', caseStatus: 'WITHDRAWN' });
    expect((await payments(partner.apiKey, created.id)).body).toEqual({ data: [] });
  });

  it('refuses more than the outstanding amount with 409 PAYMENT_EXCEEDS_OUTSTANDING carrying outstanding, and records nothing', async () => {
    const created = await createCase();
    const outstanding = amountsOf((await readCase(partner.apiKey, created.id)).body).outstanding!;
    const res = await pay(partner.apiKey, created.id, { amount: (pence(outstanding) + 1) / 100, paidAt: PAID_AT });
    expect(res.statusCode).toBe(409);
    expect(res.body).toMatchObject({ code: 'PAYMENT_EXCEEDS_OUTSTANDING', outstanding });
    expect((await payments(partner.apiKey, created.id)).body).toEqual({ data: [] });
  });

  it(`refuses payment ${MAX_PAYMENTS_PER_CASE + 1} with 409 PAYMENT_LIMIT_REACHED`, async () => {
    const created = await createCase();
    for (let i = 0; i < MAX_PAYMENTS_PER_CASE; i++) {
      expect((await pay(partner.apiKey, created.id, { amount: 0.01, paidAt: PAID_AT })).statusCode).toBe(201);
    }
    const res = await pay(partner.apiKey, created.id, { amount: 0.01, paidAt: PAID_AT });
    expect(res.statusCode).toBe(409);
    expect(res.body).toMatchObject({ code: 'PAYMENT_LIMIT_REACHED', maxPayments: MAX_PAYMENTS_PER_CASE });
    const list = await payments(partner.apiKey, created.id);
    expect(list.body.data).toHaveLength(MAX_PAYMENTS_PER_CASE);
  }, 60_000);

  describe('a bad body is 400 INVALID_REQUEST naming the field, never 500, and records nothing', () => {
    let caseId: string;
    beforeAll(async () => {
      caseId = (await createCase()).id;
    });
    afterAll(async () => {
      expect((await payments(partner.apiKey, caseId)).body).toEqual({ data: [] });
    });

    const today = londonDate(Date.now());
    const tomorrow = londonDate(Date.now() + 86_400_000);
    const cases: [string, unknown, string][] = [
      ['an amount of 0', { amount: 0, paidAt: PAID_AT }, 'amount'],
      ['a negative amount', { amount: -5, paidAt: PAID_AT }, 'amount'],
      ['an amount with 3 decimals', { amount: 1.005, paidAt: PAID_AT }, 'amount'],
      ['an amount as a string', { amount: '10.00', paidAt: PAID_AT }, 'amount'],
      ['an amount of 1e-7', { amount: 1e-7, paidAt: PAID_AT }, 'amount'],
      ['a huge amount', { amount: 1e300, paidAt: PAID_AT }, 'amount'],
      ['no amount', { paidAt: PAID_AT }, 'amount'],
      [`a paidAt after today in London (${tomorrow})`, { amount: 1, paidAt: tomorrow }, 'paidAt'],
      ['a paidAt before the invoice date', { amount: 1, paidAt: '2025-01-09' }, 'paidAt'],
      ['a paidAt that is not a date', { amount: 1, paidAt: '2025-02-30' }, 'paidAt'],
      ['a paidAt with a time', { amount: 1, paidAt: `${today}T10:00:00Z` }, 'paidAt'],
      ['an empty reference', { amount: 1, paidAt: PAID_AT, reference: '' }, 'reference'],
      ['a reference of 101 characters', { amount: 1, paidAt: PAID_AT, reference: 'r'.repeat(101) }, 'reference'],
      ['an unknown field', { amount: 1, paidAt: PAID_AT, method: 'cheque' }, 'method'],
    ];
    it.each(cases)('%s', async (_name, body, field) => {
      const res = await pay(partner.apiKey, caseId, body);
      expect(res.statusCode).toBe(400);
      expect(res.body).toMatchObject({ code: 'INVALID_REQUEST' });
      expect((res.body.errors as { field: string }[]).map((e) => e.field)).toContain(field);
    });

    it('a body that is not an object', async () => {
      const res = await pay(partner.apiKey, caseId, '[1]');
      expect(res.statusCode).toBe(400);
      expect(res.body.code).toBe('INVALID_REQUEST');
    });

    it('a malformed Idempotency-Key', async () => {
      const res = await pay(partner.apiKey, caseId, { amount: 1, paidAt: PAID_AT }, { 'Idempotency-Key': 'has space' });
      expect(res.statusCode).toBe(400);
      expect(res.body.code).toBe('INVALID_REQUEST');
    });
  });

  it("answers 404 for an unknown case and for another company's case, and records nothing on it", async () => {
    const other = await newPartner(['cases:read', 'cases:write']);
    const theirs = await createCase({}, other, await uploadInvoice(other.apiKey));
    for (const id of ['case_0000000000000000000000', theirs.id]) {
      const res = await pay(partner.apiKey, id, { amount: 1, paidAt: PAID_AT });
      expect(res.statusCode).toBe(404);
      expect(res.body.code).toBe('NOT_FOUND');
      expect((await payments(partner.apiKey, id)).statusCode).toBe(404);
    }
    expect((await payments(other.apiKey, theirs.id)).body).toEqual({ data: [] });
  });

  it('keeps test mode and live apart: a test key cannot pay or list a live case, nor a live key a test case', async () => {
    const testKey = await extraKey(partner.companyId, ['cases:read', 'cases:write'], 'test');
    const live = await createCase();
    const testCase = await createCase({}, { ...partner, apiKey: testKey }, await uploadInvoice(testKey));
    expect((await pay(testKey, live.id, { amount: 1, paidAt: PAID_AT })).statusCode).toBe(404);
    expect((await payments(testKey, live.id)).statusCode).toBe(404);
    expect((await pay(partner.apiKey, testCase.id, { amount: 1, paidAt: PAID_AT })).statusCode).toBe(404);
    const inTest = await pay(testKey, testCase.id, { amount: 1, paidAt: PAID_AT });
    expect(inTest.statusCode).toBe(201);
    expect((inTest.body.payment as { livemode: boolean }).livemode).toBe(false);
    expect((await payments(testKey, testCase.id)).body.data).toHaveLength(1);
    expect((await payments(partner.apiKey, live.id)).body).toEqual({ data: [] });
  });

  it('requires cases:write to pay and cases:read to list (403)', async () => {
    const created = await createCase();
    const readOnly = await extraKey(partner.companyId, ['cases:read']);
    const writeOnly = await extraKey(partner.companyId, ['cases:write']);
    expect((await pay(readOnly, created.id, { amount: 1, paidAt: PAID_AT })).statusCode).toBe(403);
    expect((await payments(writeOnly, created.id)).statusCode).toBe(403);
  });

  describe('with an Idempotency-Key', () => {
    it('replays the original payment and case for the same request, with sameRequest true, and records nothing more', async () => {
      const created = await createCase();
      const key = `pay-${Date.now()}-same`;
      const first = await pay(partner.apiKey, created.id, { amount: 10, paidAt: PAID_AT }, { 'Idempotency-Key': key });
      expect(first.statusCode).toBe(201);
      // Another key order is the same request.
      const again = await pay(partner.apiKey, created.id, { paidAt: PAID_AT, amount: 10 }, { 'Idempotency-Key': key });
      expect(again.statusCode).toBe(409);
      expect(again.body).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED', state: 'COMPLETED', sameRequest: true });
      expect(again.body.payment).toEqual(first.body.payment);
      expect(again.body.case).toEqual(first.body.case);
      expect((await payments(partner.apiKey, created.id)).body.data).toHaveLength(1);
    });

    it('refuses the key with another body (or for another case) with sameRequest false and the original answer, recording nothing', async () => {
      const created = await createCase();
      const otherCase = await createCase();
      const key = `pay-${Date.now()}-other`;
      const first = await pay(partner.apiKey, created.id, { amount: 10, paidAt: PAID_AT }, { 'Idempotency-Key': key });
      expect(first.statusCode).toBe(201);
      for (const [id, body] of [
        [created.id, { amount: 11, paidAt: PAID_AT }],
        [otherCase.id, { amount: 10, paidAt: PAID_AT }],
      ] as const) {
        const res = await pay(partner.apiKey, id, body, { 'Idempotency-Key': key });
        expect(res.statusCode).toBe(409);
        expect(res.body).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED', state: 'COMPLETED', sameRequest: false });
        expect(res.body.payment).toEqual(first.body.payment);
      }
      expect((await payments(partner.apiKey, created.id)).body.data).toHaveLength(1);
      expect((await payments(partner.apiKey, otherCase.id)).body).toEqual({ data: [] });
    });

    it('stores the answer on the key in the payment’s own transaction: the claim is COMPLETED, never left IN_PROGRESS', async () => {
      const created = await createCase();
      const key = `pay-${Date.now()}-stored`;
      expect((await pay(partner.apiKey, created.id, { amount: 5, paidAt: PAID_AT }, { 'Idempotency-Key': key })).statusCode).toBe(201);
      const claim = await ddb().send(
        new GetCommand({ TableName: config().tableName, Key: keys.idempotencyClaim('live', partner.companyId, key), ConsistentRead: true }),
      );
      expect(claim.Item).toMatchObject({ state: 'COMPLETED' });
    });

    it('does not use the key up when the payment is refused (400 or 409): the corrected request then records it', async () => {
      const created = await createCase();
      const key = `pay-${Date.now()}-refused`;
      const outstanding = amountsOf((await readCase(partner.apiKey, created.id)).body).outstanding!;
      expect((await pay(partner.apiKey, created.id, { amount: 1.001, paidAt: PAID_AT }, { 'Idempotency-Key': key })).statusCode).toBe(400);
      const tooMuch = await pay(
        partner.apiKey,
        created.id,
        { amount: (pence(outstanding) + 100) / 100, paidAt: PAID_AT },
        { 'Idempotency-Key': key },
      );
      expect(tooMuch.body.code).toBe('PAYMENT_EXCEEDS_OUTSTANDING');
      expect((await pay(partner.apiKey, created.id, { amount: 1, paidAt: PAID_AT }, { 'Idempotency-Key': key })).statusCode).toBe(201);
    });

    it('keys of test mode and live are apart: the same key records one payment in each', async () => {
      const testKey = await extraKey(partner.companyId, ['cases:read', 'cases:write'], 'test');
      const live = await createCase();
      const testCase = await createCase({}, { ...partner, apiKey: testKey }, await uploadInvoice(testKey));
      const key = `pay-${Date.now()}-modes`;
      expect((await pay(partner.apiKey, live.id, { amount: 1, paidAt: PAID_AT }, { 'Idempotency-Key': key })).statusCode).toBe(201);
      expect((await pay(testKey, testCase.id, { amount: 1, paidAt: PAID_AT }, { 'Idempotency-Key': key })).statusCode).toBe(201);
    });
  });

  it('lets only one of two payments sent at once pass when each is more than half the outstanding amount', async () => {
    const created = await createCase();
    const outstanding = pence(amountsOf((await readCase(partner.apiKey, created.id)).body).outstanding);
    const amount = (Math.floor(outstanding / 2) + 1) / 100;
    const results = await Promise.all([
      pay(partner.apiKey, created.id, { amount, paidAt: PAID_AT }),
      pay(partner.apiKey, created.id, { amount, paidAt: PAID_AT }),
    ]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([201, 409]);
    expect(results.find((r) => r.statusCode === 409)!.body.code).toBe('PAYMENT_EXCEEDS_OUTSTANDING');
    expect((await payments(partner.apiKey, created.id)).body.data).toHaveLength(1);
  });
});
