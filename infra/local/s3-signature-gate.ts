import { randomBytes, timingSafeEqual } from 'node:crypto';
import {
  Agent,
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';
import { parseLongDate } from './parse-long-date.js';
import { parseRawQuery, type RawQuery } from './parse-raw-query.js';

/**
 * A thin HTTP layer in front of s3rver that refuses what S3 refuses and s3rver lets through.
 * s3rver accepts any SigV4 signature (it only checks that the access key id exists) and ignores
 * conditional writes, so locally a presigned PUT with another Content-Type, another length or to
 * another key would succeed, and one URL could overwrite its object until it expired. Here:
 *
 * - every request must be SigV4-signed, in the query (presigned URLs) or in the Authorization
 *   header (SDK clients); the signature is recomputed with the SDK's own signer over what actually
 *   arrived (method, raw path, query without X-Amz-Signature, the signed headers' values as sent)
 *   and compared in constant time;
 * - a presigned URL is refused once X-Amz-Date + X-Amz-Expires has passed;
 * - every `x-amz-*` header that arrived must be among the signed ones, as S3 requires of SigV4
 *   requests (403 AccessDenied, "There were headers present in the request which were not signed",
 *   with HeadersNotSigned listing them). Without this, a presigned upload URL plus an unsigned
 *   `x-amz-copy-source` became a CopyObject over its key, and unsigned `x-amz-meta-*` were stored.
 *   Other headers the client did not sign (Content-Disposition, Cache-Control, ...) pass on and are
 *   stored, because S3 stores them too: the local S3 is no stricter than the real one, so nothing
 *   that works here fails in AWS and nothing refused in AWS works here;
 * - `If-None-Match: *` on a PUT of an object is honoured atomically: the gate holds a per-key lock
 *   while it checks for the object and forwards the PUT, so of two concurrent conditional PUTs
 *   exactly one is stored and the other gets 412 PreconditionFailed.
 *
 * Refusals carry S3's status codes and XML error bodies. Everything else, bodies included, is
 * streamed to s3rver and its answers are passed back unchanged.
 *
 * Not verified (as S3 would): the payload hash of header-signed requests (x-amz-content-sha256 is
 * taken as sent) and aws-chunked chunk signatures; session tokens; SigV4a.
 */

export interface S3SignatureGateOptions {
  /** Port to listen on (127.0.0.1 only); 0 picks a free one. */
  port: number;
  /** Where s3rver listens. */
  upstream: { host: string; port: number };
  /** The one region S3 answers for; a signature scoped to another region is refused, as S3 does. */
  region: string;
  /** The only credentials the local S3 knows. */
  credentials: { accessKeyId: string; secretAccessKey: string };
}

export interface RunningS3SignatureGate {
  port: number;
  close(): Promise<void>;
}

const ALGORITHM = 'AWS4-HMAC-SHA256';
const SERVICE = 's3';
/** S3's longest presigned validity, in seconds. */
const MAX_EXPIRES_SECONDS = 604_800;
/** S3's tolerance for a request clock ahead of (or, for header signatures, behind) its own. */
const MAX_SKEW_MS = 15 * 60 * 1000;
const QUERY_AUTH_PARAMS = [
  'X-Amz-Algorithm',
  'X-Amz-Credential',
  'X-Amz-Signature',
  'X-Amz-Date',
  'X-Amz-SignedHeaders',
  'X-Amz-Expires',
] as const;
/**
 * The one `x-amz-*` header S3 lets through unsigned: the payload hash, which a header signature
 * covers anyway (it is the last line of the canonical request).
 */
const UNSIGNED_AMZ_HEADERS_ALLOWED = new Set(['x-amz-content-sha256']);
/** Hop-by-hop headers, and Expect, which the gate answers itself. */
const NOT_FORWARDED = new Set(['connection', 'keep-alive', 'expect', 'proxy-connection', 'upgrade']);

type Query = RawQuery;
type SignableRequest = Parameters<SignatureV4['presign']>[0];

/** An S3 error answer: status, code, message and S3's extra elements. */
class S3Refusal {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly message: string,
    readonly details: Record<string, string> = {},
  ) {}
}

