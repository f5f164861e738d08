import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { S3Event } from 'aws-lambda';
import { DeleteObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { freePort, startLocalS3, type RunningS3 } from '../../infra/local/stores.js';
import { LOCAL_DEFAULTS } from '../../infra/local/local-ports.js';
import { LOCAL_S3_CREDENTIALS } from '../../lib/adapters/s3/s3-client.js';
import { comparableSequencer } from '../../lib/uploads/object-sequencer.js';

/**
 * The local S3's object events carry what S3's do: a sequencer that grows with each event of a key,
 * even for events in the same millisecond (the record-upload function drops an event that is not
 * newer than the record, so equal sequencers would lose the later event).
 */
describe('the local S3’s object events', () => {
  let s3: RunningS3;
  let directory: string;
  const events: S3Event[] = [];
  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'pca-s3-events-'));
    s3 = await startLocalS3(await freePort(), directory, LOCAL_DEFAULTS.bucketName, async (event) => {
      events.push(event);
    });
  });
  afterAll(async () => {
    await s3.stop();
    rmSync(directory, { recursive: true, force: true });
  });

  it('number a PUT, a DELETE and a PUT again of one key in increasing order, even within one millisecond', async () => {
    const client = new S3Client({
      endpoint: s3.endpoint,
      region: LOCAL_DEFAULTS.region,
      forcePathStyle: true,
      credentials: LOCAL_S3_CREDENTIALS,
    });
    const Key = 'invoices/cmp_AAAAAAAAAAAAAAAA/sequenced.pdf';
    // The clock stands still, as it does for requests that fall in one millisecond.
    const frozen = Date.now();
    const clock = jest.spyOn(Date, 'now').mockReturnValue(frozen);
    try {
      await client.send(new PutObjectCommand({ Bucket: LOCAL_DEFAULTS.bucketName, Key, Body: 'one' }));
      await client.send(new DeleteObjectCommand({ Bucket: LOCAL_DEFAULTS.bucketName, Key }));
      await client.send(new PutObjectCommand({ Bucket: LOCAL_DEFAULTS.bucketName, Key, Body: 'two' }));
      for (let wait = 0; wait < 100 && events.length < 3; wait++) await new Promise((r) => setTimeout(r, 10));
    } finally {
      clock.mockRestore();
      client.destroy();
    }
    const records = events.flatMap((e) => e.Records);
    expect(records.map((r) => r.eventName)).toEqual(['ObjectCreated:Put', 'ObjectRemoved:Delete', 'ObjectCreated:Put']);
    const sequencers = records.map((r) => comparableSequencer(r.s3.object.sequencer));
    expect(sequencers.every((s) => s !== undefined)).toBe(true);
    expect([...sequencers].sort()).toEqual(sequencers);
    expect(new Set(sequencers).size).toBe(3);
  });
});
