import { createHash, randomBytes } from 'node:crypto';
import { CopyObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { config } from '../../lib/runtime/config.js';
import { createS3Client, LOCAL_S3_CREDENTIALS } from '../../lib/adapters/s3/s3-client.js';

/**
 * The local S3 (s3rver behind the signature gate, started by the shared global setup) refuses
 * what S3 refuses: a presigned PUT is good only for the key, headers and time it was signed for,
 * and only once when it signs `If-None-Match: *`. Every URL here is built the way the service
 * builds its upload URLs, plus the signed If-None-Match the service is to add.
 */

const MiB = 1024 * 1024;
const SIGNED_HEADERS = new Set(['content-type', 'content-length', 'if-none-match']);

const cfg = config();
const Bucket = cfg.bucketName;
const client = createS3Client(cfg);

interface Ticket {
  key: string;
  url: string;
  headers: Record<string, string>;
}

function newKey(suffix = 'pdf'): string {
  return `invoices/cmp_localS3Refusals/${randomBytes(12).toString('hex')}.${suffix}`;
}

async function presignPut(options: {
  key?: string;
  contentType?: string;
  body: Buffer;
  expiresIn?: number;
  signingDate?: Date;
}): Promise<Ticket> {
  const key = options.key ?? newKey();
  const contentType = options.contentType ?? 'application/pdf';
  const url = await getSignedUrl(
    client,
    new PutObjectCommand({ Bucket, Key: key, ContentType: contentType, ContentLength: options.body.length, IfNoneMatch: '*' }),
    {
      expiresIn: options.expiresIn ?? 900,
      signableHeaders: SIGNED_HEADERS,
      ...(options.signingDate ? { signingDate: options.signingDate } : {}),
    },
  );
  return { key, url, headers: { 'Content-Type': contentType, 'Content-Length': String(options.body.length), 'If-None-Match': '*' } };
}

interface Answer {
  status: number;
  code: string | undefined;
  message: string | undefined;
  headersNotSigned?: string;
}

async function put(url: string, headers: Record<string, string>, body: Buffer): Promise<Answer> {
  const res = await fetch(url, { method: 'PUT', headers, body });
  const text = await res.text();
  const headersNotSigned = /<HeadersNotSigned>([^<]*)<\/HeadersNotSigned>/.exec(text)?.[1];
  return {
    status: res.status,
    code: /<Code>([^<]*)<\/Code>/.exec(text)?.[1],
    message: /<Message>([^<]*)<\/Message>/.exec(text)?.[1],
    ...(headersNotSigned === undefined ? {} : { headersNotSigned }),
  };
}

const NOT_SIGNED = 'There were headers present in the request which were not signed';

async function stored(key: string): Promise<{ bytes: Buffer; contentType: string | undefined } | 'missing'> {
  const object = await storedWithMetadata(key);
  return object === 'missing' ? object : { bytes: object.bytes, contentType: object.contentType };
}

interface StoredObject {
  bytes: Buffer;
  contentType: string | undefined;
  contentDisposition: string | undefined;
  metadata: Record<string, string>;
}

async function storedWithMetadata(key: string): Promise<StoredObject | 'missing'> {
  try {
    const out = await client.send(new GetObjectCommand({ Bucket, Key: key }));
    return {
      bytes: Buffer.from(await out.Body!.transformToByteArray()),
      contentType: out.ContentType,
      contentDisposition: out.ContentDisposition,
      metadata: out.Metadata ?? {},
    };
  } catch (error) {
    if ((error as Error).name === 'NoSuchKey') return 'missing';
    throw error;
  }
}

/** The URL with one query parameter's value replaced. */
function withParam(url: string, name: string, value: string): string {
  const u = new URL(url);
  u.searchParams.set(name, value);
  return u.toString();
}

const pdf = (size = 2048) => Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(size)]);

