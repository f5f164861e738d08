import type { S3Event } from 'aws-lambda';
import { buildRecordUploadHandler, s3ObjectEvents } from '../../../functions/record-upload.js';
import { issueFileKey } from '../../../lib/uploads/file-key.js';
import { AFTER_EVERY_SEQUENCER, comparableSequencer } from '../../../lib/uploads/object-sequencer.js';
import type { RecordedRemoval, RecordedUpload, UploadRecords } from '../../../lib/uploads/ports.js';

/** The use-case tier's stand-in: the latest event per key, written only when newer (as the table's condition does). */
class Records implements UploadRecords {
  readonly kept = new Map<string, (RecordedUpload & { state: 'present' }) | (RecordedRemoval & { state: 'removed' })>();
  async record(upload: RecordedUpload): Promise<boolean> {
    return this.putIfNewer({ ...upload, state: 'present' });
  }
  async recordRemoval(removal: RecordedRemoval): Promise<boolean> {
    return this.putIfNewer({ ...removal, state: 'removed' });
  }
  private putIfNewer(item: (RecordedUpload & { state: 'present' }) | (RecordedRemoval & { state: 'removed' })): boolean {
    const held = this.kept.get(item.fileKey);
    if (held && held.sequencer >= item.sequencer) return false;
    this.kept.set(item.fileKey, item);
    return true;
  }
  present(): string[] {
    return [...this.kept.values()].filter((r) => r.state === 'present').map((r) => r.fileKey);
  }
}

const COMPANY = 'cmp_AAAAAAAAAAAAAAAA';
type EventSpec = { eventName: string; key: string; size?: number; sequencer?: string };
const s3Event = (...records: EventSpec[]): S3Event =>
  ({
    Records: records.map(({ eventName, key, size, sequencer }) => ({
      eventName,
      eventTime: '2026-03-01T12:00:00.000Z',
      s3: {
        bucket: { name: 'invoices' },
        object: { key, ...(size === undefined ? {} : { size }), ...(sequencer === undefined ? {} : { sequencer }) },
      },
    })),
  }) as unknown as S3Event;

describe('recording uploads from the bucket’s events', () => {
  it('records an invoice S3 reports created, under the company its key names, with the event’s place in the key’s history', async () => {
    const records = new Records();
    const fileKey = issueFileKey(COMPANY, 'application/pdf');
    await buildRecordUploadHandler(records)(
      s3Event({ eventName: 'ObjectCreated:Put', key: fileKey, size: 1234, sequencer: '0055AED6DCD90281E5' }),
    );
    expect(records.kept.get(fileKey)).toEqual({
      fileKey,
      companyId: COMPANY,
      size: 1234,
      uploadedAt: '2026-03-01T12:00:00.000Z',
      sequencer: comparableSequencer('0055AED6DCD90281E5'),
      state: 'present',
    });
  });

  it('marks an invoice that was deleted or expired as removed, so a case can no longer cite it on the record’s word', async () => {
    const records = new Records();
    const [deleted, expired] = [issueFileKey(COMPANY, 'application/pdf'), issueFileKey(COMPANY, 'image/png')];
    await buildRecordUploadHandler(records)(
      s3Event(
        { eventName: 'ObjectCreated:Put', key: deleted, size: 1, sequencer: 'A1' },
        { eventName: 'ObjectCreated:Put', key: expired, size: 1, sequencer: 'B1' },
      ),
    );
    await buildRecordUploadHandler(records)(
      s3Event(
        { eventName: 'ObjectRemoved:DeleteMarkerCreated', key: deleted, sequencer: 'A2' },
        { eventName: 'LifecycleExpiration:Delete', key: expired, sequencer: 'B2' },
      ),
    );
    expect(records.present()).toEqual([]);
    expect([...records.kept.values()].map((r) => r.state)).toEqual(['removed', 'removed']);
  });

  it('compares sequencers as S3 says: the shorter padded with zeros, so "FF" comes before "0100"', async () => {
    const records = new Records();
    const fileKey = issueFileKey(COMPANY, 'application/pdf');
    await buildRecordUploadHandler(records)(s3Event({ eventName: 'ObjectCreated:Put', key: fileKey, size: 1, sequencer: '0100' }));
    await buildRecordUploadHandler(records)(s3Event({ eventName: 'ObjectRemoved:Delete', key: fileKey, sequencer: 'FF' }));
    expect(records.present()).toEqual([fileKey]);
  });

  it('a removal S3 sent without a sequencer outranks every creation, so no late creation can revive the record', async () => {
    const records = new Records();
    const fileKey = issueFileKey(COMPANY, 'application/pdf');
    await buildRecordUploadHandler(records)(s3Event({ eventName: 'LifecycleExpiration:Delete', key: fileKey }));
    expect(records.kept.get(fileKey)).toMatchObject({ state: 'removed', sequencer: AFTER_EVERY_SEQUENCER });
    await buildRecordUploadHandler(records)(
      s3Event({ eventName: 'ObjectCreated:Put', key: fileKey, size: 1, sequencer: 'FFFFFFFFFFFFFFFFFFFFFFFF' }),
    );
    expect(records.present()).toEqual([]);
  });

  it('never records a creation without a sequencer (it could not be ordered against a removal): the file is asked of S3 instead', async () => {
    const records = new Records();
    const fileKey = issueFileKey(COMPANY, 'application/pdf');
    await buildRecordUploadHandler(records)(
      s3Event(
        { eventName: 'ObjectCreated:Put', key: fileKey, size: 1 },
        { eventName: 'ObjectCreated:Put', key: issueFileKey(COMPANY, 'image/png'), size: 1, sequencer: 'xyz' },
      ),
    );
    expect(records.kept.size).toBe(0);
  });

  it('never records a key this service could not have issued (the record must not vouch for it)', async () => {
    const records = new Records();
    const valid = issueFileKey(COMPANY, 'application/pdf');
    for (const key of ['invoices/../secret.pdf', `${valid}x`, 'other/thing.pdf', valid.replace('invoices/', 'INVOICES/')]) {
      await buildRecordUploadHandler(records)(s3Event({ eventName: 'ObjectCreated:Put', key, size: 1, sequencer: '01' }));
    }
    expect(records.kept.size).toBe(0);
  });

  it('decodes the key as S3 encodes it in events, and keeps the sequencer', () => {
    expect(
      s3ObjectEvents(s3Event({ eventName: 'ObjectCreated:Put', key: 'invoices/a%2Fb+c.pdf', size: 3, sequencer: '0A' }))[0],
    ).toMatchObject({
      key: 'invoices/a/b c.pdf',
      size: 3,
      sequencer: '0A',
    });
  });

  it('fails the event when a record cannot be written, so S3 delivers it again', async () => {
    const failing: UploadRecords = { record: () => Promise.reject(new Error('throttled')), recordRemoval: () => Promise.resolve(true) };
    const event = s3Event({ eventName: 'ObjectCreated:Put', key: issueFileKey(COMPANY, 'application/pdf'), size: 1, sequencer: '01' });
    await expect(buildRecordUploadHandler(failing)(event)).rejects.toThrow('throttled');
  });
});