const signatureMismatch = (accessKeyId: string) =>
  new S3Refusal(
    403,
    'SignatureDoesNotMatch',
    'The request signature we calculated does not match the signature you provided. Check your key and signing method.',
    {
      AWSAccessKeyId: accessKeyId,
    },
  );

const queryParametersError = (message: string) => new S3Refusal(400, 'AuthorizationQueryParametersError', message);

function xmlEscape(text: string): string {
  return text.replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]!);
}

function iso8601Seconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function single(query: Query, name: string): string | undefined {
  const value = query[name];
  return Array.isArray(value) ? undefined : value;
}

/** Header values as SigV4 canonicalises them: repeated headers joined by commas, in order. */
function headerValue(req: IncomingMessage, name: string): string | undefined {
  const values = req.headersDistinct[name];
  return values === undefined ? undefined : values.join(',');
}

function constantTimeEqual(expected: string, provided: string): boolean {
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(provided, 'utf8');
  // Lengths are not secret (a SigV4 signature is always 64 hex digits); contents are compared in constant time.
  return a.length === b.length && timingSafeEqual(a, b);
}

/** S3's refusal of a SigV4 request carrying `x-amz-*` headers outside its signed headers; undefined when there are none. */
function unsignedAmzHeaders(req: IncomingMessage, signedHeaders: readonly string[]): S3Refusal | undefined {
  const signed = new Set(signedHeaders);
  // req.headers names are lower case, as SignedHeaders lists them.
  const unsigned = Object.keys(req.headers).filter(
    (name) => name.startsWith('x-amz-') && !signed.has(name) && !UNSIGNED_AMZ_HEADERS_ALLOWED.has(name),
  );
  if (unsigned.length === 0) return undefined;
  return new S3Refusal(403, 'AccessDenied', 'There were headers present in the request which were not signed', {
    HeadersNotSigned: unsigned.join(', '),
  });
}

interface Credential {
  accessKeyId: string;
  date: string;
  region: string;
  service: string;
  terminator: string;
}

function parseCredential(value: string): Credential | undefined {
  const parts = value.split('/');
  if (parts.length !== 5 || parts.some((p) => p === '')) return undefined;
  const [accessKeyId, date, region, service, terminator] = parts as [string, string, string, string, string];
  return { accessKeyId, date, region, service, terminator };
}

