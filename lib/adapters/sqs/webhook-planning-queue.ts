import { SendMessageBatchCommand, type SendMessageBatchRequestEntry, type SQSClient } from '@aws-sdk/client-sqs';
import { MODES, type Mode } from '../../mode.js';
import type { PlanningQueue } from '../../webhooks/ports.js';
import { tenantOf, type PlanningMessage, type PlanningSlice } from '../../webhooks/planning-slice.js';
import { backoffMs, DEFAULT_RETRY_POLICY, isRetryableEntry, sleep, withRetries, type RetryPolicy } from '../retry.js';
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
 * One queue per mode, as the lanes are (infra/contract/webhook-lanes.ts TEST_PLANNING_QUEUE): a
 * test slice goes to test mode's queue, whose worker invocations are capped apart, so test-mode bursts
 * never hold a planning invocation a live slice needs.
 *
 * Slices go ten to a SendMessageBatch, each batch to one queue. SendMessageBatch answers 200 even when some entries failed:
 * those SQS blames on the service are sent again under the retry layer's backoff; an entry still not
 * accepted, refused as the sender's fault, or in a request that failed, answers `false` for its
 * slice (the stream records behind it are retried by the fan-out). Never a silent drop.
 */
export class SqsWebhookPlanningQueue implements PlanningQueue {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrls: Readonly<Record<Mode, string>>,
    private readonly policy: RetryPolicy = DEFAULT_RETRY_POLICY,
  ) {}

  async forward(slices: readonly PlanningSlice[]): Promise<boolean[]> {
    const accepted = slices.map(() => false);
    const batches: { mode: Mode; places: number[] }[] = [];
    for (const mode of MODES) {
      const places = slices.flatMap((slice, k) => (slice.mode === mode ? [k] : []));
      for (let i = 0; i < places.length; i += SQS_BATCH_SIZE) batches.push({ mode, places: places.slice(i, i + SQS_BATCH_SIZE) });
    }
    await Promise.all(
      batches.map(async ({ mode, places: batch }) => {
        const sent = await this.sendBatch(
          this.queueUrls[mode],
          batch.map((k) => slices[k]!),
        ).catch((error: unknown) => {
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
  private async sendBatch(queueUrl: string, slices: readonly PlanningSlice[]): Promise<number[]> {
    let entries: SendMessageBatchRequestEntry[] = slices.map((slice, i) => {
      const message: PlanningMessage = { v: 1, mode: slice.mode, companyId: slice.companyId, events: slice.events };
      return { Id: String(i), MessageBody: JSON.stringify(message), MessageGroupId: tenantOf(slice) };
    });
    const done: number[] = [];
    for (let attempt = 1; ; attempt++) {
      const command = new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries });
      const out = await withRetries((options) => this.client.send(command, options), undefined, this.policy);
      for (const ok of out.Successful ?? []) done.push(Number(ok.Id));
      const again = new Set((out.Failed ?? []).filter(isRetryableEntry).map((f) => f.Id));
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
