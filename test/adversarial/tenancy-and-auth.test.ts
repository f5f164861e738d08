import type { APIGatewayProxyEvent } from 'aws-lambda';
import { formatApiKey, generateApiKey } from '../../lib/auth/api-key.js';
import { randomBase62 } from '../../lib/random-id.js';
import type { Scope } from '../../lib/auth/scopes.js';
import { handler as createCases } from '../../functions/create-cases.js';
import { handler as createUpload } from '../../functions/create-upload.js';
import { handler as getCase } from '../../functions/get-case.js';
import { handler as listCases } from '../../functions/list-cases.js';
import type { Mode } from '../../lib/mode.js';
import { FILE_KEY_PREFIXES, issueFileKey } from '../../lib/uploads/file-key.js';
import { checkedInvoke } from '../support/contract.js';
import { accounts, apiEvent, lambdaContext, newPartner, parse, stores, type ParsedResult, type Partner } from '../support/fixtures.js';
import { outcome, postCases, uploadInvoice, validCase } from '../support/cases.js';
import { recordCounts } from './summary.js';

/** A response as compared "byte for byte apart from request ids" (and, where noted, fresh random ids). */
function comparable(res: ParsedResult, mask: readonly string[] = []): string {
  const body: Record<string, unknown> = { ...res.body };
  if ('requestId' in body) body.requestId = '<requestId>';
  for (const field of mask) {
    const value = body[field];
    if (Array.isArray(value))
      body[field] = value.map((item: Record<string, unknown>) => ({
        ...item,
        invoiceRef: '<invoiceRef>',
        id: '<id>',
        reference: '<reference>',
      }));
    else if (field in body) body[field] = `<${field}>`;
  }
  return JSON.stringify({ status: res.statusCode, headers: res.headers, body });
}

type Headers = Record<string, string>;
type Route = 'read' | 'create' | 'upload' | 'list';

function event(
  route: Route,
  headers: Headers,
  options: { id?: string; body?: string; query?: Record<string, string>; multiValueHeaders?: Record<string, string[]> } = {},
): APIGatewayProxyEvent {
  const id = options.id ?? 'case_0000000000000000000000';
  const e =
    route === 'list'
      ? apiEvent({ method: 'GET', path: '/api/v1/cases', resource: '/api/v1/cases', headers, query: options.query ?? {} })
      : route === 'read'
        ? apiEvent({
            method: 'GET',
            path: `/api/v1/cases/${encodeURIComponent(id)}`,
            resource: '/api/v1/cases/{id}',
            pathParameters: { id },
            headers,
          })
        : apiEvent({
            method: 'POST',
            path: route === 'create' ? '/api/v1/cases' : '/api/v1/uploads',
            resource: route === 'create' ? '/api/v1/cases' : '/api/v1/uploads',
            headers: { 'Content-Type': 'application/json', ...headers },
            body:
              options.body ??
              (route === 'create' ? '{"cases":[]}' : '{"fileName":"a.pdf","contentType":"application/pdf","contentLength":5}'),
          });
  if (options.multiValueHeaders) e.multiValueHeaders = { ...e.multiValueHeaders, ...options.multiValueHeaders };
  return e;
}

const handlers = { read: getCase, create: createCases, upload: createUpload, list: listCases };

async function call(route: Route, headers: Headers, options: Parameters<typeof event>[2] = {}): Promise<ParsedResult> {
  return parse(await checkedInvoke(handlers[route], event(route, headers, options), lambdaContext()));
}

let tenancyCells = 0;
let authCases = 0;
afterAll(() => {
  recordCounts('tenancy-and-auth', { tenancyCells, authCases });
  console.log(`tenancy: ${tenancyCells} cells; auth: ${authCases} cases`);
});

/** A key of a company in one mode: the test mode of a company is a world of its own, like another company. */
async function keyOf(companyId: string | undefined, mode: Mode): Promise<Partner & { mode: Mode }> {
  if (companyId === undefined) return { ...(await newPartner(['cases:read', 'cases:write'], { mode })), mode };
  const key = await accounts().createKey(companyId, ['cases:read', 'cases:write'], undefined, mode);
  return { companyId, keyId: key.keyId, apiKey: key.apiKey, mode };
}

