import { fileKeyProblem } from '../uploads/file-key.js';
import { UploadService } from '../uploads/upload-service.js';
import type { VerifyDebtorDeps } from '../cases/verification/verify-debtor.js';
import { config, registryConfig, type AppConfig, type RegistryConfig } from '../runtime/config.js';
import { operationalLog } from '../runtime/logger.js';
import { DynamoCaseChangeStore } from './dynamodb/case-change-store.js';
import { DynamoCaseWriter } from './dynamodb/case-writer.js';
import { documentClient } from './dynamodb/dynamo-client.js';
import { DynamoIdempotencyStore } from './dynamodb/idempotency-store.js';
import { DynamoReferenceAllocator } from './dynamodb/reference-allocator.js';
import { tableStores } from './dynamodb/stores.js';
import { S3InvoiceFileStore } from './s3/invoice-file-store.js';
import { DynamoUploadRecords } from './dynamodb/upload-records.js';
import { RecordedInvoiceFiles } from './recorded-invoice-files.js';
import { PresignedUploadSigner } from './s3/presigned-upload-signer.js';
import { cursorSealerOnce } from './secrets/cursor-secret.js';
import { secretBoxOnce } from './secrets/webhook-secret-key.js';
import { DynamoWebhookEndpointStore } from './dynamodb/webhook-endpoint-store.js';
import { systemResolver, WebhookSender } from './webhooks/webhook-sender.js';
import { DynamoWebhookDeliveryStore } from './dynamodb/webhook-delivery-store.js';
import { SqsWebhookDeliveryQueue } from './sqs/webhook-delivery-queue.js';
import { s3Client } from './s3/s3-client.js';
import { CompaniesHouseRegistry } from './companies-house/companies-house-registry.js';
import { RefreshedKeyRegistry } from './companies-house/refreshed-key-registry.js';
import { DynamoRegistryProfileCache } from './dynamodb/registry-profile-cache.js';
import { DynamoRegistryRateLimiter } from './dynamodb/registry-rate-limiter.js';
import { registryApiKeyOnce, type RegistryKeyConfig } from './secrets/registry-api-key.js';
import type { CaseVerificationDeps } from '../cases/verification/verify-case-debtor.js';
import { SqsVerificationRetries, sqsClient } from './sqs/verification-retry-queue.js';
import type { DeliveryQueue } from '../webhooks/ports.js';

/**
 * The composition root of a deployed (or `npm start`) process: every port bound to its DynamoDB
 * or S3 adapter, from the configuration read once at cold start. Each handler module in
 * `functions/` takes what it needs from here; tests build handlers with their own ports instead.
 */
export function tableAdapters(cfg: AppConfig = config()) {
  return tableStores(documentClient(cfg), cfg.tableName);
}

export function caseCreationAdapters(cfg: AppConfig = config()) {
  const client = documentClient(cfg);
  return {
    ...tableAdapters(cfg),
    writer: new DynamoCaseWriter(client, cfg.tableName),
    idempotency: new DynamoIdempotencyStore(client, cfg.tableName),
    references: new DynamoReferenceAllocator(client, cfg.tableName),
    files: new RecordedInvoiceFiles(new DynamoUploadRecords(client, cfg.tableName), new S3InvoiceFileStore(s3Client(cfg), cfg.bucketName)),
    fileKeyProblem,
    log: operationalLog,
    now: () => new Date(),
    idempotencyTtlSeconds: cfg.idempotencyTtlSeconds,
    claimHorizonSeconds: cfg.claimHorizonSeconds,
  };
}

/** The record-upload function: the upload records, written from the invoice bucket's events. */
export function uploadRecordAdapters(cfg: AppConfig = config()): DynamoUploadRecords {
  return new DynamoUploadRecords(documentClient(cfg), cfg.tableName);
}

