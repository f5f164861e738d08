import type { S3Event } from 'aws-lambda';
import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { buildRecordUploadHandler } from '../../functions/record-upload.js';
import { DynamoUploadRecords } from '../../lib/adapters/dynamodb/upload-records.js';
import { keys } from '../../lib/adapters/dynamodb/table-keys.js';
import { s3Client } from '../../lib/adapters/s3/s3-client.js';
import { config } from '../../lib/runtime/config.js';
import { issueFileKey } from '../../lib/uploads/file-key.js';
import { REMOVAL_REMEMBERED_DAYS } from '../../lib/uploads/record-uploads.js';
import { outcome, postCases, uploadInvoice, validCase } from '../support/cases.js';
import { ddb, newPartner } from '../support/fixtures.js';

/**
 * Upload records under S3's delivery: at least once and in any order. The record-upload function's
 * code against DynamoDB Local, fed events in every order; and a whole invoice's life through the
 * local S3, with a creation event delivered again after the object was deleted.
 */

const COMPANY = 'cmp_AAAAAAAAAAAAAAAA';
type Spec = { eventName: string; sequencer?: string };
const created = (sequencer: string): Spec => ({ eventName: 'ObjectCreated:Put', sequencer });
const removed = (sequencer: string): Spec => ({ eventName: 'ObjectRemoved:DeleteMarkerCreated', sequencer });

function s3Event(key: string, specs: Spec[]): S3Event {
  return {
    Records: specs.map(({ eventName, sequencer }) => ({
      eventName,
      eventTime: '2026-03-01T12:00:00.000Z',
      s3: { bucket: { name: 'invoices' }, object: { key, size: 10, ...(sequencer === undefined ? {} : { sequencer }) } },
    })),
  } as unknown as S3Event;
}

/** Every distinct order of the events (a repeated event is delivered as often as it is listed). */
function orders<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  const seen = new Set<string>();
  const out: T[][] = [];
  items.forEach((item, i) => {
    for (const rest of orders([...items.slice(0, i), ...items.slice(i + 1)])) {
      const order = [item, ...rest];
      const id = JSON.stringify(order);
      if (seen.has(id)) continue;
      seen.add(id);
      out.push(order);
    }
  });
  return out;
}

const records = () => new DynamoUploadRecords(ddb(), config().tableName);
const handle = () => buildRecordUploadHandler(records());

async function storedRecord(fileKey: string) {
  return (await ddb().send(new GetCommand({ TableName: config().tableName, Key: keys.upload(fileKey), ConsistentRead: true }))).Item;
}

describe('upload records under S3’s at-least-once, unordered delivery', () => {
  it.each([
    ['created then removed, each delivered twice', [created('0A1'), created('0A1'), removed('0A2'), removed('0A2')], false],
    ['created, removed, and uploaded again with a fresh URL', [created('0A1'), removed('0A2'), created('0A3')], true],
    ['sequencers of different lengths (S3 pads the shorter with zeros)', [created('FF'), removed('0100')], false],
  ])('%s: every delivery order ends at the latest event', async (_name, events, presentAtEnd) => {
    for (const order of orders(events as Spec[])) {
      const fileKey = issueFileKey(COMPANY, 'application/pdf');
      for (const event of order) await handle()(s3Event(fileKey, [event]));
      expect({ order, vouched: (await records().recorded([fileKey])).has(fileKey) }).toEqual({ order, vouched: presentAtEnd });
    }
  });

  it('events of one key delivered at once, in one invocation, end at the latest event too', async () => {
    for (const order of orders([created('0B1'), removed('0B2'), created('0B1'), removed('0B2')])) {
      const fileKey = issueFileKey(COMPANY, 'application/pdf');
      await handle()(s3Event(fileKey, order));
      expect((await records().recorded([fileKey])).has(fileKey)).toBe(false);
    }
  });

  it('a removal writes a tombstone with its sequencer that expires through the table’s TTL, instead of deleting the record', async () => {
    const fileKey = issueFileKey(COMPANY, 'application/pdf');
    const before = Math.floor(Date.now() / 1000);
    await handle()(s3Event(fileKey, [created('0C1')]));
    await handle()(s3Event(fileKey, [removed('0C2')]));
    const item = await storedRecord(fileKey);
    expect(item).toMatchObject({ state: 'removed', fileKey, companyId: COMPANY, sequencer: '0C2'.padStart(64, '0') });
    expect(item?.ttl).toBeGreaterThanOrEqual(before + REMOVAL_REMEMBERED_DAYS * 86_400);
    expect(item?.ttl).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + REMOVAL_REMEMBERED_DAYS * 86_400);
  });

  it('a record written before sequencers were kept vouches for nothing, and any event with a sequencer replaces it', async () => {
    const fileKey = issueFileKey(COMPANY, 'application/pdf');
    await ddb().send(
      new PutCommand({
        TableName: config().tableName,
        Item: { ...keys.upload(fileKey), type: 'UPLOAD', fileKey, companyId: COMPANY, size: 1, uploadedAt: '2025-01-01T00:00:00.000Z' },
      }),
    );
    expect((await records().recorded([fileKey])).has(fileKey)).toBe(false);
    await handle()(s3Event(fileKey, [removed('01')]));
    expect(await storedRecord(fileKey)).toMatchObject({ state: 'removed' });
  });
});

describe('a case citing an invoice that was deleted', () => {
  it('is refused as FILE_NOT_UPLOADED even when the upload’s creation event is delivered again after the deletion', async () => {
    const partner = await newPartner();
    const fileKey = await uploadInvoice(partner.apiKey);
    // The local S3 reports the PUT and the DELETE as S3 does, after answering them: wait for each.
    const until = async (vouched: boolean) => {
      for (let read = 0; read < 250 && (await records().recorded([fileKey])).has(fileKey) !== vouched; read++)
        await new Promise((r) => setTimeout(r, 20));
      return (await records().recorded([fileKey])).has(fileKey);
    };
    expect(await until(true)).toBe(true);
    const upload = await storedRecord(fileKey);
    await s3Client(config()).send(new DeleteObjectCommand({ Bucket: config().bucketName, Key: fileKey }));
    expect(await until(false)).toBe(false);

    // S3 delivers the upload's ObjectCreated again, late: it must not revive the record.
    await handle()(s3Event(fileKey, [{ eventName: 'ObjectCreated:Put', sequencer: upload?.sequencer as string | undefined }]));
    expect((await records().recorded([fileKey])).has(fileKey)).toBe(false);

    const res = await postCases(partner.apiKey, { cases: [validCase(fileKey)] });
    expect(outcome(res).created).toEqual([]);
    expect(outcome(res).rejected.map((r) => r.code)).toEqual(['FILE_NOT_UPLOADED']);
  });
});
