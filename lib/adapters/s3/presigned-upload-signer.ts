import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { UploadToSign, UploadUrlSigner } from '../../uploads/ports.js';

/** The headers S3 must see signed, beyond `host` (always signed). */
export const SIGNED_UPLOAD_HEADERS: ReadonlySet<string> = new Set(['content-type', 'content-length', 'if-none-match']);

/**
 * Presigned S3 PUTs (SigV4, query-string form). Content-Type, Content-Length and
 * `If-None-Match: *` are signed headers, so the PUT must send exactly these values; the presigner moves `x-amz-meta-*` into the
 * query string, so the metadata travels in the URL. No checksum parameter is added: the client is
 * built with requestChecksumCalculation WHEN_REQUIRED (lib/adapters/s3/s3-client.ts).
 */
export class PresignedUploadSigner implements UploadUrlSigner {
  constructor(
    private readonly client: S3Client,
    private readonly bucketName: string,
  ) {}

  sign(upload: UploadToSign): Promise<string> {
    const command = new PutObjectCommand({
      Bucket: this.bucketName,
      Key: upload.fileKey,
      ContentType: upload.contentType,
      ContentLength: upload.contentLength,
      // S3 conditional write: the PUT succeeds only if no object exists under the key (412 otherwise).
      IfNoneMatch: '*',
      Metadata: upload.metadata,
    });
    return getSignedUrl(this.client, command, {
      expiresIn: upload.expiresInSeconds,
      signingDate: upload.signedAt,
      signableHeaders: new Set(SIGNED_UPLOAD_HEADERS),
    });
  }
}
