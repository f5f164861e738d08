import type { DynamoDBStreamEvent, SQSEvent } from 'aws-lambda';
import { verificationAdapters } from '../../lib/adapters/production-verification-adapters.js';
import { loadConfig, loadRegistryConfig } from '../../lib/runtime/config.js';
// Static, not lazy: jest transpiles TypeScript only while its global setup runs, and events come later.
import { buildVerifyDebtorsHandler } from '../../functions/verify-debtors.js';
import { startCompaniesHouseStandIn, STAND_IN_API_KEY, type CompaniesHouseStandIn } from './companies-house-stand-in.js';
import { lambdaContext } from './lambda-events.js';
import { runInInvocationScope } from './run-in-invocation-scope.js';
import { LOCAL_DEFAULTS } from './local-ports.js';
import type { LocalSqs } from './local-sqs.js';
import { createPollerClient, startQueuePoller, type QueuePoller } from './queue-poller.js';
import { VERIFIER_FUNCTION_TIMEOUT_SECONDS, VERIFIER_RETRY_QUEUE, VERIFIER_STREAM } from '../contract/stream-consumers.js';
import { startStreamPoller, type StreamPoller } from './stream-poller.js';

/**
 * The debtor verifier's engines in the local world, as the stack runs them in AWS
 * (infra/stack/debtor-verifier.ts): the worker (functions/verify-debtors.ts) fed by DynamoDB
 * Local's stream (stream-poller.ts) and by its retry queue on the local SQS (local-sqs.ts, shared
 * with the webhook engines, with the stack's settings: a dead-letter queue after 5 receives; queue-poller.ts), the live registry being the Companies
 * House stand-in (companies-house-stand-in.ts, key `local-companies-house-key`). Started by
 * start-local-stores.ts, so `npm start`, the integration tests and the bench all run them.
 */
export const RETRY_QUEUE_NAME = 'verification-retries';
export const RETRY_DLQ_NAME = 'verification-retries-dlq';

export interface VerificationEnginesOptions {
  dynamoEndpoint: string;
  /** The local SQS its queues are created on (started and stopped by the caller). */
  sqs: LocalSqs;
  tableName?: string;
  /** The stand-in's port (0 or absent: a free one). */
  registryPort?: number;
  /** Every registry answer waits this long (the bench: 50 ms). */
  registryDelayMs?: number;
}

export interface VerificationEngines {
  sqsEndpoint: string;
  retryQueueUrl: string;
  registry: CompaniesHouseStandIn;
  /** Messages on the retry queue (waiting, delayed and in flight), and on its dead-letter queue. */
  retryQueueDepth(): { retries: number; deadLetters: number };
  /** Resolves when every stream record written before the call has been handled. */
  streamDrained(): Promise<void>;
  stop(): Promise<void>;
}

export async function startVerificationEngines(options: VerificationEnginesOptions): Promise<VerificationEngines> {
  const region = LOCAL_DEFAULTS.region;
  const tableName = options.tableName ?? LOCAL_DEFAULTS.tableName;
  const stoppers: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const stop of stoppers.reverse()) await stop().catch(() => undefined);
  };
  try {
    const sqs = options.sqs;
    const sqsEndpoint = sqs.endpoint;
    const dlq = sqs.createQueue(RETRY_DLQ_NAME);
    // As the stack's (infra/contract/stream-consumers.ts): it was 30 s here, below the function's 60 s, which AWS refuses.
    const queue = sqs.createQueue(RETRY_QUEUE_NAME, {
      VisibilityTimeout: String(VERIFIER_RETRY_QUEUE.visibilityTimeoutSeconds),
      MessageRetentionPeriod: String(VERIFIER_RETRY_QUEUE.retentionDays * 86_400),
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq.queueArn, maxReceiveCount: String(VERIFIER_RETRY_QUEUE.maxReceiveCount) }),
    });
    const retryQueueUrl = queue.queueUrl;

    const registry = await startCompaniesHouseStandIn({ port: options.registryPort ?? 0, delayMs: options.registryDelayMs });
    stoppers.push(() => registry.close());

    // The worker's own configuration, as the stack gives it (lib/runtime/config.ts), pointed at the local stand-ins.
    const cfg = loadConfig({
      TABLE_NAME: tableName,
      BUCKET_NAME: LOCAL_DEFAULTS.bucketName,
      AWS_REGION: region,
      DYNAMODB_ENDPOINT: options.dynamoEndpoint,
      SQS_ENDPOINT: sqsEndpoint,
      VERIFICATION_RETRY_QUEUE_URL: retryQueueUrl,
    });
    const handler = buildVerifyDebtorsHandler(
      verificationAdapters(cfg, loadRegistryConfig({ COMPANIES_HOUSE_API_KEY: STAND_IN_API_KEY, COMPANIES_HOUSE_BASE_URL: registry.url })),
    );
    const invoke = <E extends DynamoDBStreamEvent | SQSEvent>(event: E) => {
      const context = lambdaContext({ functionName: 'verify-debtors', timeoutMs: VERIFIER_FUNCTION_TIMEOUT_SECONDS * 1000 });
      return runInInvocationScope(context, () => handler(event, context));
    };

    const stream: StreamPoller = await startStreamPoller({
      endpoint: options.dynamoEndpoint,
      region,
      tableName,
      handler: invoke,
      // The stack's mapping (infra/contract/stream-consumers.ts): INSERTs of case items only, and
      // the function's timeout.
      batchSize: VERIFIER_STREAM.batchSize,
      filterPattern: VERIFIER_STREAM.filterPattern,
      timeoutMs: VERIFIER_FUNCTION_TIMEOUT_SECONDS * 1000,
    });
    stoppers.push(() => stream.stop());
    // Its own client (createPollerClient): as many sockets as its receive loops, no request timeout.
    const client = createPollerClient(region, sqsEndpoint);
    const queuePoller: QueuePoller = startQueuePoller({
      client,
      queueUrl: retryQueueUrl,
      queueArn: queue.queueArn,
      region,
      handler: invoke,
      timeoutMs: VERIFIER_FUNCTION_TIMEOUT_SECONDS * 1000,
      batchSize: VERIFIER_RETRY_QUEUE.batchSize,
    });
    stoppers.push(async () => {
      await queuePoller.stop();
      client.destroy();
    });

    return {
      sqsEndpoint,
      retryQueueUrl,
      registry,
      retryQueueDepth: () => ({ retries: sqs.depth(RETRY_QUEUE_NAME), deadLetters: sqs.depth(RETRY_DLQ_NAME) }),
      streamDrained: () => stream.drained(),
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
