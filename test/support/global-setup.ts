import { installTsResolution } from './resolve-ts.ts';

/**
 * Starts DynamoDB Local (in memory) and s3rver once for the integration project, on free ports,
 * and hands their addresses to the test workers through the environment.
 */
export default async function globalSetup(): Promise<void> {
  // Several jest projects share one set of stores (global setups run in one process, before
  // any worker starts): start them once and count the users.
  const shared = globalThis as { __LOCAL_STORES__?: unknown; __LOCAL_STORES_USERS__?: number };
  if (shared.__LOCAL_STORES__) {
    shared.__LOCAL_STORES_USERS__ = (shared.__LOCAL_STORES_USERS__ ?? 1) + 1;
    return;
  }
  shared.__LOCAL_STORES_USERS__ = 1;
  installTsResolution();
  // The verifier's worker runs in this process (infra/local/verification-engines.ts): no metrics
  // lines, and only its errors logged.
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
  process.env.POWERTOOLS_TRACE_ENABLED ??= 'false';
  // The X-Ray SDK's per-promise context tracking, of no use with tracing off (docs/local-development.md).
  process.env.AWS_XRAY_MANUAL_MODE ??= 'true';
  process.env.POWERTOOLS_LOG_LEVEL ??= 'ERROR';
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  const { startLocalStores } = await import('../../infra/local/start-local-stores.js');
  const { LOCAL_DEFAULTS } = await import('../../infra/local/local-ports.js');
  // In memory, on free ports; uploads recorded as S3's notification records them in AWS.
  const stores = await startLocalStores({ webhookSecretKey: process.env.WEBHOOK_SECRET_KEY });
  Object.assign(process.env, {
    TABLE_NAME: LOCAL_DEFAULTS.tableName,
    BUCKET_NAME: LOCAL_DEFAULTS.bucketName,
    AWS_REGION: LOCAL_DEFAULTS.region,
    DYNAMODB_ENDPOINT: stores.dynamoEndpoint,
    S3_ENDPOINT: stores.s3Endpoint,
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    // The verifier's engines run in this process; tests reach its queue and registry stand-in here.
    SQS_ENDPOINT: stores.verification.sqsEndpoint,
    VERIFICATION_RETRY_QUEUE_URL: stores.verification.retryQueueUrl,
    COMPANIES_HOUSE_BASE_URL: stores.verification.registry.url,
    // Webhook delivery's engines run here too (infra/local/webhook-engines.ts): the workers seal
    // endpoint secrets with the key they open them with, and the redeliver route enqueues on the fast lane.
    WEBHOOK_SECRET_KEY: stores.webhooks.secretKey,
    WEBHOOK_DELIVERY_QUEUE_URL: stores.webhooks.deliveryQueueUrl,
    WEBHOOK_TEST_DELIVERY_QUEUE_URL: stores.webhooks.testDeliveryQueueUrl,
    // For tests that run the fan-out or the delivery function themselves (a replayed stream record).
    WEBHOOK_SLOW_QUEUE_URL: stores.webhooks.slowQueueUrl,
    WEBHOOK_TEST_SLOW_QUEUE_URL: stores.webhooks.testSlowQueueUrl,
    WEBHOOK_PLANNING_QUEUE_URL: stores.webhooks.planningQueueUrl,
    WEBHOOK_TEST_PLANNING_QUEUE_URL: stores.webhooks.testPlanningQueueUrl,
  });
  (globalThis as { __LOCAL_STORES__?: unknown }).__LOCAL_STORES__ = stores;
}
