import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import middy from '@middy/core';
import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { webhookFanOutAdapters } from '../lib/adapters/production-webhook-adapters.js';
import { ITEM_TYPES } from '../lib/adapters/dynamodb/table-keys.js';
import { isMode } from '../lib/mode.js';
import { logger } from '../lib/runtime/logger.js';
import { metrics, MetricUnit } from '../lib/runtime/metrics.js';
import { tracer } from '../lib/runtime/tracer.js';
import { enqueuePlans, planFanOut, type FanOutPlan, type EventToFanOut, type FanOutDeps } from '../lib/webhooks/fan-out-event.js';

/**
 * The webhook fan-out (docs/webhooks-design.md): the table's stream, filtered by the event source
 * mapping to INSERTs of event items (`type` EVENT; checked again here, as a filter changed in the
 * stack must not make this function fan out anything else). Each event goes to its company-and-
 * mode's matching endpoints as one delivery job each (lib/webhooks/fan-out-event.ts).
 *
 * Records are planned concurrently (their deliveries started) and fail on their own
 * (`batchItemFailures` by sequence number); then every planned job of the batch is enqueued at once,
 * one SendMessageBatch per ten jobs and lane rather than one per event, and if that fails every
 * record with jobs is reported. Lambda retries from the first failed record; a replayed record
 * finds its deliveries started and pending, and enqueues them (or finds them attempted, and does not).
 */
export const FANNED_OUT_METRIC = 'WebhookJobsEnqueued';

export function buildFanOutWebhookEventsCore(deps: FanOutDeps) {
  /** The plan of one record's event (its deliveries started), or undefined when the record is not one to fan out. */
  async function planRecord(record: DynamoDBRecord, batchDeps: FanOutDeps): Promise<FanOutPlan | undefined> {
    const image = record.dynamodb?.NewImage;
    if (record.eventName !== 'INSERT' || !image) return undefined;
    const item = unmarshall(image as Record<string, AttributeValue>);
    if (item.type !== ITEM_TYPES.event) return undefined;
    const event = eventOf(item);
    if (!event) {
      logger.error('event item without the fields a fan-out needs: skipped', { pk: String(item.pk) });
      return undefined;
    }
    const plan = await planFanOut(batchDeps, event);
    logger.debug('webhook fan-out', { eventId: event.eventId, fast: plan.lanes.fast.length, slow: plan.lanes.slow.length });
    return plan;
  }

  return async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
    // One read of a company-and-mode's endpoints per batch: a batch of 100 events of one partner's
    // batch of cases needs its endpoint list once, not 100 times (the list is read when the batch
    // starts, a few milliseconds after its events were written).
    const lists = new Map<string, ReturnType<FanOutDeps['endpoints']['list']>>();
    const batchDeps: FanOutDeps = {
      ...deps,
      endpoints: {
        list: (mode, companyId, deadline) => {
          const key = `${mode}\u0000${companyId}`;
          let list = lists.get(key);
          if (!list) lists.set(key, (list = deps.endpoints.list(mode, companyId, deadline)));
          return list;
        },
      },
    };
    const settled = await Promise.allSettled(event.Records.map((record) => planRecord(record, batchDeps)));
    const failed = new Set<number>();
    settled.forEach((outcome, i) => {
      if (outcome.status === 'rejected') {
        failed.add(i);
        logger.error('webhook fan-out failed: the record is retried', { error: String((outcome.reason as Error)?.message) });
      }
    });
    // Every planned record's jobs in one go per lane; if that fails, each of those records is retried
    // (its deliveries are started and pending, so the retry enqueues them).
    const planned = settled.flatMap((outcome, i) => (outcome.status === 'fulfilled' && outcome.value ? [{ i, plan: outcome.value }] : []));
    try {
      await enqueuePlans(
        deps.queue,
        planned.map((p) => p.plan),
      );
      const jobs = planned.reduce((n, p) => n + p.plan.lanes.fast.length + p.plan.lanes.slow.length, 0);
      if (jobs > 0) metrics.addMetric(FANNED_OUT_METRIC, MetricUnit.Count, jobs);
    } catch (error) {
      logger.error('webhook fan-out could not enqueue: the records are retried', { error: String((error as Error)?.message) });
      for (const p of planned) if (p.plan.lanes.fast.length + p.plan.lanes.slow.length > 0) failed.add(p.i);
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

/** The core inside the Powertools chain: X-Ray segment, the Lambda context on log lines, metrics flushed once per invocation. */
export function buildFanOutWebhookEventsHandler(deps: FanOutDeps) {
  return middy<DynamoDBStreamEvent, DynamoDBBatchResponse, Error, Context>()
    .use(captureLambdaHandler(tracer, { captureResponse: false }))
    .use(injectLambdaContext(logger))
    .use(logMetrics(metrics, { captureColdStartMetric: true }))
    .handler(buildFanOutWebhookEventsCore(deps));
}

let production: ReturnType<typeof buildFanOutWebhookEventsHandler> | undefined;
/** Built on the first event, so the local stack can load this module before its configuration exists. */
export const handler = (event: DynamoDBStreamEvent, context: Context): Promise<DynamoDBBatchResponse> =>
  (production ??= buildFanOutWebhookEventsHandler(webhookFanOutAdapters()))(event, context);
