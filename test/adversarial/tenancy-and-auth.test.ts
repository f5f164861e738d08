import { generateApiKey, randomBase62 } from '../../lib/auth/api-key.js';
import type { Scope } from '../../lib/auth/scopes.js';
import { handler as createCases } from '../../functions/create-cases.js';
import { handler as createUpload } from '../../functions/create-upload.js';
import { handler as getCase } from '../../functions/get-case.js';
import { issueFileKey } from '../../lib/uploads/file-key.js';
import { accounts, apiEvent, lambdaContext, newPartner, parse, type ParsedResult, type Partner } from '../support/fixtures.js';
import { outcome, postCases, readCase, uploadInvoice, validCase } from '../support/cases.js';
import { recordCounts } from './summary.js';

/** Responses compared "byte for byte apart from request ids". */
function comparable(res: ParsedResult): string {
  const body = { ...res.body, requestId: '<id>' };
  return JSON.stringify({ status: res.statusCode, headers: res.headers, body });
}

let tenancyCells = 0;
let authCases = 0;
afterAll(() => {
  recordCounts('tenancy-and-auth', { tenancyCells, authCases });
  console.log(`tenancy: ${tenancyCells} cells; auth: ${authCases} cases`);
});

describe('tenancy matrix: no company can reach another company’s data', () => {
  let a: Partner;
  let b: Partner;
  const own = new Map<string, { caseId: string; fileKey: string; invoiceRef: string; idempotencyKey: string }>();

  beforeAll(async () => {
    [a, b] = [await newPartner(), await newPartner()];
    for (const p of [a, b]) {
      const fileKey = await uploadInvoice(p.apiKey);
      const invoiceRef = `TEN-${p.companyId}`;
      const idempotencyKey = `tenancy-${randomBase62(8)}`;
      const res = await postCases(p.apiKey, { cases: [validCase(fileKey, { invoiceRef: 'TEN-SHARED' }), validCase(fileKey, { invoiceRef })] }, { 'Idempotency-Key': idempotencyKey });
      own.set(p.companyId, { caseId: outcome(res).created[0]!.id, fileKey, invoiceRef, idempotencyKey });
    }
  });

  const pairs = () => [
    [a, b],
    [b, a],
  ] as const;

  it('answers another company’s case id exactly like an absent one, by either header', async () => {
    for (const [caller, owner] of pairs()) {
      const foreign = own.get(owner.companyId)!.caseId;
      const absent = `case_${randomBase62(22)}`;
      for (const headers of [{ Authorization: `Bearer ${caller.apiKey}` }, { 'X-Api-Key': caller.apiKey }] as Record<string, string>[]) {
        const run = async (id: string) =>
          parse(await getCase(apiEvent({ method: 'GET', path: `/api/v1/cases/${id}`, resource: '/api/v1/cases/{id}', pathParameters: { id }, headers }), lambdaContext()));
        const [f, x] = [await run(foreign), await run(absent)];
        expect(f.statusCode).toBe(404);
        expect(comparable(f)).toBe(comparable(x));
        tenancyCells++;
      }
      expect((await readCase(owner.apiKey, own.get(owner.companyId)!.caseId)).statusCode).toBe(200);
    }
  });

  it('refuses another company’s fileKey exactly like one of a company that does not exist', async () => {
    for (const [caller, owner] of pairs()) {
      const foreignKey = own.get(owner.companyId)!.fileKey;
      const absentKey = issueFileKey(`cmp_${randomBase62(16)}`, 'application/pdf');
      const ref = `TEN-FILE-${randomBase62(6)}`;
      const f = outcome(await postCases(caller.apiKey, { cases: [validCase(foreignKey, { invoiceRef: ref })] })).rejected[0]!;
      const x = outcome(await postCases(caller.apiKey, { cases: [validCase(absentKey, { invoiceRef: ref })] })).rejected[0]!;
      expect(f.code).toBe('INVALID_FILE_KEY');
      expect(f).toEqual(x);
      tenancyCells++;
    }
  });

  it('keeps invoiceRefs and Idempotency-Keys per company: reusing another’s reveals nothing', async () => {
    for (const [caller, owner] of pairs()) {
      const theirs = own.get(owner.companyId)!;
      const mine = own.get(caller.companyId)!;
      // The owner's own invoiceRef is unknown to the caller: created, no DUPLICATE naming their case.
      const res = await postCases(caller.apiKey, { cases: [validCase(mine.fileKey, { invoiceRef: theirs.invoiceRef })] }, { 'Idempotency-Key': theirs.idempotencyKey });
      expect(res.statusCode).toBe(201);
      expect(JSON.stringify(res.body)).not.toContain(theirs.caseId);
      tenancyCells += 2;
    }
  });

  it('issues upload keys only under the caller’s own prefix, whatever the file name says', async () => {
    for (const [caller, owner] of pairs()) {
      const res = parse(
        await createUpload(
          apiEvent({
            method: 'POST',
            path: '/api/v1/uploads',
            resource: '/api/v1/uploads',
            headers: { Authorization: `Bearer ${caller.apiKey}`, 'Content-Type': 'application/json' },
            body: JSON.stringify({ fileName: `../../invoices/${owner.companyId}/x.pdf`, contentType: 'application/pdf', contentLength: 10 }),
          }),
          lambdaContext(),
        ),
      );
      expect(res.statusCode).toBe(201);
      expect(res.body.fileKey).toMatch(new RegExp(`^invoices/${caller.companyId}/[0-9A-Za-z]+\\.pdf$`));
      expect((res.body.uploadUrl as string).split('?')[0]).not.toContain(owner.companyId);
      tenancyCells++;
    }
  });
});

