import {
  CreateQueueCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type SendMessageBatchCommandOutput,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { SqsWebhookDeliveryQueue } from '../../lib/adapters/sqs/webhook-delivery-queue.js';
import { sqsClient } from '../../lib/adapters/sqs/verification-retry-queue.js';
import { randomBase62 } from '../../lib/random-id.js';
import { config } from '../../lib/runtime/config.js';
import { scheduledDeliveryId, type DeliveryJob } from '../../lib/webhooks/webhook-delivery.js';

/**
 * The delivery queues' adapter against the local SQS (fauxqs, started by the test global setup):
 * batches of ten, delays, the dead-letter queue, visibility changes, and no job lost when SQS
 * accepts only part of a batch.
 */
const client = () => sqsClient(config());

async function newQueue(name: string): Promise<string> {
  const out = await client().send(
    new CreateQueueCommand({ QueueName: `${name}-${randomBase62(8)}`, Attributes: { VisibilityTimeout: '30' } }),
  );
  return out.QueueUrl!;
}

async function queues() {
  return { fast: await newQueue('fast'), slow: await newQueue('slow') };
}

async function receiveAll(queueUrl: string, waitSeconds = 0): Promise<{ body: DeliveryJob; receiptHandle: string }[]> {
  const got: { body: DeliveryJob; receiptHandle: string }[] = [];
  for (let wait = waitSeconds; ; wait = 0) {
    // Only the first receive waits (for a delayed or invisible message to come back).
    const out = await client().send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: wait }));
    const messages = out.Messages ?? [];
    if (messages.length === 0) return got;
    got.push(...messages.map((m) => ({ body: JSON.parse(m.Body!) as DeliveryJob, receiptHandle: m.ReceiptHandle! })));
  }
}

function job(): DeliveryJob {
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
    mode: 'live',
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
    const got = await receiveAll(urls.slow);
    expect(got.map((m) => m.body.deliveryId).sort()).toEqual(jobs.map((j) => j.deliveryId).sort());
    expect(got.find((m) => m.body.deliveryId === jobs[0]!.deliveryId)!.body).toEqual(jobs[0]);
    expect(await receiveAll(urls.fast)).toEqual([]);
  });

  it('delays a job by the seconds given', async () => {
    const urls = await queues();
    const queue = new SqsWebhookDeliveryQueue(client(), urls);
    await queue.enqueue('fast', [job()], 2);
    expect(await receiveAll(urls.fast)).toEqual([]);
    expect(await receiveAll(urls.fast, 3)).toHaveLength(1);
  }, 15_000);

  it('makes a received message invisible for the seconds given', async () => {
    const urls = await queues();
    const queue = new SqsWebhookDeliveryQueue(client(), urls);
    await queue.enqueue('slow', [job()]);
    const [message] = await receiveAll(urls.slow);
    await queue.changeVisibility('slow', message!.receiptHandle, 0);
    const [again] = await receiveAll(urls.slow);
    expect(again).toBeDefined();
    await queue.changeVisibility('slow', again!.receiptHandle, 2);
    expect(await receiveAll(urls.slow)).toEqual([]);
    expect(await receiveAll(urls.slow, 3)).toHaveLength(1);
  }, 15_000);

  it('sends again the entries SQS failed in a batch it answered 200, and throws when some are never accepted: no job is silently dropped', async () => {
    const urls = await queues();
    const real = client();
    let calls = 0;
    /** SQS fails the first entry of the first `failTimes` batches (InternalError, not the sender's fault). */
    const partlyFailing = (failTimes: number, senderFault = false) =>
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
            Failed: [{ Id: first!.Id, Code: 'InternalError', Message: 'try again', SenderFault: senderFault }],
          } as SendMessageBatchCommandOutput;
        },
      }) as unknown as SQSClient;
    const fast = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5 };

    const jobs = Array.from({ length: 4 }, job);
    await new SqsWebhookDeliveryQueue(partlyFailing(1), urls, fast).enqueue('fast', jobs);
    expect((await receiveAll(urls.fast)).map((m) => m.body.deliveryId).sort()).toEqual(jobs.map((j) => j.deliveryId).sort());

    calls = 0;
    await expect(new SqsWebhookDeliveryQueue(partlyFailing(99), urls, fast).enqueue('fast', [job(), job()])).rejects.toThrow(
      /did not accept 1 of 1/,
    );
    calls = 0;
    await expect(new SqsWebhookDeliveryQueue(partlyFailing(1, true), urls, fast).enqueue('fast', [job()])).rejects.toThrow(/InternalError/);
  });
});
