import {
  CreateQueueCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type SendMessageBatchCommandOutput,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { LOCAL_CREDENTIALS } from '../../lib/adapters/dynamodb/dynamo-client.js';
import { SqsWebhookDeliveryQueue } from '../../lib/adapters/sqs/webhook-delivery-queue.js';
import { SqsWebhookPlanningQueue } from '../../lib/adapters/sqs/webhook-planning-queue.js';
import { DEFAULT_RETRY_POLICY } from '../../lib/adapters/retry.js';
import { sqsClient } from '../../lib/adapters/sqs/verification-retry-queue.js';
import { randomBase62 } from '../../lib/random-id.js';
import { config } from '../../lib/runtime/config.js';
import { tenantOf, type PlanningSlice } from '../../lib/webhooks/planning-slice.js';
import { scheduledDeliveryId, type DeliveryJob } from '../../lib/webhooks/webhook-delivery.js';

/**
 * The delivery queues' adapter against the local SQS (fauxqs, started by the test global setup):
 * batches of ten, each mode's lanes, delays (and SQS's 900 s limit on them, which the local twin
 * enforces), the dead-letter queue, and no job lost when SQS accepts only part of a batch; and the
 * planning queues' adapter: each mode's own queue.
 */
const client = () => sqsClient(config());

/**
 * The test's own calls (making queues, sending past the adapter, reading the queues back): one
 * client for the file, on kept-alive sockets, with the SDK's own retries. The adapters are given
 * `client()`, the functions' client, which tries once and leaves retrying to the retry layer; a
 * test's own call on a new client of that kind each time failed CI when the loaded host did not
 * establish its loopback connection within the client's 1 s, which is not what is tested.
 */
const plumbing = new SQSClient({
  region: config().region,
  endpoint: config().sqsEndpoint,
  credentials: LOCAL_CREDENTIALS,
  maxAttempts: 5,
});
afterAll(() => plumbing.destroy());

async function newQueue(name: string): Promise<string> {
  const out = await plumbing.send(
    new CreateQueueCommand({ QueueName: `${name}-${randomBase62(8)}`, Attributes: { VisibilityTimeout: '30' } }),
  );
  return out.QueueUrl!;
}

async function queues() {
  return {
    live: { fast: await newQueue('fast'), slow: await newQueue('slow') },
    test: { fast: await newQueue('test-fast'), slow: await newQueue('test-slow') },
  };
}

async function receiveAll(queueUrl: string, waitSeconds = 0): Promise<{ body: DeliveryJob; receiptHandle: string }[]> {
  const got: { body: DeliveryJob; receiptHandle: string }[] = [];
  for (let wait = waitSeconds; ; wait = 0) {
    // Only the first receive waits (for a delayed or invisible message to come back).
    const out = await plumbing.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: wait }));
    const messages = out.Messages ?? [];
    if (messages.length === 0) return got;
    got.push(...messages.map((m) => ({ body: JSON.parse(m.Body!) as DeliveryJob, receiptHandle: m.ReceiptHandle! })));
  }
}

function job(mode: DeliveryJob['mode'] = 'live'): DeliveryJob {
  const endpointId = `we_${randomBase62(22)}`;
  const eventId = `evt_${randomBase62(22)}`;
  return {
    v: 1,
    kind: 'scheduled',
    deliveryId: scheduledDeliveryId(endpointId, eventId),
    endpointId,
    eventId,
    eventType: 'case.created',
    companyId: `co_${randomBase62(8)}`,
    mode,
    createdAt: new Date().toISOString(),
  };
}

