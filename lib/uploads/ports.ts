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

/** An object S3 reported created under an issued fileKey. */
export interface RecordedUpload {
  fileKey: string;
  companyId: string;
  size: number;
  /** ISO 8601, when S3 reported it. */
  uploadedAt: string;
  /** The event's place in the key's history: S3's sequencer in comparable form (object-sequencer.ts). */
  sequencer: string;
}

/** An object S3 reported removed (deleted, a delete marker placed, or expired) under an issued fileKey. */
export interface RecordedRemoval {
  fileKey: string;
  companyId: string;
  /** ISO 8601, when S3 reported it. */
  removedAt: string;
  /** As RecordedUpload's; AFTER_EVERY_SEQUENCER when S3 gave none. */
  sequencer: string;
}

/**
 * Where the uploads S3 reports are kept (implemented in lib/adapters/dynamodb), so batch
 * creation can confirm an invoice file without asking S3 for each one. Each write lands only
 * when it is newer (a greater sequencer) than what the key's record already holds, so events
 * delivered twice or out of order leave the record at the key's latest known state. Each answers
 * false when the record already held a newer (or the same) event and nothing was written.
 */
export interface UploadRecords {
  /** The object is present: the record vouches for it. */
  record(upload: RecordedUpload): Promise<boolean>;
  /**
   * The object is gone: the record becomes a tombstone ("removed as of this sequencer"), which
   * vouches for nothing and keeps a late creation event from reviving it, until it expires.
   */
  recordRemoval(removal: RecordedRemoval): Promise<boolean>;
}
