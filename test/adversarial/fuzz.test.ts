import fc from 'fast-check';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { handler as createCases } from '../../functions/create-cases.js';
import { handler as createUpload } from '../../functions/create-upload.js';
import { apiEvent, bearer, lambdaContext, newPartner, type Partner } from '../support/fixtures.js';
import { uploadInvoice, validCase } from '../support/cases.js';
import { assertMatchesContract } from '../support/contract.js';
import { recordCounts } from './summary.js';

/**
 * Fuzzing the request envelope and the cases. Invariants for every run: never a 5xx; every error
 * is problem details; every accepted envelope accounts for each index exactly once; every response
 * matches the OpenAPI document; nothing reaches Object.prototype.
 * 2,000 runs by default, 50,000 with DEEP=1 (npm run test:deep).
 */
const TOTAL = process.env.DEEP ? 50_000 : 2_000;
const share = (fraction: number) => Math.max(1, Math.round(TOTAL * fraction));
const SEED = Number(process.env.FUZZ_SEED ?? 20261122);

let partner: Partner;
let fileKey: string;
let runs = 0;
const prototypeKeysBefore = Object.getOwnPropertyNames(Object.prototype).sort();

beforeAll(async () => {
  partner = await newPartner();
  fileKey = await uploadInvoice(partner.apiKey);
});

afterAll(() => {
  recordCounts('fuzz', { fuzzRuns: runs });
  console.log(`fuzz: ${runs} runs (seed ${SEED})`);
});

interface Sent {
  body: string | null;
  contentType?: string | undefined;
  base64?: boolean;
}

async function send(sent: Sent, route: 'cases' | 'uploads' = 'cases'): Promise<APIGatewayProxyResult> {
  runs++;
  const headers: Record<string, string> = { ...bearer(partner.apiKey) };
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
function checkInvariants(sent: Sent, res: APIGatewayProxyResult, route: 'cases' | 'uploads' = 'cases'): void {
  expect(res.statusCode).toBeLessThan(500);
  const contentType = String(res.headers?.['Content-Type'] ?? '');
  const body = JSON.parse(res.body) as Record<string, unknown>;
  if (res.statusCode >= 400) {
    expect(contentType).toBe('application/problem+json');
    expect(body).toEqual(expect.objectContaining({ type: expect.any(String), title: expect.any(String), status: res.statusCode, detail: expect.any(String), code: expect.any(String), requestId: expect.any(String) }));
    expect(res.body).not.toMatch(/\bat .+\.(ts|js):\d+|partner-case-api-local|partner-case-api-invoices-local/);
  } else if (route === 'cases') {
    const cases = (parseOrUndefined(sent.base64 ? sent.body : sent.body) as { cases: unknown[] }).cases;
    const created = body.created as { index: number }[];
    const rejected = body.rejected as { index: number }[];
    const indexes = [...created, ...rejected].map((i) => i.index).sort((a, b) => a - b);
    expect(indexes).toEqual(cases.map((_, i) => i));
    expect(res.statusCode).toBe(created.length > 0 ? 201 : 200);
  }
  assertMatchesContract('POST', `/api/v1/${route}`, res);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(prototypeKeysBefore);
}

function nested(depth: number): unknown {
  let value: unknown = 'bottom';
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { deeper: value };
  return value;
}

/** Values that break naive validators. */
const nasty: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom('NaN', 'Infinity', '-Infinity', '1e309', '', ' ', '\t', '\u0000', '\ud800', '\udfff', '\u202eevil', 'a\u200bb', 'e\u0301', '\u{1d54f}', '<script>alert(1)</script>', '../../etc/passwd', 'null', 'true', '0x10', '1,000.00', '\uFEFF'),
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

const CASE_FIELDS = ['debtorName', 'debtorEmail', 'invoiceRef', 'invoiceDate', 'dueDate', 'principalAmount', 'invoiceFileKey', 'attestation', 'debtorCompanyNo', 'debtorAddress', 'description'];
const ATTESTATION_FIELDS = ['b2b', 'under10k', 'within6years', 'undisputed', 'attestedBy'];
const EXTRA_KEYS = ['__proto__', 'constructor', 'prototype', 'debtorCompanyNumber', 'hasOwnProperty', 'toString'];

type Mutation = { kind: 'set' | 'delete'; inAttestation: boolean; field: string; value: unknown } | { kind: 'extra'; inAttestation: boolean; field: string; value: unknown };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant<'set'>('set'), inAttestation: fc.constant(false), field: fc.constantFrom(...CASE_FIELDS), value: nasty }),
  fc.record({ kind: fc.constant<'set'>('set'), inAttestation: fc.constant(true), field: fc.constantFrom(...ATTESTATION_FIELDS), value: nasty }),
  fc.record({ kind: fc.constant<'delete'>('delete'), inAttestation: fc.boolean(), field: fc.constantFrom(...CASE_FIELDS, ...ATTESTATION_FIELDS), value: fc.constant(null) }),
  fc.record({ kind: fc.constant<'extra'>('extra'), inAttestation: fc.boolean(), field: fc.constantFrom(...EXTRA_KEYS), value: fc.constantFrom<unknown>({ polluted: true }, 'x', 1, null) }),
);

