import { spawnSync } from 'node:child_process';
import {
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { LOCAL_CREDENTIALS } from '../../lib/adapters/dynamodb/dynamo-client.js';
import { randomBase62 } from '../../lib/random-id.js';
import { createPollerClient, startQueuePoller, type QueuePoller, type QueuePollerOptions } from '../../infra/local/queue-poller.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * The local stand-in for Lambda's SQS event source mapping (infra/local/queue-poller.ts) on the
 * local SQS the global setup runs (fauxqs), and the two behaviours of fauxqs the webhook delivery
 * engine relies on (a retry is a ChangeMessageVisibility; a message received too often goes to the
 * dead-letter queue). Each test has queues of its own.
 */
jest.setTimeout(30_000);

const region = process.env.AWS_REGION!;
const sqs = new SQSClient({ region, endpoint: process.env.SQS_ENDPOINT, credentials: LOCAL_CREDENTIALS });

async function newQueue(attributes: Record<string, string> = {}): Promise<{ url: string; arn: string }> {
  const created = await sqs.send(new CreateQueueCommand({ QueueName: `poller-${randomBase62(10)}`, Attributes: attributes }));
  const out = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: created.QueueUrl, AttributeNames: ['QueueArn'] }));
  return { url: created.QueueUrl!, arn: out.Attributes!.QueueArn! };
}

/** A handler that never finishes a message whose body starts with `hang` until released, and records the rest. */
function hangingHandler() {
  const handled: string[] = [];
  const hanging: string[] = [];
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const handler = async (event: SQSEvent) => {
    for (const record of event.Records) {
      if (record.body.startsWith('hang')) {
        hanging.push(record.body);
        await released;
      }
      handled.push(record.body);
    }
  };
  return { handler, handled, hanging, release };
}

