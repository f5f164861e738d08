import { config, type AppConfig } from '../runtime/config.js';
import { documentClient } from './dynamodb/dynamo-client.js';
import { cursorSealerOnce } from './secrets/cursor-secret.js';
import { secretBoxOnce } from './secrets/webhook-secret-key.js';
import { DynamoWebhookEndpointStore } from './dynamodb/webhook-endpoint-store.js';
import { dnsResolver } from './webhooks/dns-resolver.js';
import { systemResolver, WebhookSender } from './webhooks/webhook-sender.js';
import { DynamoWebhookDeliveryStore } from './dynamodb/webhook-delivery-store.js';
import { SqsWebhookDeliveryQueue } from './sqs/webhook-delivery-queue.js';
import { SqsWebhookPlanningQueue } from './sqs/webhook-planning-queue.js';
import { DynamoWebhookDeliverySlots } from './dynamodb/webhook-delivery-slots.js';
import { DynamoWebhookDeliveryReads } from './dynamodb/webhook-delivery-reads.js';
import { DynamoCompanyStore } from './dynamodb/company-store.js';
import { sqsClient } from './sqs/verification-retry-queue.js';
import type { DeliveryQueue, HostResolver } from '../webhooks/ports.js';
import { tableAdapters } from './production-adapters.js';

/**
 * The composition root of the webhook functions (the endpoint routes, ping, redeliver, the delivery
 * log, the fan-out and the delivery function): apart from production-adapters.ts so that the case
 * and upload functions' bundles carry none of the webhook modules, their SQS client or schemas.
 */

const resolvers = new Map<string, HostResolver>();

/**
 * The one resolver of webhook host names for endpoint creation, ping and delivery alike (c-ares
 * under its own timeout: dns-resolver.ts): the system's name servers, or locally those of
 * WEBHOOK_DNS_SERVERS (the tests' and the bench's loopback DNS server). One per process and set of
 * servers.
 */
export function webhookResolver(cfg: AppConfig = config()): HostResolver {
  if (cfg.webhookDnsServers === undefined) return systemResolver;
  const key = cfg.webhookDnsServers.join(',');
  let resolver = resolvers.get(key);
  if (!resolver) resolvers.set(key, (resolver = dnsResolver({ servers: cfg.webhookDnsServers })));
  return resolver;
}

/**
 * The webhook endpoint routes: the endpoint store, the webhook resolver (the URL rules at creation),
 * and the key that seals secrets only for the routes that make one (`withSecrets`: create, rotate).
 * Loopback URLs are accepted only where the local server set WEBHOOK_ALLOW_LOCAL_URLS.
 */
export function webhookEndpointAdapters(cfg: AppConfig = config(), options: { withSecrets?: boolean } = {}) {
  const client = documentClient(cfg);
  return {
    ...tableAdapters(cfg),
    store: new DynamoWebhookEndpointStore(client, cfg.tableName, options.withSecrets ? secretBoxOnce(cfg) : undefined),
    resolver: webhookResolver(cfg),
    now: () => new Date(),
    urlOptions: { allowLocalDevelopment: cfg.webhookAllowLocalUrls },
  };
}

/** Throws, naming every one of `settings` that is unset, when any is: a function is never built half-configured. */
function requireSettings(user: string, settings: Record<string, string | undefined>): void {
  const missing = Object.keys(settings).filter((name) => settings[name] === undefined);
  if (missing.length > 0) throw new Error(`Invalid configuration: ${missing.join(', ')} required by ${user}`);
}

/** Each mode's lanes (fast and slow). */
function webhookQueue(cfg: AppConfig, user: string): SqsWebhookDeliveryQueue {
  requireSettings(user, {
    WEBHOOK_DELIVERY_QUEUE_URL: cfg.webhookDeliveryQueueUrl,
    WEBHOOK_SLOW_QUEUE_URL: cfg.webhookSlowQueueUrl,
    WEBHOOK_TEST_DELIVERY_QUEUE_URL: cfg.webhookTestDeliveryQueueUrl,
    WEBHOOK_TEST_SLOW_QUEUE_URL: cfg.webhookTestSlowQueueUrl,
  });
  return new SqsWebhookDeliveryQueue(sqsClient(cfg), {
    live: { fast: cfg.webhookDeliveryQueueUrl!, slow: cfg.webhookSlowQueueUrl! },
    test: { fast: cfg.webhookTestDeliveryQueueUrl!, slow: cfg.webhookTestSlowQueueUrl! },
  });
}

/**
 * The webhook fan-out (functions/fan-out-webhook-events.ts): what the planning worker has (it plans
 * a company's small slices itself) and the planning queues (one per mode) it forwards the large ones to.
 */
export function webhookFanOutAdapters(cfg: AppConfig = config()) {
  requireSettings('the webhook fan-out', {
    WEBHOOK_PLANNING_QUEUE_URL: cfg.webhookPlanningQueueUrl,
    WEBHOOK_TEST_PLANNING_QUEUE_URL: cfg.webhookTestPlanningQueueUrl,
  });
  return {
    ...webhookPlanningAdapters(cfg, 'the webhook fan-out'),
    planning: new SqsWebhookPlanningQueue(sqsClient(cfg), { live: cfg.webhookPlanningQueueUrl!, test: cfg.webhookTestPlanningQueueUrl! }),
  };
}

/**
 * The webhook planning worker (functions/plan-webhook-deliveries.ts): endpoints read without secrets
 * (it holds no key), the delivery log it starts records in, the endpoints' slots and waiting lists,
 * and each mode's lanes.
 */
