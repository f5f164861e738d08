import { handler as createCases } from '../../functions/create-cases.js';
import { handler as createUpload } from '../../functions/create-upload.js';
import { checkedInvoke } from '../support/contract.js';
import { outcome, readCase, scanTable, uploadInvoice, validCase } from '../support/cases.js';
import { apiEvent, bearer, lambdaContext, newPartner, parse, type Partner } from '../support/fixtures.js';
import { recordCounts } from './summary.js';

/**
 * Product rules "Request bytes": media types compare case-insensitively, only UTF-8 is accepted,
 * bytes that are not UTF-8 are refused (never decoded lossily into U+FFFD), an unpaired surrogate
 * is not a value, and a whole amount too large for pence is out of range, not malformed.
 */
let limitChecks = 0;
afterAll(() => recordCounts('request-bytes', { limitChecks }));

let partner: Partner;
let fileKey: string;
beforeAll(async () => {
  partner = await newPartner();
  fileKey = await uploadInvoice(partner.apiKey);
});

async function post(route: 'cases' | 'uploads', body: string | Buffer, contentType: string) {
  const binary = Buffer.isBuffer(body);
  const event = apiEvent({
    method: 'POST',
    path: `/api/v1/${route}`,
    resource: `/api/v1/${route}`,
    headers: { ...bearer(partner.apiKey), 'Content-Type': contentType },
    body: binary ? body.toString('base64') : body,
    isBase64Encoded: binary,
  });
  limitChecks++;
  return parse(await checkedInvoke(route === 'cases' ? createCases : createUpload, event, lambdaContext()));
}

const casesBody = (overrides: Record<string, unknown> = {}) => JSON.stringify({ cases: [validCase(fileKey, overrides)] });

describe('request bytes', () => {
  it.each(['Application/JSON', 'application/json ; charset=UTF-8', 'APPLICATION/JSON;CHARSET="utf-8"', 'application/json;\tcharset=utf8'])(
    'accepts a JSON body sent as %j',
    async (contentType) => {
      const res = await post('cases', casesBody(), contentType);
      expect(res.statusCode).toBe(201);
      const upload = await post(
        'uploads',
        JSON.stringify({ fileName: 'a.pdf', contentType: 'application/pdf', contentLength: 10 }),
        contentType,
      );
      expect(upload.statusCode).toBe(201);
    },
  );

  it.each(['application/json; charset=iso-8859-1', 'application/json; charset=utf-16', 'text/json', 'application/jsonx'])(
    'refuses %j with 415',
    async (contentType) => {
      const res = await post('cases', casesBody(), contentType);
      expect(res.statusCode).toBe(415);
      expect(res.body.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    },
  );

  it('refuses a body that is not valid UTF-8 with 400 and stores nothing of it', async () => {
    const marker = `LATIN1-${Date.now()}`;
    // "Müller" in ISO-8859-1: 0xFC is not UTF-8.
    const latin1 = Buffer.from(casesBody({ invoiceRef: marker, debtorName: 'M\u00fcller GmbH' }), 'latin1');
    for (const route of ['cases', 'uploads'] as const) {
      const res = await post(route, latin1, 'application/json');
      expect(res.statusCode).toBe(400);
      expect(res.body).toMatchObject({ code: 'INVALID_REQUEST', detail: 'The request body is not valid UTF-8 text.' });
    }
    const stored = (await scanTable()).filter((item) => item.invoiceRef === marker);
    expect(stored).toEqual([]);
  });

  it('refuses text that already holds U+FFFD, the mark of bytes decoded lossily before it arrived', async () => {
    const res = await post('cases', casesBody({ debtorName: 'M\ufffdller GmbH' }), 'application/json');
    expect(res.statusCode).toBe(400);
    expect(res.body.detail).toBe('The request body is not valid UTF-8 text.');
  });

  it('accepts UTF-8 that arrives base64-encoded and stores the text exactly', async () => {
    const name = 'Müller & Søn — 東京';
    const res = await post('cases', Buffer.from(casesBody({ debtorName: name }), 'utf8'), 'application/json');
    expect(res.statusCode).toBe(201);
    const read = await readCase(partner.apiKey, outcome(res).created[0]!.id);
    expect(read.body.debtorName).toBe(name);
  });

  it('refuses invoiceRefs holding unpaired surrogates, so two of them never collide in the guard', async () => {
    // Raw JSON escapes: JSON.parse turns them into lone surrogates.
    const body = `{"cases":[${JSON.stringify(validCase(fileKey)).replace(/"invoiceRef":"[^"]*"/, '"invoiceRef":"REF-\\ud800"')},${JSON.stringify(validCase(fileKey)).replace(/"invoiceRef":"[^"]*"/, '"invoiceRef":"REF-\\udbff"')}]}`;
    const res = await post('cases', body, 'application/json');
    expect(res.statusCode).toBe(200);
    expect(outcome(res).rejected.map((r) => [r.index, r.code, r.errors[0]?.field])).toEqual([
      [0, 'INVALID_FIELD', 'invoiceRef'],
      [1, 'INVALID_FIELD', 'invoiceRef'],
    ]);
    const debtor = `{"cases":[${JSON.stringify(validCase(fileKey)).replace(/"debtorName":"[^"]*"/, '"debtorName":"Acme \\udc00"')}]}`;
    expect(outcome(await post('cases', debtor, 'application/json')).rejected[0]).toMatchObject({ code: 'INVALID_FIELD' });
  });

  it.each([1e21, 1e300, -1e21, Number.MAX_SAFE_INTEGER, 2 ** 53 + 2])(
    'rejects principalAmount %p as AMOUNT_OUT_OF_RANGE, not INVALID_FIELD',
    async (amount) => {
      const res = await post('cases', casesBody({ principalAmount: amount }), 'application/json');
      expect(outcome(res).rejected[0]).toMatchObject({ code: 'AMOUNT_OUT_OF_RANGE' });
    },
  );

  it('still reads a real sub-penny fraction as a format problem', async () => {
    const res = await post('cases', casesBody({ principalAmount: 10.001 }), 'application/json');
    expect(outcome(res).rejected[0]).toMatchObject({ code: 'INVALID_FIELD' });
  });
});