describe('the local SQS event source mapping', () => {
  const pollers: QueuePoller[] = [];
  const releases: (() => void)[] = [];
  afterEach(async () => {
    for (const release of releases.splice(0)) release();
    await Promise.all(pollers.splice(0).map((p) => p.stop()));
  });

  /** A poller of `queue` running `handler`, one message a batch, two batches at once; stopped after the test. */
  function pollWith(
    queue: { url: string; arn: string },
    handler: QueuePollerOptions['handler'],
    options: Partial<QueuePollerOptions> = {},
  ) {
    pollers.push(
      startQueuePoller({
        client: sqs,
        queueUrl: queue.url,
        queueArn: queue.arn,
        region,
        handler,
        batchSize: 1,
        concurrency: 2,
        ...options,
      }),
    );
  }

  async function poller(concurrency: number | undefined, provisioned?: { minimumPollers: number }) {
    const queue = await newQueue();
    const h = hangingHandler();
    releases.push(h.release);
    pollWith(queue, h.handler, { concurrency, ...(provisioned ? { provisioned } : {}) });
    const send = (body: string) => sqs.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: body }));
    return { ...h, send };
  }

  test('a batch whose handler hangs does not hold up the next message: five batches are in flight at once, as Lambda starts', async () => {
    const p = await poller(5);
    await p.send('hang-1');
    expect(await waitUntil(() => p.hanging.length === 1, 5_000)).toBe(true);
    await p.send('next');
    expect(await waitUntil(() => p.handled.includes('next'), 3_000)).toBe(true);
  });

  test('while every batch in flight hangs, the poller adds more, up to its maximum concurrency', async () => {
    const p = await poller(8);
    for (let i = 1; i <= 5; i++) await p.send(`hang-${i}`);
    expect(await waitUntil(() => p.hanging.length === 5, 5_000)).toBe(true);
    await p.send('next');
    expect(await waitUntil(() => p.handled.includes('next'), 4_000)).toBe(true);
  });

  test('in provisioned mode, two pollers have twenty batches in flight from the first message: twelve hanging batches hold up nothing', async () => {
    const p = await poller(20, { minimumPollers: 2 });
    for (let i = 1; i <= 12; i++) await p.send(`hang-${i}`);
    const sent = Date.now();
    await p.send('next');
    // Taken by an invocation that was ready, not after the scale-ups of the default mode (5, then 5 more a second).
    expect(await waitUntil(() => p.handled.includes('next'), 3_000)).toBe(true);
    // The default mode needs two scale-ups (about 2 s) to reach the thirteenth message.
    expect(Date.now() - sent).toBeLessThan(1_500);
    expect(p.hanging).toHaveLength(12);
  });

  test('twenty receive loops long-polling at once make Node print no warning (npm start keeps a clean stderr)', () => {
    // In a process of its own: Node prints the warning on the real process's stderr, which jest's sandbox does not see.
    const probe = `
      import { SQSClient } from '@aws-sdk/client-sqs';
      const { startLocalSqs } = await import('./infra/local/local-sqs.ts');
      const { startQueuePoller } = await import('./infra/local/queue-poller.ts');
      const sqs = await startLocalSqs();
      const q = sqs.createQueue('warnings');
      const client = new SQSClient({ region: 'eu-west-2', endpoint: sqs.endpoint, credentials: { accessKeyId: 'x', secretAccessKey: 'y' } });
      const p = startQueuePoller({ client, queueUrl: q.queueUrl, queueArn: q.queueArn, region: 'eu-west-2', handler: async () => {},
        concurrency: 20, provisioned: { minimumPollers: 2 } });
      await new Promise((r) => setTimeout(r, 1500));
      console.log(p.loops);
      await p.stop(); client.destroy(); await sqs.stop();
    `;
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', probe], {
      encoding: 'utf8',
      env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
      timeout: 30_000,
    });
    expect(run.stdout.trim()).toBe('20');
    expect(run.stderr).toBe('');
  });

  test("an engine's sixty receive loops long-polling at once leave its client a socket for one more receive, as Lambda's own pollers have no socket limit of ours", async () => {
    const client = createPollerClient(region, process.env.SQS_ENDPOINT!);
    let parked: Promise<unknown>[] = [];
    try {
      const idle = await newQueue();
      const busy = await newQueue();
      parked = Array.from({ length: 60 }, () =>
        client.send(new ReceiveMessageCommand({ QueueUrl: idle.url, WaitTimeSeconds: 5, MaxNumberOfMessages: 10 })),
      );
      await new Promise((r) => setTimeout(r, 300));
      await sqs.send(new SendMessageCommand({ QueueUrl: busy.url, MessageBody: 'now' }));
      const started = Date.now();
      const out = await client.send(new ReceiveMessageCommand({ QueueUrl: busy.url, WaitTimeSeconds: 1 }));
      // With the SDK's default pool of 50 sockets this receive waited for the parked ones to end (5 s).
      expect(Date.now() - started).toBeLessThan(2_500);
      expect(out.Messages?.map((m) => m.Body)).toEqual(['now']);
    } finally {
      await Promise.allSettled(parked);
      client.destroy();
    }
  });

  test('a handler that reports a failure under an empty itemIdentifier fails its whole batch, as Lambda does: the message comes back, never deleted', async () => {
    const queue = await newQueue({ VisibilityTimeout: '1' });
    const seen: string[] = [];
    pollWith(queue, async (event) => {
      seen.push(...event.Records.map((r) => r.body));
      return { batchItemFailures: [{ itemIdentifier: '' }] };
    });
    await sqs.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: 'job' }));
    // Deleted after the first receive, it was never seen again.
    expect(await waitUntil(() => seen.length >= 2, 8_000)).toBe(true);
    expect(new Set(seen)).toEqual(new Set(['job']));
  });

  test('a batch still running at the function’s timeout is an invocation that timed out: nothing of it is deleted, and it comes back', async () => {
    // Visible again 3 s after a receive: after the slow handler has answered, so only an answer ignored brings it back.
    const queue = await newQueue({ VisibilityTimeout: '3' });
    const receipts: string[] = [];
    // The first receipt outlasts the 1 s timeout and then answers "all done"; Lambda would never read that answer.
    pollWith(
      queue,
      async (event) => {
        receipts.push(event.Records[0]!.attributes.ApproximateReceiveCount);
        if (receipts.length === 1) await new Promise((resolve) => setTimeout(resolve, 1_500));
        return { batchItemFailures: [] };
      },
      { timeoutMs: 1_000 },
    );
    await sqs.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: 'job' }));
    expect(await waitUntil(() => receipts.length >= 2, 8_000)).toBe(true);
    expect(receipts.slice(0, 2)).toEqual(['1', '2']);
  });

  test('a lane capped at two batches waits while both hang, and goes on when one finishes', async () => {
    const p = await poller(2);
    await p.send('hang-1');
    await p.send('hang-2');
    expect(await waitUntil(() => p.hanging.length === 2, 5_000)).toBe(true);
    await p.send('next');
    expect(await waitUntil(() => p.handled.includes('next'), 2_500)).toBe(false);
    p.release();
    expect(await waitUntil(() => p.handled.includes('next'), 4_000)).toBe(true);
  });
});