export function uploadService(cfg: AppConfig = config()): UploadService {
  return new UploadService({ signer: new PresignedUploadSigner(s3Client(cfg), cfg.bucketName), ttlSeconds: cfg.uploadUrlTtlSeconds });
}

/** The case list: the table stores, and the cursor key read once per process (cold start). */
export function caseListAdapters(cfg: AppConfig = config()) {
  return { ...tableAdapters(cfg), cursors: cursorSealerOnce(cfg), now: () => new Date() };
}

/** The case changes (confirm, withdraw, verification, settling): the change store over the table, and the clock. */
export function caseChangeAdapters(cfg: AppConfig = config()) {
  return {
    ...tableAdapters(cfg),
    changes: { store: new DynamoCaseChangeStore(documentClient(cfg), cfg.tableName), now: () => new Date() },
  };
}

/**
 * The debtor verifier's registry side (verifyDebtor's deps): Companies House over HTTP with the key
 * from Secrets Manager (read once per process, again after a 401), and the profile cache and rate
 * limiter shared by every worker through the table. Build it once per process: the limiter keeps
 * the window's state as it last saw it, which spares requests (registry-rate-limiter.ts).
 */
export function registryVerificationAdapters(
  cfg: AppConfig = config(),
  registry: RegistryConfig & Pick<RegistryKeyConfig, 'secretsEndpoint'> = registryConfig(),
): Pick<VerifyDebtorDeps, 'registry' | 'cache' | 'limiter'> {
  const client = documentClient(cfg);
  const apiKey = registryApiKeyOnce({ region: cfg.region, ...registry });
  return {
    registry: new RefreshedKeyRegistry(new CompaniesHouseRegistry({ baseUrl: registry.baseUrl, apiKey: apiKey.get }), apiKey),
    cache: new DynamoRegistryProfileCache(client, cfg.tableName),
    limiter: new DynamoRegistryRateLimiter(client, cfg.tableName, { config: registry.rateLimit }),
  };
}

/**
 * The verification worker (functions/verify-debtors.ts): the case change store, the live registry
 * with its shared cache and limiter (registryVerificationAdapters), and the retry queue.
 */
export function verificationAdapters(cfg: AppConfig = config(), registry: RegistryConfig = registryConfig()): CaseVerificationDeps {
  if (cfg.verificationRetryQueueUrl === undefined)
    throw new Error('Invalid configuration: VERIFICATION_RETRY_QUEUE_URL is required by the verification worker');
  const now = () => new Date();
  return {
    changes: { ...caseChangeAdapters(cfg).changes, now },
    verifier: registryVerificationAdapters(cfg, registry),
    retries: new SqsVerificationRetries(sqsClient(cfg), cfg.verificationRetryQueueUrl, now),
  };
}

/**
 * The webhook endpoint routes: the endpoint store, the system resolver (the URL rules at creation),
 * and the key that seals secrets only for the routes that make one (`withSecrets`: create, rotate).
 * Loopback URLs are accepted only where the local server set WEBHOOK_ALLOW_LOCAL_URLS.
 */
export function webhookEndpointAdapters(cfg: AppConfig = config(), options: { withSecrets?: boolean } = {}) {
  const client = documentClient(cfg);
  return {
    ...tableAdapters(cfg),
    store: new DynamoWebhookEndpointStore(client, cfg.tableName, options.withSecrets ? secretBoxOnce(cfg) : undefined),
    resolver: systemResolver,
    now: () => new Date(),
    urlOptions: { allowLocalDevelopment: cfg.webhookAllowLocalUrls },
  };
}

