import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent, SQSRecord } from 'aws-lambda';
import { buildFanOutWebhookEventsCore } from '../../functions/fan-out-webhook-events.js';
import { buildPlanWebhookDeliveriesCore } from '../../functions/plan-webhook-deliveries.js';
import { ITEM_TYPES } from '../../lib/adapters/dynamodb/table-keys.js';
import type { EventToFanOut, FanOutDeps } from '../../lib/webhooks/fan-out-event.js';
import { tenantOf, type PlanningSlice } from '../../lib/webhooks/planning-slice.js';

/**
 * The fan-out's two steps in one process, as the stack chains them through SQS: the stream
 * consumer's core (functions/fan-out-webhook-events.ts) plans the small company slices itself and
 * forwards the large ones to a planning queue that hands each slice, as the message SQS would
 * deliver, to the planning worker's core (functions/plan-webhook-deliveries.ts) at once. A slice the
 * worker fails is answered as its stream records failed, so a test sees what would be planned again
 * (SQS redelivers the message; here the test replays the stream records).
 */
export function fanOutAndPlan(deps: FanOutDeps) {
  const plan = buildPlanWebhookDeliveriesCore(deps);
  return async (event: DynamoDBStreamEvent, _context?: unknown): Promise<DynamoDBBatchResponse> => {
    const failedEvents = new Set<string>();
    const fanOut = buildFanOutWebhookEventsCore({
      ...deps,
      planning: {
        forward: async (slices: readonly PlanningSlice[]) => {
          for (const slice of slices) {
            const { batchItemFailures } = await plan({ Records: [planningMessageOf(slice)] });
            if (batchItemFailures.length > 0) for (const e of slice.events) failedEvents.add(e.eventId);
          }
          return slices.map(() => true);
        },
      },
    });
    const fannedOut = await fanOut(event);
    const failed = new Set(fannedOut.batchItemFailures.map((f) => f.itemIdentifier));
    for (const record of event.Records) {
      const eventId = record.dynamodb?.NewImage?.eventId?.S;
      if (eventId !== undefined && failedEvents.has(eventId)) failed.add(record.dynamodb?.SequenceNumber ?? '');
    }
    return {
      batchItemFailures: event.Records.map((r) => r.dynamodb?.SequenceNumber ?? '')
        .filter((s) => failed.has(s))
        .map((itemIdentifier) => ({ itemIdentifier })),
    };
  };
}

let messages = 0;
/** A slice as the planning worker receives it from SQS. */
export function planningMessageOf(slice: PlanningSlice): SQSRecord {
  return {
    messageId: `planning-${++messages}`,
    receiptHandle: 'local',
    body: JSON.stringify({ v: 1, ...slice }),
    attributes: {
      ApproximateReceiveCount: '1',
      SentTimestamp: String(Date.now()),
      SenderId: 'local',
      ApproximateFirstReceiveTimestamp: String(Date.now()),
      MessageGroupId: tenantOf(slice),
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:eu-west-2:000000000000:webhook-planning',
    awsRegion: 'eu-west-2',
  };
}

/**
 * Fans events out as production does: each the INSERT of its event item on the table's stream, the
 * batch's small slices planned by the fan-out and the large ones by the planning worker (planFanOuts,
 * then one fill per endpoint). Throws when a record is reported failed, so a test sees what Lambda would retry.
 */
export async function fanOutOnStream(deps: FanOutDeps, ...events: EventToFanOut[]): Promise<void> {
  const stream: DynamoDBStreamEvent = {
    Records: events.map((event, i) => ({
      eventName: 'INSERT',
      eventSource: 'aws:dynamodb',
      dynamodb: { NewImage: marshall({ type: ITEM_TYPES.event, ...event }) as never, SequenceNumber: String(i + 1) },
    })),
  };
  const { batchItemFailures } = await fanOutAndPlan(deps)(stream);
  if (batchItemFailures.length > 0)
    throw new Error(`the fan-out failed records ${batchItemFailures.map((f) => f.itemIdentifier).join(', ')}`);
}
