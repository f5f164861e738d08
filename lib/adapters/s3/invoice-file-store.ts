import { HeadObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { InvoiceFiles } from '../../cases/ports.js';
import type { Deadline } from '../../deadline.js';
import { withRetries } from '../retry.js';

interface S3ErrorShape {
  name?: string;
  $metadata?: { httpStatusCode?: number };
}

/**
 * Whether an invoice was uploaded under a fileKey (batch creation's FILE_NOT_UPLOADED rule).
 * Callers validate the key first (`validateFileKey` in lib/uploads/file-key.ts); this only asks S3.
 *
 * HeadObject-backed store: only S3's 404 (NotFound / NoSuchKey) means "not uploaded". The function
 * holds s3:ListBucket on the invoice prefix (infra/stack/grants.ts), without which S3 would answer a
 * HEAD of a missing key with 403; so a 403 here is a permissions, KMS or policy failure, and is
 * thrown like any other failure (the case becomes TEMPORARY_FAILURE, never FILE_NOT_UPLOADED).
 */
export class S3InvoiceFileStore implements Pick<InvoiceFiles, 'exists'> {
  constructor(
    private readonly client: S3Client,
    private readonly bucketName: string,
  ) {}

  async exists(fileKey: string, deadline?: Deadline): Promise<boolean> {
    try {
      const command = new HeadObjectCommand({ Bucket: this.bucketName, Key: fileKey });
      await withRetries((options) => this.client.send(command, options), deadline);
      return true;
    } catch (error) {
      const e = error as S3ErrorShape;
      const status = e.$metadata?.httpStatusCode;
      if (status === 404 || e.name === 'NotFound' || e.name === 'NoSuchKey') return false;
      throw error;
    }
  }
}
