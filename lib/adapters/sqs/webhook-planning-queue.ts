import { SendMessageBatchCommand, type SendMessageBatchRequestEntry, type SQSClient } from '@aws-sdk/client-sqs';
import type { PlanningQueue } from '../../webhooks/ports.js';
import { tenantOf, type PlanningMessage, type PlanningSlice } from '../../webhooks/planning-slice.js';
import { backoffMs, DEFAULT_RETRY_POLICY, sleep, withRetries, type RetryPolicy } from '../retry.js';
import { SQS_BATCH_SIZE } from './webhook-delivery-queue.js';
import { logger } from '../../runtime/logger.js';

/**
 * The webhook planning queue (SQS; locally fauxqs): an SQS fair queue, that is a standard queue whose
 * messages carry a MessageGroupId (docs/webhooks-design.md, "Planning: at once or on the fair queue"). Each slice
 * is one message, its group the slice's tenant (mode and company): SQS then hands a quiet tenant's
 * message to the planning worker before the backlog of a tenant holding a disproportionate share
 * of the messages in flight. On a standard queue the group orders nothing within a tenant and
 * locks nothing (unlike FIFO): the worker plans several slices of one tenant at once.
 *
 * Slices go ten to a SendMessageBatch. SendMessageBatch answers 200 even when some entries failed:
 * those SQS blames on the service are sent again under the retry layer's backoff; an entry still not
 * accepted, refused as the sender's fault, or in a request that failed, answers `false` for its
 * slice (the stream records behind it are retried by the fan-out). Never a silent drop.
 */
export class SqsWebhookPlanningQueue implements PlanningQueue {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
    private readonly policy: RetryPolicy = DEFAULT_RETRY_POLICY,
  ) {}

  async forward(slices: readonly PlanningSlice[]): Promise<boolean[]> {
    const accepted = slices.map(() => false);
    const batches: number[][] = [];
    for (let i = 0; i < slices.length; i += SQS_BATCH_SIZE) batches.push(slices.slice(i, i + SQS_BATCH_SIZE).map((_, k) => i + k));
    await Promise.all(
      batches.map(async (batch) => {
        const sent = await this.sendBatch(batch.map((k) => slices[k]!)).catch((error: unknown) => {
          // The slices answer false (their stream records are retried); the cause is for the operator's log.
          logger.error('webhook planning queue: a SendMessageBatch failed', { error: String((error as Error)?.message ?? error) });
          return [] as number[];
        });
        for (const k of sent) accepted[batch[k]!] = true;
      }),
    );
    return accepted;
  }

  /** The places (in `slices`) of the entries SQS accepted. */
  private async sendBatch(slices: readonly PlanningSlice[]): Promise<number[]> {
    let entries: SendMessageBatchRequestEntry[] = slices.map((slice, i) => {
      const message: PlanningMessage = { v: 1, mode: slice.mode, companyId: slice.companyId, events: slice.events };
      return { Id: String(i), MessageBody: JSON.stringify(message), MessageGroupId: tenantOf(slice) };
    });
    const done: number[] = [];
    for (let attempt = 1; ; attempt++) {
      const command = new SendMessageBatchCommand({ QueueUrl: this.queueUrl, Entries: entries });
      const out = await withRetries((options) => this.client.send(command, options), undefined, this.policy);
      for (const ok of out.Successful ?? []) done.push(Number(ok.Id));
      const again = new Set((out.Failed ?? []).filter((f) => !f.SenderFault).map((f) => f.Id));
      if (again.size === 0 || attempt >= this.policy.maxAttempts) {
        if ((out.Failed ?? []).length > 0)
          logger.error('webhook planning queue: entries not accepted', { codes: [...new Set((out.Failed ?? []).map((f) => f.Code))] });
        return done;
      }
      entries = entries.filter((entry) => again.has(entry.Id));
      await sleep(backoffMs(attempt, this.policy));
    }
  }
}