describe('auth abuse', () => {
  let partner: Partner;
  let fileKey: string;
  const unauthenticatedBodies = new Set<string>();

  beforeAll(async () => {
    partner = await newPartner();
    fileKey = await uploadInvoice(partner.apiKey);
  });

  const routes = {
    read: async (headers: Record<string, string>) =>
      parse(await getCase(apiEvent({ method: 'GET', path: '/api/v1/cases/case_0000000000000000000000', resource: '/api/v1/cases/{id}', pathParameters: { id: 'case_0000000000000000000000' }, headers }), lambdaContext())),
    create: async (headers: Record<string, string>) =>
      parse(await createCases(apiEvent({ method: 'POST', path: '/api/v1/cases', resource: '/api/v1/cases', headers: { 'Content-Type': 'application/json', ...headers }, body: '{"cases":[]}' }), lambdaContext())),
    upload: async (headers: Record<string, string>) =>
      parse(
        await createUpload(
          apiEvent({ method: 'POST', path: '/api/v1/uploads', resource: '/api/v1/uploads', headers: { 'Content-Type': 'application/json', ...headers }, body: '{"fileName":"a.pdf","contentType":"application/pdf","contentLength":5}' }),
          lambdaContext(),
        ),
      ),
  };
  /** What each route answers once authorised: 404 (no such case), 400 (empty batch), 201. */
  const authorised = { read: 404, create: 400, upload: 201 } as const;
  const required: Record<keyof typeof routes, Scope> = { read: 'cases:read', create: 'cases:write', upload: 'cases:write' };

  const expectUnauthenticated = (res: ParsedResult) => {
    expect(res.statusCode).toBe(401);
    unauthenticatedBodies.add(JSON.stringify({ ...res.body, requestId: '<id>' }) + JSON.stringify(res.headers));
    authCases++;
  };

  it('gives every scope combination exactly the routes it grants', async () => {
    const all: Scope[] = ['cases:read', 'cases:write', 'webhooks:manage'];
    for (let mask = 1; mask < 8; mask++) {
      const scopes = all.filter((_, i) => mask & (1 << i));
      const key = (await accounts().createKey(partner.companyId, scopes)).apiKey;
      for (const route of Object.keys(routes) as (keyof typeof routes)[]) {
        const res = await routes[route]({ Authorization: `Bearer ${key}` });
        expect({ scopes, route, status: res.statusCode }).toEqual({ scopes, route, status: scopes.includes(required[route]) ? authorised[route] : 403 });
        authCases++;
      }
    }
  });

  it('accepts the Bearer scheme in any case, extra spaces and tabs, and X-Api-Key', async () => {
    const k = partner.apiKey;
    for (const headers of [
      { Authorization: `bearer ${k}` },
      { Authorization: `BEARER ${k}` },
      { authorization: `Bearer    ${k}` },
      { Authorization: `Bearer\t${k}` },
      { Authorization: ` Bearer ${k} ` },
      { 'x-api-key': k },
      { 'X-API-KEY': ` ${k} ` },
      { Authorization: `Bearer ${k}`, 'X-Api-Key': k },
    ] as Record<string, string>[]) {
      expect((await routes.read(headers)).statusCode).toBe(404);
      authCases++;
    }
  });

  it('refuses every malformed, unknown, contradictory or oversized credential with one identical 401', async () => {
    const k = partner.apiKey;
    const other = (await accounts().createKey(partner.companyId, ['cases:read'])).apiKey;
    const flipped = `${k.slice(0, -1)}${k.endsWith('A') ? 'B' : 'A'}`;
    const neverExisted = generateApiKey().apiKey;
    for (const headers of [
      {},
      { Authorization: '' },
      { Authorization: 'Bearer' },
      { Authorization: `Basic ${k}` },
      { Authorization: k },
      { Authorization: `Bearer ${k} extra` },
      { Authorization: `Bearer ${flipped}` },
      { Authorization: `Bearer ${neverExisted}` },
      { Authorization: `Bearer ${k}`, 'X-Api-Key': other },
      { Authorization: `Bearer ${'A'.repeat(64 * 1024)}` },
      { 'X-Api-Key': 'x'.repeat(64 * 1024) },
      { 'X-Api-Key': '' },
      { Authorization: `Bearer ${k.toUpperCase()}` },
      { Authorization: `Bearer ${k}\u0000` },
    ] as Record<string, string>[]) {
      for (const route of Object.keys(routes) as (keyof typeof routes)[]) expectUnauthenticated(await routes[route](headers));
    }
  });

  it('keeps a rotated key working until revoked, and refuses a revoked key on the next request', async () => {
    const first = await accounts().createKey(partner.companyId, ['cases:read', 'cases:write']);
    const rotated = await accounts().rotateKey(first.keyId);
    expect((await routes.read({ Authorization: `Bearer ${first.apiKey}` })).statusCode).toBe(404);
    expect((await routes.read({ Authorization: `Bearer ${rotated.apiKey}` })).statusCode).toBe(404);
    await accounts().revokeKey(first.keyId);
    for (const route of Object.keys(routes) as (keyof typeof routes)[]) {
      expectUnauthenticated(await routes[route]({ Authorization: `Bearer ${first.apiKey}` }));
      expect((await routes[route]({ Authorization: `Bearer ${rotated.apiKey}` })).statusCode).toBe(authorised[route]);
      authCases++;
    }
    await expect(accounts().rotateKey(first.keyId)).rejects.toThrow(/revoked/);
  });

  it('gave the same 401 body and headers for every cause', () => {
    expect(unauthenticatedBodies.size).toBe(1);
    expect(fileKey).toBeDefined();
  });
});
