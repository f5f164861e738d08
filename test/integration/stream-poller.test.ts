import { DeleteTableCommand, DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { LOCAL_CREDENTIALS } from '../../lib/adapters/dynamodb/dynamo-client.js';
import { randomBase62 } from '../../lib/random-id.js';
import { startStreamPoller, type StreamPoller, type StreamPollerOptions } from '../../infra/local/stream-poller.js';
import { ensureTable } from '../../infra/local/stores.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * The local stand-in for Lambda's DynamoDB stream event source mapping (infra/local/stream-poller.ts)
 * on DynamoDB Local's stream, on a table of each test's own (so it reads only that test's records):
 * partial batch responses, the mapping's retries before a record is given up, and the function's
 * timeout, each as Lambda applies them.
 */
jest.setTimeout(30_000);

const endpoint = process.env.DYNAMODB_ENDPOINT!;
const region = process.env.AWS_REGION!;
const client = new DynamoDBClient({ endpoint, region, credentials: LOCAL_CREDENTIALS });
const tables: string[] = [];
const pollers: StreamPoller[] = [];

afterAll(async () => {
  await Promise.all(pollers.map((p) => p.stop()));
  await Promise.all(tables.map((TableName) => client.send(new DeleteTableCommand({ TableName })).catch(() => undefined)));
  client.destroy();
});

/** A table of the test's own with `count` items written, in order, `n` their number. */
async function tableWith(count: number): Promise<string> {
  const tableName = `stream-poller-${randomBase62(8)}`;
  tables.push(tableName);
  await ensureTable(endpoint, tableName);
  for (let n = 0; n < count; n++) {
    await client.send(
      new PutItemCommand({ TableName: tableName, Item: { pk: { S: `ITEM#${n}` }, sk: { S: 'ITEM' }, n: { N: String(n) } } }),
    );
  }
  return tableName;
}

const numberOf = (record: DynamoDBRecord) => Number(record.dynamodb?.NewImage?.n?.N);

async function poll(options: Omit<StreamPollerOptions, 'endpoint' | 'region'>): Promise<StreamPoller> {
  const poller = await startStreamPoller({ endpoint, region, idleMs: 10, ...options });
  pollers.push(poller);
  return poller;
}

describe('the local DynamoDB stream event source mapping', () => {
  it('retries a batch from the record the handler reported failed, the records before it done', async () => {
    const tableName = await tableWith(5);
    const calls: number[][] = [];
    let failedOnce = false;
    const poller = await poll({
      tableName,
      maxRetryAttempts: 3,
      handler: async (event: DynamoDBStreamEvent) => {
        calls.push(event.Records.map(numberOf));
        const third = event.Records.find((r) => numberOf(r) === 2);
        if (third && !failedOnce) {
          failedOnce = true;
          return { batchItemFailures: [{ itemIdentifier: third.dynamodb!.SequenceNumber! }] };
        }
        return { batchItemFailures: [] };
      },
    });
    await poller.drained();
    expect(calls).toEqual([
      [0, 1, 2, 3, 4],
      [2, 3, 4],
    ]);
  });

  it('gives a record up only after the mapping’s retries, then goes on with the records after it', async () => {
    const tableName = await tableWith(3);
    const calls: number[][] = [];
    const givenUp: number[] = [];
    const poller = await poll({
      tableName,
      maxRetryAttempts: 2,
      handler: async (event: DynamoDBStreamEvent) => {
        calls.push(event.Records.map(numberOf));
        const poison = event.Records.find((r) => numberOf(r) === 1);
        return { batchItemFailures: poison ? [{ itemIdentifier: poison.dynamodb!.SequenceNumber! }] : [] };
      },
      onFailure: (records) => givenUp.push(...records.map(numberOf)),
    });
    await poller.drained();
    // The first delivery and two retries of the poison record, then the record after it alone.
    expect(calls).toEqual([[0, 1, 2], [1, 2], [1, 2], [2]]);
    expect(givenUp).toEqual([1]);
  });

  it('hands over a table’s first records when another table was written after the mapping started and before them', async () => {
    const tableName = await tableWith(0);
    const calls: number[][] = [];
    const poller = await poll({
      tableName,
      handler: async (event: DynamoDBStreamEvent) => {
        calls.push(event.Records.map(numberOf));
        return { batchItemFailures: [] };
      },
    });
    // The mapping has read the empty shard (its iterator taken there) before anything is written.
    await poller.drained();
    await tableWith(3);
    for (let n = 0; n < 2; n++)
      await client.send(
        new PutItemCommand({ TableName: tableName, Item: { pk: { S: `ITEM#${n}` }, sk: { S: 'ITEM' }, n: { N: String(n) } } }),
      );
    // DynamoDB Local refuses that iterator from then on (TrimmedDataAccessException): read for ever, it
    // would hold back every record of the table.
    expect(await waitUntil(() => calls.flat().length >= 2, 10_000)).toBe(true);
    expect(calls.flat()).toEqual([0, 1]);
  });

  it('takes a batch still running at the function’s timeout as failed and hands it over again, as Lambda does', async () => {
    const tableName = await tableWith(2);
    const calls: number[][] = [];
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    await poll({
      tableName,
      maxRetryAttempts: 3,
      timeoutMs: 500,
      handler: async (event: DynamoDBStreamEvent) => {
        calls.push(event.Records.map(numberOf));
        // The first invocation hangs (a store that stopped answering) until the test lets it go.
        if (calls.length === 1) await released;
        return { batchItemFailures: [] };
      },
    });
    try {
      // Without the timeout the mapping would wait on the first invocation for ever.
      expect(await waitUntil(() => calls.length >= 2, 10_000)).toBe(true);
      expect(calls.slice(0, 2)).toEqual([
        [0, 1],
        [0, 1],
      ]);
    } finally {
      release();
    }
  });
});
