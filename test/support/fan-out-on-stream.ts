import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { buildFanOutWebhookEventsCore } from '../../functions/fan-out-webhook-events.js';
import { ITEM_TYPES } from '../../lib/adapters/dynamodb/table-keys.js';
import type { EventToFanOut, FanOutDeps } from '../../lib/webhooks/fan-out-event.js';

/**
 * Fans events out as production does: each the INSERT of its event item on the table's stream, the
 * batch handled by the fan-out function's core (planFanOuts, then one fill per endpoint). Throws when
 * the function reports a record failed, so a test sees what Lambda would retry.
 */
export async function fanOutOnStream(deps: FanOutDeps, ...events: EventToFanOut[]): Promise<void> {
  const stream: DynamoDBStreamEvent = {
    Records: events.map((event, i) => ({
      eventName: 'INSERT',
      eventSource: 'aws:dynamodb',
      dynamodb: { NewImage: marshall({ type: ITEM_TYPES.event, ...event }) as never, SequenceNumber: String(i + 1) },
    })),
  };
  const { batchItemFailures } = await buildFanOutWebhookEventsCore(deps)(stream);
  if (batchItemFailures.length > 0)
    throw new Error(`the fan-out failed records ${batchItemFailures.map((f) => f.itemIdentifier).join(', ')}`);
}
