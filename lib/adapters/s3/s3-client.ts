import { S3Client } from '@aws-sdk/client-s3';
import type { AppConfig } from '../../runtime/config.js';
import { tracer } from '../../runtime/tracer.js';
import { createHttpHandler, withoutSdkLogger } from '../dynamodb/dynamo-client.js';

/**
 * The S3 client, one per process. Checksums only when an operation requires them
 * (`WHEN_REQUIRED`): with the SDK default (`WHEN_SUPPORTED`) a presigned PUT would carry the
 * CRC32 of an empty body and S3 would refuse the partner's real upload.
 *
 * Locally (S3_ENDPOINT set) it talks path-style to s3rver with s3rver's built-in dummy access key,
 * the only one s3rver accepts (it does not verify signatures, only that the key id exists).
 */
export const LOCAL_S3_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export function createS3Client(cfg: Pick<AppConfig, 'region' | 's3Endpoint'>): S3Client {
  return tracer.captureAWSv3Client(
    withoutSdkLogger(
      new S3Client({
        region: cfg.region,
        requestHandler: createHttpHandler(),
        // Retries are the retry layer's (lib/adapters/retry.ts), within the request's deadline.
        maxAttempts: 1,
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
        ...(cfg.s3Endpoint ? { endpoint: cfg.s3Endpoint, forcePathStyle: true, credentials: LOCAL_S3_CREDENTIALS } : {}),
      }),
    ),
  );
}

let shared: S3Client | undefined;

/** One S3Client per process, created on first use and reused across invocations. */
export function s3Client(cfg: Pick<AppConfig, 'region' | 's3Endpoint'>): S3Client {
  shared ??= createS3Client(cfg);
  return shared;
}
