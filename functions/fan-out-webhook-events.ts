import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { webhookFanOutAdapters } from '../lib/adapters/production-webhook-adapters.js';
import { ITEM_TYPES } from '../lib/adapters/dynamodb/table-keys.js';
import { isMode } from '../lib/mode.js';
import { logger } from '../lib/runtime/logger.js';
import { builtOnFirstEvent, workerHandler } from '../lib/runtime/worker-handler.js';
import { forwardToPlanning, type EventToFanOut } from '../lib/webhooks/fan-out-event.js';
import type { PlanningQueue } from '../lib/webhooks/ports.js';

/**
 * The webhook fan-out (docs/webhooks-design.md, "Planning on a fair queue"): the table's stream,
 * filtered by the event source mapping to INSERTs of event items (`type` EVENT; checked again here,
 * as a filter changed in the stack must not make this function fan out anything else). It plans
 * nothing itself: it cuts the batch into one slice per company and mode and sends each to the
 * planning queue (an SQS fair queue grouped by that tenant), where the planning worker
 * (functions/plan-webhook-deliveries.ts) plans each slice on its own. So one company's burst never
 * holds another company's events in the same stream batch while the whole batch is planned (what
 * kept a victim's first attempt waiting 2.7–7.5 s behind a hostile tenant's burst).
 *
 * A slice SQS did not take fails its records (`batchItemFailures` by sequence number); Lambda retries
 * from the first failed record, and a slice sent twice is planned twice, harmlessly (a replayed
 * event finds its deliveries started: lib/webhooks/fan-out-event.ts).
 */
export interface FanOutToPlanningDeps {
  planning: PlanningQueue;
}

export function buildFanOutWebhookEventsCore(deps: FanOutToPlanningDeps) {
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
    const refused = await forwardToPlanning(
      deps,
      toFanOut.map((r) => r.event),
    );
    if (refused.length > 0)
      logger.error('webhook fan-out could not forward events to planning: their records are retried', { events: refused.length });
    const batchItemFailures = refused
      .map((k) => toFanOut[k]!.i)
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

export function buildFanOutWebhookEventsHandler(deps: FanOutToPlanningDeps) {
  return workerHandler(buildFanOutWebhookEventsCore(deps));
}

export const handler = builtOnFirstEvent(() => buildFanOutWebhookEventsHandler(webhookFanOutAdapters()));
