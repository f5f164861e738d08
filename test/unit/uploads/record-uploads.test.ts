import type { S3Event } from 'aws-lambda';
import { buildRecordUploadHandler, s3ObjectEvents } from '../../../functions/record-upload.js';
import { issueFileKey } from '../../../lib/uploads/file-key.js';
import type { RecordedUpload, UploadRecords } from '../../../lib/uploads/ports.js';

class Records implements UploadRecords {
  readonly kept = new Map<string, RecordedUpload>();
  async record(upload: RecordedUpload): Promise<void> {
    this.kept.set(upload.fileKey, upload);
  }
  async forget(fileKey: string): Promise<void> {
    this.kept.delete(fileKey);
  }
}

const COMPANY = 'cmp_AAAAAAAAAAAAAAAA';
const s3Event = (...records: { eventName: string; key: string; size?: number }[]): S3Event =>
  ({
    Records: records.map(({ eventName, key, size }) => ({
      eventName,
      eventTime: '2026-03-01T12:00:00.000Z',
      s3: { bucket: { name: 'invoices' }, object: { key, ...(size === undefined ? {} : { size }) } },
    })),
  }) as unknown as S3Event;

describe('recording uploads from the bucket’s events', () => {
  it('records an invoice S3 reports created, under the company its key names', async () => {
    const records = new Records();
    const fileKey = issueFileKey(COMPANY, 'application/pdf');
    await buildRecordUploadHandler(records)(s3Event({ eventName: 'ObjectCreated:Put', key: fileKey, size: 1234 }));
    expect(records.kept.get(fileKey)).toEqual({ fileKey, companyId: COMPANY, size: 1234, uploadedAt: '2026-03-01T12:00:00.000Z' });
  });

  it('forgets an invoice that was deleted or expired, so a case can no longer cite it on the record’s word', async () => {
    const records = new Records();
    const [deleted, expired] = [issueFileKey(COMPANY, 'application/pdf'), issueFileKey(COMPANY, 'image/png')];
    await buildRecordUploadHandler(records)(s3Event({ eventName: 'ObjectCreated:Put', key: deleted, size: 1 }, { eventName: 'ObjectCreated:Put', key: expired, size: 1 }));
    await buildRecordUploadHandler(records)(s3Event({ eventName: 'ObjectRemoved:Delete', key: deleted }, { eventName: 'LifecycleExpiration:Delete', key: expired }));
    expect(records.kept.size).toBe(0);
  });

  it('never records a key this service could not have issued (the record must not vouch for it)', async () => {
    const records = new Records();
    const valid = issueFileKey(COMPANY, 'application/pdf');
    for (const key of ['invoices/../secret.pdf', `${valid}x`, 'other/thing.pdf', valid.replace('invoices/', 'INVOICES/')]) {
      await buildRecordUploadHandler(records)(s3Event({ eventName: 'ObjectCreated:Put', key, size: 1 }));
    }
    expect(records.kept.size).toBe(0);
  });

  it('decodes the key as S3 encodes it in events', () => {
    expect(s3ObjectEvents(s3Event({ eventName: 'ObjectCreated:Put', key: 'invoices/a%2Fb+c.pdf', size: 3 }))[0]).toMatchObject({ key: 'invoices/a/b c.pdf', size: 3 });
  });

  it('fails the event when a record cannot be written, so S3 delivers it again', async () => {
    const failing: UploadRecords = { record: () => Promise.reject(new Error('throttled')), forget: () => Promise.resolve() };
    await expect(buildRecordUploadHandler(failing)(s3Event({ eventName: 'ObjectCreated:Put', key: issueFileKey(COMPANY, 'application/pdf'), size: 1 }))).rejects.toThrow('throttled');
  });
});