describe('a presigned upload URL on the local S3', () => {
  it('accepts the PUT it was signed for, and stores exactly those bytes with that Content-Type', async () => {
    const body = pdf();
    const ticket = await presignPut({ body });
    expect(await put(ticket.url, ticket.headers, body)).toMatchObject({ status: 200 });
    expect(await stored(ticket.key)).toEqual({ bytes: body, contentType: 'application/pdf' });
  });

  it('is refused once it has expired (403 AccessDenied, "Request has expired"), and stores nothing', async () => {
    const body = pdf();
    const ticket = await presignPut({ body, expiresIn: 60, signingDate: new Date(Date.now() - 10 * 60 * 1000) });
    expect(await put(ticket.url, ticket.headers, body)).toEqual({ status: 403, code: 'AccessDenied', message: 'Request has expired' });
    expect(await stored(ticket.key)).toBe('missing');
  });

  it('is refused with another Content-Type than the one signed (403 SignatureDoesNotMatch)', async () => {
    const body = pdf();
    const ticket = await presignPut({ body });
    const refused = await put(ticket.url, { ...ticket.headers, 'Content-Type': 'text/html' }, body);
    expect(refused).toMatchObject({ status: 403, code: 'SignatureDoesNotMatch' });
    expect(await stored(ticket.key)).toBe('missing');
  });

  it('is refused with another Content-Length (and body) than the one signed (403 SignatureDoesNotMatch)', async () => {
    const body = pdf();
    const ticket = await presignPut({ body });
    const bigger = Buffer.concat([body, randomBytes(1024)]);
    const refused = await put(ticket.url, { ...ticket.headers, 'Content-Length': String(bigger.length) }, bigger);
    expect(refused).toMatchObject({ status: 403, code: 'SignatureDoesNotMatch' });
    expect(await stored(ticket.key)).toBe('missing');
  });

  it('is refused for another key than the one signed (403 SignatureDoesNotMatch), and neither key is written', async () => {
    const body = pdf();
    const ticket = await presignPut({ body });
    const otherKey = newKey();
    const u = new URL(ticket.url);
    u.pathname = `/${Bucket}/${otherKey}`;
    expect(await put(u.toString(), ticket.headers, body)).toMatchObject({ status: 403, code: 'SignatureDoesNotMatch' });
    expect(await stored(otherKey)).toBe('missing');
    expect(await stored(ticket.key)).toBe('missing');
  });

  it('is refused when its signature has been tampered with (403 SignatureDoesNotMatch)', async () => {
    const body = pdf();
    const ticket = await presignPut({ body });
    const signature = new URL(ticket.url).searchParams.get('X-Amz-Signature')!;
    const flipped = `${signature.slice(0, -1)}${signature.endsWith('0') ? '1' : '0'}`;
    expect(await put(withParam(ticket.url, 'X-Amz-Signature', flipped), ticket.headers, body)).toMatchObject({
      status: 403,
      code: 'SignatureDoesNotMatch',
    });
    expect(await stored(ticket.key)).toBe('missing');
  });

  it('is refused when its signature is missing (400 AuthorizationQueryParametersError)', async () => {
    const body = pdf();
    const ticket = await presignPut({ body });
    const u = new URL(ticket.url);
    u.searchParams.delete('X-Amz-Signature');
    expect(await put(u.toString(), ticket.headers, body)).toMatchObject({ status: 400, code: 'AuthorizationQueryParametersError' });
  });

  it('is refused when it claims a longer validity than it was signed with (403 SignatureDoesNotMatch)', async () => {
    const body = pdf();
    const ticket = await presignPut({ body, expiresIn: 60, signingDate: new Date(Date.now() - 10 * 60 * 1000) });
    expect(await put(withParam(ticket.url, 'X-Amz-Expires', '3600'), ticket.headers, body)).toMatchObject({
      status: 403,
      code: 'SignatureDoesNotMatch',
    });
  });

  it('is refused without the signed If-None-Match header (403 SignatureDoesNotMatch): it cannot be used to overwrite', async () => {
    const body = pdf();
    const ticket = await presignPut({ body });
    const { 'If-None-Match': _dropped, ...withoutCondition } = ticket.headers;
    expect(await put(ticket.url, withoutCondition, body)).toMatchObject({ status: 403, code: 'SignatureDoesNotMatch' });
    expect(await stored(ticket.key)).toBe('missing');
  });

  it('works once: a second PUT of the same URL gets 412 PreconditionFailed and the first upload stays', async () => {
    const first = pdf();
    const ticket = await presignPut({ body: first });
    expect(await put(ticket.url, ticket.headers, first)).toMatchObject({ status: 200 });
    const second = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(first.length - 9)]);
    expect(await put(ticket.url, ticket.headers, second)).toMatchObject({ status: 412, code: 'PreconditionFailed' });
    expect(await stored(ticket.key)).toEqual({ bytes: first, contentType: 'application/pdf' });
  });

  it("lets exactly one of several concurrent PUTs of one key through; the others get 412 and the stored bytes are the winner's", async () => {
    const key = newKey();
    const bodies = Array.from({ length: 8 }, () => pdf(64 * 1024));
    const tickets = await Promise.all(bodies.map((body) => presignPut({ key, body })));
    const results = await Promise.all(tickets.map((ticket, i) => put(ticket.url, ticket.headers, bodies[i]!)));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 412)).toHaveLength(bodies.length - 1);
    const winner = bodies[statuses.indexOf(200)]!;
    expect(await stored(key)).toEqual({ bytes: winner, contentType: 'application/pdf' });
  });

  it('cannot become a copy: a used URL plus x-amz-copy-source is refused (403 AccessDenied, HeadersNotSigned) and its object stays', async () => {
    const mine = pdf();
    const ticket = await presignPut({ body: mine });
    expect(await put(ticket.url, ticket.headers, mine)).toMatchObject({ status: 200 });
    const other = pdf();
    const otherTicket = await presignPut({ body: other });
    expect(await put(otherTicket.url, otherTicket.headers, other)).toMatchObject({ status: 200 });

    // Every signed header as signed (the body's length included); only the copy source is added.
    const copy = await put(
      ticket.url,
      { ...ticket.headers, 'x-amz-copy-source': `/${Bucket}/${otherTicket.key}` },
      Buffer.alloc(mine.length),
    );
    expect(copy).toEqual({ status: 403, code: 'AccessDenied', message: NOT_SIGNED, headersNotSigned: 'x-amz-copy-source' });
    expect(await stored(ticket.key)).toEqual({ bytes: mine, contentType: 'application/pdf' });
  });

  it('is refused with x-amz-* headers it did not sign (403 AccessDenied naming them all), and stores nothing', async () => {
    const body = pdf();
    const ticket = await presignPut({ body });
    const refused = await put(ticket.url, { ...ticket.headers, 'x-amz-meta-company-id': 'cmp_someoneElse', 'x-amz-tagging': 'a=b' }, body);
    expect(refused).toEqual({
      status: 403,
      code: 'AccessDenied',
      message: NOT_SIGNED,
      headersNotSigned: 'x-amz-meta-company-id, x-amz-tagging',
    });
    expect(await stored(ticket.key)).toBe('missing');
  });

  it('keeps the metadata it signed, which travels in its query string, and still works with the signed headers only', async () => {
    const body = pdf();
    const key = newKey();
    const url = await getSignedUrl(
      client,
      new PutObjectCommand({
        Bucket,
        Key: key,
        ContentType: 'application/pdf',
        ContentLength: body.length,
        IfNoneMatch: '*',
        Metadata: { 'company-id': 'cmp_mine' },
      }),
      { expiresIn: 900, signableHeaders: SIGNED_HEADERS },
    );
    const headers = { 'Content-Type': 'application/pdf', 'Content-Length': String(body.length), 'If-None-Match': '*' };
    expect(await put(url, { ...headers, 'x-amz-meta-company-id': 'cmp_someoneElse' }, body)).toMatchObject({
      status: 403,
      headersNotSigned: 'x-amz-meta-company-id',
    });
    expect(await put(url, headers, body)).toMatchObject({ status: 200 });
    expect(await storedWithMetadata(key)).toMatchObject({ bytes: body, metadata: { 'company-id': 'cmp_mine' } });
  });

  it('stores a Content-Disposition it did not sign, as S3 does: only x-amz-* headers must be signed', async () => {
    const body = pdf();
    const ticket = await presignPut({ body });
    expect(await put(ticket.url, { ...ticket.headers, 'Content-Disposition': 'attachment; filename="invoice.pdf"' }, body)).toMatchObject({
      status: 200,
    });
    expect(await storedWithMetadata(ticket.key)).toMatchObject({ bytes: body, contentDisposition: 'attachment; filename="invoice.pdf"' });
  });

  it('streams a 10 MiB upload through intact', async () => {
    const body = pdf(10 * MiB - 9);
    expect(body.length).toBe(10 * MiB);
    const ticket = await presignPut({ body });
    expect(await put(ticket.url, ticket.headers, body)).toMatchObject({ status: 200 });
    const object = await stored(ticket.key);
    expect(object).not.toBe('missing');
    const digest = (b: Buffer) => createHash('sha256').update(b).digest('hex');
    expect(digest((object as { bytes: Buffer }).bytes)).toBe(digest(body));
  });
});