describe('the webhook delivery queues (local SQS)', () => {
  it('enqueues 23 jobs to the lane named, in batches of ten, each once and unchanged', async () => {
    const urls = await queues();
    const jobs = Array.from({ length: 23 }, job);
    const sends: number[] = [];
    const real = client();
    const counting = {
      send: (command: SendMessageBatchCommand, options?: unknown) => {
        sends.push(command.input.Entries!.length);
        return real.send(command, options as never);
      },
    } as unknown as SQSClient;
    await new SqsWebhookDeliveryQueue(counting, urls).enqueue('slow', jobs);
    expect(sends.sort((a, b) => a - b)).toEqual([3, 10, 10]);
    const got = await receiveAll(urls.live.slow);
    expect(got.map((m) => m.body.deliveryId).sort()).toEqual(jobs.map((j) => j.deliveryId).sort());
    expect(got.find((m) => m.body.deliveryId === jobs[0]!.deliveryId)!.body).toEqual(jobs[0]);
    expect(await receiveAll(urls.live.fast)).toEqual([]);
  });

  it('test-mode deliveries go to the test lanes and live ones to the live lanes, never the other’s queue', async () => {
    const urls = await queues();
    const queue = new SqsWebhookDeliveryQueue(client(), urls);
    const live = [job('live'), job('live')];
    const test = [job('test'), job('test'), job('test')];
    await queue.enqueue('fast', [live[0]!, test[0]!, test[1]!, live[1]!, test[2]!]);
    const ids = async (url: string) => (await receiveAll(url)).map((m) => m.body.deliveryId).sort();
    expect(await ids(urls.live.fast)).toEqual(live.map((j) => j.deliveryId).sort());
    expect(await ids(urls.test.fast)).toEqual(test.map((j) => j.deliveryId).sort());
    // A record tells its lane by its queue, whichever mode's it is.
    const arn = (url: string) => `arn:aws:sqs:eu-west-2:000000000000:${url.split('/').at(-1)}`;
    expect([urls.live.fast, urls.live.slow, urls.test.fast, urls.test.slow].map((u) => queue.laneOf(arn(u)))).toEqual([
      'fast',
      'slow',
      'fast',
      'slow',
    ]);
  });

  it('the local SQS refuses a delay past 900 s, as SQS does: a long retry must hop', async () => {
    const urls = await queues();
    const send = (delay: number) =>
      plumbing.send(
        new SendMessageBatchCommand({
          QueueUrl: urls.live.slow,
          Entries: [{ Id: '1', MessageBody: JSON.stringify(job()), DelaySeconds: delay }],
        }),
      );
    await expect(send(901)).rejects.toThrow(/DelaySeconds/);
    await expect(send(900)).resolves.toMatchObject({ Successful: [expect.anything()] });
    // The adapter never asks for more: a longer delay is cut to SQS's longest.
    await new SqsWebhookDeliveryQueue(client(), urls).enqueue('slow', [job()], 4 * 3600);
  });

  it('delays a job by the seconds given', async () => {
    const urls = await queues();
    const queue = new SqsWebhookDeliveryQueue(client(), urls);
    await queue.enqueue('fast', [job()], 2);
    expect(await receiveAll(urls.live.fast)).toEqual([]);
    expect(await receiveAll(urls.live.fast, 3)).toHaveLength(1);
  }, 15_000);

  it('sends again the entries SQS failed in a batch it answered 200, and throws when some are never accepted: no job is silently dropped', async () => {
    const urls = await queues();
    const real = client();
    let calls = 0;
    /** SQS fails the first entry of the first `failTimes` batches (by default InternalError, not the sender's fault). */
    const partlyFailing = (failTimes: number, senderFault = false, code = 'InternalError') =>
      ({
        send: async (command: SendMessageBatchCommand, options?: unknown): Promise<SendMessageBatchCommandOutput> => {
          if (!(command instanceof SendMessageBatchCommand)) return real.send(command, options as never) as never;
          calls++;
          if (calls > failTimes) return real.send(command, options as never);
          const [first, ...rest] = command.input.Entries!;
          const out =
            rest.length > 0 ? await real.send(new SendMessageBatchCommand({ ...command.input, Entries: rest })) : { Successful: [] };
          return {
            ...out,
            Failed: [{ Id: first!.Id, Code: code, Message: 'try again', SenderFault: senderFault }],
          } as SendMessageBatchCommandOutput;
        },
      }) as unknown as SQSClient;
    const fast = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5 };

    const jobs = Array.from({ length: 4 }, job);
    await new SqsWebhookDeliveryQueue(partlyFailing(1), urls, fast).enqueue('fast', jobs);
    expect((await receiveAll(urls.live.fast)).map((m) => m.body.deliveryId).sort()).toEqual(jobs.map((j) => j.deliveryId).sort());

    calls = 0;
    await expect(new SqsWebhookDeliveryQueue(partlyFailing(99), urls, fast).enqueue('fast', [job(), job()])).rejects.toThrow(
      /did not accept 1 of 1/,
    );
    calls = 0;
    await expect(new SqsWebhookDeliveryQueue(partlyFailing(1, true), urls, fast).enqueue('fast', [job()])).rejects.toThrow(/InternalError/);
    // Throttled is "not now", whichever side SQS blames: sent again, not thrown.
    calls = 0;
    const throttled = job();
    await new SqsWebhookDeliveryQueue(partlyFailing(1, true, 'RequestThrottled'), urls, fast).enqueue('fast', [throttled]);
    expect(calls).toBe(2);
    expect((await receiveAll(urls.live.fast)).map((m) => m.body.deliveryId)).toContain(throttled.deliveryId);
  });
});

