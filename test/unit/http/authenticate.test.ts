import { generateApiKey } from '../../../lib/auth/api-key.js';
import type { ApiKeyRecord, ApiKeyStore } from '../../../lib/auth/ports.js';
import type { CaseReader } from '../../../lib/cases/ports.js';
import { buildGetCaseHandler } from '../../../functions/get-case.js';
import { apiEvent, lambdaContext, parse } from '../../support/fixtures.js';

/** Counting in-memory stores: these tests are about which storage reads happen, not storage. */
function countingStores(record?: ApiKeyRecord) {
  const calls = { keyGets: 0, caseGets: 0, touches: 0 };
  const keys: ApiKeyStore = {
    get: async () => {
      calls.keyGets++;
      return record;
    },
    create: async () => undefined,
    listForCompany: async () => [],
    revoke: async () => true,
    touch: async () => {
      calls.touches++;
    },
  };
  const caseReader: CaseReader = {
    get: async () => {
      calls.caseGets++;
      return undefined;
    },
  };
  return { calls, handler: buildGetCaseHandler({ keys, caseReader }) };
}

const getEvent = (authorization?: string) =>
  apiEvent({
    method: 'GET',
    path: '/api/v1/cases/case_0000000000000000000000',
    resource: '/api/v1/cases/{id}',
    pathParameters: { id: 'case_0000000000000000000000' },
    headers: authorization ? { Authorization: authorization } : {},
  });

describe('authentication', () => {
  it('refuses a key that fails its checksum without any storage read', async () => {
    const { apiKey } = generateApiKey();
    const typo = `${apiKey.slice(0, -1)}${apiKey.endsWith('a') ? 'b' : 'a'}`;
    const { calls, handler } = countingStores();
    const res = parse(await handler(getEvent(`Bearer ${typo}`), lambdaContext()));
    expect(res.statusCode).toBe(401);
    expect(calls).toEqual({ keyGets: 0, caseGets: 0, touches: 0 });
  });

  it('refuses a missing key without any storage read', async () => {
    const { calls, handler } = countingStores();
    expect(parse(await handler(getEvent(), lambdaContext())).statusCode).toBe(401);
    expect(calls.keyGets + calls.caseGets).toBe(0);
  });

  it('reads the key and the case in parallel, once each, and records key use at most once a minute', async () => {
    const generated = generateApiKey();
    const record: ApiKeyRecord = {
      keyId: generated.keyId,
      companyId: 'cmp_AAAAAAAAAAAAAAAA',
      scopes: ['cases:read'],
      mode: 'live',
      secretHash: generated.secretHash,
      revoked: false,
      createdAt: new Date().toISOString(),
    };
    const { calls, handler } = countingStores(record);
    expect(parse(await handler(getEvent(`Bearer ${generated.apiKey}`), lambdaContext())).statusCode).toBe(404);
    expect(calls).toEqual({ keyGets: 1, caseGets: 1, touches: 1 });

    record.lastUsedAt = new Date().toISOString();
    await handler(getEvent(`Bearer ${generated.apiKey}`), lambdaContext());
    expect(calls.touches).toBe(1);
  });

  it('treats a revoked key exactly like an unknown one', async () => {
    const generated = generateApiKey();
    const revoked: ApiKeyRecord = {
      keyId: generated.keyId,
      companyId: 'cmp_AAAAAAAAAAAAAAAA',
      scopes: ['cases:read'],
      mode: 'live',
      secretHash: generated.secretHash,
      revoked: true,
      createdAt: new Date().toISOString(),
    };
    const a = parse(await countingStores(revoked).handler(getEvent(`Bearer ${generated.apiKey}`), lambdaContext()));
    const b = parse(await countingStores(undefined).handler(getEvent(`Bearer ${generated.apiKey}`), lambdaContext()));
    expect({ ...a.body, requestId: 0 }).toEqual({ ...b.body, requestId: 0 });
    expect(a.headers).toEqual(b.headers);
  });
});
