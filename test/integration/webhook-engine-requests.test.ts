import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBStreamEvent, SQSEvent } from 'aws-lambda';
import { buildDeliverWebhooksHandler, type DeliveryMessages } from '../../functions/deliver-webhooks.js';
import { fanOutAndPlan, planningMessageOf } from '../support/fan-out-on-stream.js';
import { buildPlanWebhookDeliveriesCore } from '../../functions/plan-webhook-deliveries.js';
import { documentClient } from '../../lib/adapters/dynamodb/dynamo-client.js';
import { eventItem } from '../../lib/adapters/dynamodb/event-items.js';
import { DynamoEventStore } from '../../lib/adapters/dynamodb/event-store.js';
import { DynamoWebhookDeliveryStore } from '../../lib/adapters/dynamodb/webhook-delivery-store.js';
import { DynamoWebhookDeliveryReads } from '../../lib/adapters/dynamodb/webhook-delivery-reads.js';
import { DynamoWebhookDeliverySlots } from '../../lib/adapters/dynamodb/webhook-delivery-slots.js';
import { DynamoCompanyStore } from '../../lib/adapters/dynamodb/company-store.js';
import { sweepEndpoint } from '../../lib/webhooks/delivery-slots.js';
import { DynamoWebhookEndpointStore } from '../../lib/adapters/dynamodb/webhook-endpoint-store.js';
import { secretBoxOnce } from '../../lib/adapters/secrets/webhook-secret-key.js';
import { WebhookSender } from '../../lib/adapters/webhooks/webhook-sender.js';
import { buildCaseEvent } from '../../lib/cases/case-lifecycle.js';
import type { CaseView } from '../../lib/cases/case-record.js';
import type { Mode } from '../../lib/mode.js';
import { randomBase62 } from '../../lib/random-id.js';
import { config } from '../../lib/runtime/config.js';
import { DISABLE_AFTER_MS } from '../../lib/webhooks/endpoint-health.js';
import type { DeliveryLane } from '../../lib/webhooks/ports.js';
import { generateEndpointSecret } from '../../lib/webhooks/signature.js';
import type { DeliveryJob } from '../../lib/webhooks/webhook-delivery.js';
import { lambdaContext } from '../support/fixtures.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { decide, itemRequestsOf, type ItemRequest } from '../unit/infra/dynamodb-iam.js';
import { statementsOfFunction, synth } from '../unit/infra/synth.js';

/**
 * The event item as stored, but tagged so the local engines' own fan-out (which reads the table's
 * stream under every integration test) leaves it alone: these tests hand the stream record to their
 * own handler and count every request their receivers get. The delivery reads the item by its key,
 * whatever its tag.
 */
function outsideTheEngines(item: Parameters<typeof unmarshall>[0]): Record<string, unknown> {
  return { ...unmarshall(item), type: 'EVENT_OUTSIDE_THE_LOCAL_ENGINES' };
}

/**
 * The webhook fan-out and delivery functions as the stack runs them, every item request they send
 * recorded on its way out (the process's one DocumentClient) and judged against the synthesised
 * policy of the function that sent it: a replayed stream record, a first attempt that fails (the
 * endpoint's failing run starts), a retry that succeeds (the run cleared), and five days of
 * failures that disable the endpoint. The stores as production-adapters.ts wires them: the fan-out's
 * endpoint store holds no sealing key.
 */
const recorded: ItemRequest[] = [];
const client = documentClient(config());
const send = client.send.bind(client) as (...args: unknown[]) => Promise<unknown>;
Reflect.set(client, 'send', (...args: unknown[]): Promise<unknown> => {
  recorded.push(...itemRequestsOf(args[0] as Parameters<typeof itemRequestsOf>[0]));
  return send(...args);
});

async function requestsOf(step: () => Promise<unknown>): Promise<ItemRequest[]> {
  recorded.length = 0;
  await step();
  return [...recorded];
}

let clock = new Date();
const now = () => clock;

class RecordingMessages implements DeliveryMessages {
  readonly enqueued: DeliveryJob[] = [];
  async enqueue(_lane: DeliveryLane, jobs: readonly DeliveryJob[]) {
    this.enqueued.push(...jobs);
  }
}

const FAST_ARN = 'arn:aws:sqs:eu-west-2:000000000000:webhook-deliveries';
const SLOW_ARN = 'arn:aws:sqs:eu-west-2:000000000000:webhook-deliveries-slow';

