/** What issuing an upload needs: a signer of object-store PUT URLs (implemented in lib/adapters/s3). */
export interface UploadToSign {
  fileKey: string;
  contentType: string;
  contentLength: number;
  /** Stored with the object; travels in the signed URL, so the partner sends no extra header. */
  metadata: Record<string, string>;
  signedAt: Date;
  expiresInSeconds: number;
}

export interface UploadUrlSigner {
  /**
   * A URL that accepts one PUT of this object, with these headers and `If-None-Match: *` (it
   * creates the object only if none exists), until it expires. No I/O.
   */
  sign(upload: UploadToSign): Promise<string>;
}