export function webhookPlanningAdapters(cfg: AppConfig = config(), user = 'the webhook planning worker') {
  const client = documentClient(cfg);
  const now = () => new Date();
  return {
    endpoints: new DynamoWebhookEndpointStore(client, cfg.tableName),
    deliveries: new DynamoWebhookDeliveryStore(client, cfg.tableName, now),
    slots: new DynamoWebhookDeliverySlots(client, cfg.tableName, now),
    queue: webhookQueue(cfg, user),
    now,
  };
}

/**
 * The delivery sweeper (functions/sweep-webhook-deliveries.ts): the companies and their endpoints
 * (no secrets), the delivery log (read only), the endpoints' slots and waiting lists, each mode's
 * lanes.
 */
export function webhookSweepAdapters(cfg: AppConfig = config()) {
  const client = documentClient(cfg);
  const now = () => new Date();
  return {
    companies: new DynamoCompanyStore(client, cfg.tableName),
    endpoints: new DynamoWebhookEndpointStore(client, cfg.tableName),
    deliveries: new DynamoWebhookDeliveryStore(client, cfg.tableName, now),
    slots: new DynamoWebhookDeliverySlots(client, cfg.tableName, now),
    queue: webhookQueue(cfg, 'the webhook delivery sweeper'),
    now,
  };
}

/**
 * The ping route: the endpoint store that opens secrets (the ping is signed with them) and the
 * SSRF-safe sender; loopback URLs only where the local server set WEBHOOK_ALLOW_LOCAL_URLS.
 */
export function webhookPingAdapters(cfg: AppConfig = config()) {
  return {
    ...tableAdapters(cfg),
    store: new DynamoWebhookEndpointStore(documentClient(cfg), cfg.tableName, secretBoxOnce(cfg)),
    sender: new WebhookSender({ allowLocalDevelopment: cfg.webhookAllowLocalUrls, resolver: webhookResolver(cfg) }),
    now: () => new Date(),
  };
}

/**
 * The webhook delivery function (functions/deliver-webhooks.ts): endpoints with their secrets
 * (the sealing key read once per process), the events' stored payloads, the delivery log, the
 * SSRF-safe sender (loopback receivers only where npm start set WEBHOOK_ALLOW_LOCAL_URLS), and the
 * lanes. Build it once per process.
 */
export function webhookDeliveryAdapters(cfg: AppConfig = config()) {
  const client = documentClient(cfg);
  const now = () => new Date();
  const messages = webhookQueue(cfg, 'the webhook delivery function');
  const endpoints = new DynamoWebhookEndpointStore(client, cfg.tableName, secretBoxOnce(cfg));
  const deliveries = new DynamoWebhookDeliveryStore(client, cfg.tableName, now);
  return {
    delivery: {
      endpoints,
      events: tableAdapters(cfg).events,
      deliveries,
      sender: new WebhookSender({ allowLocalDevelopment: cfg.webhookAllowLocalUrls, resolver: webhookResolver(cfg) }),
      now,
    },
    messages,
    slots: new DynamoWebhookDeliverySlots(client, cfg.tableName, now),
    laneOf: (eventSourceArn: string) => messages.laneOf(eventSourceArn),
    reads: new DynamoWebhookDeliveryReads(client, cfg.tableName, { endpoints, deliveries }),
  };
}

/**
 * The redeliver route: endpoints (no secrets), the event reader, the delivery log, and each mode's
 * fast lane only (WEBHOOK_DELIVERY_QUEUE_URL, WEBHOOK_TEST_DELIVERY_QUEUE_URL): a redelivery is
 * always queued there. The queue is built on first use, so a process without the URLs fails the
 * request that needs them, naming the variables.
 */
export function webhookRedeliveryAdapters(cfg: AppConfig = config()) {
  const client = documentClient(cfg);
  let queue: SqsWebhookDeliveryQueue | undefined;
  const fastLane: DeliveryQueue = {
    enqueue: (lane, jobs, delaySeconds) => {
      if (lane !== 'fast') throw new Error(`the redeliver route enqueues on the fast lane only, not ${lane}`);
      if (cfg.webhookDeliveryQueueUrl === undefined || cfg.webhookTestDeliveryQueueUrl === undefined)
        throw new Error(
          'Invalid configuration: WEBHOOK_DELIVERY_QUEUE_URL and WEBHOOK_TEST_DELIVERY_QUEUE_URL are required by the redeliver route',
        );
      // The slow lanes' URLs are not this function's: it never sends there (checked above).
      queue ??= new SqsWebhookDeliveryQueue(sqsClient(cfg), {
        live: { fast: cfg.webhookDeliveryQueueUrl },
        test: { fast: cfg.webhookTestDeliveryQueueUrl },
      });
      return queue.enqueue('fast', jobs, delaySeconds);
    },
  };
  return {
    ...tableAdapters(cfg),
    endpoints: new DynamoWebhookEndpointStore(client, cfg.tableName),
    deliveries: new DynamoWebhookDeliveryStore(client, cfg.tableName),
    // A redelivery takes its endpoint's fair share: listed, and queued by a fill (redeliver-event.ts).
    slots: new DynamoWebhookDeliverySlots(client, cfg.tableName),
    queue: fastLane,
    now: () => new Date(),
  };
}

/** The delivery log route: endpoints (no secrets), the delivery log, and the list cursors' key (read once per process). */
export function webhookDeliveryLogAdapters(cfg: AppConfig = config()) {
  const client = documentClient(cfg);
  return {
    ...tableAdapters(cfg),
    endpoints: new DynamoWebhookEndpointStore(client, cfg.tableName),
    deliveries: new DynamoWebhookDeliveryStore(client, cfg.tableName),
    cursors: cursorSealerOnce(cfg),
    now: () => new Date(),
  };
}
