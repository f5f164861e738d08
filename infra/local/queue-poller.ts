import { DeleteMessageBatchCommand, ReceiveMessageCommand, type Message, type SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';

/**
 * What the Lambda event source mapping does with an SQS queue in AWS, for the local SQS (fauxqs):
 * long-polls the queue, hands the handler batches in the same event shape (`SQSEvent`), deletes
 * the messages that succeeded and leaves the ones named in `batchItemFailures` (or the whole batch
 * when the handler throws) to come back after their visibility timeout, until the queue's redrive
 * policy moves them to its dead-letter queue.
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
}

export interface QueuePoller {
  stop(): Promise<void>;
}

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

export function startQueuePoller(options: QueuePollerOptions): QueuePoller {
  const waitSeconds = options.waitSeconds ?? 1;
  let stopped = false;
  const abort = new AbortController();
  const loop = (async () => {
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
        if (messages.length === 0) continue;
        const records = messages.map((m) => lambdaSqsRecord(m, options.queueArn, options.region));
        let failed: Set<string>;
        try {
          const response = await options.handler({ Records: records });
          failed = new Set((response?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
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
      } catch (error) {
        if (stopped) break;
        console.error(`queue poller: ${(error as Error).message}`);
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      abort.abort();
      await loop;
    },
  };
}
