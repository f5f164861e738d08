import { randomBytes } from 'node:crypto';
import { DeleteObjectCommand, GetObjectCommand } from '@aws-sdk/client-s3';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '../../lib/adapters/dynamodb/dynamo-client.js';
import { DynamoUploadRecords } from '../../lib/adapters/dynamodb/upload-records.js';
import { ITEM_TYPES, keys } from '../../lib/adapters/dynamodb/table-keys.js';
import { config } from '../../lib/runtime/config.js';
import { handler } from '../../functions/create-upload.js';
import { S3InvoiceFileStore } from '../../lib/adapters/s3/invoice-file-store.js';
import { validateFileKey } from '../../lib/uploads/file-key.js';
import { s3Client } from '../../lib/adapters/s3/s3-client.js';
import type { UploadTicket } from '../../lib/uploads/upload-ticket.js';
import { checkedInvoke } from '../support/contract.js';
import { apiEvent, bearer, extraKey, lambdaContext, newPartner, parse, type Partner } from '../support/fixtures.js';

/** POST /api/v1/uploads through the real handler, and the PUT against the local S3 (s3rver). */

const MiB = 1024 * 1024;

async function postUpload(headers: Record<string, string>, body: unknown) {
  const event = apiEvent({
    method: 'POST',
    path: '/api/v1/uploads',
    resource: '/api/v1/uploads',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return parse(await checkedInvoke(handler, event, lambdaContext()));
}

function asPartner(partner: Partner, extra: Record<string, string> = {}) {
  return { ...bearer(partner.apiKey), 'Content-Type': 'application/json', ...extra };
}

async function putFile(ticket: UploadTicket, bytes: Buffer): Promise<Response> {
  return fetch(ticket.uploadUrl, { method: ticket.method, headers: ticket.headers, body: bytes });
}

async function storedObject(fileKey: string) {
  const out = await s3Client(config()).send(new GetObjectCommand({ Bucket: config().bucketName, Key: fileKey }));
  return { bytes: Buffer.from(await out.Body!.transformToByteArray()), contentType: out.ContentType, metadata: out.Metadata ?? {} };
}

describe('uploading an invoice', () => {
  let partner: Partner;
  beforeAll(async () => {
    partner = await newPartner(['cases:write']);
  });

  it('gives a fileKey under my company, a PUT URL, the headers to send and when the URL expires', async () => {
    const before = Date.now();
    const res = await postUpload(asPartner(partner), { fileName: 'invoice.pdf', contentType: 'application/pdf', contentLength: 1234 });
    expect(res.statusCode).toBe(201);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({
      fileKey: expect.stringMatching(new RegExp(`^invoices/${partner.companyId}/[0-9A-Za-z]{32}\\.pdf$`)),
      uploadUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\//),
      method: 'PUT',
      headers: { 'Content-Type': 'application/pdf', 'Content-Length': '1234', 'If-None-Match': '*' },
      expiresAt: expect.any(String),
    });
    const expiresAt = Date.parse(res.body.expiresAt as string);
    expect(expiresAt).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 900_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 900_000);
  });

  it('stores exactly the bytes I PUT with exactly the returned headers', async () => {
    const bytes = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(64 * 1024)]);
    const res = await postUpload(asPartner(partner), {
      fileName: 'Rechnung März 2025.pdf',
      contentType: 'application/pdf',
      contentLength: bytes.length,
    });
    const ticket = res.body as unknown as UploadTicket;
    const put = await putFile(ticket, bytes);
    expect(put.status).toBe(200);

    const stored = await storedObject(ticket.fileKey);
    expect(stored.bytes.equals(bytes)).toBe(true);
    expect(stored.contentType).toBe('application/pdf');
    expect(stored.metadata).toMatchObject({
      'original-filename': 'Rechnung%20M%C3%A4rz%202025.pdf',
      'company-id': partner.companyId,
      'uploaded-by-key': partner.keyId,
    });
  });

  it('a PNG or a JPEG upload gets the matching extension and is stored with its content type', async () => {
    for (const [contentType, ext] of [
      ['image/png', 'png'],
      ['image/jpeg', 'jpg'],
    ] as const) {
      const bytes = randomBytes(300);
      const res = await postUpload(asPartner(partner), { fileName: `scan.${ext}`, contentType, contentLength: bytes.length });
      const ticket = res.body as unknown as UploadTicket;
      expect(ticket.fileKey.endsWith(`.${ext}`)).toBe(true);
      expect((await putFile(ticket, bytes)).status).toBe(200);
      expect((await storedObject(ticket.fileKey)).contentType).toBe(contentType);
    }
  });

  it('the fileKey does not exist until the file is PUT, then it does', async () => {
    const bytes = Buffer.from('%PDF-1.4\n% tiny\n');
    const res = await postUpload(asPartner(partner), { fileName: 'tiny.pdf', contentType: 'application/pdf', contentLength: bytes.length });
    const ticket = res.body as unknown as UploadTicket;
    const files = new S3InvoiceFileStore(s3Client(config()), config().bucketName);
    expect(await files.exists(ticket.fileKey)).toBe(false);
    expect((await putFile(ticket, bytes)).status).toBe(200);
    expect(await files.exists(ticket.fileKey)).toBe(true);
  });

  it('the upload is recorded when the local S3 reports it (as the bucket notification does in AWS), and forgotten when the object is deleted', async () => {
    const bytes = Buffer.from('%PDF-1.4\n% recorded\n');
    const res = await postUpload(asPartner(partner), {
      fileName: 'recorded.pdf',
      contentType: 'application/pdf',
      contentLength: bytes.length,
    });
    const ticket = res.body as unknown as UploadTicket;
    const records = new DynamoUploadRecords(documentClient(config()), config().tableName);
    expect(await records.recorded([ticket.fileKey])).toEqual(new Set());
    expect((await putFile(ticket, bytes)).status).toBe(200);
    // The event follows the PUT's answer: wait for it (a bounded number of reads, no timing asserted).
    const until = async (wanted: boolean) => {
      for (let read = 0; read < 250 && (await records.recorded([ticket.fileKey])).has(ticket.fileKey) !== wanted; read++)
        await new Promise((r) => setTimeout(r, 20));
      return (await records.recorded([ticket.fileKey])).has(ticket.fileKey);
    };
    expect(await until(true)).toBe(true);
    const item = await documentClient(config()).send(
      new GetCommand({ TableName: config().tableName, Key: keys.upload(ticket.fileKey), ConsistentRead: true }),
    );
    expect(item.Item).toMatchObject({ type: ITEM_TYPES.upload, fileKey: ticket.fileKey, companyId: partner.companyId, size: bytes.length });
    await s3Client(config()).send(new DeleteObjectCommand({ Bucket: config().bucketName, Key: ticket.fileKey }));
    expect(await until(false)).toBe(false);
  });

  it('an upload URL creates its object once: a second PUT is refused with 412 and the first file stays', async () => {
    const first = Buffer.from('%PDF-1.4\n% first\n');
    const res = await postUpload(asPartner(partner), { fileName: 'once.pdf', contentType: 'application/pdf', contentLength: first.length });
    const ticket = res.body as unknown as UploadTicket;
    expect((await putFile(ticket, first)).status).toBe(200);
    const second = Buffer.from('%PDF-1.4\n% other\n');
    expect(second.length).toBe(first.length);
    const again = await putFile(ticket, second);
    expect(again.status).toBe(412);
    expect(await again.text()).toContain('<Code>PreconditionFailed</Code>');
    expect((await storedObject(ticket.fileKey)).bytes).toEqual(first);
  });

  it('refuses a PUT that leaves out the signed If-None-Match header', async () => {
    const bytes = Buffer.from('%PDF-1.4\n% tiny\n');
    const ticket = (
      await postUpload(asPartner(partner), { fileName: 'a.pdf', contentType: 'application/pdf', contentLength: bytes.length })
    ).body as unknown as UploadTicket;
    const { 'If-None-Match': _omitted, ...withoutCondition } = ticket.headers;
    const put = await fetch(ticket.uploadUrl, { method: 'PUT', headers: withoutCondition, body: bytes });
    expect(put.status).toBe(403);
  });

  it('a fileKey issued to my company is valid for me and refused for any other company', async () => {
    const other = await newPartner(['cases:write']);
    const mine = (await postUpload(asPartner(partner), { fileName: 'a.pdf', contentType: 'application/pdf', contentLength: 10 })).body
      .fileKey as string;
    expect(validateFileKey(mine, partner.companyId)).toEqual({ ok: true });
    expect(validateFileKey(mine, other.companyId)).toMatchObject({ ok: false, reason: 'OTHER_COMPANY' });
  });

  it('each request gets a new fileKey, even for the same file name', async () => {
    const body = { fileName: 'same.pdf', contentType: 'application/pdf', contentLength: 10 };
    const [a, b] = await Promise.all([postUpload(asPartner(partner), body), postUpload(asPartner(partner), body)]);
    expect(a.body.fileKey).not.toBe(b.body.fileKey);
  });

  it('accepts a file of exactly 10 MiB', async () => {
    const res = await postUpload(asPartner(partner), { fileName: 'big.pdf', contentType: 'application/pdf', contentLength: 10 * MiB });
    expect(res.statusCode).toBe(201);
    expect(res.body.headers).toEqual({ 'Content-Type': 'application/pdf', 'Content-Length': String(10 * MiB), 'If-None-Match': '*' });
  });
});

