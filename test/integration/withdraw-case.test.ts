import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { handler as listHandler } from '../../functions/list-cases.js';
import { handler as withdrawHandler } from '../../functions/withdraw-case.js';
import { GSI2, keys } from '../../lib/adapters/dynamodb/table-keys.js';
import { MAX_WITHDRAW_REASON_LENGTH } from '../../lib/cases/case-record.js';
import { randomBase62 } from '../../lib/random-id.js';
import { config } from '../../lib/runtime/config.js';
import { checkedInvoke } from '../support/contract.js';
import { outcome, postCases, readCase, uploadInvoice, validCase } from '../support/cases.js';
import { apiEvent, bearer, ddb, extraKey, lambdaContext, newPartner, parse, type Partner } from '../support/fixtures.js';

/**
 * POST /api/v1/cases/{id}/withdraw through the real handler over DynamoDB Local (product rules
 * "Case lifecycle", Withdraw), and what a withdrawal does to the invoiceRef: it can be submitted
 * again, and the look-up by invoiceRef then returns both cases.
 */
function withdraw(apiKey: string, id: string, body?: string | null, contentType = 'application/json') {
  const event = apiEvent({
    method: 'POST',
    path: `/api/v1/cases/${id}/withdraw`,
    resource: '/api/v1/cases/{id}/withdraw',
    pathParameters: { id },
    headers: { ...bearer(apiKey), ...(body === undefined || body === null ? {} : { 'Content-Type': contentType }) },
    body: body ?? null,
  });
  return checkedInvoke(withdrawHandler, event, lambdaContext()).then(parse);
}

async function lookUp(apiKey: string, invoiceRef: string) {
  const event = apiEvent({
    method: 'GET',
    path: '/api/v1/cases',
    resource: '/api/v1/cases',
    headers: bearer(apiKey),
    query: { invoiceRef },
  });
  return parse(await checkedInvoke(listHandler, event, lambdaContext()));
}

/** The case.updated events of a case, from its shard of the event listing. */
async function updatesOf(companyId: string, caseId: string): Promise<unknown[]> {
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
  return out.Items ?? [];
}

