import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { config, type AppConfig } from '../config.js';
import { issueFileKey } from './file-key.js';
import { s3Client } from './s3-client.js';
import type { UploadRequest } from './upload-request.js';

/**
 * Issues an upload: a fresh fileKey under the caller's company prefix and a presigned S3 PUT for
 * it. Presigning is a local computation (no network call), so issuing an upload writes nothing:
 * an unused upload leaves no trace, and the object appears only when the partner PUTs it.
 *
 * What the URL binds (all covered by the signature, so the partner cannot change them):
 * - Content-Type and Content-Length: signed headers; the PUT must send exactly these values.
 * - Object metadata (`x-amz-meta-original-filename`, `-company-id`, `-uploaded-by-key`): the
 *   presigner moves `x-amz-*` headers into the query string, so they travel in the URL and the
 *   partner sends no extra header. S3 stores them with the object.
 * - The bucket, the key, the method, the expiry (X-Amz-Expires).
 * No checksum parameter is added (client built with requestChecksumCalculation WHEN_REQUIRED).
 */
export interface UploadCaller {
  companyId: string;
  keyId: string;
}

export interface UploadTicket {
  fileKey: string;
  uploadUrl: string;
  method: 'PUT';
  /** Exactly the headers the PUT must send (both are signed). */
  headers: { 'Content-Type': string; 'Content-Length': string };
  expiresAt: string;
}

export interface UploadServiceOptions {
  client: S3Client;
  bucketName: string;
  ttlSeconds: number;
  now?: () => Date;
  /** For tests: the random part of the fileKey. */
  newFileId?: () => string;
}

/** The headers S3 must see signed, beyond `host` (always signed). */
export const SIGNED_UPLOAD_HEADERS: ReadonlySet<string> = new Set(['content-type', 'content-length']);

/** S3 keeps at most 2 KB of user metadata per object; the name gets a bounded share of it. */
export const MAX_ENCODED_FILE_NAME_LENGTH = 1024;

/**
 * The partner's file name as an ASCII metadata value: Unicode NFC, then percent-encoded as by
 * encodeURIComponent (decode with decodeURIComponent), cut at a whole character when longer
 * than MAX_ENCODED_FILE_NAME_LENGTH.
 */
export function encodeOriginalFileName(fileName: string): string {
  let out = '';
  for (const char of fileName.normalize('NFC')) {
    const encoded = encodeURIComponent(char);
    if (out.length + encoded.length > MAX_ENCODED_FILE_NAME_LENGTH) break;
    out += encoded;
  }
  return out;
}

export class UploadService {
  private readonly now: () => Date;
  private readonly newFileId: (() => string) | undefined;

  constructor(private readonly options: UploadServiceOptions) {
    this.now = options.now ?? (() => new Date());
    this.newFileId = options.newFileId;
  }

  async issue(request: UploadRequest, caller: UploadCaller): Promise<UploadTicket> {
    const fileKey = this.newFileId ? issueFileKey(caller.companyId, request.contentType, this.newFileId()) : issueFileKey(caller.companyId, request.contentType);
    // SigV4 dates have whole seconds; sign with the truncated time so expiresAt is exact.
    const signedAt = new Date(Math.floor(this.now().getTime() / 1000) * 1000);
    const command = new PutObjectCommand({
      Bucket: this.options.bucketName,
      Key: fileKey,
      ContentType: request.contentType,
      ContentLength: request.contentLength,
      Metadata: {
        'original-filename': encodeOriginalFileName(request.fileName),
        'company-id': caller.companyId,
        'uploaded-by-key': caller.keyId,
      },
    });
    const uploadUrl = await getSignedUrl(this.options.client, command, {
      expiresIn: this.options.ttlSeconds,
      signingDate: signedAt,
      signableHeaders: new Set(SIGNED_UPLOAD_HEADERS),
    });
    return {
      fileKey,
      uploadUrl,
      method: 'PUT',
      headers: { 'Content-Type': request.contentType, 'Content-Length': String(request.contentLength) },
      expiresAt: new Date(signedAt.getTime() + this.options.ttlSeconds * 1000).toISOString(),
    };
  }
}

/** The service of the running process: the shared S3 client and the configured bucket and TTL. */
export function defaultUploadService(cfg: AppConfig = config()): UploadService {
  return new UploadService({ client: s3Client(cfg), bucketName: cfg.bucketName, ttlSeconds: cfg.uploadUrlTtlSeconds });
}