export async function startS3SignatureGate(options: S3SignatureGateOptions): Promise<RunningS3SignatureGate> {
  const signer = new SignatureV4({
    credentials: options.credentials,
    region: options.region,
    service: SERVICE,
    sha256: Sha256,
    uriEscapePath: false,
  });
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  /** Per object key, the tail of the chain of conditional PUTs waiting for it. */
  const keyLocks = new Map<string, Promise<void>>();

  /** Checks the credential scope of either signature form; undefined when it is ours. */
  function checkScope(credential: Credential, longDate: string, malformed: (message: string) => S3Refusal): S3Refusal | undefined {
    if (credential.accessKeyId !== options.credentials.accessKeyId) {
      return new S3Refusal(403, 'InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.', {
        AWSAccessKeyId: credential.accessKeyId,
      });
    }
    if (credential.date !== longDate.slice(0, 8))
      return malformed('incorrect date. This should be a date in the format yyyyMMdd matching the request date');
    if (credential.region !== options.region) {
      const wrongRegion = malformed(`the region '${credential.region}' is wrong; expecting '${options.region}'`);
      return new S3Refusal(wrongRegion.status, wrongRegion.code, wrongRegion.message, { Region: options.region });
    }
    if (credential.service !== SERVICE)
      return malformed(`incorrect service '${credential.service}'. This endpoint belongs to '${SERVICE}'.`);
    if (credential.terminator !== 'aws4_request')
      return malformed(`incorrect terminal '${credential.terminator}'. This endpoint uses 'aws4_request'.`);
    return undefined;
  }

  /** The request the signer sees: what arrived, with only the headers the client signed. */
  function signable(req: IncomingMessage, path: string, query: Query, signedHeaders: string[]): SignableRequest {
    const headers: Record<string, string> = {};
    for (const name of signedHeaders) {
      const value = headerValue(req, name);
      // A signed header that did not arrive is left out: the recomputed signature then differs.
      if (value !== undefined) headers[name] = value;
    }
    const host = req.headers.host ?? '';
    return {
      method: req.method ?? 'GET',
      protocol: 'http:',
      hostname: host.replace(/:\d+$/, ''),
      path,
      query,
      headers,
      // The body is a stream the signer never reads: its payload hash is UNSIGNED-PAYLOAD unless
      // an x-amz-content-sha256 header is among the signed ones.
      body: req,
    };
  }

  async function verifyPresigned(req: IncomingMessage, path: string, query: Query): Promise<S3Refusal | undefined> {
    const missing = QUERY_AUTH_PARAMS.some((name) => single(query, name) === undefined);
    if (missing) {
      return queryParametersError(
        'Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters.',
      );
    }
    const algorithm = single(query, 'X-Amz-Algorithm')!;
    const credentialText = single(query, 'X-Amz-Credential')!;
    const providedSignature = single(query, 'X-Amz-Signature')!;
    const longDate = single(query, 'X-Amz-Date')!;
    const signedHeadersText = single(query, 'X-Amz-SignedHeaders')!;
    const expiresText = single(query, 'X-Amz-Expires')!;

    if (algorithm !== ALGORITHM) return queryParametersError(`X-Amz-Algorithm only supports "${ALGORITHM}"`);
    const credential = parseCredential(credentialText);
    if (!credential)
      return queryParametersError(
        `Error parsing the X-Amz-Credential parameter; the Credential is mal-formed; expecting "<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request".`,
      );
    const signedAt = parseLongDate(longDate);
    if (signedAt === undefined) return queryParametersError(`X-Amz-Date must be in the ISO8601 Long Format "yyyyMMdd'T'HHmmss'Z'"`);
    if (!/^\d+$/.test(expiresText)) return queryParametersError('X-Amz-Expires should be a number');
    const expiresIn = Number(expiresText);
    if (expiresIn > MAX_EXPIRES_SECONDS) {
      return queryParametersError(
        `X-Amz-Expires must be less than a week (in seconds) that is; the given X-Amz-Expires must be less than ${MAX_EXPIRES_SECONDS} seconds`,
      );
    }
    const scopeRefusal = checkScope(credential, longDate, (message) =>
      queryParametersError(`Error parsing the X-Amz-Credential parameter; ${message}`),
    );
    if (scopeRefusal) return scopeRefusal;
    const signedHeaders = signedHeadersText.split(';');
    if (!signedHeaders.includes('host'))
      return queryParametersError('Query-string authentication requires the host header to be signed (X-Amz-SignedHeaders).');

    const now = Date.now();
    const expiresAt = signedAt + expiresIn * 1000;
    if (now > expiresAt) {
      return new S3Refusal(403, 'AccessDenied', 'Request has expired', {
        'X-Amz-Expires': expiresText,
        Expires: iso8601Seconds(expiresAt),
        ServerTime: iso8601Seconds(now),
      });
    }
    if (signedAt > now + MAX_SKEW_MS) {
      return new S3Refusal(403, 'AccessDenied', 'Request is not yet valid', { 'X-Amz-Date': longDate, ServerTime: iso8601Seconds(now) });
    }

    const { 'X-Amz-Signature': _provided, ...signedQuery } = query;
    const names = new Set(signedHeaders);
    const recomputed = await signer.presign(signable(req, path, signedQuery, signedHeaders), {
      signingDate: new Date(signedAt),
      expiresIn,
      signableHeaders: names,
      // Signed x-amz-* headers arrived as headers: they stay headers in the canonical request.
      unhoistableHeaders: names,
    });
    // The signer writes the auth parameters from our own credentials and scope; had the client
    // sent anything else there, the canonical query differs and so does the signature.
    const expected = recomputed.query?.['X-Amz-Signature'];
    if (typeof expected !== 'string' || !constantTimeEqual(expected, providedSignature)) return signatureMismatch(credential.accessKeyId);
    return unsignedAmzHeaders(req, signedHeaders);
  }

  async function verifyHeaderSigned(
    req: IncomingMessage,
    path: string,
    query: Query,
    authorization: string,
  ): Promise<S3Refusal | undefined> {
    const malformed = (message: string) =>
      new S3Refusal(400, 'AuthorizationHeaderMalformed', `The authorization header is malformed; ${message}`);
    const space = authorization.indexOf(' ');
    const algorithm = space === -1 ? authorization : authorization.slice(0, space);
    if (algorithm !== ALGORITHM) {
      return new S3Refusal(
        400,
        'InvalidRequest',
        `The authorization mechanism you have provided is not supported. Please use ${ALGORITHM}.`,
      );
    }
    const components = new Map<string, string>();
    for (const part of authorization.slice(space + 1).split(',')) {
      const eq = part.indexOf('=');
      if (eq === -1) return malformed('the authorization component is malformed.');
      components.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
    }
    const credentialText = components.get('Credential');
    const signedHeadersText = components.get('SignedHeaders');
    const providedSignature = components.get('Signature');
    if (credentialText === undefined || signedHeadersText === undefined || providedSignature === undefined) {
      return malformed('the authorization header requires three components: Credential, SignedHeaders, and Signature.');
    }
    const credential = parseCredential(credentialText);
    if (!credential) return malformed('the Credential is mal-formed; expecting "<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request".');
    const longDate = headerValue(req, 'x-amz-date');
    const signedAt = parseLongDate(longDate);
    if (longDate === undefined || signedAt === undefined)
      return new S3Refusal(403, 'AccessDenied', 'AWS authentication requires a valid Date or x-amz-date header');
    const scopeRefusal = checkScope(credential, longDate, malformed);
    if (scopeRefusal) return scopeRefusal;
    const now = Date.now();
    if (Math.abs(now - signedAt) > MAX_SKEW_MS) {
      return new S3Refusal(403, 'RequestTimeTooSkewed', 'The difference between the request time and the current time is too large.', {
        RequestTime: longDate,
        ServerTime: iso8601Seconds(now),
        MaxAllowedSkewMilliseconds: String(MAX_SKEW_MS),
      });
    }
    const payloadHash = headerValue(req, 'x-amz-content-sha256');
    if (payloadHash === undefined)
      return new S3Refusal(400, 'InvalidRequest', 'Missing required header for this request: x-amz-content-sha256');
    const signedHeaders = signedHeadersText.split(';');
    if (!signedHeaders.includes('host')) return signatureMismatch(credential.accessKeyId);

    const request = signable(req, path, query, signedHeaders);
    // The payload hash of the canonical request is the header's value as sent.
    request.headers['x-amz-content-sha256'] = payloadHash;
    const signed = await signer.sign(request, { signingDate: new Date(signedAt), signableHeaders: new Set(signedHeaders) });
    const expected = /Signature=([0-9a-f]+)$/.exec(String(signed.headers.authorization ?? ''))?.[1];
    if (expected === undefined || !constantTimeEqual(expected, providedSignature)) return signatureMismatch(credential.accessKeyId);
    return unsignedAmzHeaders(req, signedHeaders);
  }

  /** Which signature the request carries, checked; undefined when it is valid. */
  async function authenticate(req: IncomingMessage, path: string, query: Query): Promise<S3Refusal | undefined> {
    const authorization = headerValue(req, 'authorization');
    const queryV4 =
      query['X-Amz-Algorithm'] !== undefined || query['X-Amz-Signature'] !== undefined || query['X-Amz-Credential'] !== undefined;
    const queryV2 = query.Signature !== undefined || query.AWSAccessKeyId !== undefined;
    const mechanisms = [authorization !== undefined, queryV4, queryV2].filter(Boolean).length;
    if (mechanisms > 1) {
      return new S3Refusal(
        400,
        'InvalidArgument',
        'Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter, Signature query string parameter or the Authorization header should be specified',
        { ArgumentName: 'Authorization' },
      );
    }
    // The bucket is private: S3 answers an anonymous request with 403.
    if (mechanisms === 0) return new S3Refusal(403, 'AccessDenied', 'Access Denied');
    if (queryV2)
      return new S3Refusal(
        400,
        'InvalidRequest',
        `The authorization mechanism you have provided is not supported. Please use ${ALGORITHM}.`,
      );
    if (queryV4) return verifyPresigned(req, path, query);
    return verifyHeaderSigned(req, path, query, authorization!);
  }

  function refuse(req: IncomingMessage, res: ServerResponse, refusal: S3Refusal, bodyUnread: boolean): void {
    const requestId = randomBytes(8).toString('hex').toUpperCase();
    const hostId = randomBytes(32).toString('base64');
    const details = Object.entries(refusal.details)
      .map(([name, value]) => `<${name}>${xmlEscape(value)}</${name}>`)
      .join('');
    const xml = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${refusal.code}</Code><Message>${xmlEscape(refusal.message)}</Message>${details}<RequestId>${requestId}</RequestId><HostId>${hostId}</HostId></Error>`;
    const headers: Record<string, string | number> = {
      'x-amz-request-id': requestId,
      'x-amz-id-2': hostId,
      'Content-Type': 'application/xml',
    };
    // A client waiting for 100 Continue will never send its body: the connection cannot be reused.
    if (bodyUnread) headers.Connection = 'close';
    if (req.method === 'HEAD') {
      res.writeHead(refusal.status, headers).end();
      return;
    }
    res.writeHead(refusal.status, { ...headers, 'Content-Length': Buffer.byteLength(xml) }).end(xml);
  }

  /**
   * Answers a refusal once the request body has been read and discarded, so that a client still
   * uploading receives the answer rather than a reset connection (S3 would answer as early and
   * close; clients handle that less predictably).
   */
  function refuseAfterBody(req: IncomingMessage, res: ServerResponse, refusal: S3Refusal, expectsContinue: boolean): void {
    if (expectsContinue || req.readableEnded) {
      refuse(req, res, refusal, expectsContinue);
      return;
    }
    req.on('end', () => refuse(req, res, refusal, false));
    req.on('error', () => res.destroy());
    req.resume();
  }

  function forwardedHeaders(headers: IncomingHttpHeaders, drop: readonly string[] = []): IncomingHttpHeaders {
    const out: IncomingHttpHeaders = {};
    for (const [name, value] of Object.entries(headers)) {
      if (!NOT_FORWARDED.has(name) && !drop.includes(name)) out[name] = value;
    }
    return out;
  }

  /** Streams the request to s3rver and its answer back; resolves once s3rver has answered. */
  function forward(req: IncomingMessage, res: ServerResponse, headers: IncomingHttpHeaders, expectsContinue: boolean): Promise<void> {
    return new Promise((resolveForward) => {
      const upstream = httpRequest(
        { host: options.upstream.host, port: options.upstream.port, method: req.method, path: req.url, headers, agent },
        (upstreamRes) => {
          const responseHeaders = { ...upstreamRes.headers };
          delete responseHeaders.connection;
          delete responseHeaders['keep-alive'];
          res.writeHead(upstreamRes.statusCode ?? 502, responseHeaders);
          upstreamRes.pipe(res);
          resolveForward();
        },
      );
      upstream.on('error', () => {
        if (!res.headersSent)
          refuse(req, res, new S3Refusal(500, 'InternalError', 'We encountered an internal error. Please try again.'), !req.readableEnded);
        else res.destroy();
        resolveForward();
      });
      // A client that goes away mid-upload must not leave a partial object (or the key's lock) behind.
      req.on('close', () => {
        if (!req.complete) upstream.destroy();
      });
      res.on('close', () => {
        if (!res.writableFinished) upstream.destroy();
      });
      if (expectsContinue) res.writeContinue();
      req.pipe(upstream);
    });
  }

  /** True when the object exists in s3rver (asked directly, behind the gate). */
  function objectExists(path: string): Promise<boolean> {
    return new Promise((resolveExists, reject) => {
      const head = httpRequest({ host: options.upstream.host, port: options.upstream.port, method: 'HEAD', path, agent }, (headRes) => {
        headRes.resume();
        if (headRes.statusCode === 200) resolveExists(true);
        else if (headRes.statusCode === 404) resolveExists(false);
        else reject(new Error(`s3rver answered HEAD ${path} with ${headRes.statusCode}`));
      });
      head.on('error', reject);
      head.end();
    });
  }

  /** Runs `work` alone for this key: conditional PUTs to one key are serialised. */
  async function withKeyLock(key: string, work: () => Promise<void>): Promise<void> {
    const previous = keyLocks.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const tail = previous.then(() => mine);
    keyLocks.set(key, tail);
    await previous;
    try {
      await work();
    } finally {
      release();
      if (keyLocks.get(key) === tail) keyLocks.delete(key);
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse, expectsContinue: boolean): Promise<void> {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const query = parseRawQuery(q === -1 ? '' : url.slice(q + 1));
    if (!query) {
      const refusal = new S3Refusal(400, 'InvalidArgument', 'The query string is not validly URL-encoded.');
      return refuseAfterBody(req, res, refusal, expectsContinue);
    }

    const refusal = await authenticate(req, path, query);
    if (refusal) return refuseAfterBody(req, res, refusal, expectsContinue);

    const ifNoneMatch = headerValue(req, 'if-none-match');
    // `/bucket/key`: a PUT of an object (a PUT to the bucket itself creates the bucket).
    const isObjectPut = req.method === 'PUT' && /^\/[^/]+\/./.test(path) && headerValue(req, 'x-amz-copy-source') === undefined;
    if (!isObjectPut || ifNoneMatch === undefined) {
      await forward(req, res, forwardedHeaders(req.headers), expectsContinue);
      return;
    }
    if (ifNoneMatch.trim() !== '*') {
      return refuseAfterBody(
        req,
        res,
        new S3Refusal(501, 'NotImplemented', 'A header you provided implies functionality that is not implemented', {
          Header: 'If-None-Match',
        }),
        expectsContinue,
      );
    }
    let key: string;
    try {
      key = decodeURIComponent(path);
    } catch {
      return refuseAfterBody(req, res, new S3Refusal(400, 'InvalidURI', "Couldn't parse the specified URI."), expectsContinue);
    }
    await withKeyLock(key, async () => {
      let exists: boolean;
      try {
        exists = await objectExists(path);
      } catch {
        return refuseAfterBody(
          req,
          res,
          new S3Refusal(500, 'InternalError', 'We encountered an internal error. Please try again.'),
          expectsContinue,
        );
      }
      if (exists) {
        return refuseAfterBody(
          req,
          res,
          new S3Refusal(412, 'PreconditionFailed', 'At least one of the pre-conditions you specified did not hold', {
            Condition: 'If-None-Match',
          }),
          expectsContinue,
        );
      }
      // s3rver would ignore the condition; the lock is what makes it hold. Held until s3rver has
      // answered, i.e. the object is stored (or refused).
      await forward(req, res, forwardedHeaders(req.headers, ['if-none-match']), expectsContinue);
    });
  }

  const server: Server = createServer();
  const onRequest = (expectsContinue: boolean) => (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res, expectsContinue).catch(() => {
      if (!res.headersSent)
        refuse(req, res, new S3Refusal(500, 'InternalError', 'We encountered an internal error. Please try again.'), !req.readableEnded);
      else res.destroy();
    });
  };
  server.on('request', onRequest(false));
  // Answer a refusal before the client sends its body, as S3 does; 100 Continue only once it passes.
  server.on('checkContinue', onRequest(true));

  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen({ port: options.port, host: '127.0.0.1' }, () => {
      server.off('error', reject);
      resolveListen();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    close: () =>
      new Promise<void>((resolveClose) => {
        server.close(() => {
          agent.destroy();
          resolveClose();
        });
        server.closeAllConnections();
      }),
  };
}
