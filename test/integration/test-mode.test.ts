import { handler as listHandler } from '../../functions/list-cases.js';
import { checkedInvoke } from '../support/contract.js';
import { outcome, postCases, readCase, scanTable, uploadInvoice, validCase } from '../support/cases.js';
import { apiEvent, bearer, extraKey, lambdaContext, newPartner, parse, type Partner } from '../support/fixtures.js';

/**
 * Test mode through the real handlers on the local stores (product rules "Test mode (sandbox)"):
 * one company, a live key and a test key. The cross-world matrix is in the adversarial suite
 * (tenancy-and-auth.test.ts); this file shows the partner-visible behaviour of each rule.
 */
async function list(apiKey: string, query: Record<string, string> = {}) {
  return parse(
    await checkedInvoke(
      listHandler,
      apiEvent({ method: 'GET', path: '/api/v1/cases', resource: '/api/v1/cases', headers: bearer(apiKey), query }),
      lambdaContext(),
    ),
  );
}

describe('test mode', () => {
  let partner: Partner;
  let testKey: string;
  let liveFile: string;
  let testFile: string;

  beforeAll(async () => {
    partner = await newPartner();
    testKey = await extraKey(partner.companyId, ['cases:read', 'cases:write'], 'test');
    [liveFile, testFile] = await Promise.all([uploadInvoice(partner.apiKey), uploadInvoice(testKey)]);
  });

  it('issues test uploads under their own prefix', () => {
    expect(testFile).toMatch(new RegExp(`^test-invoices/${partner.companyId}/`));
    expect(liveFile).toMatch(new RegExp(`^invoices/${partner.companyId}/`));
  });

  it('creates the same invoiceRef once in each mode, each carrying its livemode, each invisible to the other mode', async () => {
    const live = await postCases(partner.apiKey, { cases: [validCase(liveFile, { invoiceRef: 'INV-MODES-1' })] });
    const test = await postCases(testKey, { cases: [validCase(testFile, { invoiceRef: 'INV-MODES-1' })] });
    const liveCase = outcome(live).created[0]!;
    const testCase = outcome(test).created[0]!;
    expect([live.statusCode, liveCase.livemode, test.statusCode, testCase.livemode]).toEqual([201, true, 201, false]);

    expect((await readCase(testKey, testCase.id)).body).toMatchObject({ id: testCase.id, invoiceRef: 'INV-MODES-1', livemode: false });
    expect((await readCase(partner.apiKey, liveCase.id)).body).toMatchObject({ id: liveCase.id, livemode: true });
    expect((await readCase(partner.apiKey, testCase.id)).statusCode).toBe(404);
    expect((await readCase(testKey, liveCase.id)).statusCode).toBe(404);

    const testList = await list(testKey, { limit: '100' });
    expect((testList.body.data as { id: string; livemode: boolean }[]).map((c) => [c.id, c.livemode])).toEqual([[testCase.id, false]]);
    expect((await list(partner.apiKey, { invoiceRef: 'inv-modes-1' })).body.data).toEqual([
      expect.objectContaining({ id: liveCase.id, livemode: true }),
    ]);
    expect((await list(testKey, { invoiceRef: 'inv-modes-1' })).body.data).toEqual([
      expect.objectContaining({ id: testCase.id, livemode: false }),
    ]);

    // A second test case for the invoiceRef is a DUPLICATE naming the test case, never the live one.
    const again = outcome(await postCases(testKey, { cases: [validCase(testFile, { invoiceRef: 'INV-MODES-1' })] }));
    expect(again.rejected).toEqual([expect.objectContaining({ code: 'DUPLICATE', existingCaseId: testCase.id })]);
  });

  it('rejects a SIMULATE-TEMPORARY-FAILURE invoiceRef in test mode, writing nothing, and creates it in live mode', async () => {
    const test = outcome(await postCases(testKey, { cases: [validCase(testFile, { invoiceRef: 'SIMULATE-TEMPORARY-FAILURE-42' })] }));
    expect(test.created).toEqual([]);
    expect(test.rejected).toEqual([expect.objectContaining({ code: 'TEMPORARY_FAILURE', invoiceRef: 'SIMULATE-TEMPORARY-FAILURE-42' })]);
    const written = (await scanTable()).filter(
      (i) => i.companyId === partner.companyId && i.invoiceRef === 'SIMULATE-TEMPORARY-FAILURE-42',
    );
    expect(written).toEqual([]);
    const live = outcome(
      await postCases(partner.apiKey, { cases: [validCase(liveFile, { invoiceRef: 'SIMULATE-TEMPORARY-FAILURE-42' })] }),
    );
    expect(live.created).toEqual([expect.objectContaining({ livemode: true })]);
  });

  it('refuses an upload of the other mode as INVALID_FILE_KEY, with a message naming the modes', async () => {
    const fromLive = outcome(await postCases(partner.apiKey, { cases: [validCase(testFile, { invoiceRef: 'INV-X-1' })] }));
    const fromTest = outcome(await postCases(testKey, { cases: [validCase(liveFile, { invoiceRef: 'INV-X-1' })] }));
    expect([fromLive.rejected[0]?.code, fromTest.rejected[0]?.code]).toEqual(['INVALID_FILE_KEY', 'INVALID_FILE_KEY']);
    expect(fromLive.rejected[0]?.message).toMatch(
      /^invoiceFileKey was uploaded with a test-mode key and cannot be cited by a live-mode case;/,
    );
    expect(fromTest.rejected[0]?.message).toMatch(
      /^invoiceFileKey was uploaded with a live-mode key and cannot be cited by a test-mode case;/,
    );
  });

  it('keeps Idempotency-Keys apart: the same key in each mode is two requests', async () => {
    const live = await postCases(
      partner.apiKey,
      { cases: [validCase(liveFile, { invoiceRef: 'INV-IDEM-1' })] },
      { 'Idempotency-Key': 'modes-key' },
    );
    const test = await postCases(
      testKey,
      { cases: [validCase(testFile, { invoiceRef: 'INV-IDEM-1' })] },
      { 'Idempotency-Key': 'modes-key' },
    );
    expect([live.statusCode, test.statusCode]).toEqual([201, 201]);
    const replay = await postCases(
      testKey,
      { cases: [validCase(testFile, { invoiceRef: 'INV-IDEM-1' })] },
      { 'Idempotency-Key': 'modes-key' },
    );
    expect(replay.statusCode).toBe(409);
    expect(replay.body.created).toEqual([expect.objectContaining({ id: outcome(test).created[0]!.id, livemode: false })]);
  });
});