/** Applies a mutation; own `__proto__` keys are defined, not assigned, so JSON.stringify writes them. */
function mutate(base: Record<string, unknown>, m: Mutation): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...base, attestation: { ...(base.attestation as object) } };
  const target = (m.inAttestation ? copy.attestation : copy) as Record<string, unknown>;
  if (m.kind === 'delete') delete target[m.field];
  else Object.defineProperty(target, m.field, { value: m.value, enumerable: true, writable: true, configurable: true });
  return copy;
}

describe('fuzzing the create request', () => {
  it('never answers 5xx to arbitrary JSON', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 4 }), async (value) => {
        const sent = { body: JSON.stringify(value) ?? 'null', contentType: 'application/json' };
        checkInvariants(sent, await send(sent));
      }),
      { numRuns: share(0.15), seed: SEED },
    );
  });

  it('accounts for every element of envelopes full of junk', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.jsonValue({ maxDepth: 3 }), { minLength: 1, maxLength: 20 }), async (cases) => {
        const sent = { body: JSON.stringify({ cases }), contentType: 'application/json' };
        checkInvariants(sent, await send(sent));
      }),
      { numRuns: share(0.15), seed: SEED + 1 },
    );
  });

  it('handles near-valid cases mutated one field at a time', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(mutation, fc.integer({ min: 0, max: 5 })), { minLength: 1, maxLength: 5 }), async (mutations) => {
        const cases = mutations.map(([m, n]) => mutate(validCase(fileKey, { invoiceRef: `FZ-${n}-${Math.random().toString(36).slice(2, 6)}` }), m));
        const sent = { body: JSON.stringify({ cases }), contentType: 'application/json' };
        checkInvariants(sent, await send(sent));
      }),
      { numRuns: share(0.35), seed: SEED + 2 },
    );
  });

  it('handles raw texts: prototype keys, duplicate keys, non-JSON, BOMs and truncation', async () => {
    const valid = JSON.stringify(validCase(fileKey));
    const raw = fc.oneof(
      fc.constant(`{"cases":[${valid.slice(0, -1)},"__proto__":{"polluted":true}}]}`),
      fc.constant(`{"__proto__":{"polluted":true},"cases":[${valid}]}`),
      fc.constant(`{"constructor":{"prototype":{"polluted":true}},"cases":[${valid}]}`),
      fc.constant(`{"cases":[],"cases":[${valid}]}`),
      fc.constant(`{"cases":[${valid.slice(0, -1)},"attestation":{"b2b":false},"attestation":{"b2b":true,"under10k":true,"within6years":true,"undisputed":true,"attestedBy":"X"}}]}`),
      fc.constant(`\uFEFF{"cases":[${valid}]}`),
      fc.constant(`{"cases":[${valid}]`),
      fc.constant(`{"cases":[${valid}]}garbage`),
      fc.constant('{"cases": [1e999]}'),
      fc.constant('[' .repeat(5000) + ']'.repeat(5000)),
      fc.string({ maxLength: 100 }),
      fc.string({ unit: 'binary', maxLength: 60 }),
      fc.jsonValue().map((v) => (JSON.stringify(v) ?? '').slice(0, -1)),
    );
    await fc.assert(
      fc.asyncProperty(raw, async (body) => {
        const sent = { body, contentType: 'application/json' };
        checkInvariants(sent, await send(sent));
      }),
      { numRuns: share(0.2), seed: SEED + 3 },
    );
  });

  it('refuses wrong content types and decodes base64 bodies', async () => {
    const valid = JSON.stringify({ cases: [validCase(fileKey)] });
    const variant = fc.record({
      contentType: fc.constantFrom(undefined, '', 'text/plain', 'application/xml', 'application/x-www-form-urlencoded', 'application/json-patch+json', 'APPLICATION/JSON', 'application/json; charset=utf-8', 'multipart/form-data; boundary=x', 'application/jsonx'),
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

  it('never answers 5xx to junk upload requests', async () => {
    const uploadBody = fc.oneof(
      fc.jsonValue({ maxDepth: 3 }),
      fc.record({ fileName: nasty, contentType: fc.oneof(nasty, fc.constantFrom('application/pdf', 'image/png')), contentLength: fc.oneof(nasty, fc.integer()) }, { requiredKeys: [] }),
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
