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

/** An object S3 reported under an issued fileKey. */
export interface RecordedUpload {
  fileKey: string;
  companyId: string;
  size: number;
  /** ISO 8601, when S3 reported it. */
  uploadedAt: string;
}

/**
 * Where the uploads S3 reports are kept (implemented in lib/adapters/dynamodb), so batch
 * creation can confirm an invoice file without asking S3 for each one.
 */
export interface UploadRecords {
  record(upload: RecordedUpload): Promise<void>;
  /** The object is gone (deleted or expired): a case may no longer cite it on the record's word. */
  forget(fileKey: string): Promise<void>;
}
