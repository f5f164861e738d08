import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBStreamEvent, SQSEvent } from 'aws-lambda';
import { buildDeliverWebhooksHandler, type DeliveryMessages } from '../../functions/deliver-webhooks.js';
import { fanOutAndPlan } from './fan-out-on-stream.js';
import { eventItem } from '../../lib/adapters/dynamodb/event-items.js';
import { DynamoEventStore } from '../../lib/adapters/dynamodb/event-store.js';
import { DynamoWebhookDeliveryStore } from '../../lib/adapters/dynamodb/webhook-delivery-store.js';
import { DynamoWebhookDeliveryReads } from '../../lib/adapters/dynamodb/webhook-delivery-reads.js';
import { DynamoWebhookDeliverySlots } from '../../lib/adapters/dynamodb/webhook-delivery-slots.js';
import { DynamoWebhookEndpointStore } from '../../lib/adapters/dynamodb/webhook-endpoint-store.js';
import { secretBoxOnce } from '../../lib/adapters/secrets/webhook-secret-key.js';
import { WebhookSender } from '../../lib/adapters/webhooks/webhook-sender.js';
import { buildCaseEvent } from '../../lib/cases/case-lifecycle.js';
import type { CaseView } from '../../lib/cases/case-record.js';
import type { Mode } from '../../lib/mode.js';
import { randomBase62 } from '../../lib/random-id.js';
import { config } from '../../lib/runtime/config.js';
import type { DeliveryLane } from '../../lib/webhooks/ports.js';
import { generateEndpointSecret, type EndpointSecret } from '../../lib/webhooks/signature.js';
import type { DeliveryJob } from '../../lib/webhooks/webhook-delivery.js';
import type { WebhookEndpoint } from '../../lib/webhooks/webhook-endpoint.js';
import { ddb, lambdaContext } from './fixtures.js';
import { startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.js';

/**
 * The event item as stored, but tagged so the local engines' own fan-out (which reads the table's
 * stream under every integration test) leaves it alone: these tests hand the stream record to their
 * own handler and count every request their receivers get. The delivery reads the item by its key,
 * whatever its tag.
 */
function outsideTheEngines(item: Parameters<typeof unmarshall>[0]): Record<string, unknown> {
  return { ...unmarshall(item), type: 'EVENT_OUTSIDE_THE_LOCAL_ENGINES' };
}

export const FAST_ARN = 'arn:aws:sqs:eu-west-2:000000000000:webhook-deliveries';
export const SLOW_ARN = 'arn:aws:sqs:eu-west-2:000000000000:webhook-deliveries-slow';

/** The queue actions the functions may take: send (with a delay). There is no way to hold a message in flight, nor to dead-letter one. */
class RecordingMessages implements DeliveryMessages {
  readonly enqueued: { lane: DeliveryLane; job: DeliveryJob; delaySeconds: number }[] = [];
  /** A faulty queue: every send fails (SQS unavailable). */
  failing = false;
  async enqueue(lane: DeliveryLane, jobs: readonly DeliveryJob[], delaySeconds = 0) {
    if (this.failing) throw new Error('SQS unavailable');
    for (const job of jobs) this.enqueued.push({ lane, job, delaySeconds });
  }
}

/**
 * The fan-out and delivery functions over DynamoDB Local, a real receiver on loopback and the
 * real sender (local-development option), with a recording stand-in for the SQS actions (the
 * engines' end-to-end tests run the real local SQS). The clock is the test file's own, fixed and
 * moved by hand (`now`); the sender stamps attempts with the same clock.
 *
 * Call once per test file, at its top level: the receivers it starts are that file's, closed by
 * the `afterAll` registered here.
 */
export function webhookDeliveryRig(now: () => Date) {
  const receivers: WebhookReceiver[] = [];
  afterAll(async () => Promise.all(receivers.map((r) => r.close())));

  async function receiver(statuses: number[]) {
    let n = 0;
    const r = await startWebhookReceiver({
      handler: (_req, res) => res.writeHead(statuses[Math.min(n++, statuses.length - 1)]!).end(),
    });
    receivers.push(r);
    return r;
  }

  function rig() {
    const cfg = config();
    const endpoints = new DynamoWebhookEndpointStore(ddb(), cfg.tableName, secretBoxOnce(cfg));
    const deliveries = new DynamoWebhookDeliveryStore(ddb(), cfg.tableName, now);
    const messages = new RecordingMessages();
    const slots = new DynamoWebhookDeliverySlots(ddb(), cfg.tableName, now);
    const fanOut = fanOutAndPlan({ endpoints, deliveries, slots, queue: messages, now });
    const deliver = buildDeliverWebhooksHandler({
      delivery: {
        endpoints,
        events: new DynamoEventStore(ddb(), cfg.tableName),
        deliveries,
        sender: new WebhookSender({ allowLocalDevelopment: true, now }),
        now,
        random: () => 0.5,
      },
      messages,
      slots,
      laneOf: (arn) => (arn === FAST_ARN ? 'fast' : 'slow'),
      reads: new DynamoWebhookDeliveryReads(ddb(), cfg.tableName, { endpoints, deliveries }),
    });
    return { endpoints, deliveries, messages, slots, fanOut, deliver };
  }

  async function newEndpoint(r: ReturnType<typeof rig>, url: string, overrides: Partial<WebhookEndpoint> = {}, secrets?: EndpointSecret[]) {
    const endpoint: WebhookEndpoint = {
      endpointId: `we_${randomBase62(22)}`,
      companyId: `co_${randomBase62(12)}`,
      mode: 'live',
      url,
      events: ['*'],
      description: '',
      status: 'enabled',
      createdAt: now().toISOString(),
      updatedAt: now().toISOString(),
      version: 1,
      ...overrides,
    };
    const sealed = secrets ?? [{ secret: generateEndpointSecret(), createdAt: now().toISOString() }];
    await r.endpoints.create(endpoint, sealed, 16);
    return { endpoint, secrets: sealed };
  }

  /** A case.created event stored as the outbox stores it, and the stream record of its INSERT. */
  async function storedEvent(companyId: string, mode: Mode = 'live') {
    const caseId = `case_${randomBase62(22)}`;
    const view = { id: caseId, status: 'DRAFT', createdAt: now().toISOString(), updatedAt: now().toISOString() } as unknown as CaseView;
    const event = buildCaseEvent(view, now().toISOString());
    const item = eventItem(event, companyId, mode);
    await ddb().send(new PutCommand({ TableName: config().tableName, Item: outsideTheEngines(item) }));
    const record: DynamoDBStreamEvent = {
      Records: [{ eventName: 'INSERT', dynamodb: { NewImage: item as never, SequenceNumber: '1' }, eventSource: 'aws:dynamodb' }],
    };
    return { event, record, payload: JSON.stringify(event) };
  }

  return { receivers, receiver, rig, newEndpoint, storedEvent };
}

export function sqsEvent(job: DeliveryJob, arn = FAST_ARN, receiptHandle = 'rh-1'): SQSEvent {
  return {
    Records: [
      {
        messageId: `m-${randomBase62(8)}`,
        receiptHandle,
        body: JSON.stringify(job),
        attributes: {} as never,
        messageAttributes: {},
        md5OfBody: '',
        eventSource: 'aws:sqs',
        eventSourceARN: arn,
        awsRegion: 'eu-west-2',
      },
    ],
  };
}

export const ctx = () => lambdaContext() as never;
