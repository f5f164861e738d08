import { HeadObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { InvoiceFiles } from '../../cases/ports.js';

/**
 * Whether an invoice was uploaded under a fileKey (batch creation's FILE_NOT_UPLOADED rule).
 * Callers validate the key first (`validateFileKey` in lib/uploads/file-key.ts); this only asks S3.
 */

export interface S3InvoiceFileStoreOptions {
  /**
   * Read a 403 as "absent". The deployed function may HEAD objects (s3:GetObject) but not list
   * the bucket, and without s3:ListBucket S3 answers a HEAD of a missing key with 403, not 404
   * (see infra/grants.ts). Default true. A HEAD response has no body, so S3 cannot tell us more.
   */
  forbiddenMeansAbsent?: boolean;
}

interface S3ErrorShape {
  name?: string;
  $metadata?: { httpStatusCode?: number };
}

/** HeadObject-backed store: 404 / NotFound / NoSuchKey → false, other failures are thrown. */
export class S3InvoiceFileStore implements InvoiceFiles {
  private readonly forbiddenMeansAbsent: boolean;

  constructor(
    private readonly client: S3Client,
    private readonly bucketName: string,
    options: S3InvoiceFileStoreOptions = {},
  ) {
    this.forbiddenMeansAbsent = options.forbiddenMeansAbsent ?? true;
  }

  async exists(fileKey: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucketName, Key: fileKey }));
      return true;
    } catch (error) {
      const e = error as S3ErrorShape;
      const status = e.$metadata?.httpStatusCode;
      if (status === 404 || e.name === 'NotFound' || e.name === 'NoSuchKey') return false;
      if (status === 403 && this.forbiddenMeansAbsent) return false;
      throw error;
    }
  }
}
