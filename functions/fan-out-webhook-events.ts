import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { webhookFanOutAdapters } from '../lib/adapters/production-webhook-adapters.js';
import { ITEM_TYPES } from '../lib/adapters/dynamodb/table-keys.js';
import { isMode } from '../lib/mode.js';
import { logger } from '../lib/runtime/logger.js';
import { builtOnFirstEvent, workerHandler } from '../lib/runtime/worker-handler.js';
import { metrics, MetricUnit } from '../lib/runtime/metrics.js';
import { fanOutBatch, type EventToFanOut, type FanOutBatchDeps } from '../lib/webhooks/fan-out-event.js';

/**
 * The webhook fan-out (docs/webhooks-design.md, "Planning: at once or on the fair queue"): the
 * table's stream, filtered by the event source mapping to INSERTs of event items (`type` EVENT;
 * checked again here, as a filter changed in the stack must not make this function fan out
 * anything else). The batch is cut into one slice per company and mode; the small slices (a
 * company's trickle) are planned here at once, and the large ones (a burst to many endpoints) are
 * forwarded to their mode's planning queue (an SQS fair queue grouped by that tenant), which the planning
 * worker (functions/plan-webhook-deliveries.ts) plans beside every other tenant's
 * (lib/webhooks/fan-out-event.ts `fanOutBatch`). So the stream, read in order, never waits behind
 * one company's burst, and a quiet company's event has no queue between it and its first attempt.
 *
 * An event that could not be planned or forwarded fails its record (`batchItemFailures` by sequence
 * number); Lambda retries from the first failed record, and planning or forwarding an event again
 * is harmless (a replayed event finds its deliveries started).
 */
/** Jobs queued into the lanes by the fan-out's fills (the rest wait for their endpoint's slots). */
export const FANNED_OUT_METRIC = 'WebhookJobsEnqueued';

export function buildFanOutWebhookEventsCore(deps: FanOutBatchDeps) {
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
    const done = await fanOutBatch(
      deps,
      toFanOut.map((r) => r.event),
    );
    if (done.queued > 0) metrics.addMetric(FANNED_OUT_METRIC, MetricUnit.Count, done.queued);
    logger.debug('webhook fan-out', { events: toFanOut.length, planned: done.planned, forwarded: done.forwarded, queued: done.queued });
    if (done.failed.length > 0)
      logger.error('webhook fan-out could not plan or forward events: their records are retried', {
        events: done.failed.length,
        errors: done.errors,
      });
    const batchItemFailures = done.failed.map((k) => ({ itemIdentifier: event.Records[toFanOut[k]!.i]!.dynamodb?.SequenceNumber ?? '' }));
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

export function buildFanOutWebhookEventsHandler(deps: FanOutBatchDeps) {
  return workerHandler(buildFanOutWebhookEventsCore(deps));
}

export const handler = builtOnFirstEvent(() => buildFanOutWebhookEventsHandler(webhookFanOutAdapters()));