describe('the local SQS (fauxqs)', () => {
  test('a message made invisible by ChangeMessageVisibility comes back when that time is up, and after maxReceiveCount receives goes to the dead-letter queue', async () => {
    const dlq = await newQueue();
    const queue = await newQueue({
      VisibilityTimeout: '30',
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq.arn, maxReceiveCount: '2' }),
    });
    await sqs.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: 'job' }));
    const receive = (url: string, wait = 1) =>
      sqs.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: wait, MessageSystemAttributeNames: ['All'] }));

    const first = (await receive(queue.url)).Messages![0]!;
    await sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: queue.url, ReceiptHandle: first.ReceiptHandle, VisibilityTimeout: 2 }));
    // Not back before the 2 s (the queue's own 30 s no longer applies)…
    const started = Date.now();
    const early = (await receive(queue.url, 1)).Messages ?? [];
    // Only a receive that ended inside the 2 s can prove it: on a busy machine the call itself may end later.
    if (Date.now() - started < 1_900) expect(early).toHaveLength(0);
    if (early.length > 0) return;
    // …and back soon after.
    let second;
    while (!second && Date.now() - started < 6_000) second = (await receive(queue.url, 1)).Messages?.[0];
    expect(second?.Body).toBe('job');
    expect(second?.Attributes?.ApproximateReceiveCount).toBe('2');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_500);

    await sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: queue.url, ReceiptHandle: second!.ReceiptHandle, VisibilityTimeout: 0 }));
    // A third receive would exceed maxReceiveCount: SQS moves the message instead of handing it out.
    expect((await receive(queue.url, 1)).Messages ?? []).toHaveLength(0);
    expect((await receive(dlq.url, 2)).Messages?.[0]?.Body).toBe('job');
  });

  /**
   * Five receives of up to `most` messages each, long-polling `url` for 4 s: what each got, and when it answered.
   * Long enough that "at once" (under 2 s) and "at its wait time" (4 s) stay apart on a busy machine.
   */
  function fiveWaitingReceives(url: string, most = 1) {
    const started = Date.now();
    const receives = Array.from({ length: 5 }, () =>
      sqs
        .send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 4, MaxNumberOfMessages: most }))
        .then((out) => ({ bodies: (out.Messages ?? []).map((m) => m.Body!), afterMs: Date.now() - started })),
    );
    return Promise.all(receives);
  }

  test('a message sent while five receives long-poll answers one of them, and the other four wait on to their WaitTimeSeconds, as on SQS', async () => {
    const queue = await newQueue();
    const waiting = fiveWaitingReceives(queue.url);
    await new Promise((r) => setTimeout(r, 300));
    await sqs.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: 'one' }));
    const answers = await waiting;
    const answered = answers.filter((a) => a.bodies.length > 0);
    expect(answered.map((a) => a.bodies)).toEqual([['one']]);
    expect(answered[0]!.afterMs).toBeLessThan(2_000);
    // fauxqs alone woke every waiting receive on each message: the four answered empty at once and were sent again.
    for (const empty of answers.filter((a) => a.bodies.length === 0)) expect(empty.afterMs).toBeGreaterThanOrEqual(3_900);
  });

  test('three messages sent in one batch while five receives of up to ten wait: one receive takes all three at once, and the other four wait on', async () => {
    const queue = await newQueue();
    const waiting = fiveWaitingReceives(queue.url, 10);
    await new Promise((r) => setTimeout(r, 300));
    await sqs.send(
      new SendMessageBatchCommand({ QueueUrl: queue.url, Entries: ['a', 'b', 'c'].map((body) => ({ Id: body, MessageBody: body })) }),
    );
    const answers = await waiting;
    const answered = answers.filter((a) => a.bodies.length > 0);
    expect(answered.map((a) => a.bodies.sort())).toEqual([['a', 'b', 'c']]);
    expect(answered[0]!.afterMs).toBeLessThan(2_000);
    // Three receives were woken for the three messages; the two the first left nothing to answered empty before.
    for (const empty of answers.filter((a) => a.bodies.length === 0)) expect(empty.afterMs).toBeGreaterThanOrEqual(3_900);
  });

  test('three messages sent at once to five waiting receives are each taken at once: no message waits while a receive does', async () => {
    const queue = await newQueue();
    const waiting = fiveWaitingReceives(queue.url);
    await new Promise((r) => setTimeout(r, 300));
    await sqs.send(
      new SendMessageBatchCommand({ QueueUrl: queue.url, Entries: ['a', 'b', 'c'].map((body) => ({ Id: body, MessageBody: body })) }),
    );
    const answers = await waiting;
    const answered = answers.filter((a) => a.bodies.length > 0);
    expect(answered.flatMap((a) => a.bodies).sort()).toEqual(['a', 'b', 'c']);
    for (const a of answered) expect(a.afterMs).toBeLessThan(2_000);
  });

  describe('as an SQS fair queue (a standard queue whose messages carry a MessageGroupId)', () => {
    /** Sends `count` messages of one tenant, ten to a request. */
    async function send(url: string, tenant: string, count: number) {
      for (let i = 0; i < count; i += 10)
        await sqs.send(
          new SendMessageBatchCommand({
            QueueUrl: url,
            Entries: Array.from({ length: Math.min(10, count - i) }, (_, k) => ({
              Id: String(k),
              MessageBody: `${tenant}-${i + k}`,
              MessageGroupId: tenant,
            })),
          }),
        );
    }
    /** Receives `count` messages (leaving them in flight) and answers their bodies. */
    async function receive(url: string, count: number) {
      const bodies: string[] = [];
      while (bodies.length < count) {
        const out = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: Math.min(10, count - bodies.length) }));
        bodies.push(...(out.Messages ?? []).map((m) => m.Body!));
      }
      return bodies;
    }

    test("a quiet company's message is received before a noisy company's backlog once the noisy one holds 30 messages in flight", async () => {
      const queue = await newQueue({ VisibilityTimeout: '60' });
      await send(queue.url, 'noisy', 60);
      // The noisy tenant now holds 40 in flight (more than 30, and every one of them), with 20 more waiting.
      expect(await receive(queue.url, 40)).toEqual(Array.from({ length: 40 }, (_, i) => `noisy-${i}`));
      await send(queue.url, 'quiet', 2);
      // Sent after the backlog, received before it: quiet tenants first while one is noisy.
      expect(await receive(queue.url, 3)).toEqual(['quiet-0', 'quiet-1', 'noisy-40']);
    });

    test('the twin is no kinder than SQS: under 30 in flight a tenant is not noisy, and the queue keeps arrival order', async () => {
      const queue = await newQueue({ VisibilityTimeout: '60' });
      await send(queue.url, 'busy', 40);
      expect(await receive(queue.url, 29)).toHaveLength(29);
      await send(queue.url, 'quiet', 1);
      // 29 in flight: not noisy, so the older message comes first…
      expect(await receive(queue.url, 1)).toEqual(['busy-29']);
      // …and at 30 it is, so the quiet one comes before the rest of its backlog.
      expect(await receive(queue.url, 1)).toEqual(['quiet-0']);
    });

    test('a message without a MessageGroupId is a tenant of its own, received before a noisy backlog too', async () => {
      const queue = await newQueue({ VisibilityTimeout: '60' });
      await send(queue.url, 'noisy', 40);
      await receive(queue.url, 35);
      await sqs.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: 'loner' }));
      expect(await receive(queue.url, 1)).toEqual(['loner']);
    });
  });
});
