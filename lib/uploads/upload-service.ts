import type { Mode } from '../mode.js';
import { issueFileKey } from './file-key.js';
import type { UploadUrlSigner } from './ports.js';
import type { UploadRequest } from './upload-request.js';
import type { UploadTicket } from './upload-ticket.js';

/**
 * Issues an upload: a fresh fileKey under the caller's company prefix and a presigned PUT for it.
 * Presigning is a local computation (no network call), so issuing an upload writes nothing: an
 * unused upload leaves no trace, and the object appears only when the partner PUTs it.
 *
 * What the URL binds (all covered by the signature, so the partner cannot change them): the
 * Content-Type and Content-Length the PUT must send, `If-None-Match: *` (the object is created
 * once: the URL cannot overwrite it, product rules "Availability and deadlines"), the object
 * metadata (original file name, company, key), the bucket, the key, the method and the expiry.
 */
export interface UploadCaller {
  companyId: string;
  keyId: string;
  /** A test key's uploads go under the test prefix, and only its test cases may cite them. */
  mode: Mode;
}

export interface UploadServiceOptions {
  signer: UploadUrlSigner;
  ttlSeconds: number;
  now?: () => Date;
  /** For tests: the random part of the fileKey. */
  newFileId?: () => string;
}

/** Object stores keep at most 2 KB of user metadata per object; the name gets a bounded share of it. */
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

  constructor(private readonly options: UploadServiceOptions) {
    this.now = options.now ?? (() => new Date());
  }

  async issue(request: UploadRequest, caller: UploadCaller): Promise<UploadTicket> {
    const fileKey = issueFileKey(
      caller.companyId,
      request.contentType,
      this.options.newFileId ? this.options.newFileId() : undefined,
      caller.mode,
    );
    // SigV4 dates have whole seconds; sign with the truncated time so expiresAt is exact.
    const signedAt = new Date(Math.floor(this.now().getTime() / 1000) * 1000);
    const uploadUrl = await this.options.signer.sign({
      fileKey,
      contentType: request.contentType,
      contentLength: request.contentLength,
      metadata: {
        'original-filename': encodeOriginalFileName(request.fileName),
        'company-id': caller.companyId,
        'uploaded-by-key': caller.keyId,
      },
      signedAt,
      expiresInSeconds: this.options.ttlSeconds,
    });
    return {
      fileKey,
      uploadUrl,
      method: 'PUT',
      headers: { 'Content-Type': request.contentType, 'Content-Length': String(request.contentLength), 'If-None-Match': '*' },
      expiresAt: new Date(signedAt.getTime() + this.options.ttlSeconds * 1000).toISOString(),
    };
  }
}
