import { DeleteObjectsCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import type { TestModeUploadStore } from '../../accounts/ports.js';
import { testUploadsPrefix } from '../../uploads/file-key.js';
import { withRetries } from '../retry.js';

/**
 * `company clear-test-data`, upload part: lists the company's test prefix
 * (`test-invoices/<companyId>/`, lib/uploads/file-key.ts) and deletes what it holds, 1,000 keys
 * per request. Live uploads lie under another top segment and are never listed. In a versioned
 * bucket the deletes leave delete markers; the earlier versions go with the bucket's
 * noncurrent-version expiry.
 */
export class S3TestModeUploadStore implements TestModeUploadStore {
  constructor(
    private readonly client: S3Client,
    private readonly bucketName: string,
  ) {}

  async clearTestUploads(companyId: string): Promise<number> {
    const prefix = testUploadsPrefix(companyId);
    let deleted = 0;
    let token: string | undefined;
    do {
      const list = new ListObjectsV2Command({ Bucket: this.bucketName, Prefix: prefix, ...(token ? { ContinuationToken: token } : {}) });
      const page = await withRetries((options) => this.client.send(list, options));
      const objects = (page.Contents ?? [])
        .map((o) => o.Key)
        .filter((key): key is string => typeof key === 'string' && key.startsWith(prefix));
      if (objects.length > 0) {
        const remove = new DeleteObjectsCommand({
          Bucket: this.bucketName,
          Delete: { Objects: objects.map((Key) => ({ Key })), Quiet: true },
        });
        const out = await withRetries((options) => this.client.send(remove, options));
        if (out.Errors && out.Errors.length > 0)
          throw new Error(`${out.Errors.length} test uploads were not deleted (${out.Errors[0]?.Code ?? 'error'}); run the command again`);
        deleted += objects.length;
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return deleted;
  }
}