/**
 * The worlds that must never meet: two companies (live keys, and test keys), and one company's
 * live and test keys. Every cross-world access is answered exactly like one naming nothing.
 */
const WORLDS: [string, () => Promise<(Partner & { mode: Mode })[]>][] = [
  ['two companies, live keys', async () => [await keyOf(undefined, 'live'), await keyOf(undefined, 'live')]],
  ['two companies, test keys', async () => [await keyOf(undefined, 'test'), await keyOf(undefined, 'test')]],
  [
    'one company, a live key and a test key',
    async () => {
      const live = await keyOf(undefined, 'live');
      return [live, await keyOf(live.companyId, 'test')];
    },
  ],
];

describe.each(WORLDS)('tenancy matrix (%s): no world can reach another’s data', (_world, makeParties) => {
  interface Owned {
    partner: Partner & { mode: Mode };
    fileKey: string;
    /** The owner's cases, each created under its own Idempotency-Key. */
    cases: { caseId: string; reference: string; invoiceRef: string; idempotencyKey: string }[];
    marker: string;
    /** A list cursor the owner was given. */
    cursor: string;
  }
  const owned: Owned[] = [];
  /** A cursor of a third company in the owners' mode: what a cursor naming nothing of the caller's gets. */
  const strangerCursor: Partial<Record<Mode, string>> = {};
  let sameCompany = false;

  beforeAll(async () => {
    const parties = await makeParties();
    sameCompany = parties[0]!.companyId === parties[1]!.companyId;
    for (const mode of new Set(parties.map((p) => p.mode))) {
      const stranger = await keyOf(undefined, mode);
      const file = await uploadInvoice(stranger.apiKey);
      await postCases(stranger.apiKey, {
        cases: [validCase(file, { invoiceRef: 'STRANGER-1' }), validCase(file, { invoiceRef: 'STRANGER-2' })],
      });
      strangerCursor[mode] = (await call('list', { Authorization: `Bearer ${stranger.apiKey}` }, { query: { limit: '1' } })).body
        .nextCursor as string;
    }
    for (const partner of parties) {
      const fileKey = await uploadInvoice(partner.apiKey);
      const marker = `SECRET-${randomBase62(12)}`;
      const cases: Owned['cases'] = [];
      for (let n = 0; n < 4; n++) {
        const invoiceRef = `TEN-${randomBase62(8)}`;
        const idempotencyKey = `tenancy-${randomBase62(8)}`;
        const res = await postCases(
          partner.apiKey,
          { cases: [validCase(fileKey, { invoiceRef, debtorName: marker, debtorEmail: `${marker.toLowerCase()}@debtor.example` })] },
          { 'Idempotency-Key': idempotencyKey },
        );
        const created = outcome(res).created[0]!;
        cases.push({ caseId: created.id, reference: created.reference, invoiceRef, idempotencyKey });
      }
      const cursor = (await call('list', { Authorization: `Bearer ${partner.apiKey}` }, { query: { limit: '1' } })).body
        .nextCursor as string;
      expect(cursor).toEqual(expect.any(String));
      owned.push({ partner, fileKey, cases, marker, cursor });
    }
  });

  /** Nothing of the owner's in an answer to the caller (the upload URL's query echoes the caller's own file name). */
  function expectNothingOf(owner: Owned, res: ParsedResult): void {
    const body = { ...res.body };
    if (typeof body.uploadUrl === 'string') body.uploadUrl = body.uploadUrl.split('?')[0];
    const text = JSON.stringify({ headers: res.headers, body });
    // One company's two modes share its id; everything else of the owner's is a secret.
    const secrets = [
      ...(sameCompany ? [] : [owner.partner.companyId]),
      owner.marker,
      owner.marker.toLowerCase(),
      ...owner.cases.flatMap((c) => [c.caseId, c.reference]),
    ];
    for (const secret of secrets) expect(text).not.toContain(secret);
  }

  const pairs = () =>
    [
      [owned[0]!, owned[1]!],
      [owned[1]!, owned[0]!],
    ] as const;

  it('answers every route naming the other world’s case id, fileKey, invoiceRef, cursor or Idempotency-Key exactly as if it did not exist', async () => {
    for (const [caller, owner] of pairs()) {
      const theirs = owner.cases[0]!;
      const absent = {
        caseId: `case_${randomBase62(22)}`,
        fileKeyOfOwner: issueFileKey(owner.partner.companyId, 'application/pdf', undefined, owner.partner.mode),
        fileKeyOfNobody: issueFileKey(`cmp_${randomBase62(16)}`, 'application/pdf', undefined, owner.partner.mode),
        idempotencyKey: `tenancy-${randomBase62(8)}`,
      };
      // Each header form spends two of the owner's Idempotency-Keys (a claimed key is the caller's afterwards).
      const ownerKeys = owner.cases.map((c) => c.idempotencyKey);
      const forms: Headers[] = [{ Authorization: `Bearer ${caller.partner.apiKey}` }, { 'X-Api-Key': caller.partner.apiKey }];
      for (const [form, auth] of forms.entries()) {
        type Options = Parameters<typeof event>[2] & { headers?: Headers };
        const cell = async (route: Route, foreign: Options, absentOptions: Options, expected: number, mask: string[] = []) => {
          const f = await call(route, { ...auth, ...foreign.headers }, foreign);
          const a = await call(route, { ...auth, ...absentOptions.headers }, absentOptions);
          expect({ route, status: f.statusCode }).toEqual({ route, status: expected });
          expect(comparable(f, mask)).toBe(comparable(a, mask));
          expectNothingOf(owner, f);
          tenancyCells++;
        };
        const fresh = () => ({ 'Idempotency-Key': `tenancy-${randomBase62(8)}` });
        const theirKey = () => ({ 'Idempotency-Key': ownerKeys.shift()! });

        // GET /api/v1/cases/{id}: the owner's case id, fileKey or Idempotency-Key as the id.
        await cell(
          'read',
          { id: theirs.caseId, headers: { 'Idempotency-Key': theirs.idempotencyKey } },
          { id: absent.caseId, headers: fresh() },
          404,
        );
        await cell('read', { id: owner.fileKey }, { id: absent.fileKeyOfOwner }, 404);
        await cell('read', { id: theirs.idempotencyKey }, { id: absent.idempotencyKey }, 404);
        await cell('read', { id: theirs.reference }, { id: 'PC-999-99Z' }, 404);

        // GET /api/v1/cases: the owner's invoiceRef finds nothing; the owner's cursor is refused like a stranger's.
        await cell('list', { query: { invoiceRef: theirs.invoiceRef } }, { query: { invoiceRef: `TEN-${randomBase62(8)}` } }, 200);
        await cell(
          'list',
          { query: { limit: '1', cursor: owner.cursor } },
          { query: { limit: '1', cursor: strangerCursor[owner.partner.mode]! } },
          400,
        );
        const page = await call('list', auth, { query: { limit: '100' } });
        expect(page.statusCode).toBe(200);
        expectNothingOf(owner, page);
        tenancyCells++;

        // POST /api/v1/cases: the owner's fileKey (against one of the owner's never uploaded, and one
        // of a company that does not exist), a case id as invoiceFileKey, the owner's Idempotency-Key.
        const ref = `TEN-R-${randomBase62(6)}`;
        const batch = (invoiceFileKey: string, overrides: Record<string, unknown> = {}) =>
          JSON.stringify({ cases: [validCase(invoiceFileKey, { invoiceRef: ref, ...overrides })] });
        await cell('create', { body: batch(owner.fileKey) }, { body: batch(absent.fileKeyOfOwner) }, 200);
        // Within one company the other mode's key is named as such (its own file, so nothing of another
        // tenant), unlike a company that does not exist; the cell above still shows that the owner's
        // real upload answers exactly as one never made.
        if (!sameCompany) await cell('create', { body: batch(owner.fileKey) }, { body: batch(absent.fileKeyOfNobody) }, 200);
        await cell('create', { body: batch(theirs.caseId) }, { body: batch(absent.caseId) }, 200);
        await cell(
          'create',
          { body: batch(caller.fileKey, { principalAmount: 0 }), headers: theirKey() },
          { body: batch(caller.fileKey, { principalAmount: 0 }), headers: fresh() },
          200,
        );
        // The owner's Idempotency-Key and invoiceRef create the caller's own case: no 409, no DUPLICATE.
        const mine = (invoiceRef: string) => JSON.stringify({ cases: [validCase(caller.fileKey, { invoiceRef })] });
        await cell(
          'create',
          { body: mine(owner.cases[1 + form]!.invoiceRef), headers: theirKey() },
          { body: mine(`TEN-X-${randomBase62(8)}`), headers: fresh() },
          201,
          ['created'],
        );

        // POST /api/v1/uploads: the owner's names as the file name, the owner's Idempotency-Key sent along.
        const upload = (fileName: string) => JSON.stringify({ fileName, contentType: 'application/pdf', contentLength: 10 });
        const nobody = absent.fileKeyOfNobody.split('/')[1]!;
        for (const name of [owner.fileKey, theirs.caseId, theirs.idempotencyKey]) {
          await cell(
            'upload',
            { body: upload(name), headers: { 'Idempotency-Key': theirs.idempotencyKey } },
            {
              body: upload(
                name
                  .replace(owner.partner.companyId, nobody)
                  .replace(/case_\w+/, absent.caseId)
                  .replace(/tenancy-\w+/, absent.idempotencyKey),
              ),
              headers: fresh(),
            },
            201,
            ['fileKey', 'uploadUrl', 'expiresAt'],
          );
        }
      }
      // The owner still sees its case, unchanged.
      const own = await call('read', { Authorization: `Bearer ${owner.partner.apiKey}` }, { id: theirs.caseId });
      expect([own.statusCode, own.body.debtorName, own.body.reference]).toEqual([200, owner.marker, theirs.reference]);
    }
  });

  it('issues upload keys only under the caller’s own prefix (company and mode), whatever the file name says', async () => {
    for (const [caller, owner] of pairs()) {
      for (const fileName of [
        `../../invoices/${owner.partner.companyId}/x.pdf`,
        owner.fileKey,
        `%2e%2e%2f${owner.partner.companyId}`,
        `/${owner.fileKey}`,
      ]) {
        const res = await call(
          'upload',
          { Authorization: `Bearer ${caller.partner.apiKey}` },
          { body: JSON.stringify({ fileName, contentType: 'application/pdf', contentLength: 10 }) },
        );
        expect(res.statusCode).toBe(201);
        expect(res.body.fileKey).toMatch(
          new RegExp(`^${FILE_KEY_PREFIXES[caller.partner.mode]}${caller.partner.companyId}/[0-9A-Za-z]{32}\\.pdf$`),
        );
        expectNothingOf(owner, res);
        tenancyCells++;
      }
    }
  });
});