function webhookQueue(cfg: AppConfig, user: string, options: { deadLetter?: boolean } = {}): SqsWebhookDeliveryQueue {
  const missing = [
    ['WEBHOOK_DELIVERY_QUEUE_URL', cfg.webhookDeliveryQueueUrl],
    ['WEBHOOK_SLOW_QUEUE_URL', cfg.webhookSlowQueueUrl],
    ...(options.deadLetter ? [['WEBHOOK_DEAD_LETTER_QUEUE_URL', cfg.webhookDeadLetterQueueUrl]] : []),
  ].filter(([, value]) => value === undefined);
  if (missing.length > 0) throw new Error(`Invalid configuration: ${missing.map(([name]) => name).join(', ')} required by ${user}`);
  return new SqsWebhookDeliveryQueue(sqsClient(cfg), {
    fast: cfg.webhookDeliveryQueueUrl!,
    slow: cfg.webhookSlowQueueUrl!,
    deadLetter: cfg.webhookDeadLetterQueueUrl,
  });
}

/**
 * The webhook fan-out (functions/fan-out-webhook-events.ts): endpoints read without secrets (it
 * holds no key), the delivery log it starts records in, and both delivery lanes.
 */
export function webhookFanOutAdapters(cfg: AppConfig = config()) {
  const client = documentClient(cfg);
  const now = () => new Date();
  return {
    endpoints: new DynamoWebhookEndpointStore(client, cfg.tableName),
    deliveries: new DynamoWebhookDeliveryStore(client, cfg.tableName, now),
    queue: webhookQueue(cfg, 'the webhook fan-out'),
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
    sender: new WebhookSender({ allowLocalDevelopment: cfg.webhookAllowLocalUrls }),
    now: () => new Date(),
  };
}

/**
 * The webhook delivery function (functions/deliver-webhooks.ts): endpoints with their secrets
 * (the sealing key read once per process), the events' stored payloads, the delivery log, the
 * SSRF-safe sender (loopback receivers only where npm start set WEBHOOK_ALLOW_LOCAL_URLS), and the
 * lanes with the dead-letter queue. Build it once per process.
 */
export function webhookDeliveryAdapters(cfg: AppConfig = config()) {
  const client = documentClient(cfg);
  const now = () => new Date();
  const messages = webhookQueue(cfg, 'the webhook delivery function', { deadLetter: true });
  return {
    delivery: {
      endpoints: new DynamoWebhookEndpointStore(client, cfg.tableName, secretBoxOnce(cfg)),
      events: tableAdapters(cfg).events,
      deliveries: new DynamoWebhookDeliveryStore(client, cfg.tableName, now),
      sender: new WebhookSender({ allowLocalDevelopment: cfg.webhookAllowLocalUrls }),
      now,
    },
    messages,
    laneOf: (eventSourceArn: string) => messages.laneOf(eventSourceArn),
  };
}

/**
 * The redeliver route: endpoints (no secrets), the event reader, the delivery log, and the fast
 * lane only (WEBHOOK_DELIVERY_QUEUE_URL): a redelivery is always queued there. The queue is built on
 * first use, so a process without the URL fails the request that needs it, naming the variable.
 */
export function webhookRedeliveryAdapters(cfg: AppConfig = config()) {
  const client = documentClient(cfg);
  let queue: SqsWebhookDeliveryQueue | undefined;
  const fastLane: DeliveryQueue = {
    enqueue: (lane, jobs, delaySeconds) => {
      if (lane !== 'fast') throw new Error(`the redeliver route enqueues on the fast lane only, not ${lane}`);
      if (cfg.webhookDeliveryQueueUrl === undefined)
        throw new Error('Invalid configuration: WEBHOOK_DELIVERY_QUEUE_URL is required by the redeliver route');
      // The slow lane's URL is not this function's: it never sends there (checked above).
      queue ??= new SqsWebhookDeliveryQueue(sqsClient(cfg), { fast: cfg.webhookDeliveryQueueUrl, slow: cfg.webhookDeliveryQueueUrl });
      return queue.enqueue('fast', jobs, delaySeconds);
    },
  };
  return {
    ...tableAdapters(cfg),
    endpoints: new DynamoWebhookEndpointStore(client, cfg.tableName),
    deliveries: new DynamoWebhookDeliveryStore(client, cfg.tableName),
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
