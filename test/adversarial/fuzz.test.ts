import fc from 'fast-check';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { handler as createCases } from '../../functions/create-cases.js';
import { handler as createUpload } from '../../functions/create-upload.js';
import { handler as getCase } from '../../functions/get-case.js';
import { handler as listCases } from '../../functions/list-cases.js';
import { LIST_PARAMETERS } from '../../lib/cases/list-cases.js';
import { apiEvent, bearer, lambdaContext, newPartner, type Partner } from '../support/fixtures.js';
import { uploadInvoice, validCase } from '../support/cases.js';
import { assertMatchesContract } from '../support/contract.js';
import { recordCounts } from './summary.js';
import { MODES } from '../../lib/mode.js';

/**
 * Fuzzing the request envelope, its headers and the cases. Invariants for every run: never a 5xx;
 * no answer larger than a Lambda may return (that would reach the partner as a 5xx); every error
 * is problem details without internals; every accepted envelope accounts for each index exactly
 * once, echoing each invoiceRef as submitted (null when not a string); every response matches the
 * OpenAPI document; nothing reaches Object.prototype or Array.prototype.
 * 2,000 runs by default, 50,000 with DEEP=1 (npm run test:deep); FUZZ_SEED replays a run.
 */
const TOTAL = process.env.DEEP ? 50_000 : 2_000;
const share = (fraction: number) => Math.max(1, Math.round(TOTAL * fraction));
const SEED = Number(process.env.FUZZ_SEED ?? 20261122);

let partner: Partner;
let fileKey: string;
let runs = 0;
const prototypeKeysBefore = Object.getOwnPropertyNames(Object.prototype).sort();
const arrayPrototypeKeysBefore = Object.getOwnPropertyNames(Array.prototype).sort();
/** Lambda's limit on a synchronous response. */
const LAMBDA_RESPONSE_LIMIT_BYTES = 6 * 1024 * 1024;

afterAll(() => {
  recordCounts('fuzz', { fuzzRuns: runs });
  console.log(`fuzz: ${runs} runs (seed ${SEED})`);
});

interface Sent {
  body: string | null;
  contentType?: string | undefined;
  base64?: boolean;
  headers?: Record<string, string>;
}

async function send(sent: Sent, route: 'cases' | 'uploads' = 'cases'): Promise<APIGatewayProxyResult> {
  runs++;
  const headers: Record<string, string> = { ...bearer(partner.apiKey), ...sent.headers };
  if (sent.contentType !== undefined) headers['Content-Type'] = sent.contentType;
  const event = apiEvent({
    method: 'POST',
    path: `/api/v1/${route}`,
    resource: `/api/v1/${route}`,
    headers,
    body: sent.base64 && sent.body !== null ? Buffer.from(sent.body).toString('base64') : sent.body,
    isBase64Encoded: sent.base64 ?? false,
  });
  const handler = route === 'cases' ? createCases : createUpload;
  return handler(event, lambdaContext());
}

