import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';
import { parseLongDate } from './parse-long-date.js';
import { parseRawQuery } from './parse-raw-query.js';

/**
 * What API Gateway does for a method with AuthorizationType AWS_IAM, for the local server
 * (`npm start`, the tests): the request must carry a SigV4 signature (service `execute-api`, the
 * local region) made with one of the local IAM credentials, over what actually arrived: method,
 * path, query, the signed headers' values and the SHA-256 of the body. The signature is recomputed
 * with the SDK's own signer and compared in constant time; the signing date must be within 15
 * minutes of now. The answer names the API Gateway response type a refusal gets
 * (infra/contract/problem-responses.ts), or the caller identity API Gateway would put in
 * `requestContext.identity`.
 *
 * IAM policy evaluation has no local stand-in: every local credential may invoke every internal
 * route. Not supported locally (refused): presigned query-string signatures, session tokens
 * (`x-amz-security-token`), SigV4a, and a signature dated by `Date` instead of `x-amz-date`.
 */
export interface LocalIamCredential {
  accessKeyId: string;
  secretAccessKey: string;
  /** The principal the credential stands for, as API Gateway reports it in `identity.userArn`. */
  userArn: string;
}

export const LOCAL_ACCOUNT_ID = '000000000000';

/**
 * A credential made for one `npm start` (or one test run): random, so a credential copied from
 * documentation or an old terminal never works against another start, and nothing secret is in
 * the repository. It is printed once by `npm start` and kept in `.local/` (mode 0600) for scripts.
 */
export function newLocalIamCredential(name = 'local-dashboard'): LocalIamCredential {
  return {
    accessKeyId: `AKIALOCAL${randomBytes(6).toString('hex').toUpperCase()}`,
    secretAccessKey: randomBytes(30).toString('base64url'),
    userArn: `arn:aws:iam::${LOCAL_ACCOUNT_ID}:user/${name}`,
  };
}

export interface SignedRequest {
  method: string;
  /** The path as it arrived (percent-encoded as sent). */
  path: string;
  /** The query as it arrived, without the `?`. */
  rawQuery: string;
  /** Header values by lower-case name, repeats in arrival order (Node's `headersDistinct`). */
  headers: Readonly<Record<string, readonly string[] | undefined>>;
  body: Buffer;
}

export type RefusalType = 'MISSING_AUTHENTICATION_TOKEN' | 'INVALID_SIGNATURE' | 'EXPIRED_TOKEN' | 'ACCESS_DENIED';

export type SignatureCheck =
  | { ok: true; identity: { userArn: string; accessKey: string; accountId: string; caller: string } }
  /** `reason` is for the local server's log line, as API Gateway's execution log says it. */
  | { ok: false; type: RefusalType; reason: string };

export const SIGNATURE_SERVICE = 'execute-api';
const ALGORITHM = 'AWS4-HMAC-SHA256';
const MAX_SKEW_MS = 15 * 60 * 1000;

function refuse(type: RefusalType, reason: string): SignatureCheck {
  return { ok: false, type, reason };
}

function constantTimeEqual(expected: string, provided: string): boolean {
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(provided, 'utf8');
  // Lengths are not secret (a SigV4 signature is always 64 hex digits); contents are compared in constant time.
  return a.length === b.length && timingSafeEqual(a, b);
}

function single(request: SignedRequest, name: string): string | undefined {
  const values = request.headers[name];
  return values === undefined ? undefined : values.join(',');
}

