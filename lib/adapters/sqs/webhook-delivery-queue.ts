import {
  SendMessageBatchCommand,
  type BatchResultErrorEntry,
  type SendMessageBatchRequestEntry,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { DeliveryLane, DeliveryQueue } from '../../webhooks/ports.js';
import type { DeliveryJob } from '../../webhooks/webhook-delivery.js';
import { MODES } from '../../mode.js';
import { backoffMs, DEFAULT_RETRY_POLICY, isRetryableEntry, sleep, withRetries, type RetryPolicy } from '../retry.js';
import { MAX_SQS_DELAY_SECONDS } from './verification-retry-queue.js';

/** SendMessageBatch takes at most 10 entries. */
export const SQS_BATCH_SIZE = 10;

export type LaneUrls = Partial<Record<DeliveryLane, string>>;

export interface DeliveryQueueUrls {
  /** Each mode's lanes: a job goes to its own mode's (a user of one lane only is given that one). */
  live: LaneUrls;
  test: LaneUrls;
}

/**
 * The webhook delivery queues (SQS; locally fauxqs): each mode's fast and slow lanes (the
 * dead-letter queue is filled by their redrive policy alone; docs/webhooks-design.md "The contract
 * of the delivery engine"). Messages are the `DeliveryJob` JSON, sent in batches of ten, each to
 * its own mode's lane: test-mode jobs never share a queue (nor its consumers) with live ones.
 *
 * Never a silent drop: SendMessageBatch answers 200 even when some entries failed, so the failed
 * entries are sent again (those SQS blames on the service, and throttled ones) under the retry
 * layer's backoff, and any entry still not accepted, or otherwise refused as the sender's fault,
 * makes `enqueue` throw. The caller (a stream batch, a queue message, a redeliver request) then
 * fails as a whole and is retried; the entries that did go are harmless to send twice (the
 * delivery record makes a copy a no-op).
 */
/** A queue's name, the last segment of its URL or ARN: how a record's eventSourceARN names its lane. */
export function queueNameOf(urlOrArn: string): string {
  return urlOrArn.split(/[/:]/).at(-1) ?? urlOrArn;
}

export class SqsWebhookDeliveryQueue implements DeliveryQueue {
  constructor(
    private readonly client: SQSClient,
    private readonly urls: DeliveryQueueUrls,
    private readonly policy: RetryPolicy = DEFAULT_RETRY_POLICY,
  ) {}

  async enqueue(lane: DeliveryLane, jobs: readonly DeliveryJob[], delaySeconds = 0): Promise<void> {
    const delay = Math.min(MAX_SQS_DELAY_SECONDS, Math.max(0, Math.ceil(delaySeconds)));
    await Promise.all(
      MODES.map((mode) => {
        const ofMode = jobs.filter((job) => job.mode === mode);
        if (ofMode.length === 0) return undefined;
        const url = this.urls[mode][lane];
        if (url === undefined) throw new Error(`Invalid configuration: no ${mode} ${lane} delivery lane for this function`);
        return this.sendAll(url, ofMode, delay);
      }),
    );
  }

  /** The lane of a received record, by its queue's ARN (the event source mapping's eventSourceARN). */
  laneOf(eventSourceArn: string): DeliveryLane {
    const name = queueNameOf(eventSourceArn);
    for (const mode of MODES)
      for (const lane of ['fast', 'slow'] as const) {
        const url = this.urls[mode][lane];
        if (url !== undefined && name === queueNameOf(url)) return lane;
      }
    throw new Error(`a delivery message from an unknown queue: ${eventSourceArn}`);
  }

  private async sendAll(queueUrl: string, jobs: readonly DeliveryJob[], delaySeconds: number): Promise<void> {
    const batches: DeliveryJob[][] = [];
    for (let i = 0; i < jobs.length; i += SQS_BATCH_SIZE) batches.push(jobs.slice(i, i + SQS_BATCH_SIZE));
    await Promise.all(batches.map((batch) => this.sendBatch(queueUrl, batch, delaySeconds)));
  }

  private async sendBatch(queueUrl: string, jobs: readonly DeliveryJob[], delaySeconds: number): Promise<void> {
    let entries: SendMessageBatchRequestEntry[] = jobs.map((job, i) => ({
      Id: String(i),
      MessageBody: JSON.stringify(job),
      ...(delaySeconds > 0 ? { DelaySeconds: delaySeconds } : {}),
    }));
    for (let attempt = 1; ; attempt++) {
      const command = new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries });
      const out = await withRetries((options) => this.client.send(command, options), undefined, this.policy);
      const failed: BatchResultErrorEntry[] = out.Failed ?? [];
      if (failed.length === 0) return;
      const refused = failed.filter((f) => !isRetryableEntry(f));
      if (refused.length > 0 || attempt >= this.policy.maxAttempts)
        throw new Error(
          `SQS did not accept ${failed.length} of ${entries.length} delivery jobs: ${failed.map((f) => `${f.Code ?? '?'} ${f.Message ?? ''}`.trim()).join('; ')}`,
        );
      const again = new Set(failed.map((f) => f.Id));
      entries = entries.filter((entry) => again.has(entry.Id));
      await sleep(backoffMs(attempt, this.policy));
    }
  }
}