function parseOrUndefined(text: string | null): unknown {
  if (text === null) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The invariants every response must satisfy. */
type Route = 'cases' | 'uploads' | 'read' | 'list';

function checkInvariants(sent: Sent, res: APIGatewayProxyResult, route: Route = 'cases'): void {
  expect(res.statusCode).toBeLessThan(500);
  expect(Buffer.byteLength(JSON.stringify(res))).toBeLessThan(LAMBDA_RESPONSE_LIMIT_BYTES);
  const contentType = String(res.headers?.['Content-Type'] ?? '');
  const body = JSON.parse(res.body) as Record<string, unknown>;
  if (res.statusCode >= 400) {
    expect(contentType).toBe('application/problem+json');
    expect(body).toEqual(
      expect.objectContaining({
        type: expect.any(String),
        title: expect.any(String),
        status: res.statusCode,
        detail: expect.any(String),
        code: expect.any(String),
        requestId: expect.any(String),
      }),
    );
    expect(body.code).toMatch(/^[A-Z]+(_[A-Z]+)*$/);
    expect(res.body).not.toMatch(/\bat .+\.(ts|js):\d+|node_modules|partner-case-api-local|partner-case-api-invoices-local/);
  } else if (route === 'cases') {
    const cases = (parseOrUndefined(sent.body) as { cases: unknown[] }).cases;
    const created = body.created as { index: number; invoiceRef: unknown }[];
    const rejected = body.rejected as { index: number; invoiceRef: unknown }[];
    const indexes = [...created, ...rejected].map((i) => i.index).sort((a, b) => a - b);
    expect(indexes).toEqual(cases.map((_, i) => i));
    for (const item of [...created, ...rejected]) {
      const raw = cases[item.index] as Record<string, unknown> | null;
      const ref =
        typeof raw === 'object' && raw !== null && !Array.isArray(raw) && Object.hasOwn(raw, 'invoiceRef') ? raw.invoiceRef : undefined;
      expect(item.invoiceRef).toEqual(typeof ref === 'string' ? ref : null);
    }
    expect(res.statusCode).toBe(created.length > 0 ? 201 : 200);
  }
  const [method, resource] =
    route === 'read' ? ['GET', '/api/v1/cases/{id}'] : route === 'list' ? ['GET', '/api/v1/cases'] : ['POST', `/api/v1/${route}`];
  assertMatchesContract(method, resource, res);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect(([] as unknown as Record<string, unknown>).polluted).toBeUndefined();
  expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(prototypeKeysBefore);
  expect(Object.getOwnPropertyNames(Array.prototype).sort()).toEqual(arrayPrototypeKeysBefore);
}

function nested(depth: number): unknown {
  let value: unknown = 'bottom';
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { deeper: value };
  return value;
}

/** Values that break naive validators. */
const nasty: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    'NaN',
    'Infinity',
    '-Infinity',
    '1e309',
    '',
    ' ',
    '\t',
    '\u0000',
    '\ud800',
    '\udfff',
    '\u202eevil',
    'a\u200bb',
    'e\u0301',
    '\u{1d54f}',
    '<script>alert(1)</script>',
    '../../etc/passwd',
    'null',
    'true',
    '0x10',
    '1,000.00',
    '\uFEFF',
  ),
  fc.constantFrom(0, -0, 0.001, 0.005, 0.1 + 0.2, 1e21, -1, 10000, 10000.001, 10000.01, Number.MAX_SAFE_INTEGER, 2 ** 53 + 1),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constant('x'.repeat(70_000)),
  fc.constant(nested(300)),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
  fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }),
);

const CASE_FIELDS = [
  'debtorName',
  'debtorEmail',
  'invoiceRef',
  'invoiceDate',
  'dueDate',
  'principalAmount',
  'invoiceFileKey',
  'attestation',
  'debtorCompanyNo',
  'debtorAddress',
  'description',
];
const ATTESTATION_FIELDS = ['b2b', 'under10k', 'within6years', 'undisputed', 'attestedBy'];
const EXTRA_KEYS = ['__proto__', 'constructor', 'prototype', 'debtorCompanyNumber', 'hasOwnProperty', 'toString'];

type Mutation =
  | { kind: 'set' | 'delete'; inAttestation: boolean; field: string; value: unknown }
  | { kind: 'extra'; inAttestation: boolean; field: string; value: unknown };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant<'set'>('set'), inAttestation: fc.constant(false), field: fc.constantFrom(...CASE_FIELDS), value: nasty }),
  fc.record({
    kind: fc.constant<'set'>('set'),
    inAttestation: fc.constant(true),
    field: fc.constantFrom(...ATTESTATION_FIELDS),
    value: nasty,
  }),
  fc.record({
    kind: fc.constant<'delete'>('delete'),
    inAttestation: fc.boolean(),
    field: fc.constantFrom(...CASE_FIELDS, ...ATTESTATION_FIELDS),
    value: fc.constant(null),
  }),
  fc.record({
    kind: fc.constant<'extra'>('extra'),
    inAttestation: fc.boolean(),
    field: fc.constantFrom(...EXTRA_KEYS),
    value: fc.constantFrom<unknown>({ polluted: true }, 'x', 1, null),
  }),
);