describe('withdrawing a case', () => {
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

  it('answers 200 with the case WITHDRAWN, its history ending in WITHDRAWN with the reason given', async () => {
    const created = await createCase();
    const res = await withdraw(partner.apiKey, created.id, JSON.stringify({ reason: 'Paid directly by the debtor' }));
    expect(res.statusCode).toBe(200);
    expect(res.body).toMatchObject({ id: created.id, status: 'WITHDRAWN', livemode: true });
    const history = res.body.statusHistory as { status: string; at: string; reason?: string }[];
    expect(history.map((h) => h.status)).toEqual(['DRAFT', 'WITHDRAWN']);
    expect(history[1]).toEqual({ status: 'WITHDRAWN', at: res.body.updatedAt, reason: 'Paid directly by the debtor' });
    // The read that follows sees it at once.
    expect((await readCase(partner.apiKey, created.id)).body).toEqual(res.body);
    expect(await updatesOf(partner.companyId, created.id)).toHaveLength(1);
  });

  it('withdraws without a body, and the history entry then has no reason', async () => {
    const created = await createCase();
    const res = await withdraw(partner.apiKey, created.id);
    expect(res.statusCode).toBe(200);
    expect((res.body.statusHistory as { reason?: string }[]).at(-1)).toEqual({ status: 'WITHDRAWN', at: res.body.updatedAt });
  });

  it('answers a second withdrawal 200 with the case unchanged, and writes no second event', async () => {
    const created = await createCase();
    const first = await withdraw(partner.apiKey, created.id, JSON.stringify({ reason: 'first' }));
    const second = await withdraw(partner.apiKey, created.id, JSON.stringify({ reason: 'second' }));
    expect(second.statusCode).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(await updatesOf(partner.companyId, created.id)).toHaveLength(1);
  });

  it(`refuses a reason of ${MAX_WITHDRAW_REASON_LENGTH + 1} characters with 400 INVALID_REQUEST naming the field reason, and leaves the case as it was`, async () => {
    const created = await createCase();
    const ok = 'é'.repeat(MAX_WITHDRAW_REASON_LENGTH);
    const res = await withdraw(partner.apiKey, created.id, JSON.stringify({ reason: `${ok}x` }));
    expect(res.statusCode).toBe(400);
    expect(res.body).toMatchObject({ code: 'INVALID_REQUEST', errors: [{ field: 'reason' }] });
    expect((await readCase(partner.apiKey, created.id)).body.status).toBe('DRAFT');
    // Exactly the limit passes.
    expect((await withdraw(partner.apiKey, created.id, JSON.stringify({ reason: ok }))).statusCode).toBe(200);
  });

  it('refuses an unknown body field with 400, naming it', async () => {
    const created = await createCase();
    const res = await withdraw(partner.apiKey, created.id, JSON.stringify({ reasons: 'typo' }));
    expect(res.statusCode).toBe(400);
    expect(res.body).toMatchObject({ code: 'INVALID_REQUEST', errors: [{ field: 'reasons' }] });
    expect((await readCase(partner.apiKey, created.id)).body.status).toBe('DRAFT');
  });

  it.each([
    ['malformed JSON', '{"reason": '],
    ['a JSON array', '["sent in error"]'],
    ['a reason that is not a string', '{"reason": 42}'],
  ])('refuses %s with 400 INVALID_REQUEST', async (_name, body) => {
    const created = await createCase();
    const res = await withdraw(partner.apiKey, created.id, body);
    expect(res.statusCode).toBe(400);
    expect(res.body.code).toBe('INVALID_REQUEST');
    expect((await readCase(partner.apiKey, created.id)).body.status).toBe('DRAFT');
  });

  it('refuses a body that is not JSON with 415, as every route with a body does', async () => {
    const created = await createCase();
    const res = await withdraw(partner.apiKey, created.id, 'reason=sent in error', 'application/x-www-form-urlencoded');
    expect(res.statusCode).toBe(415);
    expect(res.body.code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('refuses a key that holds only cases:read with 403, and the case stays as it was', async () => {
    const created = await createCase();
    const readOnly = await extraKey(partner.companyId, ['cases:read']);
    const res = await withdraw(readOnly, created.id);
    expect(res.statusCode).toBe(403);
    expect(res.body).toMatchObject({ code: 'INSUFFICIENT_SCOPE', requiredScope: 'cases:write' });
    expect((await readCase(partner.apiKey, created.id)).body.status).toBe('DRAFT');
  });

  it('answers 404 for another company\u2019s case exactly as for a case that does not exist, and leaves it as it was', async () => {
    const other = await newPartner(['cases:read', 'cases:write']);
    const foreign = await createCase({}, other, await uploadInvoice(other.apiKey));
    const foreignRes = await withdraw(partner.apiKey, foreign.id);
    const absentRes = await withdraw(partner.apiKey, `case_${randomBase62(22)}`);
    expect(foreignRes.statusCode).toBe(404);
    const strip = (b: Record<string, unknown>) => ({ ...b, requestId: undefined });
    expect(strip(foreignRes.body)).toEqual(strip(absentRes.body));
    expect(foreignRes.body.code).toBe('NOT_FOUND');
    // The same answer as a read of it.
    expect(strip((await readCase(partner.apiKey, foreign.id)).body)).toEqual(strip(foreignRes.body));
    expect((await readCase(other.apiKey, foreign.id)).body.status).toBe('DRAFT');
  });

  it('answers 404 to a live key for a test case, and the test case stays as it was', async () => {
    const testKey = await extraKey(partner.companyId, ['cases:read', 'cases:write'], 'test');
    const testCase = await createCase({}, { ...partner, apiKey: testKey }, await uploadInvoice(testKey));
    expect((await withdraw(partner.apiKey, testCase.id)).statusCode).toBe(404);
    expect((await readCase(testKey, testCase.id)).body.status).toBe('DRAFT');
    // Its own mode's key withdraws it.
    expect((await withdraw(testKey, testCase.id)).body).toMatchObject({ status: 'WITHDRAWN', livemode: false });
  });

  it('lets the invoiceRef be submitted again after a withdrawal: created, not DUPLICATE; the look-up returns both, newest first', async () => {
    const invoiceRef = `INV-W-${randomBase62(8)}`;
    const first = await createCase({ invoiceRef });
    expect((await withdraw(partner.apiKey, first.id)).statusCode).toBe(200);
    const again = await postCases(partner.apiKey, { cases: [validCase(fileKey, { invoiceRef })] });
    expect(again.statusCode).toBe(201);
    expect(outcome(again).rejected).toEqual([]);
    const second = outcome(again).created[0]!;
    // The new case holds the invoiceRef now: a third submission is its DUPLICATE.
    const third = await postCases(partner.apiKey, { cases: [validCase(fileKey, { invoiceRef })] });
    expect(outcome(third).rejected[0]).toMatchObject({ code: 'DUPLICATE', existingCaseId: second.id });

    const found = await lookUp(partner.apiKey, ` ${invoiceRef.toLowerCase()} `);
    expect(found.statusCode).toBe(200);
    expect(found.body.nextCursor).toBeNull();
    expect((found.body.data as { id: string; status: string }[]).map((c) => [c.id, c.status])).toEqual([
      [second.id, 'DRAFT'],
      [first.id, 'WITHDRAWN'],
    ]);
    // Other filters still apply to the look-up.
    const withdrawnOnly = apiEvent({
      method: 'GET',
      path: '/api/v1/cases',
      resource: '/api/v1/cases',
      headers: bearer(partner.apiKey),
      query: { invoiceRef, status: 'WITHDRAWN' },
    });
    const filtered = parse(await checkedInvoke(listHandler, withdrawnOnly, lambdaContext()));
    expect((filtered.body.data as { id: string }[]).map((c) => c.id)).toEqual([first.id]);
  });

  it('finds a withdrawn case by its invoiceRef after its guard is gone, and only for its own company and mode', async () => {
    const invoiceRef = `INV-W-${randomBase62(8)}`;
    const created = await createCase({ invoiceRef });
    await withdraw(partner.apiKey, created.id);
    expect((await lookUp(partner.apiKey, invoiceRef)).body.data).toMatchObject([{ id: created.id, status: 'WITHDRAWN' }]);
    const other = await newPartner(['cases:read']);
    expect((await lookUp(other.apiKey, invoiceRef)).body.data).toEqual([]);
    const testKey = await extraKey(partner.companyId, ['cases:read'], 'test');
    expect((await lookUp(testKey, invoiceRef)).body.data).toEqual([]);
  });
});
