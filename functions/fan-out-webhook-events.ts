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
import { fanOutEvent, type EventToFanOut, type FanOutDeps } from '../lib/webhooks/fan-out-event.js';

/**
 * The webhook fan-out (docs/webhooks-design.md): the table's stream, filtered by the event source
 * mapping to INSERTs of event items (`type` EVENT; checked again here, as a filter changed in the
 * stack must not make this function fan out anything else). Each event goes to its company-and-
 * mode's matching endpoints as one delivery job each (lib/webhooks/fan-out-event.ts).
 *
 * Records are fanned out concurrently and fail on their own (`batchItemFailures` by sequence
 * number): Lambda retries the batch from the first failed record, and records replayed that way
 * find their deliveries started and do not enqueue them again.
 */
export const FANNED_OUT_METRIC = 'WebhookJobsEnqueued';

export function buildFanOutWebhookEventsCore(deps: FanOutDeps) {
  async function streamRecord(record: DynamoDBRecord, batchDeps: FanOutDeps): Promise<void> {
    const image = record.dynamodb?.NewImage;
    if (record.eventName !== 'INSERT' || !image) return;
    const item = unmarshall(image as Record<string, AttributeValue>);
    if (item.type !== ITEM_TYPES.event) return;
    const event = eventOf(item);
    if (!event) {
      logger.error('event item without the fields a fan-out needs: skipped', { pk: String(item.pk) });
      return;
    }
    const result = await fanOutEvent(batchDeps, event);
    if (result.fast + result.slow > 0) metrics.addMetric(FANNED_OUT_METRIC, MetricUnit.Count, result.fast + result.slow);
    logger.debug('webhook fan-out', { eventId: event.eventId, ...result });
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
    const settled = await Promise.allSettled(event.Records.map((record) => streamRecord(record, batchDeps)));
    const batchItemFailures: { itemIdentifier: string }[] = [];
    settled.forEach((outcome, i) => {
      if (outcome.status === 'fulfilled') return;
      const itemIdentifier = event.Records[i]!.dynamodb?.SequenceNumber ?? '';
      logger.error('webhook fan-out failed: the record is retried', { itemIdentifier, error: String((outcome.reason as Error)?.message) });
      batchItemFailures.push({ itemIdentifier });
    });
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