/** Applies a mutation; own `__proto__` keys are defined, not assigned, so JSON.stringify writes them. */
function mutate(base: Record<string, unknown>, m: Mutation): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...base };
  const attestation = base.attestation;
  const isObject = typeof attestation === 'object' && attestation !== null && !Array.isArray(attestation);
  if (isObject) copy.attestation = { ...attestation };
  // (An earlier mutation may have replaced the attestation: then this one applies to the case.)
  const target = (m.inAttestation && isObject ? copy.attestation : copy) as Record<string, unknown>;
  if (m.kind === 'delete') delete target[m.field];
  else Object.defineProperty(target, m.field, { value: m.value, enumerable: true, writable: true, configurable: true });
  return copy;
}

// Once per mode: test mode has the same validation, limits and storage semantics as live.
describe.each(MODES)('fuzzing the create request (%s mode)', (mode) => {
  beforeAll(async () => {
    partner = await newPartner(['cases:read', 'cases:write'], { mode });
    fileKey = await uploadInvoice(partner.apiKey);
  });

  it('never answers 5xx to arbitrary JSON', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 4 }), async (value) => {
        const sent = { body: JSON.stringify(value) ?? 'null', contentType: 'application/json' };
        checkInvariants(sent, await send(sent));
      }),
      { numRuns: share(0.12), seed: SEED },
    );
  });

  it('accounts for every element of envelopes full of junk', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.jsonValue({ maxDepth: 3 }), { minLength: 1, maxLength: 20 }), async (cases) => {
        const sent = { body: JSON.stringify({ cases }), contentType: 'application/json' };
        checkInvariants(sent, await send(sent));
      }),
      { numRuns: share(0.12), seed: SEED + 1 },
    );
  });

  it('handles near-valid cases, each with one to three fields mutated', async () => {
    // invoiceRefs repeat within and across runs on purpose: DUPLICATE is one of the outcomes.
    const nearValid = fc.array(fc.tuple(fc.array(mutation, { minLength: 1, maxLength: 3 }), fc.integer({ min: 0, max: 40 })), {
      minLength: 1,
      maxLength: 3,
    });
    await fc.assert(
      fc.asyncProperty(nearValid, async (items) => {
        const cases = items.map(([mutations, n]) => mutations.reduce(mutate, validCase(fileKey, { invoiceRef: `FZ-${SEED}-${n}` })));
        const sent = { body: JSON.stringify({ cases }), contentType: 'application/json' };
        checkInvariants(sent, await send(sent));
      }),
      { numRuns: share(0.3), seed: SEED + 2 },
    );
  });

  it('handles raw texts: prototype keys, duplicate keys, non-JSON, BOMs and truncation', async () => {
    const valid = JSON.stringify(validCase(fileKey));
    const raw = fc.oneof(
      fc.constant(`{"cases":[${valid.slice(0, -1)},"__proto__":{"polluted":true}}]}`),
      fc.constant(`{"__proto__":{"polluted":true},"cases":[${valid}]}`),
      fc.constant(`{"constructor":{"prototype":{"polluted":true}},"cases":[${valid}]}`),
      fc.constant(`{"cases":[],"cases":[${valid}]}`),
      fc.constant(
        `{"cases":[${valid.slice(0, -1)},"attestation":{"b2b":false},"attestation":{"b2b":true,"under10k":true,"within6years":true,"undisputed":true,"attestedBy":"X"}}]}`,
      ),
      fc.constant(`\uFEFF{"cases":[${valid}]}`),
      // Unicode as raw text, not escapes: lone surrogates, RTL override, zero-width, combining marks.
      fc
        .constantFrom('\ud800', '\udfff', '\u202e', '\u200b\u200d', 'e\u0301\u0301', '\u{1F600}', '\u0000')
        .map(
          (u) =>
            `{"cases":[${valid.replace('"Acme Widgets Ltd"', `"${u}Acme${u}"`).replace(/"invoiceRef":"[^"]*"/, `"invoiceRef":"R${u}"`)}]}`,
        ),
      fc.constantFrom('\ud800', '\u202e', '\u200b').map((u) => `{"cases":[${valid.slice(0, -1)},"${u}":1}]}`),
      // Duplicate keys inside a case and inside the attestation.
      fc.constant(`{"cases":[${valid.slice(0, -1)},"principalAmount":"NaN","principalAmount":1}]}`),
      fc.constant(`{"cases":[${valid.slice(0, -1)},"invoiceRef":null,"invoiceRef":"DUP-KEY"}]}`),
      fc.constant(`{"cases":[${valid.slice(0, -1)},"__proto__":{"invoiceRef":"INHERITED"},"invoiceRef":1}]}`),
      fc.constant(`{"cases":[{"__proto__":[]},{"constructor":{"prototype":{"polluted":1}}},{"__proto__":null}]}`),
      // Many unknown fields in one case.
      fc
        .integer({ min: 19, max: 400 })
        .map((n) => `{"cases":[${valid.slice(0, -1)},${Array.from({ length: n }, (_, i) => `"k${i}":0`).join(',')}}]}`),
      fc.constant(`{"cases":[${valid}]`),
      fc.constant(`{"cases":[${valid}]}garbage`),
      fc.constant('{"cases": [1e999]}'),
      fc.constant('['.repeat(5000) + ']'.repeat(5000)),
      fc.string({ maxLength: 100 }),
      fc.string({ unit: 'binary', maxLength: 60 }),
      fc.jsonValue().map((v) => (JSON.stringify(v) ?? '').slice(0, -1)),
    );
    await fc.assert(
      fc.asyncProperty(raw, async (body) => {
        const sent = { body, contentType: 'application/json' };
        checkInvariants(sent, await send(sent));
      }),
      { numRuns: share(0.16), seed: SEED + 3 },
    );
  });

  it('survives the most hostile bodies that fit in 1 MiB (each sent once)', async () => {
    const valid = JSON.stringify(validCase(fileKey)).slice(0, -1);
    const long = 'x'.repeat(100_000);
    const bodies = [
      `{"cases":[${'['.repeat(500_000)}${']'.repeat(500_000)}]}`,
      `{"cases":[${'{"a":'.repeat(170_000)}1${'}'.repeat(170_000)}]}`,
      `{"cases":${'['.repeat(100)}${']'.repeat(100)}}`,
      `{"cases":[${Array.from({ length: 100 }, () => '{}').join(',')}]}`,
      `{"cases":[${Array.from({ length: 100 }, () => `{${'"__proto__":{"polluted":1},'.repeat(300)}"x":1}`).join(',')}]}`,
      JSON.stringify({
        cases: Array.from({ length: 1 }, () =>
          Object.fromEntries(
            [
              'debtorName',
              'debtorEmail',
              'invoiceRef',
              'invoiceDate',
              'dueDate',
              'invoiceFileKey',
              'debtorCompanyNo',
              'debtorAddress',
              'description',
              'principalAmount',
            ].map((f) => [f, long]),
          ),
        ),
      }),
      `{"cases":[${valid},"description":"${'\\u0000'.repeat(170_000)}"}]}`,
      `{"cases":[${valid},"attestation":{"attestedBy":"${'\\ud800'.repeat(170_000)}","b2b":true,"under10k":true,"within6years":true,"undisputed":true}}]}`,
      `{"cases":[${valid},"invoiceRef":"${'\u0301'.repeat(300_000)}"}]}`,
      `{"cases":[${Array.from({ length: 100 }, () => `${valid},"principalAmount":${'9'.repeat(9_000)}}`).join(',')}]}`,
    ];
    for (const body of bodies) {
      expect(Buffer.byteLength(body)).toBeLessThanOrEqual(1024 * 1024);
      const sent = { body, contentType: 'application/json' };
      checkInvariants(sent, await send(sent));
    }
  });

  it('refuses wrong content types and decodes base64 bodies', async () => {
    const valid = JSON.stringify({ cases: [validCase(fileKey)] });
    const variant = fc.record({
      contentType: fc.constantFrom(
        undefined,
        '',
        'text/plain',
        'application/xml',
        'application/x-www-form-urlencoded',
        'application/json-patch+json',
        'APPLICATION/JSON',
        'application/json; charset=utf-8',
        'multipart/form-data; boundary=x',
        'application/jsonx',
      ),
      base64: fc.boolean(),
      body: fc.constantFrom<string | null>(valid, '{"cases": "x"}', 'not json', null, ''),
    });
    await fc.assert(
      fc.asyncProperty(variant, async (v) => {
        const res = await send(v);
        checkInvariants(v, res);
        if (v.contentType === undefined || !/^application\/json\s*(;|$)/i.test(v.contentType)) {
          if (res.statusCode !== 413) expect(res.statusCode).toBe(415);
        }
      }),
      { numRuns: share(0.1), seed: SEED + 4 },
    );
  });

  it('refuses bad Idempotency-Key headers before anything is claimed, and honours good ones', async () => {
    const VALID = /^[\x21-\x7e]{1,255}$/;
    const SF_STRING = /^(?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*$/;
    const header = fc.oneof(
      fc.string({ maxLength: 20 }),
      fc.string({ unit: 'binary', maxLength: 20 }),
      fc.constantFrom(
        '',
        ' ',
        'a b',
        '\t',
        '"',
        '""',
        '"abc"',
        '"a\\"b"',
        '"a"b"',
        '"ünï"',
        'x'.repeat(255),
        'x'.repeat(256),
        '\u00e9',
        '\ud800',
        'a\u0000b',
        '\u202eabc',
      ),
      fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 300 }),
    );
    await fc.assert(
      fc.asyncProperty(header, fc.boolean(), async (key, validBody) => {
        // Mostly an envelope that fails after the key is checked (empty batch), sometimes a real case.
        const body = validBody
          ? JSON.stringify({ cases: [validCase(fileKey, { invoiceRef: `IK-${SEED}-${runs % 50}` })] })
          : '{"cases":[]}';
        const sent = { body, contentType: 'application/json', headers: { 'Idempotency-Key': key } };
        const res = await send(sent);
        checkInvariants(sent, res);
        // The quoted form is an RFC 8941 sf-string: printable ASCII, `"` and `\\` escaped.
        const quoted = key.length >= 2 && key.startsWith('"') && key.endsWith('"');
        const inner = key.slice(1, -1);
        const named = quoted ? (SF_STRING.test(inner) ? inner.replace(/\\(["\\])/g, '$1') : undefined) : key;
        if (named === undefined || !VALID.test(named))
          expect([res.statusCode, JSON.parse(res.body).code]).toEqual([400, 'INVALID_REQUEST']);
        else if (!validBody) expect(JSON.parse(res.body).code).toBe('BATCH_EMPTY');
        else expect([200, 201, 409]).toContain(res.statusCode);
      }),
      { numRuns: share(0.08), seed: SEED + 6 },
    );
  });

  it('answers 404 to any case id that is not one of the caller’s cases', async () => {
    const id = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.string({ unit: 'binary', maxLength: 40 }),
      fc
        .string({
          unit: fc.constantFrom(...'0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'),
          minLength: 22,
          maxLength: 22,
        })
        .map((s) => `case_${s}`),
      fc.constantFrom(
        '',
        '..',
        '../cases',
        'case_',
        '%00',
        'case_0000000000000000000000/../x',
        '__proto__',
        'constructor',
        'x'.repeat(10_000),
      ),
    );
    await fc.assert(
      fc.asyncProperty(id, async (caseId) => {
        runs++;
        const res = await getCase(
          apiEvent({
            method: 'GET',
            path: `/api/v1/cases/${encodeURIComponent(caseId)}`,
            resource: '/api/v1/cases/{id}',
            pathParameters: { id: caseId },
            headers: bearer(partner.apiKey),
          }),
          lambdaContext(),
        );
        checkInvariants({ body: null }, res, 'read');
        expect([res.statusCode, JSON.parse(res.body).code]).toEqual([404, 'NOT_FOUND']);
      }),
      { numRuns: share(0.07), seed: SEED + 7 },
    );
  });

  it('answers any query string of the list with a page or a problem, never a 5xx', async () => {
    const value = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.string({ unit: 'binary', maxLength: 40 }),
      fc.constantFrom(
        '',
        ' ',
        '0',
        '1',
        '25',
        '100',
        '101',
        '-1',
        '1e2',
        '0x10',
        '2.0',
        ' 5',
        'DRAFT',
        'draft',
        'AUTO_ATTESTED',
        'AWAITING_CONFIRMATION',
      ),
      fc.constantFrom(
        '2025-03-01T00:00:00Z',
        '2025-03-01T00:00:00+14:00',
        '9999-12-31T23:59:59-23:59',
        '0000-01-01T00:00:00+23:59',
        '2025-02-29T00:00:00Z',
        '2025-03-01T24:00:00Z',
        '2025-03-01T00:00:00.123456789Z',
        '2025-03-01',
      ),
      fc.constantFrom('\ud800', '\u0000', '\u202e', 'x'.repeat(5000), '%00', '__proto__', 'AAAA', 'A'.repeat(300)),
      fc.string({
        unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'),
        minLength: 40,
        maxLength: 400,
      }),
    );
    const name = fc.oneof(
      fc.constantFrom(...LIST_PARAMETERS),
      fc.constantFrom(...LIST_PARAMETERS),
      fc.constantFrom('__proto__', 'constructor', 'toString', 'Limit', 'limit ', 'sort', ''),
      fc.string({ maxLength: 12 }),
    );
    const query = fc.dictionary(name, fc.oneof(value, fc.array(value, { minLength: 2, maxLength: 3 })), { maxKeys: 5 });
    await fc.assert(
      fc.asyncProperty(query, async (q) => {
        runs++;
        const res = await listCases(
          apiEvent({ method: 'GET', path: '/api/v1/cases', resource: '/api/v1/cases', headers: bearer(partner.apiKey), query: q }),
          lambdaContext(),
        );
        checkInvariants({ body: null }, res, 'list');
        const body = JSON.parse(res.body) as { code?: string; data?: unknown[] };
        if (res.statusCode === 200) {
          const limit = typeof q.limit === 'string' ? Number(q.limit) : 25;
          expect(body.data!.length).toBeLessThanOrEqual(limit);
        } else {
          expect([res.statusCode, ['INVALID_REQUEST', 'INVALID_CURSOR'].includes(body.code!)]).toEqual([400, true]);
        }
        if (Object.keys(q).some((k) => !(LIST_PARAMETERS as readonly string[]).includes(k))) expect(body.code).toBe('INVALID_REQUEST');
      }),
      { numRuns: share(0.05), seed: SEED + 8 },
    );
  });

  it('never answers 5xx to junk upload requests', async () => {
    const uploadBody = fc.oneof(
      fc.jsonValue({ maxDepth: 3 }),
      fc.record(
        {
          fileName: nasty,
          contentType: fc.oneof(nasty, fc.constantFrom('application/pdf', 'image/png')),
          contentLength: fc.oneof(nasty, fc.integer()),
        },
        { requiredKeys: [] },
      ),
    );
    await fc.assert(
      fc.asyncProperty(uploadBody, async (value) => {
        const sent = { body: JSON.stringify(value) ?? 'null', contentType: 'application/json' };
        checkInvariants(sent, await send(sent, 'uploads'), 'uploads');
      }),
      { numRuns: share(0.05), seed: SEED + 5 },
    );
  });
});
