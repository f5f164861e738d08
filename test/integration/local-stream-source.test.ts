import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { LOCAL_DEFAULTS } from '../../infra/local/local-ports.js';
import { ensureTable } from '../../infra/local/stores.js';
import { openStreamSource, startStreamPoller, type StreamPoller } from '../../infra/local/stream-poller.js';
import { randomBase62 } from '../../lib/random-id.js';
import { config } from '../../lib/runtime/config.js';
import { ddb } from '../support/fixtures.js';

/**
 * The local mappings on the table's stream share one reading of it (infra/local/stream-poller.ts
 * `openStreamSource`): each record is read from DynamoDB Local once, where every mapping read it, and
 * each mapping still gets every record from the oldest, at its own pace. Each test has a table of
 * its own, so its stream holds only what it wrote.
 */
const endpoint = config().dynamoEndpoint!;
const region = LOCAL_DEFAULTS.region;

async function freshTable(): Promise<string> {
  const tableName = `stream-source-${randomBase62(8)}`;
  await ensureTable(endpoint, tableName);
  return tableName;
}

async function put(tableName: string, ids: readonly string[]): Promise<void> {
  for (const id of ids) await ddb().send(new PutCommand({ TableName: tableName, Item: { pk: id, sk: 'ITEM' } }));
}

const idOf = (r: DynamoDBRecord) => r.dynamodb?.Keys?.pk?.S ?? '';

/** Counts the GetRecords requests and the records they answered (the poller reads GetRecords with fetch). */
function countingReads() {
  const original = globalThis.fetch;
  const counted = { requests: 0, records: 0 };
  const spy = jest.spyOn(globalThis, 'fetch').mockImplementation(async (input, init) => {
    const response = await original(input, init);
    const target = (init?.headers as Record<string, string> | undefined)?.['x-amz-target'];
    if (target === 'DynamoDBStreams_20120810.GetRecords') {
      counted.requests++;
      counted.records += ((await response.clone().json()) as { Records?: unknown[] }).Records?.length ?? 0;
    }
    return response;
  });
  return { counted, restore: () => spy.mockRestore() };
}

describe('the local table stream, read once for every mapping on it', () => {
  const pollers: StreamPoller[] = [];
  afterEach(async () => {
    await Promise.all(pollers.splice(0).map((p) => p.stop()));
  });

  it('two mappings on one reading each get every record from the oldest, and each record is read from the store once, not once a mapping', async () => {
    const tableName = await freshTable();
    const before = Array.from({ length: 30 }, (_, i) => `before-${i}`);
    await put(tableName, before);
    const source = await openStreamSource({ endpoint, region, tableName });
    const seen: Record<'a' | 'b', string[]> = { a: [], b: [] };
    const handler = (name: 'a' | 'b') => async (event: DynamoDBStreamEvent) => {
      seen[name].push(...event.Records.map(idOf));
    };
    const reads = countingReads();
    try {
      for (const name of ['a', 'b'] as const)
        pollers.push(await startStreamPoller({ endpoint, region, tableName, handler: handler(name), batchSize: 7, idleMs: 20, source }));
      source.open();
      const after = Array.from({ length: 20 }, (_, i) => `after-${i}`);
      await put(tableName, after);
      await Promise.all(pollers.map((p) => p.drained()));
      expect(seen.a).toEqual([...before, ...after]);
      expect(seen.b).toEqual([...before, ...after]);
      expect(reads.counted.records).toBe(50);
    } finally {
      reads.restore();
      source.close();
    }
  });

  it('two mappings each reading on their own read every record twice (what the shared reading saves)', async () => {
    const tableName = await freshTable();
    await put(tableName, ['one', 'two', 'three']);
    const reads = countingReads();
    try {
      for (let i = 0; i < 2; i++)
        pollers.push(await startStreamPoller({ endpoint, region, tableName, handler: async () => {}, idleMs: 20 }));
      await Promise.all(pollers.map((p) => p.drained()));
      expect(reads.counted.records).toBe(6);
    } finally {
      reads.restore();
    }
  });

  it('a mapping stuck retrying a failing batch holds back neither the other mapping nor, once it gets through, its own later records', async () => {
    const tableName = await freshTable();
    const source = await openStreamSource({ endpoint, region, tableName });
    const healthy: string[] = [];
    const stuck: string[] = [];
    let failing = true;
    pollers.push(
      await startStreamPoller({
        endpoint,
        region,
        tableName,
        batchSize: 1,
        idleMs: 5,
        maxRetryAttempts: 1_000,
        source,
        handler: async (event) => {
          const id = idOf(event.Records[0]!);
          if (id === 'poison' && failing) throw new Error('fails until let through');
          stuck.push(id);
        },
      }),
    );
    pollers.push(
      await startStreamPoller({
        endpoint,
        region,
        tableName,
        idleMs: 5,
        source,
        handler: async (event) => {
          healthy.push(...event.Records.map(idOf));
        },
      }),
    );
    source.open();
    await put(tableName, ['first', 'poison', 'second', 'third']);
    const until = async (done: () => boolean) => {
      const deadline = Date.now() + 10_000;
      while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    };
    // The healthy mapping has all four while the other is still retrying its second record.
    await until(() => healthy.length === 4);
    expect(healthy).toEqual(['first', 'poison', 'second', 'third']);
    expect(stuck).toEqual(['first']);
    // Let through, the stuck mapping takes its records from where it was: the reads the other took are still there for it.
    failing = false;
    await until(() => stuck.length === 4);
    expect(stuck).toEqual(['first', 'poison', 'second', 'third']);
    source.close();
  });

  it('refuses a reader taken once the reading has opened: it could miss what the others had read', async () => {
    const tableName = await freshTable();
    const source = await openStreamSource({ endpoint, region, tableName });
    source.reader();
    source.open();
    expect(() => source.reader()).toThrow(/taken before the source opens/);
    source.close();
  });
});
