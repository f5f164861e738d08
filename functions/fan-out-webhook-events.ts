import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { webhookFanOutAdapters } from '../lib/adapters/production-webhook-adapters.js';
import { ITEM_TYPES } from '../lib/adapters/dynamodb/table-keys.js';
import { isMode } from '../lib/mode.js';
import { logger } from '../lib/runtime/logger.js';
import { metrics, MetricUnit } from '../lib/runtime/metrics.js';
import { builtOnFirstEvent, workerHandler } from '../lib/runtime/worker-handler.js';
import { fillPlans, planFanOuts, type EventToFanOut, type FanOutDeps, type FanOutPlan } from '../lib/webhooks/fan-out-event.js';

/**
 * The webhook fan-out (docs/webhooks-design.md): the table's stream, filtered by the event source
 * mapping to INSERTs of event items (`type` EVENT; checked again here, as a filter changed in the
 * stack must not make this function fan out anything else). Each event goes to its company-and-
 * mode's matching endpoints as one delivery job each (lib/webhooks/fan-out-event.ts).
 *
 * The batch's events are planned together (each company-and-mode's endpoints read once, every job
 * put on its endpoint's waiting list and its record started in a few requests:
 * lib/webhooks/fan-out-event.ts planFanOuts), and fail on their own (`batchItemFailures` by sequence
 * number); then each endpoint with new jobs is filled once (its free slots queued, the rest left
 * waiting: lib/webhooks/delivery-slots.ts), and if that fails every record with jobs is reported.
 * Lambda retries from the first failed record; a replayed record finds its deliveries started and
 * waiting, and fills them (or finds them attempted, and takes them off the waiting list).
 */
/** Jobs queued into the lanes by the fan-out's fills (the rest wait for their endpoint's slots). */
export const FANNED_OUT_METRIC = 'WebhookJobsEnqueued';

export function buildFanOutWebhookEventsCore(deps: FanOutDeps) {
  /** The event an inserted event item carries, or undefined when the record is not one to fan out. */
  function eventOfRecord(record: DynamoDBRecord): EventToFanOut | undefined {
    const image = record.dynamodb?.NewImage;
    if (record.eventName !== 'INSERT' || !image) return undefined;
    const item = unmarshall(image as Record<string, AttributeValue>);
    if (item.type !== ITEM_TYPES.event) return undefined;
    const event = eventOf(item);
    if (!event) logger.error('event item without the fields a fan-out needs: skipped', { pk: String(item.pk) });
    return event;
  }

  return async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
    const toFanOut = event.Records.flatMap((record, i) => {
      const found = eventOfRecord(record);
      return found ? [{ i, event: found }] : [];
    });
    // The whole batch planned at once: each company-and-mode's endpoints read once, every delivery's record
    // started in a few requests (planFanOuts); an event that could not be planned fails on its own.
    const planned = await planFanOuts(
      deps,
      toFanOut.map((r) => r.event),
    );
    const failed = new Set<number>();
    const plans: { i: number; plan: FanOutPlan }[] = [];
    planned.forEach((outcome, k) => {
      const { i, event: fannedOut } = toFanOut[k]!;
      if (!outcome.ok) {
        failed.add(i);
        logger.error('webhook fan-out failed: the record is retried', { error: String((outcome.error as Error)?.message) });
        return;
      }
      plans.push({ i, plan: outcome.plan });
      logger.debug('webhook fan-out', { eventId: fannedOut.eventId, jobs: outcome.plan.jobs.length });
    });
    // Every endpoint with new jobs filled once (its free slots, the rest waiting); if that fails, each record
    // with jobs is retried (its jobs are on their waiting lists, so the retry fills them).
    try {
      const queued = await fillPlans(
        deps,
        plans.map((p) => p.plan),
      );
      if (queued > 0) metrics.addMetric(FANNED_OUT_METRIC, MetricUnit.Count, queued);
    } catch (error) {
      logger.error('webhook fan-out could not queue: the records are retried', { error: String((error as Error)?.message) });
      for (const p of plans) if (p.plan.jobs.length > 0) failed.add(p.i);
    }
    const batchItemFailures = [...failed]
      .sort((a, b) => a - b)
      .map((i) => ({ itemIdentifier: event.Records[i]!.dynamodb?.SequenceNumber ?? '' }));
    return { batchItemFailures };
  };
}

function eventOf(item: Record<string, unknown>): EventToFanOut | undefined {
  const { eventId, eventType, companyId, mode, createdAt } = item;
  if (typeof eventId !== 'string' || typeof eventType !== 'string' || typeof companyId !== 'string' || typeof createdAt !== 'string')
    return undefined;
  if (!isMode(mode)) return undefined;
  return { eventId, eventType, companyId, mode, createdAt };
}

export function buildFanOutWebhookEventsHandler(deps: FanOutDeps) {
  return workerHandler(buildFanOutWebhookEventsCore(deps));
}

export const handler = builtOnFirstEvent(() => buildFanOutWebhookEventsHandler(webhookFanOutAdapters()));