describe('SDK clients on the local S3', () => {
  it('can still HEAD and GET objects, and PUT with header signatures', async () => {
    const key = newKey('txt');
    await client.send(new PutObjectCommand({ Bucket, Key: key, Body: 'invoice text', ContentType: 'text/plain' }));
    const head = await client.send(new HeadObjectCommand({ Bucket, Key: key }));
    expect(head).toMatchObject({ ContentType: 'text/plain', ContentLength: 12 });
    expect(await stored(key)).toEqual({ bytes: Buffer.from('invoice text'), contentType: 'text/plain' });
  });

  it('are refused with an x-amz-* header added after signing (403 AccessDenied, HeadersNotSigned), and a signed copy works', async () => {
    const source = newKey('txt');
    await client.send(new PutObjectCommand({ Bucket, Key: source, Body: 'original', ContentType: 'text/plain' }));
    const target = newKey('txt');
    const adding = createS3Client(cfg);
    adding.middlewareStack.add(
      (next) => async (args) => {
        (args.request as { headers: Record<string, string> }).headers['x-amz-meta-added'] = 'after signing';
        return next(args);
      },
      // The deserialize step runs after signing, just before the request is sent.
      { step: 'deserialize', name: 'addHeaderAfterSigning' },
    );
    const refused = adding.send(new PutObjectCommand({ Bucket, Key: target, Body: 'x' }));
    await expect(refused).rejects.toMatchObject({ name: 'AccessDenied', $metadata: { httpStatusCode: 403 } });
    expect(await stored(target)).toBe('missing');
    await client.send(new CopyObjectCommand({ Bucket, Key: target, CopySource: `${Bucket}/${source}` }));
    expect(await stored(target)).toEqual({ bytes: Buffer.from('original'), contentType: 'text/plain' });
  });

  it('gets 404 NotFound for a HEAD of a missing object', async () => {
    await expect(client.send(new HeadObjectCommand({ Bucket, Key: newKey() }))).rejects.toMatchObject({
      name: 'NotFound',
      $metadata: { httpStatusCode: 404 },
    });
  });

  it('are refused with the wrong secret (403 SignatureDoesNotMatch) or an unknown access key (403 InvalidAccessKeyId)', async () => {
    const withCredentials = (credentials: { accessKeyId: string; secretAccessKey: string }) =>
      new S3Client({ region: cfg.region, endpoint: cfg.s3Endpoint, forcePathStyle: true, credentials, maxAttempts: 1 });
    const key = newKey('txt');
    await client.send(new PutObjectCommand({ Bucket, Key: key, Body: 'x' }));
    const wrongSecret = withCredentials({ ...LOCAL_S3_CREDENTIALS, secretAccessKey: `${LOCAL_S3_CREDENTIALS.secretAccessKey}x` });
    await expect(wrongSecret.send(new GetObjectCommand({ Bucket, Key: key }))).rejects.toMatchObject({
      name: 'SignatureDoesNotMatch',
      $metadata: { httpStatusCode: 403 },
    });
    const unknownKey = withCredentials({ accessKeyId: 'AKIAUNKNOWN', secretAccessKey: LOCAL_S3_CREDENTIALS.secretAccessKey });
    await expect(unknownKey.send(new GetObjectCommand({ Bucket, Key: key }))).rejects.toMatchObject({
      name: 'InvalidAccessKeyId',
      $metadata: { httpStatusCode: 403 },
    });
  });

  it('are refused when signed for another region (400 AuthorizationHeaderMalformed naming the right one)', async () => {
    const otherRegion = new S3Client({
      region: 'us-east-1',
      endpoint: cfg.s3Endpoint,
      forcePathStyle: true,
      credentials: LOCAL_S3_CREDENTIALS,
      maxAttempts: 1,
    });
    const refused = otherRegion.send(new GetObjectCommand({ Bucket, Key: newKey() }));
    await expect(refused).rejects.toMatchObject({ name: 'AuthorizationHeaderMalformed', $metadata: { httpStatusCode: 400 } });
    await expect(refused).rejects.toThrow(`expecting '${cfg.region}'`);
  });
});

describe('anonymous requests to the local S3', () => {
  it('are refused (403 AccessDenied): the bucket is private', async () => {
    const key = newKey('txt');
    await client.send(new PutObjectCommand({ Bucket, Key: key, Body: 'private' }));
    const res = await fetch(`${cfg.s3Endpoint}/${Bucket}/${key}`);
    expect(res.status).toBe(403);
    expect(await res.text()).toContain('<Code>AccessDenied</Code>');
    const write = await fetch(`${cfg.s3Endpoint}/${Bucket}/${newKey('txt')}`, { method: 'PUT', body: 'anonymous' });
    expect(write.status).toBe(403);
  });
});