function sqsEvent(job: DeliveryJob, arn: string): SQSEvent {
  return {
    Records: [
      {
        messageId: `m-${randomBase62(8)}`,
        receiptHandle: 'rh',
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

let receiver: WebhookReceiver;
let statuses: number[] = [];
beforeAll(async () => {
  receiver = await startWebhookReceiver({ handler: (_req, res) => res.writeHead(statuses.shift() ?? 200).end() });
});
afterAll(() => receiver.close());

const synthesised = synth();

describe.each<Mode>(['live', 'test'])('the webhook engine functions send only item requests their roles allow, %s mode', (mode) => {
  const sent = {
    WebhookFanOut: [] as ItemRequest[],
    WebhookPlan: [] as ItemRequest[],
    WebhookDeliver: [] as ItemRequest[],
    WebhookSweep: [] as ItemRequest[],
  };

  beforeAll(async () => {
    const cfg = config();
    const messages = new RecordingMessages();
    const sealing = new DynamoWebhookEndpointStore(client, cfg.tableName, secretBoxOnce(cfg));
    const slots = new DynamoWebhookDeliverySlots(client, cfg.tableName, now);
    const planning = {
      endpoints: new DynamoWebhookEndpointStore(client, cfg.tableName),
      deliveries: new DynamoWebhookDeliveryStore(client, cfg.tableName, now),
      slots,
      queue: messages,
      now,
    };
    const fanOut = fanOutAndPlan(planning);
    const plan = buildPlanWebhookDeliveriesCore(planning);
    const deliveries = new DynamoWebhookDeliveryStore(client, cfg.tableName, now);
    const deliver = buildDeliverWebhooksHandler({
      delivery: {
        endpoints: sealing,
        events: new DynamoEventStore(client, cfg.tableName),
        deliveries,
        sender: new WebhookSender({ allowLocalDevelopment: true, now }),
        now,
        random: () => 0.5,
      },
      messages,
      slots,
      laneOf: (arn) => (arn === FAST_ARN ? 'fast' : 'slow'),
      // The batch read as the function has it: its BatchGetItem is judged on every key at once.
      reads: new DynamoWebhookDeliveryReads(client, cfg.tableName, { endpoints: sealing, deliveries }),
    });

    const companyId = `co_${randomBase62(12)}`;
    const at = clock.toISOString();
    await sealing.create(
      {
        endpointId: `we_${randomBase62(22)}`,
        companyId,
        mode,
        url: receiver.url,
        events: ['*'],
        description: '',
        status: 'enabled',
        createdAt: at,
        updatedAt: at,
        version: 1,
      },
      [{ secret: generateEndpointSecret(), createdAt: at }],
      16,
    );
    const view = { id: `case_${randomBase62(22)}`, status: 'DRAFT', createdAt: at, updatedAt: at } as unknown as CaseView;
    const item = eventItem(buildCaseEvent(view, at), companyId, mode);
    await client.send(new PutCommand({ TableName: cfg.tableName, Item: outsideTheEngines(item) }));
    const stream: DynamoDBStreamEvent = {
      Records: [{ eventName: 'INSERT', dynamodb: { NewImage: item as never, SequenceNumber: '1' }, eventSource: 'aws:dynamodb' }],
    };

    // The planning worker given the event's slice (as when it was part of a burst), then the fan-out given its
    // stream record twice (one delivery: the fan-out plans it itself; the records' Puts find them: read back).
    const stored = unmarshall(item);
    const slice = { mode, companyId, events: [{ eventId: String(stored.eventId), eventType: String(stored.eventType), createdAt: at }] };
    sent.WebhookPlan.push(...(await requestsOf(() => plan({ Records: [planningMessageOf(slice)] }))));
    expect(messages.enqueued).toHaveLength(1);
    sent.WebhookFanOut.push(...(await requestsOf(() => fanOut(stream, lambdaContext() as never))));
    sent.WebhookFanOut.push(...(await requestsOf(() => fanOut(stream, lambdaContext() as never))));
    const job = messages.enqueued[0]!;
    const streamBatch = async (size: number, firstSequence: number) => {
      const items = Array.from({ length: size }, () => eventItem(buildCaseEvent(view, at), companyId, mode));
      for (const batched of items) await client.send(new PutCommand({ TableName: cfg.tableName, Item: outsideTheEngines(batched) }));
      return requestsOf(() =>
        fanOut(
          {
            Records: items.map((batched, i) => ({
              eventName: 'INSERT' as const,
              dynamodb: { NewImage: batched as never, SequenceNumber: String(firstSequence + i) },
              eventSource: 'aws:dynamodb',
            })),
          },
          lambdaContext() as never,
        ),
      );
    };
    // A stream batch of two events: their waiting entries, records and slots in one transaction (each part judged
    // on its own, as IAM does), and the entries taken off the list once queued in a BatchWriteItem (judged on all
    // its keys at once).
    const pairRequests = await streamBatch(2, 10);
    expect(pairRequests.filter((r) => r.enclosingOperation === 'TransactWriteItems')).toHaveLength(2 * 2 + 1);
    expect(pairRequests.filter((r) => r.action === 'dynamodb:BatchWriteItem')).toHaveLength(1);
    sent.WebhookFanOut.push(...pairRequests);
    // Nine more: more than the endpoint's slots, so listed in a BatchWriteItem, and the queued ones taken off it in another.
    const nineRequests = await streamBatch(9, 20);
    expect(nineRequests.filter((r) => r.action === 'dynamodb:BatchWriteItem')).toHaveLength(2);
    sent.WebhookFanOut.push(...nineRequests);
    messages.enqueued.length = 1;
    // Those deliveries end (their slots given back), so the endpoint's next event is queued at once.
    for (const key of await slots.holders(mode, job.endpointId)) if (key.deliveryId !== job.deliveryId) await slots.release(key);
    // A first attempt that fails, a retry that succeeds; then, for a second event, five days of failures.
    statuses = [503, 200];
    sent.WebhookDeliver.push(...(await requestsOf(() => deliver(sqsEvent(job, FAST_ARN), lambdaContext() as never))));
    clock = new Date(clock.getTime() + 10_000);
    sent.WebhookDeliver.push(...(await requestsOf(() => deliver(sqsEvent(job, SLOW_ARN), lambdaContext() as never))));
    const second = eventItem(buildCaseEvent(view, clock.toISOString()), companyId, mode);
    await client.send(new PutCommand({ TableName: cfg.tableName, Item: outsideTheEngines(second) }));
    messages.enqueued.length = 0;
    await fanOut(
      { Records: [{ eventName: 'INSERT', dynamodb: { NewImage: second as never, SequenceNumber: '2' }, eventSource: 'aws:dynamodb' }] },
      lambdaContext() as never,
    );
    const later = messages.enqueued[0]!;
    statuses = [500, 500];
    sent.WebhookDeliver.push(...(await requestsOf(() => deliver(sqsEvent(later, FAST_ARN), lambdaContext() as never))));
    // Other deliveries kept failing meanwhile, at least every 9 hours (no quiet gap ends the run), the last 9 hours before this one.
    const run = await sealing.get(mode, companyId, job.endpointId);
    clock = new Date(clock.getTime() + DISABLE_AFTER_MS - 9 * 3600_000);
    const lastFailureAt = clock.toISOString();
    await sealing.recordHealth(mode, companyId, job.endpointId, { status: 'enabled', failingSince: run!.failingSince!, lastFailureAt });
    clock = new Date(clock.getTime() + 9 * 3600_000);
    sent.WebhookDeliver.push(...(await requestsOf(() => deliver(sqsEvent(later, SLOW_ARN), lambdaContext() as never))));
    expect((await sealing.get(mode, companyId, job.endpointId))?.status).toBe('disabled');

    // The sweeper's requests: the companies, their endpoints, and one endpoint mended (the whole table's
    // sweep would reach other tests' endpoints).
    sent.WebhookSweep.push(
      ...(await requestsOf(async () => {
        await new DynamoCompanyStore(client, cfg.tableName).list();
        await new DynamoWebhookEndpointStore(client, cfg.tableName).list(mode, companyId);
        await sweepEndpoint(
          { slots, queue: messages, deliveries: new DynamoWebhookDeliveryStore(client, cfg.tableName, now) },
          mode,
          job.endpointId,
        );
      })),
    );
  }, 60_000);

  it.each(['WebhookFanOut', 'WebhookPlan', 'WebhookDeliver', 'WebhookSweep'] as const)(
    '%s: every item request it sent is allowed',
    (id) => {
      expect(sent[id].length).toBeGreaterThan(0);
      const policy = statementsOfFunction(synthesised, id);
      for (const request of sent[id])
        expect({ id, request, decision: decide(policy, request) }).toEqual({ id, request, decision: 'allow' });
    },
  );
});