export async function verifyExecuteApiSignature(
  request: SignedRequest,
  options: { credentials: readonly LocalIamCredential[]; region: string; now?: number },
): Promise<SignatureCheck> {
  const authorizations = request.headers.authorization ?? [];
  const query = parseRawQuery(request.rawQuery);
  if (query === undefined) return refuse('INVALID_SIGNATURE', 'the query string is not validly URL-encoded');
  if (query['X-Amz-Signature'] !== undefined || query['X-Amz-Credential'] !== undefined)
    return refuse('INVALID_SIGNATURE', 'query-string (presigned) signatures are not supported by the local server');
  if (authorizations.length === 0) return refuse('MISSING_AUTHENTICATION_TOKEN', 'Missing Authentication Token');
  if (authorizations.length > 1) return refuse('INVALID_SIGNATURE', 'more than one Authorization header');
  const authorization = authorizations[0] as string;

  const space = authorization.indexOf(' ');
  if (space === -1 || authorization.slice(0, space) !== ALGORITHM)
    return refuse(
      'INVALID_SIGNATURE',
      `Authorization header requires the ${ALGORITHM} algorithm with Credential, SignedHeaders and Signature`,
    );
  const components = new Map<string, string>();
  for (const part of authorization.slice(space + 1).split(',')) {
    const eq = part.indexOf('=');
    if (eq === -1) return refuse('INVALID_SIGNATURE', `'${part.trim()}' not a valid key=value pair in the Authorization header`);
    components.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  const credentialText = components.get('Credential');
  const signedHeadersText = components.get('SignedHeaders');
  const provided = components.get('Signature');
  if (!credentialText || !signedHeadersText || !provided)
    return refuse('INVALID_SIGNATURE', "Authorization header requires 'Credential', 'SignedHeaders' and 'Signature' parameters");

  const scope = credentialText.split('/');
  if (scope.length !== 5)
    return refuse('INVALID_SIGNATURE', 'the Credential is malformed; expecting <access key>/YYYYMMDD/REGION/SERVICE/aws4_request');
  const [accessKeyId, shortDate, region, service, terminator] = scope as [string, string, string, string, string];
  const credential = options.credentials.find((c) => constantTimeEqual(c.accessKeyId, accessKeyId));
  if (!credential) return refuse('ACCESS_DENIED', 'The security token included in the request is invalid');
  if (single(request, 'x-amz-security-token') !== undefined)
    return refuse('ACCESS_DENIED', 'The security token included in the request is invalid (local credentials have no session token)');
  if (service !== SIGNATURE_SERVICE)
    return refuse('INVALID_SIGNATURE', `Credential should be scoped to correct service: '${SIGNATURE_SERVICE}'`);
  if (region !== options.region) return refuse('INVALID_SIGNATURE', `Credential should be scoped to a valid region, '${options.region}'`);
  if (terminator !== 'aws4_request')
    return refuse('INVALID_SIGNATURE', "Credential should be scoped with a valid terminator: 'aws4_request'");

  const longDate = single(request, 'x-amz-date');
  const signedAt = longDate === undefined ? undefined : parseLongDate(longDate);
  if (longDate === undefined || signedAt === undefined)
    return refuse('INVALID_SIGNATURE', "Authorization requires a valid 'X-Amz-Date' header (yyyyMMdd'T'HHmmss'Z')");
  if (shortDate !== longDate.slice(0, 8)) return refuse('INVALID_SIGNATURE', 'Credential should be scoped to the date of X-Amz-Date');
  const now = options.now ?? Date.now();
  if (Math.abs(now - signedAt) > MAX_SKEW_MS)
    return refuse(
      'INVALID_SIGNATURE',
      `Signature expired: ${longDate} is more than 15 minutes from the server's time ${new Date(now).toISOString()}`,
    );

  const signedHeaders = signedHeadersText.split(';');
  if (!signedHeaders.includes('host') || !signedHeaders.includes('x-amz-date'))
    return refuse('INVALID_SIGNATURE', "SignedHeaders must include 'host' and 'x-amz-date'");

  // The payload hash of the canonical request is the body's own: a signature made for another body
  // does not match. A client that sends the hash as a header must send the body's true one.
  const bodyHash = createHash('sha256').update(request.body).digest('hex');
  const declaredHash = single(request, 'x-amz-content-sha256');
  if (declaredHash !== undefined && declaredHash !== bodyHash)
    return refuse('INVALID_SIGNATURE', 'The provided x-amz-content-sha256 header does not match what was computed');

  const headers: Record<string, string> = {};
  for (const name of signedHeaders) {
    const value = single(request, name);
    // A signed header that did not arrive is left out: the recomputed signature then differs.
    if (value !== undefined) headers[name] = value;
  }
  const signer = new SignatureV4({
    credentials: { accessKeyId: credential.accessKeyId, secretAccessKey: credential.secretAccessKey },
    region: options.region,
    service: SIGNATURE_SERVICE,
    sha256: Sha256,
    // The signer must not add a payload-hash header the client did not sign.
    applyChecksum: false,
  });
  const signed = await signer.sign(
    {
      method: request.method,
      protocol: 'http:',
      hostname: (single(request, 'host') ?? '').replace(/:\d+$/, ''),
      path: request.path,
      query,
      headers,
      body: request.body,
    },
    { signingDate: new Date(signedAt), signableHeaders: new Set(signedHeaders) },
  );
  const expected = /Signature=([0-9a-f]+)$/.exec(String(signed.headers.authorization ?? ''))?.[1];
  if (expected === undefined || !constantTimeEqual(expected, provided))
    return refuse(
      'INVALID_SIGNATURE',
      'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.',
    );
  return {
    ok: true,
    identity: {
      userArn: credential.userArn,
      accessKey: credential.accessKeyId,
      accountId: LOCAL_ACCOUNT_ID,
      caller: credential.accessKeyId,
    },
  };
}
