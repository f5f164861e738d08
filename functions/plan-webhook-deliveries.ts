import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { webhookPlanningAdapters } from '../lib/adapters/production-webhook-adapters.js';
import { logger } from '../lib/runtime/logger.js';
import { metrics, MetricUnit } from '../lib/runtime/metrics.js';
import { builtOnFirstEvent, workerHandler } from '../lib/runtime/worker-handler.js';
import { FILLS_AT_ONCE, planSlice, SliceNotPlannedError, type FanOutDeps } from '../lib/webhooks/fan-out-event.js';
import { planningSliceSchema, tenantOf, type PlanningMessage } from '../lib/webhooks/planning-slice.js';

/**
 * The webhook planning worker (docs/webhooks-design.md, "Planning: at once or on the fair queue"), on the planning
 * queues, live and test (each an SQS fair queue grouped by mode and company, each with its own mapping): each message is one company-and-mode's
 * events of one stream batch, planned on its own (lib/webhooks/fan-out-event.ts `planSlice`: the
 * endpoints read once, each matching delivery listed and its record started, each endpoint filled
 * once). The batch's tenants are planned concurrently (one tenant's slices one after another) and
 * each slice fills its endpoints as soon as its own planning is done, so a quiet company's slice
 * received beside a noisy company's is never held until the noisy one is planned.
 *
 * A message that fails (storage unavailable…) is reported in `batchItemFailures` and comes back
 * after the queue's visibility timeout; planning it again is harmless. An unreadable message is
 * never dropped silently: it stays, and the queue's redrive policy moves it to the planning
 * dead-letter queue, which pages.
 */
/** Jobs queued into the lanes by the planning worker's fills (the rest wait for their endpoint's slots). */
export const FANNED_OUT_METRIC = 'WebhookJobsEnqueued';

/**
 * Tries of a slice within one invocation, and the pauses between them: a slice that failed (the
 * table slow or throttled past the retry layer's budget) is planned again here, harmlessly, rather
 * than left for the queue's visibility timeout (180 s) to bring back.
 */
export const PLAN_RETRY_PAUSES_MS = [250, 1_000] as const;

/**
 * A slice is not tried again with less than this left of the invocation after the pause: a try cut
 * off by the function's timeout (PLANNING_QUEUE.functionTimeoutSeconds) takes the batch's answer
 * with it, and every slice of the batch, planned or not, comes back after the visibility timeout.
 * Reported failed instead, the slice alone comes back, and planning it again is harmless.
 */
export const MIN_TIME_FOR_A_RETRY_MS = 10_000;

export function buildPlanWebhookDeliveriesCore(deps: FanOutDeps, pauses: readonly number[] = PLAN_RETRY_PAUSES_MS) {
  /** Resolves true when the message is to stay in its queue (reported in batchItemFailures). */
  async function plan(record: SQSRecord, slice: PlanningMessage, remainingMs: () => number): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      try {
        // A try stops between steps when the invocation is nearly over, so the batch is still answered.
        const planned = await planSlice(deps, slice, { fillsAtOnce: FILLS_AT_ONCE, timeLeftMs: remainingMs });
        if (planned.queued > 0) metrics.addMetric(FANNED_OUT_METRIC, MetricUnit.Count, planned.queued);
        logger.debug('webhook deliveries planned', {
          messageId: record.messageId,
          companyId: slice.companyId,
          mode: slice.mode,
          ...planned,
        });
        return false;
      } catch (error) {
        // The jobs a failed try's fills queued are counted: the next try finds them holding their slots and queues them no more.
        if (error instanceof SliceNotPlannedError && error.queued > 0) metrics.addMetric(FANNED_OUT_METRIC, MetricUnit.Count, error.queued);
        const pause = pauses[attempt];
        const details = { messageId: record.messageId, error: String((error as Error)?.message), tries: attempt + 1 };
        if (pause === undefined || remainingMs() - pause < MIN_TIME_FOR_A_RETRY_MS) {
          logger.error('webhook planning failed: the message is retried', details);
          return true;
        }
        // Logged although the next try may succeed: a failure it hides (jobs queued but left listed) is the operator's to see.
        logger.warn('webhook planning try failed: planned again in this invocation', details);
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    }
  }

  return async (event: SQSEvent, context?: Pick<Context, 'getRemainingTimeInMillis'>): Promise<SQSBatchResponse> => {
    // Without a Lambda context (a test calling the core), no time limit.
    const remainingMs = () => context?.getRemainingTimeInMillis() ?? Number.POSITIVE_INFINITY;
    const kept = new Set<string>();
    // Each tenant's slices one after another, the tenants of the batch at once: a company's burst holds its own
    // slices, never another company's, and never has all its slices' writes in flight together.
    const byTenant = new Map<string, { record: SQSRecord; slice: PlanningMessage }[]>();
    for (const record of event.Records) {
      const parsed = planningSliceSchema.safeParse(parseJson(record.body));
      if (!parsed.success) {
        // Not silently dropped: it stays, and the queue's redrive policy moves it to the planning dead-letter queue, which pages.
        logger.error('webhook planning message unreadable: left for the dead-letter queue', { messageId: record.messageId });
        kept.add(record.messageId);
        continue;
      }
      const tenant = tenantOf(parsed.data);
      byTenant.set(tenant, [...(byTenant.get(tenant) ?? []), { record, slice: parsed.data }]);
    }
    await Promise.all(
      [...byTenant.values()].map(async (slices) => {
        for (const { record, slice } of slices) if (await plan(record, slice, remainingMs)) kept.add(record.messageId);
      }),
    );
    return { batchItemFailures: event.Records.filter((r) => kept.has(r.messageId)).map((r) => ({ itemIdentifier: r.messageId })) };
  };
}

function parseJson(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

export function buildPlanWebhookDeliveriesHandler(deps: FanOutDeps) {
  return workerHandler(buildPlanWebhookDeliveriesCore(deps));
}

export const handler = builtOnFirstEvent(() => buildPlanWebhookDeliveriesHandler(webhookPlanningAdapters()));
