import { DeleteMessageBatchCommand, ReceiveMessageCommand, SQSClient, type Message } from '@aws-sdk/client-sqs';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { setMaxListeners } from 'node:events';
import { Agent } from 'node:http';
import { LOCAL_CREDENTIALS } from '../../lib/adapters/dynamodb/dynamo-client.js';
import { answerWithinTimeout } from './answer-within-timeout.js';
import { reportedFailures } from './reported-failures.js';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';

/**
 * What the Lambda event source mapping does with an SQS queue in AWS, for the local SQS (fauxqs):
 * long-polls the queue, hands the handler batches in the same event shape (`SQSEvent`), deletes
 * the messages that succeeded and leaves the ones named in `batchItemFailures` (or the whole batch
 * when the handler throws) to come back after their visibility timeout, until the queue's redrive
 * policy moves them to its dead-letter queue.
 *
 * Several batches are in flight at once, as with the event source mapping, which starts reading
 * five batches at a time with five concurrent invocations, adds up to 300 more per minute while
 * messages keep coming, and stops at the mapping's maximum concurrency (at least 2): `concurrency`
 * is that maximum. Here the poller starts min(5, concurrency) receive loops, adds up to 5 a second
 * (300 a minute) while every loop is busy in the handler, and lets the added ones go after a receive
 * that found nothing. So one batch whose handler hangs (a webhook receiver that never answers)
 * holds one loop, as it holds one invocation in AWS, and the other batches go on. A mapping in
 * provisioned mode (`provisioned`) starts with its minimum pollers' invocations ready and scales
 * faster.
 */
export interface QueuePollerOptions {
  client: SQSClient;
  queueUrl: string;
  queueArn: string;
  region: string;
  handler: (event: SQSEvent) => Promise<SQSBatchResponse | void>;
  /** Messages per event, at most (SQS returns at most 10 per receive). */
  batchSize?: number;
  /** Long-poll wait per receive, in seconds. */
  waitSeconds?: number;
  /** Batches handled at once, at most (the mapping's maximum concurrency); 1 when left out. */
  concurrency?: number;
  /**
   * The mapping in provisioned mode (`ProvisionedPollerConfig`): its minimum pollers stay ready,
   * each running up to PROVISIONED_BATCHES_PER_POLLER invocations, so that many batches (up to
   * `concurrency`) are in flight from the start instead of five, and it scales at up to 1,000
   * concurrent invocations a minute instead of 300.
   */
  provisioned?: { minimumPollers: number };
  /**
   * The function's timeout. A handler still running after it is an invocation that timed out, as
   * Lambda reads it: an error, so its `batchItemFailures` are never read and nothing of the batch is
   * deleted (every message comes back after its visibility timeout, those it finished too). Lambda
   * then resets the execution environment, so nothing of the invocation runs on; locally the
   * handler's promise cannot be stopped and does run on (kinder than AWS: its writes still land),
   * but its answer no longer counts. No limit when left out.
   */
  timeoutMs?: number;
}

export interface QueuePoller {
  /** Receive loops running now (between min(5, concurrency) and concurrency). */
  readonly loops: number;
  stop(): Promise<void>;
}

/** The event source mapping's batches in flight when a queue becomes active, and how many it may add per second (300 a minute). */
export const ESM_INITIAL_BATCHES = 5;
export const ESM_SCALE_UP_PER_SECOND = 5;
/** Provisioned mode: concurrent invocations per event poller, and its scale-up (1,000 a minute). */
export const PROVISIONED_BATCHES_PER_POLLER = 10;
export const PROVISIONED_SCALE_UP_PER_SECOND = 16;

export function lambdaSqsRecord(message: Message, queueArn: string, region: string): SQSRecord {
  const attributes = message.Attributes ?? {};
  return {
    messageId: message.MessageId!,
    receiptHandle: message.ReceiptHandle!,
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? '1',
      SentTimestamp: attributes.SentTimestamp ?? String(Date.now()),
      SenderId: attributes.SenderId ?? 'local',
      ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: region,
  };
}