describe('the planning queues', () => {
  it('a test company’s burst goes to test mode’s planning queue and a live one’s to the live queue, each in its tenant’s group: test bursts never take a live slice’s planning', async () => {
    const urls = { live: await newQueue('planning'), test: await newQueue('test-planning') };
    const slice = (mode: PlanningSlice['mode']): PlanningSlice => ({
      mode,
      companyId: `co_${randomBase62(8)}`,
      events: [{ eventId: `evt_${randomBase62(22)}`, eventType: 'case.created', createdAt: new Date().toISOString() }],
    });
    // Eleven test slices (two SendMessageBatch calls) around two live ones.
    const tests = Array.from({ length: 11 }, () => slice('test'));
    const lives = [slice('live'), slice('live')];
    const all = [tests[0]!, lives[0]!, ...tests.slice(1, 6), lives[1]!, ...tests.slice(6)];
    expect(await new SqsWebhookPlanningQueue(client(), urls).forward(all)).toEqual(all.map(() => true));
    const received = async (url: string) => {
      const got: { companyId: string; mode: string; group?: string }[] = [];
      for (;;) {
        const out = await plumbing.send(
          new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, MessageSystemAttributeNames: ['MessageGroupId'] }),
        );
        if ((out.Messages ?? []).length === 0) return got.sort((a, b) => (a.companyId < b.companyId ? -1 : 1));
        for (const m of out.Messages!) {
          const body = JSON.parse(m.Body!) as PlanningSlice;
          got.push({ companyId: body.companyId, mode: body.mode, group: m.Attributes?.MessageGroupId });
        }
      }
    };
    const expected = (slices: PlanningSlice[]) =>
      slices
        .map((s) => ({ companyId: s.companyId, mode: s.mode, group: tenantOf(s) }))
        .sort((a, b) => (a.companyId < b.companyId ? -1 : 1));
    expect(await received(urls.live)).toEqual(expected(lives));
    expect(await received(urls.test)).toEqual(expected(tests));
  });

  it('a mode’s queue that refuses its batch fails that mode’s slices only, each answered in the order given', async () => {
    const urls = { live: await newQueue('planning'), test: await newQueue('test-planning') };
    const real = client();
    const refusingTest = {
      send: async (command: { input: { QueueUrl?: string } }, options?: unknown) => {
        if (command.input.QueueUrl === urls.test)
          throw Object.assign(new Error('refused for the test'), { name: 'AccessDenied', $metadata: { httpStatusCode: 403 } });
        return real.send(command as never, options as never);
      },
    } as unknown as SQSClient;
    const slice = (mode: PlanningSlice['mode']): PlanningSlice => ({
      mode,
      companyId: `co_${randomBase62(8)}`,
      events: [{ eventId: `evt_${randomBase62(22)}`, eventType: 'case.created', createdAt: new Date().toISOString() }],
    });
    const modes = ['test', 'live', 'test', 'live', 'live', 'test'] as const;
    const accepted = await new SqsWebhookPlanningQueue(refusingTest, urls, { ...DEFAULT_RETRY_POLICY, maxAttempts: 1 }).forward(
      modes.map(slice),
    );
    // The stream records behind the refused ones are retried; the live slices are on their queue.
    expect(accepted).toEqual(modes.map((mode) => mode === 'live'));
  });
});