describe('auth abuse', () => {
  let partner: Partner;
  const unauthenticated = new Set<string>();
  const routes: Exclude<Route, 'list'>[] = ['read', 'create', 'upload'];
  /** What each route answers once authorised: 404 (no such case), 400 (empty batch), 201. */
  const authorised: Record<Exclude<Route, 'list'>, number> = { read: 404, create: 400, upload: 201 };
  const required: Record<Exclude<Route, 'list'>, Scope> = { read: 'cases:read', create: 'cases:write', upload: 'cases:write' };

  beforeAll(async () => {
    partner = await newPartner();
  });

  const expectUnauthenticated = (res: ParsedResult, why: string) => {
    expect({ why, status: res.statusCode }).toEqual({ why, status: 401 });
    expect(res.headers['www-authenticate']).toMatch(/^Bearer /);
    unauthenticated.add(comparable(res));
    authCases++;
  };

  it('gives every one of the 8 scope combinations exactly the routes it grants', async () => {
    const all: Scope[] = ['cases:read', 'cases:write', 'webhooks:manage'];
    for (let mask = 0; mask < 8; mask++) {
      const scopes = all.filter((_, i) => mask & (1 << i));
      let key: string;
      if (scopes.length > 0) key = (await accounts().createKey(partner.companyId, scopes)).apiKey;
      else {
        // The operator's command refuses a key without scopes; a stored one must still grant nothing.
        const generated = generateApiKey();
        await stores().keys.create({
          keyId: generated.keyId,
          companyId: partner.companyId,
          scopes: [],
          mode: 'live',
          secretHash: generated.secretHash,
          revoked: false,
          createdAt: new Date().toISOString(),
        });
        key = generated.apiKey;
      }
      for (const route of routes) {
        for (const headers of [{ Authorization: `Bearer ${key}` }, { 'X-Api-Key': key }] as Headers[]) {
          const res = await call(route, headers);
          const expected = scopes.includes(required[route]) ? authorised[route] : 403;
          expect({ scopes, route, status: res.statusCode }).toEqual({ scopes, route, status: expected });
          if (expected === 403) expect([res.body.code, res.body.requiredScope]).toEqual(['INSUFFICIENT_SCOPE', required[route]]);
          authCases++;
        }
      }
    }
  });

  it('accepts the Bearer scheme in any case, with extra spaces and tabs, and X-Api-Key under any spelling', async () => {
    const k = partner.apiKey;
    const variants: Headers[] = [
      { Authorization: `bearer ${k}` },
      { Authorization: `BEARER ${k}` },
      { Authorization: `BeArEr ${k}` },
      { authorization: `Bearer    ${k}` },
      { Authorization: `Bearer\t${k}` },
      { Authorization: `Bearer ${k}\t` },
      { AUTHORIZATION: ` \tBearer ${k} ` },
      { 'x-api-key': k },
      { 'X-API-KEY': ` ${k} ` },
      { Authorization: `Bearer ${k}`, 'X-Api-Key': k },
    ];
    for (const headers of variants) {
      for (const route of routes) {
        expect({ headers: Object.keys(headers), route, status: (await call(route, headers)).statusCode }).toEqual({
          headers: Object.keys(headers),
          route,
          status: authorised[route],
        });
        authCases++;
      }
    }
  });

  it('refuses every malformed, unknown, contradictory or oversized credential with one identical 401', async () => {
    const k = partner.apiKey;
    const [, keyId, rest] = k.split('_') as [string, string, string];
    const other = (await accounts().createKey(partner.companyId, ['cases:read'])).apiKey;
    const otherCompany = (await newPartner()).apiKey;
    const flippedChecksum = `${k.slice(0, -1)}${k.endsWith('A') ? 'B' : 'A'}`;
    const flippedSecret = `pca_${keyId}_${rest[0] === 'A' ? 'B' : 'A'}${rest.slice(1)}`;
    // Right key id, well-formed, valid checksum, wrong secret.
    const wrongSecret = formatApiKey(keyId, randomBase62(43));
    const neverExisted = generateApiKey().apiKey;
    // The live key's own id and secret presented as a test key, checksum and all: its record is live.
    const liveKeyAsTest = formatApiKey(keyId, rest.slice(0, 43), 'test');
    const testKeyOfCompany = (await accounts().createKey(partner.companyId, ['cases:read', 'cases:write'], undefined, 'test')).apiKey;
    const cases: [string, Headers, Record<string, string[]>?][] = [
      ['a live key under the test prefix, checksum recomputed', { Authorization: `Bearer ${liveKeyAsTest}` }],
      ['test prefix added to a live key, checksum not', { Authorization: `Bearer ${k.replace('pca_', 'pca_test_')}` }],
      ['test prefix removed from a test key, checksum not', { Authorization: `Bearer ${testKeyOfCompany.replace('pca_test_', 'pca_')}` }],
      ['both headers, a live and a test key of one company', { Authorization: `Bearer ${k}`, 'X-Api-Key': testKeyOfCompany }],
      ['no credentials', {}],
      ['empty Authorization', { Authorization: '' }],
      ['scheme only', { Authorization: 'Bearer' }],
      ['scheme and spaces', { Authorization: 'Bearer   ' }],
      ['Basic scheme', { Authorization: `Basic ${k}` }],
      ['Token scheme', { Authorization: `Token ${k}` }],
      ['no scheme', { Authorization: k }],
      ['scheme with colon', { Authorization: `Bearer: ${k}` }],
      ['no space after scheme', { Authorization: `Bearer${k}` }],
      ['two tokens', { Authorization: `Bearer ${k} extra` }],
      ['bad checksum', { Authorization: `Bearer ${flippedChecksum}` }],
      ['secret changed, checksum not', { Authorization: `Bearer ${flippedSecret}` }],
      ['wrong secret, valid checksum', { Authorization: `Bearer ${wrongSecret}` }],
      ['valid format, never existed', { Authorization: `Bearer ${neverExisted}` }],
      ['never existed, X-Api-Key', { 'X-Api-Key': neverExisted }],
      ['both headers, two keys of one company', { Authorization: `Bearer ${k}`, 'X-Api-Key': other }],
      ['both headers, keys of two companies', { Authorization: `Bearer ${otherCompany}`, 'X-Api-Key': k }],
      ['both headers, Authorization garbage', { Authorization: 'Bearer nonsense', 'X-Api-Key': k }],
      ['both headers, X-Api-Key garbage', { Authorization: `Bearer ${k}`, 'X-Api-Key': 'nonsense' }],
      ['64 KiB Authorization', { Authorization: `Bearer ${'A'.repeat(64 * 1024)}` }],
      ['64 KiB X-Api-Key', { 'X-Api-Key': 'x'.repeat(64 * 1024) }],
      ['64 KiB after a valid key', { Authorization: `Bearer ${k}${'A'.repeat(64 * 1024)}` }],
      ['empty X-Api-Key', { 'X-Api-Key': '' }],
      ['upper-cased key', { Authorization: `Bearer ${k.toUpperCase()}` }],
      ['NUL after key', { Authorization: `Bearer ${k}\u0000` }],
      ['line break in key', { Authorization: `Bearer ${k.slice(0, 20)}\n${k.slice(20)}` }],
      ['zero-width space in key', { Authorization: `Bearer ${k.slice(0, 20)}\u200b${k.slice(20)}` }],
      ['Cyrillic look-alike', { Authorization: `Bearer ${k.replace(/a/, '\u0430')}` }],
      ['quoted key', { Authorization: `Bearer "${k}"` }],
      ['Authorization sent twice', {}, { Authorization: [`Bearer ${k}`, `Bearer ${k}`] }],
      ['X-Api-Key sent twice', {}, { 'X-Api-Key': [k, k] }],
    ];
    for (const [why, headers, multiValueHeaders] of cases) {
      for (const route of routes)
        expectUnauthenticated(await call(route, headers, multiValueHeaders ? { multiValueHeaders } : {}), `${why} → ${route}`);
    }
  });

  it('keeps a rotated key working until revoked, and refuses a revoked key on the very next request', async () => {
    const first = await accounts().createKey(partner.companyId, ['cases:read', 'cases:write']);
    const rotated = await accounts().rotateKey(first.keyId);
    for (const route of routes) {
      expect((await call(route, { Authorization: `Bearer ${first.apiKey}` })).statusCode).toBe(authorised[route]);
      expect((await call(route, { Authorization: `Bearer ${rotated.apiKey}` })).statusCode).toBe(authorised[route]);
    }
    await accounts().revokeKey(first.keyId);
    for (const route of routes) {
      expectUnauthenticated(await call(route, { Authorization: `Bearer ${first.apiKey}` }), `revoked → ${route}`);
      expectUnauthenticated(await call(route, { 'X-Api-Key': first.apiKey }), `revoked (X-Api-Key) → ${route}`);
      expect((await call(route, { Authorization: `Bearer ${rotated.apiKey}` })).statusCode).toBe(authorised[route]);
      authCases++;
    }
    await expect(accounts().rotateKey(first.keyId)).rejects.toThrow(/revoked/);
  });

  it('gave one identical 401 (body and headers, apart from the request id) for every cause', () => {
    expect(unauthenticated.size).toBe(1);
  });
});