/**
 * The client the local event source mappings receive and delete with, one per engine. In AWS the
 * mappings' pollers are Lambda's own fleet, with no socket limit of ours. Here every receive loop of
 * an engine (the live fast lane's twenty, the test lanes', the planning queues': about eighty once
 * they scale) shares one client, and each holds a socket for its whole long poll; with the SDK's default
 * pool of 50 sockets, a loop's receive, or its DeleteMessageBatch after a batch, waited for another
 * loop's long poll to end. So the pool is unbounded (loopback sockets to the in-process SQS), and
 * requests get no timeout of their own: a long poll outlasts the product clients' 3 s under load.
 */
export function createPollerClient(region: string, endpoint: string): SQSClient {
  return new SQSClient({
    region,
    endpoint,
    credentials: LOCAL_CREDENTIALS,
    requestHandler: new NodeHttpHandler({ httpAgent: new Agent({ keepAlive: true, maxSockets: Infinity }) }),
  });
}

export function startQueuePoller(options: QueuePollerOptions): QueuePoller {
  const waitSeconds = options.waitSeconds ?? 1;
  const concurrency = Math.max(1, options.concurrency ?? 1);
  const provisioned = options.provisioned;
  const initial = Math.min(provisioned ? provisioned.minimumPollers * PROVISIONED_BATCHES_PER_POLLER : ESM_INITIAL_BATCHES, concurrency);
  const scaleUpPerSecond = provisioned ? PROVISIONED_SCALE_UP_PER_SECOND : ESM_SCALE_UP_PER_SECOND;
  let stopped = false;
  let loops = 0;
  let busy = 0;
  const running = new Set<Promise<void>>();
  const abort = new AbortController();
  // Every receive loop listens on this one signal while its long poll is in flight: up to
  // `concurrency` at once (20 on a provisioned lane), past Node's default warning at 10.
  setMaxListeners(concurrency + 1, abort.signal);

  async function handle(messages: Message[]): Promise<void> {
    const records = messages.map((m) => lambdaSqsRecord(m, options.queueArn, options.region));
    let failed: Set<string>;
    try {
      // An invocation still running at its timeout is an error, as in Lambda: its answer is never read.
      const response = await answerWithinTimeout(options.handler({ Records: records }), options.timeoutMs);
      const reported = reportedFailures(
        response?.batchItemFailures,
        records.map((r) => r.messageId),
      );
      failed = reported === 'whole-batch' ? new Set(records.map((r) => r.messageId)) : reported;
    } catch {
      failed = new Set(records.map((r) => r.messageId));
    }
    const done = records.filter((r) => !failed.has(r.messageId));
    if (done.length > 0)
      await options.client.send(
        new DeleteMessageBatchCommand({
          QueueUrl: options.queueUrl,
          Entries: done.map((r, i) => ({ Id: String(i), ReceiptHandle: r.receiptHandle })),
        }),
      );
  }

  async function loop(): Promise<void> {
    while (!stopped) {
      try {
        const out = await options.client.send(
          new ReceiveMessageCommand({
            QueueUrl: options.queueUrl,
            MaxNumberOfMessages: Math.min(10, options.batchSize ?? 10),
            WaitTimeSeconds: waitSeconds,
            MessageSystemAttributeNames: ['All'],
          }),
          { abortSignal: abort.signal },
        );
        const messages = out.Messages ?? [];
        if (messages.length === 0) {
          // Scaled back down once the queue is quiet, as the mapping is.
          if (loops > initial) return;
          continue;
        }
        busy++;
        try {
          await handle(messages);
        } finally {
          busy--;
        }
      } catch (error) {
        if (stopped) break;
        console.error(`queue poller: ${(error as Error).message}`);
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    }
  }

  function spawn(): void {
    loops++;
    const run = loop().finally(() => {
      loops--;
      running.delete(run);
    });
    running.add(run);
  }

  for (let i = 0; i < initial; i++) spawn();
  // Every loop busy in the handler: messages may be waiting with nobody to receive them.
  const scaler =
    concurrency > initial
      ? setInterval(() => {
          if (stopped || busy < loops) return;
          for (let i = 0; i < scaleUpPerSecond && loops < concurrency; i++) spawn();
        }, 1000)
      : undefined;
  scaler?.unref();

  return {
    get loops() {
      return loops;
    },
    stop: async () => {
      stopped = true;
      if (scaler) clearInterval(scaler);
      abort.abort();
      await Promise.all([...running]);
    },
  };
}