describe('who may request an upload', () => {
  let partner: Partner;
  beforeAll(async () => {
    partner = await newPartner(['cases:write']);
  });
  const body = { fileName: 'invoice.pdf', contentType: 'application/pdf', contentLength: 10 };

  it('without an API key the answer is 401', async () => {
    const res = await postUpload({ 'Content-Type': 'application/json' }, body);
    expect(res.statusCode).toBe(401);
    expect(res.body.code).toBe('UNAUTHENTICATED');
    expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    expect(res.headers['content-type']).toBe('application/problem+json');
  });

  it('a key that holds only cases:read gets 403', async () => {
    const readOnly = await extraKey(partner.companyId, ['cases:read']);
    const res = await postUpload({ ...bearer(readOnly), 'Content-Type': 'application/json' }, body);
    expect(res.statusCode).toBe(403);
    expect(res.body).toMatchObject({ code: 'INSUFFICIENT_SCOPE', requiredScope: 'cases:write' });
  });

  it('the X-Api-Key header works as well as a bearer token', async () => {
    const res = await postUpload({ 'X-Api-Key': partner.apiKey, 'Content-Type': 'application/json' }, body);
    expect(res.statusCode).toBe(201);
  });
});

describe('an upload request that cannot be accepted', () => {
  let partner: Partner;
  beforeAll(async () => {
    partner = await newPartner(['cases:write']);
  });
  const valid = { fileName: 'invoice.pdf', contentType: 'application/pdf', contentLength: 1234 };

  it.each([
    ['the fileName is missing', { contentType: 'application/pdf', contentLength: 1 }, 'fileName'],
    ['there is an unknown field', { ...valid, invoiceRef: 'INV-1' }, 'invoiceRef'],
    ['the contentType is not PDF, PNG or JPEG', { ...valid, contentType: 'text/html' }, 'contentType'],
    ['the contentLength is 0', { ...valid, contentLength: 0 }, 'contentLength'],
    ['the contentLength is 10 MiB + 1 byte', { ...valid, contentLength: 10 * MiB + 1 }, 'contentLength'],
    ['the contentLength is not a whole number', { ...valid, contentLength: 12.5 }, 'contentLength'],
    ['the fileName has 256 characters', { ...valid, fileName: `${'a'.repeat(252)}.pdf` }, 'fileName'],
    ['the fileName holds a control character', { ...valid, fileName: 'inv\u0007oice.pdf' }, 'fileName'],
    ['the fileName is blank', { ...valid, fileName: '   ' }, 'fileName'],
  ])('is refused with 400 INVALID_REQUEST when %s, naming the field', async (_name, body, field) => {
    const res = await postUpload(asPartner(partner), body);
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toBe('application/problem+json');
    expect(res.body).toMatchObject({ code: 'INVALID_REQUEST', status: 400, type: '/problems/invalid-request' });
    expect(res.body.errors).toContainEqual({ field, message: expect.any(String) });
  });

  it('lists every problem at once', async () => {
    const res = await postUpload(asPartner(partner), { fileName: '', contentType: 'application/zip', contentLength: -1 });
    expect(res.statusCode).toBe(400);
    const fields = (res.body.errors as { field: string }[]).map((e) => e.field).sort();
    expect(fields).toEqual(['contentLength', 'contentType', 'fileName']);
  });

  it('is refused with 400 when the body is not JSON', async () => {
    const res = await postUpload(asPartner(partner), '{"fileName": "invoice.pdf",');
    expect(res.statusCode).toBe(400);
    expect(res.body.code).toBe('INVALID_REQUEST');
  });

  it('is refused with 400 when the body is a JSON array', async () => {
    const res = await postUpload(asPartner(partner), [valid]);
    expect(res.statusCode).toBe(400);
    expect(res.body.code).toBe('INVALID_REQUEST');
  });

  it('is refused with 415 when not sent as application/json', async () => {
    const res = await postUpload(asPartner(partner, { 'Content-Type': 'text/plain' }), valid);
    expect(res.statusCode).toBe(415);
    expect(res.body.code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('checks the key before the body: no key and a bad body is 401, a read-only key and a bad body is 403', async () => {
    expect((await postUpload({ 'Content-Type': 'text/plain' }, 'nonsense')).statusCode).toBe(401);
    const readOnly = await extraKey(partner.companyId, ['cases:read']);
    expect((await postUpload({ ...bearer(readOnly), 'Content-Type': 'text/plain' }, 'nonsense')).statusCode).toBe(403);
  });
});
