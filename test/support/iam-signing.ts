import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';
import type { LocalIamCredential } from '../../infra/local/execute-api-signature.js';

/**
 * A request to an internal route signed as the dashboard signs it: SigV4 with the SDK's signer,
 * service `execute-api`. `signedBody` signs another body than the one sent, `signingDate` another
 * time than now, `secretAccessKey` another secret: each is how a forged or replayed request looks.
 */
export interface SignOptions {
  signingDate?: Date;
  signedBody?: string;
  secretAccessKey?: string;
  region?: string;
  /** Send and sign `x-amz-content-sha256` (the SDK's default); false signs the body's hash without the header. */
  payloadHashHeader?: boolean;
}

export async function signedHeaders(
  url: string,
  method: string,
  body: string,
  credential: Pick<LocalIamCredential, 'accessKeyId' | 'secretAccessKey'>,
  options: SignOptions = {},
): Promise<Record<string, string>> {
  const target = new URL(url);
  const signer = new SignatureV4({
    credentials: { accessKeyId: credential.accessKeyId, secretAccessKey: options.secretAccessKey ?? credential.secretAccessKey },
    region: options.region ?? 'eu-west-2',
    service: 'execute-api',
    sha256: Sha256,
    applyChecksum: options.payloadHashHeader ?? true,
  });
  const signed = await signer.sign(
    {
      method,
      protocol: target.protocol,
      hostname: target.hostname,
      port: Number(target.port) || undefined,
      path: target.pathname,
      query: Object.fromEntries(target.searchParams),
      headers: { host: target.host, 'content-type': 'application/json' },
      body: options.signedBody ?? body,
    },
    { signingDate: options.signingDate ?? new Date() },
  );
  const headers = { ...(signed.headers as Record<string, string>) };
  delete headers.host; // fetch sends its own (the same value)
  return headers;
}
