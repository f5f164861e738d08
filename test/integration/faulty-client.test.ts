import { randomUUID } from 'node:crypto';
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../lib/runtime/config.js';
import { faultyDocumentClient, type Fault } from '../support/faulty-client.js';

/**
 * The fault-injecting client's own modes, against DynamoDB Local: eventual consistency must really
 * hide recent writes from inconsistent reads (and only from those), and a slow call must really be
 * pending until its abort signal ends it, or the tests that rely on them would prove nothing.
 */
const table = () => config().tableName;
const pk = () => `FAULTY#${randomUUID()}`;

/** A clock the tests step by hand, so the staleness window never depends on how fast DynamoDB Local is. */
function manualClock() {
  let t = 1_000_000;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

const WINDOW_MS = 1_000;

function staleClient(decide: (name: string) => Fault | undefined = () => undefined) {
  const clock = manualClock();
  const { client, counter } = faultyDocumentClient({ decide }, { staleReadWindowMs: WINDOW_MS, now: clock.now });
  return { client, counter, clock };
}

describe('eventual-consistency mode', () => {
  it('an inconsistent GetItem misses an item written in the window; a consistent one sees it; after the window both do', async () => {
    const { client, counter, clock } = staleClient();
    const key = { pk: pk(), sk: 'ITEM' };
    await client.send(new PutCommand({ TableName: table(), Item: { ...key, v: 1 } }));

    expect((await client.send(new GetCommand({ TableName: table(), Key: key }))).Item).toBeUndefined();
    expect((await client.send(new GetCommand({ TableName: table(), Key: key, ConsistentRead: true }))).Item).toEqual({ ...key, v: 1 });
    expect(counter.staleReads).toBe(1);

    clock.advance(WINDOW_MS);
    expect((await client.send(new GetCommand({ TableName: table(), Key: key }))).Item).toEqual({ ...key, v: 1 });
    expect(counter.staleReads).toBe(1);
  });

  it('an inconsistent read after an update or a replacement returns the version before it', async () => {
    const { client, clock } = staleClient();
    const key = { pk: pk(), sk: 'ITEM' };
    await client.send(new PutCommand({ TableName: table(), Item: { ...key, v: 1 } }));
    clock.advance(WINDOW_MS);

    await client.send(
      new UpdateCommand({ TableName: table(), Key: key, UpdateExpression: 'SET v = :v', ExpressionAttributeValues: { ':v': 2 } }),
    );
    expect((await client.send(new GetCommand({ TableName: table(), Key: key }))).Item).toEqual({ ...key, v: 1 });
    expect((await client.send(new GetCommand({ TableName: table(), Key: key, ConsistentRead: true }))).Item).toEqual({ ...key, v: 2 });
    clock.advance(WINDOW_MS);

    await client.send(new PutCommand({ TableName: table(), Item: { ...key, v: 3 } }));
    expect((await client.send(new GetCommand({ TableName: table(), Key: key }))).Item).toEqual({ ...key, v: 2 });
    clock.advance(WINDOW_MS);

    await client.send(new DeleteCommand({ TableName: table(), Key: key }));
    expect((await client.send(new GetCommand({ TableName: table(), Key: key }))).Item).toEqual({ ...key, v: 3 });
    expect((await client.send(new GetCommand({ TableName: table(), Key: key, ConsistentRead: true }))).Item).toBeUndefined();
  });

  it('items written by a transaction are missed too', async () => {
    const { client } = staleClient();
    const partition = pk();
    await client.send(
      new TransactWriteCommand({
        TransactItems: [
          { Put: { TableName: table(), Item: { pk: partition, sk: 'A' } } },
          { Put: { TableName: table(), Item: { pk: partition, sk: 'B' } } },
        ],
      }),
    );
    expect((await client.send(new GetCommand({ TableName: table(), Key: { pk: partition, sk: 'B' } }))).Item).toBeUndefined();
  });

  it('an inconsistent Query leaves out recent items and shows older ones; a consistent Query shows all', async () => {
    const { client, counter, clock } = staleClient();
    const partition = pk();
    await client.send(new PutCommand({ TableName: table(), Item: { pk: partition, sk: 'OLD' } }));
    clock.advance(WINDOW_MS);
    await client.send(new PutCommand({ TableName: table(), Item: { pk: partition, sk: 'NEW' } }));
    const query = (consistent: boolean) =>
      client.send(
        new QueryCommand({
          TableName: table(),
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': partition },
          ConsistentRead: consistent,
        }),
      );

    const stale = await query(false);
    expect([stale.Items?.map((i) => i.sk), stale.Count]).toEqual([['OLD'], 1]);
    expect((await query(true)).Items?.map((i) => i.sk).sort()).toEqual(['NEW', 'OLD']);
    expect(counter.staleReads).toBe(1);
  });

  it('a write the fault plan failed before it reached DynamoDB hides nothing', async () => {
    const key = { pk: pk(), sk: 'ITEM' };
    let failPut = false;
    const { client, clock } = staleClient((name) => (failPut && name === 'PutItemCommand' ? 'throttle' : undefined));
    await client.send(new PutCommand({ TableName: table(), Item: { ...key, v: 1 } }));
    clock.advance(WINDOW_MS);
    failPut = true;
    await expect(client.send(new PutCommand({ TableName: table(), Item: { ...key, v: 2 } }))).rejects.toMatchObject({
      name: 'ThrottlingException',
    });
    expect((await client.send(new GetCommand({ TableName: table(), Key: key }))).Item).toEqual({ ...key, v: 1 });
  });

  it('is off unless asked for: without a window every read sees every write', async () => {
    const { client, counter } = faultyDocumentClient({ decide: () => undefined });
    const key = { pk: pk(), sk: 'ITEM' };
    await client.send(new PutCommand({ TableName: table(), Item: { ...key, v: 1 } }));
    expect((await client.send(new GetCommand({ TableName: table(), Key: key }))).Item).toEqual({ ...key, v: 1 });
    expect(counter.staleReads).toBe(0);
  });
});

describe('slow mode', () => {
  it('holds a call until its abort signal aborts, then rejects with an AbortError and sends nothing', async () => {
    const { client, counter } = faultyDocumentClient({ decide: (name) => (name === 'PutItemCommand' ? 'slow' : undefined) });
    const key = { pk: pk(), sk: 'ITEM' };
    const controller = new AbortController();
    let settled = false;
    const call = client
      .send(new PutCommand({ TableName: table(), Item: key }), { abortSignal: controller.signal })
      .finally(() => (settled = true));
    // Another call's full round trip to DynamoDB Local completes while the slow one still waits.
    await client.send(new GetCommand({ TableName: table(), Key: key, ConsistentRead: true }));
    expect(settled).toBe(false);

    controller.abort();
    await expect(call).rejects.toMatchObject({ name: 'AbortError' });
    expect(counter.injected.slow).toBe(1);
    expect((await client.send(new GetCommand({ TableName: table(), Key: key, ConsistentRead: true }))).Item).toBeUndefined();
  });

  it('rejects at once when the signal has already aborted', async () => {
    const { client } = faultyDocumentClient({ decide: () => 'slow' });
    await expect(
      client.send(new GetCommand({ TableName: table(), Key: { pk: pk(), sk: 'ITEM' } }), { abortSignal: AbortSignal.abort() }),
    ).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('sends the call once it has waited, when nothing aborts it', async () => {
    const { client, counter } = faultyDocumentClient(
      { decide: (name) => (name === 'PutItemCommand' ? 'slow' : undefined) },
      { slowCallMs: 5 },
    );
    const key = { pk: pk(), sk: 'ITEM' };
    await client.send(new PutCommand({ TableName: table(), Item: { ...key, v: 1 } }));
    expect(counter.injected.slow).toBe(1);
    expect((await client.send(new GetCommand({ TableName: table(), Key: key, ConsistentRead: true }))).Item).toEqual({ ...key, v: 1 });
  });
});

describe('the existing faults', () => {
  it('still fail the calls the plan names, and count them', async () => {
    const { client, counter } = faultyDocumentClient({ decide: (name) => (name === 'GetItemCommand' ? 'throttle' : undefined) });
    await expect(client.send(new GetCommand({ TableName: table(), Key: { pk: pk(), sk: 'ITEM' } }))).rejects.toMatchObject({
      name: 'ThrottlingException',
    });
    expect([counter.calls, counter.injected.throttle]).toEqual([1, 1]);
  });
});
