import { BatchGetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { StoredEvent } from '../../cases/ports.js';
import type { Deadline } from '../../deadline.js';
import type { Mode } from '../../mode.js';
import type { DeliveryBatchReader, DeliveryBatchReading, EndpointWithSecrets } from '../../webhooks/ports.js';
import type { DeliveryJob, DeliveryKey, WebhookDelivery } from '../../webhooks/webhook-delivery.js';
import { DEFAULT_RETRY_POLICY, withUnprocessedRetries, type RetryPolicy } from '../retry.js';
import { eventFromItem } from './event-items.js';
import { keys, type ItemKey } from './table-keys.js';
import type { DynamoWebhookDeliveryStore } from './webhook-delivery-store.js';
import type { DynamoWebhookEndpointStore } from './webhook-endpoint-store.js';

/** Keys per BatchGetItem, at most (its limit). */
const MAX_BATCH_GET_KEYS = 100;

/**
 * The reads a batch of delivery jobs starts with (functions/deliver-webhooks.ts): every job's endpoint
 * (with its secrets), delivery record and event, each item once, in BatchGetItem requests of up to 100
 * keys, strongly consistent. A batch of ten jobs is one request where it was up to thirty GetItems
 * (and in a burst, each GetItem was a third of the table requests a delivery cost). Each item is
 * decoded by the store that owns its form (an expired delivery record is gone, as its own read has it).
 * IAM judges a BatchGetItem on every key it names at once: the delivery function's role allows it on
 * the event, endpoint and delivery-log partitions only (infra/stack/grants.ts), the kinds it reads.
 */
export class DynamoWebhookDeliveryReads implements DeliveryBatchReader {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly stores: { endpoints: DynamoWebhookEndpointStore; deliveries: DynamoWebhookDeliveryStore },
    private readonly policy: RetryPolicy = DEFAULT_RETRY_POLICY,
  ) {}

  async read(jobs: readonly DeliveryJob[], deadline?: Deadline): Promise<DeliveryBatchReading> {
    const wanted = new Map<string, ItemKey>();
    const want = (key: ItemKey) => {
      wanted.set(idOf(key), key);
      return key;
    };
    for (const job of jobs) {
      want(keys.webhookEndpoint(job.mode, job.companyId, job.endpointId));
      want(keys.webhookDelivery(job));
      want(keys.event(job.mode, job.eventId));
    }
    const items = new Map<string, Record<string, unknown>>();
    const all = [...wanted.values()];
    await Promise.all(
      chunks(all, MAX_BATCH_GET_KEYS).map((chunk) =>
        withUnprocessedRetries<ItemKey>(
          chunk,
          async (asked, options) => {
            const command = new BatchGetCommand({ RequestItems: { [this.tableName]: { Keys: [...asked], ConsistentRead: true } } });
            const out = await this.client.send(command, options);
            for (const item of out.Responses?.[this.tableName] ?? []) items.set(idOf(item as ItemKey), item);
            return (out.UnprocessedKeys?.[this.tableName]?.Keys ?? []) as ItemKey[];
          },
          deadline,
          this.policy,
        ),
      ),
    );

    const endpoints = new Map<string, EndpointWithSecrets | undefined>();
    const deliveries = new Map<string, WebhookDelivery | undefined>();
    const events = new Map<string, StoredEvent | undefined>();
    await Promise.all(
      jobs.map(async (job) => {
        const endpointKey = idOf(keys.webhookEndpoint(job.mode, job.companyId, job.endpointId));
        if (!endpoints.has(endpointKey)) {
          endpoints.set(endpointKey, undefined);
          const item = items.get(endpointKey);
          if (item) endpoints.set(endpointKey, await this.stores.endpoints.withSecretsOf(item, deadline));
        }
        const deliveryKey = idOf(keys.webhookDelivery(job));
        deliveries.set(deliveryKey, this.stores.deliveries.recordOf(items.get(deliveryKey)));
        const eventKey = idOf(keys.event(job.mode, job.eventId));
        const event = items.get(eventKey);
        events.set(eventKey, event ? eventFromItem(event) : undefined);
      }),
    );
    return {
      endpoint: (mode: Mode, companyId: string, endpointId: string) =>
        endpoints.get(idOf(keys.webhookEndpoint(mode, companyId, endpointId))),
      delivery: (key: DeliveryKey) => deliveries.get(idOf(keys.webhookDelivery(key))),
      event: (mode: Mode, eventId: string) => events.get(idOf(keys.event(mode, eventId))),
    };
  }
}

function idOf(key: ItemKey): string {
  return `${key.pk}\u0000${key.sk}`;
}

function chunks<T>(list: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}
