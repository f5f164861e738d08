import { readFileSync } from 'node:fs';
import { S3Client } from '@aws-sdk/client-s3';
import { PresignedUploadSigner } from '../../../lib/adapters/s3/presigned-upload-signer.js';
import { createS3Client } from '../../../lib/adapters/s3/s3-client.js';
import { UploadService, encodeOriginalFileName, MAX_ENCODED_FILE_NAME_LENGTH } from '../../../lib/uploads/upload-service.js';
import type { UploadRequest } from '../../../lib/uploads/upload-request.js';

/** Pure tests of the presigned URL: presigning is local, nothing here talks to S3. */

const caller = { companyId: 'cmp_AAAAaaaa00001111', keyId: 'KeyId0123456789a', mode: 'live' as const };
const request: UploadRequest = { fileName: 'Secret Supplier Invoice 42.pdf', contentType: 'application/pdf', contentLength: 48_213 };
const now = new Date('2025-03-04T10:20:30.456Z');

function service(client: S3Client = createS3Client({ region: 'eu-west-2', s3Endpoint: undefined }), ttlSeconds = 900) {
  return new UploadService({ signer: new PresignedUploadSigner(client, 'invoice-bucket'), ttlSeconds, now: () => now });
}

async function issue(req: UploadRequest = request, svc = service()) {
  const ticket = await svc.issue(req, caller);
  return { ticket, url: new URL(ticket.uploadUrl) };
}

describe('the presigned upload URL', () => {
  it('expires after 15 minutes, and expiresAt says when', async () => {
    const { ticket, url } = await issue();
    expect(url.searchParams.get('X-Amz-Expires')).toBe('900');
    expect(url.searchParams.get('X-Amz-Date')).toBe('20250304T102030Z');
    expect(ticket.expiresAt).toBe('2025-03-04T10:35:30.000Z');
  });

  it('follows the configured lifetime', async () => {
    const { ticket, url } = await issue(request, service(undefined, 300));
    expect(url.searchParams.get('X-Amz-Expires')).toBe('300');
    expect(ticket.expiresAt).toBe('2025-03-04T10:25:30.000Z');
  });

  it('signs the content type, the content length and the host', async () => {
    const { url } = await issue();
    const signed = (url.searchParams.get('X-Amz-SignedHeaders') ?? '').split(';');
    expect(signed).toEqual(expect.arrayContaining(['content-length', 'content-type', 'host']));
    expect(url.searchParams.get('X-Amz-Algorithm')).toBe('AWS4-HMAC-SHA256');
    expect(url.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
  });

  it('asks the partner to send exactly the signed Content-Type, Content-Length and If-None-Match with a PUT', async () => {
    const { ticket, url } = await issue({ ...request, contentType: 'image/png', contentLength: 7 });
    expect(ticket.method).toBe('PUT');
    expect(ticket.headers).toEqual({ 'Content-Type': 'image/png', 'Content-Length': '7', 'If-None-Match': '*' });
    const signed = (url.searchParams.get('X-Amz-SignedHeaders') ?? '').split(';');
    // Every signed header other than host (which the HTTP client sets from the URL) is listed.
    expect(signed.filter((h) => h !== 'host').sort()).toEqual(
      Object.keys(ticket.headers)
        .map((h) => h.toLowerCase())
        .sort(),
    );
  });

  it('is shown in docs/uploads.md signing exactly the headers a real one signs', async () => {
    const { url } = await issue();
    const doc = readFileSync('docs/uploads.md', 'utf8');
    const shown = [...doc.matchAll(/X-Amz-SignedHeaders=([^&"\s]+)/g)].map((m) => decodeURIComponent(m[1]!));
    expect(shown.length).toBeGreaterThan(0);
    for (const signedHeaders of shown) expect(signedHeaders).toBe(url.searchParams.get('X-Amz-SignedHeaders'));
  });

  it('carries no checksum the partner would have to match', async () => {
    const { ticket } = await issue();
    const lower = ticket.uploadUrl.toLowerCase();
    expect(lower).not.toContain('x-amz-checksum-crc32');
    expect(lower).not.toContain('x-amz-sdk-checksum-algorithm');
    expect(lower).not.toContain('x-amz-checksum');
  });

  it('puts the file under the company prefix, in the invoice bucket', async () => {
    const { ticket, url } = await issue();
    expect(ticket.fileKey).toMatch(/^invoices\/cmp_AAAAaaaa00001111\/[0-9A-Za-z]{32}\.pdf$/);
    expect(url.protocol).toBe('https:');
    expect(url.hostname).toBe('invoice-bucket.s3.eu-west-2.amazonaws.com');
    expect(url.pathname).toBe(`/${ticket.fileKey}`);
  });

  it('never puts the partner\u2019s file name in the path', async () => {
    for (const fileName of ['Secret Supplier Invoice 42.pdf', '../../other/evil.pdf', 'cmp_BBBBbbbb22223333.pdf']) {
      const { ticket, url } = await issue({ ...request, fileName });
      expect(decodeURIComponent(url.pathname)).toBe(`/${ticket.fileKey}`);
      expect(decodeURIComponent(url.pathname)).not.toContain(fileName.replace(/\.pdf$/, ''));
    }
  });

  it('binds the original file name, company and key as signed object metadata, in the URL itself', async () => {
    const { url } = await issue({ ...request, fileName: 'Rechnung März.pdf' });
    expect(url.searchParams.get('x-amz-meta-original-filename')).toBe('Rechnung%20M%C3%A4rz.pdf');
    expect(url.searchParams.get('x-amz-meta-company-id')).toBe(caller.companyId);
    expect(url.searchParams.get('x-amz-meta-uploaded-by-key')).toBe(caller.keyId);
    // As query parameters they are covered by the signature and need no header from the partner.
    expect(url.searchParams.get('X-Amz-SignedHeaders')).not.toContain('x-amz-meta');
  });

  it('is path-style against the local S3', async () => {
    const local = service(createS3Client({ region: 'eu-west-2', s3Endpoint: 'http://127.0.0.1:4569' }));
    const { ticket, url } = await issue(request, local);
    expect(url.origin).toBe('http://127.0.0.1:4569');
    expect(url.pathname).toBe(`/invoice-bucket/${ticket.fileKey}`);
  });

  it('is issued without any call to S3', async () => {
    const failing = new S3Client({
      region: 'eu-west-2',
      credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
      requestChecksumCalculation: 'WHEN_REQUIRED',
      requestHandler: { handle: () => Promise.reject(new Error('network used')) },
    });
    await expect(service(failing).issue(request, caller)).resolves.toMatchObject({ method: 'PUT' });
  });
});

describe('the original file name kept with the object', () => {
  it('is ASCII, percent-encoded and decodes back to the NFC form of the name', () => {
    const name = 'Rechnung Ma\u0308rz ✓ 請求書.pdf';
    const encoded = encodeOriginalFileName(name);
    expect(encoded).toMatch(/^[\x21-\x7e]+$/);
    expect(decodeURIComponent(encoded)).toBe(name.normalize('NFC'));
  });

  it('is cut at a whole character when very long', () => {
    const encoded = encodeOriginalFileName('請'.repeat(255));
    expect(encoded.length).toBeLessThanOrEqual(MAX_ENCODED_FILE_NAME_LENGTH);
    expect(decodeURIComponent(encoded)).toBe('請'.repeat(encoded.length / 9));
  });
});
