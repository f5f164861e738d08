import { randomBytes } from 'node:crypto';
import type { DynamoDBStreamEvent, SQSEvent } from 'aws-lambda';
import {
  webhookDeliveryAdapters,
  webhookFanOutAdapters,
  webhookPlanningAdapters,
  webhookSweepAdapters,
} from '../../lib/adapters/production-webhook-adapters.js';
import type { SweepTotals } from '../../lib/webhooks/sweep-deliveries.js';
import { loadConfig } from '../../lib/runtime/config.js';
// Static, not lazy: jest transpiles TypeScript only while its global setup runs, and events come later.
import { buildDeliverWebhooksHandler } from '../../functions/deliver-webhooks.js';
import { buildFanOutWebhookEventsHandler } from '../../functions/fan-out-webhook-events.js';
import { buildPlanWebhookDeliveriesHandler } from '../../functions/plan-webhook-deliveries.js';
import { buildSweepWebhookDeliveriesCore } from '../../functions/sweep-webhook-deliveries.js';
import { FAN_OUT_STREAM } from '../contract/stream-consumers.js';
import {
  DELIVERY_FUNCTION_TIMEOUT_SECONDS,
  DELIVERY_LANES,
  DELIVERY_SWEEP,
  FAST_LANE,
  PLANNING_QUEUE,
  SLOW_LANE,
  TEST_FAST_LANE,
  TEST_PLANNING_QUEUE,
  TEST_SLOW_LANE,
} from '../contract/webhook-lanes.js';
import { lambdaContext } from './lambda-events.js';
import { runInInvocationScope } from './run-in-invocation-scope.js';
import { LOCAL_DEFAULTS } from './local-ports.js';
import type { LocalSqs } from './local-sqs.js';
import { createPollerClient, startQueuePoller, type QueuePoller } from './queue-poller.js';
import { startStreamPoller, type StreamPoller } from './stream-poller.js';

/**
 * Webhook delivery's engines in the local world, as the stack runs them in AWS
 * (docs/webhooks-design.md): the fan-out (functions/fan-out-webhook-events.ts) fed by DynamoDB
 * Local's stream, as a second reader of the same stream beside the verifier's (AWS allows two
 * readers per shard), the delivery function (functions/deliver-webhooks.ts) fed by the four
 * delivery lanes (live and test, fast and slow) on the local SQS (local-sqs.ts), each with a
 * dead-letter queue by redrive as the stack's, and the delivery sweeper
 * (functions/sweep-webhook-deliveries.ts) on the stack's schedule's interval. Started by start-local-stores.ts, so `npm start`, the integration tests and the bench all
 * run them. The sender accepts loopback receivers here (WEBHOOK_ALLOW_LOCAL_URLS): these engines
 * only ever run locally.
 */
export const WEBHOOK_QUEUE_NAMES = {
  fast: 'webhook-deliveries',
  slow: 'webhook-deliveries-slow',
  testFast: 'webhook-test-deliveries',
  testSlow: 'webhook-test-deliveries-slow',
  deadLetter: 'webhook-deliveries-dlq',
  planning: 'webhook-planning',
  testPlanning: 'webhook-test-planning',
  planningDeadLetter: 'webhook-planning-dlq',
} as const;

type LaneName = 'fast' | 'slow' | 'testFast' | 'testSlow';

/** The stack's lane settings (infra/contract/webhook-lanes.ts), as CreateQueue and the pollers take them. */
export const WEBHOOK_QUEUE_SETTINGS = {
  maxReceiveCount: DELIVERY_LANES.maxReceiveCount,
  visibilityTimeoutSeconds: DELIVERY_LANES.visibilityTimeoutSeconds,
  retentionSeconds: DELIVERY_LANES.retentionDays * 24 * 60 * 60,
  batchSize: DELIVERY_LANES.batchSize,
} as const;

/**
 * Batches in flight at once per lane, at most (the event source mapping's maximum concurrency):
 * the live fast lane in provisioned mode as the stack runs it (FAST_LANE: its minimum pollers' 20
 * invocations ready at once; AWS lets it grow to FAST_LANE.maximumPollers × 10, 20 here on a
 * laptop), the live slow lane, where deliveries in sustained failure wait, and the test lanes,
 * capped as the stack caps them (infra/contract/webhook-lanes.ts) so they never take the
 * capacity the live fast lane needs.
 */
export const WEBHOOK_LANE_CONCURRENCY: Readonly<Record<LaneName, number>> = {
  fast: 20,
  slow: SLOW_LANE.maxConcurrency,
  testFast: TEST_FAST_LANE.maxConcurrency,
  testSlow: TEST_SLOW_LANE.maxConcurrency,
};

export interface WebhookEnginesOptions {
  dynamoEndpoint: string;
  sqs: LocalSqs;
  tableName?: string;
  /** The key that seals endpoint secrets: the one the API routes seal with. A fresh one when left out. */
  secretKey?: string;
  /** The name servers the delivery function resolves endpoint host names with (WEBHOOK_DNS_SERVERS); the system's when left out. */
  dnsServers?: readonly string[];
}

export interface WebhookEngines {
  deliveryQueueUrl: string;
  slowQueueUrl: string;
  testDeliveryQueueUrl: string;
  testSlowQueueUrl: string;
  deadLetterQueueUrl: string;
  /** The planning queues, live and test (fair queues: MessageGroupId = mode and company), and their dead-letter queue. */
  planningQueueUrl: string;
  testPlanningQueueUrl: string;
  planningDeadLetterQueueUrl: string;
  /** The key the delivery function opens endpoint secrets with (WEBHOOK_SECRET_KEY for the API routes). */
  secretKey: string;
  /** Messages on each queue: waiting, delayed and in flight. */
  queueDepth(): {
    fast: number;
    slow: number;
    testFast: number;
    testSlow: number;
    deadLetters: number;
    planning: number;
    testPlanning: number;
    planningDeadLetters: number;
  };
  /** Runs the delivery sweeper once now (it also runs every DELIVERY_SWEEP.everyMinutes, as the stack's schedule runs it). */
  sweep(): Promise<SweepTotals>;
  /** Resolves when every stream record written before the call has been fanned out: forwarded, and its slice planned (both planning queues empty). */
  streamDrained(): Promise<void>;
  stop(): Promise<void>;
}

export async function startWebhookEngines(options: WebhookEnginesOptions): Promise<WebhookEngines> {
  const region = LOCAL_DEFAULTS.region;
  const tableName = options.tableName ?? LOCAL_DEFAULTS.tableName;
  const secretKey = options.secretKey ?? randomBytes(32).toString('base64url');
  const sqs = options.sqs;
  const stoppers: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const stop of stoppers.reverse()) await stop().catch(() => undefined);
  };
  try {
    const dlq = sqs.createQueue(WEBHOOK_QUEUE_NAMES.deadLetter, {
      MessageRetentionPeriod: String(WEBHOOK_QUEUE_SETTINGS.retentionSeconds),
    });
    const laneAttributes = {
      VisibilityTimeout: String(WEBHOOK_QUEUE_SETTINGS.visibilityTimeoutSeconds),
      MessageRetentionPeriod: String(WEBHOOK_QUEUE_SETTINGS.retentionSeconds),
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq.queueArn, maxReceiveCount: String(WEBHOOK_QUEUE_SETTINGS.maxReceiveCount) }),
    };
    const planningDlq = sqs.createQueue(WEBHOOK_QUEUE_NAMES.planningDeadLetter, {
      MessageRetentionPeriod: String(WEBHOOK_QUEUE_SETTINGS.retentionSeconds),
    });
    // One planning queue per mode, as the stack has them (TEST_PLANNING_QUEUE), sharing one dead-letter queue.
    const planningAttributes = {
      VisibilityTimeout: String(PLANNING_QUEUE.visibilityTimeoutSeconds),
      MessageRetentionPeriod: String(PLANNING_QUEUE.retentionDays * 24 * 60 * 60),
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: planningDlq.queueArn, maxReceiveCount: String(PLANNING_QUEUE.maxReceiveCount) }),
    };
    const planning = sqs.createQueue(WEBHOOK_QUEUE_NAMES.planning, planningAttributes);
    const testPlanning = sqs.createQueue(WEBHOOK_QUEUE_NAMES.testPlanning, planningAttributes);
    const queues = {
      fast: sqs.createQueue(WEBHOOK_QUEUE_NAMES.fast, laneAttributes),
      slow: sqs.createQueue(WEBHOOK_QUEUE_NAMES.slow, laneAttributes),
      testFast: sqs.createQueue(WEBHOOK_QUEUE_NAMES.testFast, laneAttributes),
      testSlow: sqs.createQueue(WEBHOOK_QUEUE_NAMES.testSlow, laneAttributes),
    };

    // The functions' own configuration, as the stack gives it (lib/runtime/config.ts), pointed at the local stores.
    const cfg = loadConfig({
      TABLE_NAME: tableName,
      BUCKET_NAME: LOCAL_DEFAULTS.bucketName,
      AWS_REGION: region,
      DYNAMODB_ENDPOINT: options.dynamoEndpoint,
      SQS_ENDPOINT: sqs.endpoint,
      WEBHOOK_DELIVERY_QUEUE_URL: queues.fast.queueUrl,
      WEBHOOK_SLOW_QUEUE_URL: queues.slow.queueUrl,
      WEBHOOK_TEST_DELIVERY_QUEUE_URL: queues.testFast.queueUrl,
      WEBHOOK_TEST_SLOW_QUEUE_URL: queues.testSlow.queueUrl,
      WEBHOOK_PLANNING_QUEUE_URL: planning.queueUrl,
      WEBHOOK_TEST_PLANNING_QUEUE_URL: testPlanning.queueUrl,
      WEBHOOK_SECRET_KEY: secretKey,
      WEBHOOK_ALLOW_LOCAL_URLS: 'true',
      ...(options.dnsServers ? { WEBHOOK_DNS_SERVERS: options.dnsServers.join(',') } : {}),
    });
    const fanOut = buildFanOutWebhookEventsHandler(webhookFanOutAdapters(cfg));
    const plan = buildPlanWebhookDeliveriesHandler(webhookPlanningAdapters(cfg));
    const deliver = buildDeliverWebhooksHandler(webhookDeliveryAdapters(cfg));
    const sweepCore = buildSweepWebhookDeliveriesCore(webhookSweepAdapters(cfg));
    // The twin of the stack's EventBridge Scheduler schedule: one run at a time, on the same interval.
    let sweeping: Promise<SweepTotals> | undefined;
    const sweep = () => (sweeping ??= sweepCore().finally(() => (sweeping = undefined)));
    const sweepTimer = setInterval(
      () => void sweep().catch((error) => console.error(`webhook sweeper: ${(error as Error).message}`)),
      DELIVERY_SWEEP.everyMinutes * 60_000,
    );
    sweepTimer.unref();
    stoppers.push(async () => {
      clearInterval(sweepTimer);
      await sweeping?.catch(() => undefined);
    });

    const stream: StreamPoller = await startStreamPoller({
      endpoint: options.dynamoEndpoint,
      region,
      tableName,
      handler: (event: DynamoDBStreamEvent) => {
        const context = lambdaContext({ functionName: 'fan-out-webhook-events', timeoutMs: FAN_OUT_STREAM.functionTimeoutSeconds * 1000 });
        return runInInvocationScope(context, () => fanOut(event, context));
      },
      // The stack's mapping (infra/contract/stream-consumers.ts): INSERTs of event items only, and
      // the function's timeout.
      batchSize: FAN_OUT_STREAM.batchSize,
      filterPattern: FAN_OUT_STREAM.filterPattern,
      timeoutMs: FAN_OUT_STREAM.functionTimeoutSeconds * 1000,
    });
    stoppers.push(() => stream.stop());

    // Its own client (createPollerClient): as many sockets as its receive loops, no request timeout.
    const client = createPollerClient(region, sqs.endpoint);
    const invokeDeliver = (event: SQSEvent) => {
      const context = lambdaContext({ functionName: 'deliver-webhooks', timeoutMs: DELIVERY_FUNCTION_TIMEOUT_SECONDS * 1000 });
      return runInInvocationScope(context, () => deliver(event, context));
    };
    const pollers: QueuePoller[] = (['fast', 'slow', 'testFast', 'testSlow'] as const).map((lane) =>
      startQueuePoller({
        client,
        queueUrl: queues[lane].queueUrl,
        queueArn: queues[lane].queueArn,
        region,
        handler: invokeDeliver,
        // As Lambda: a batch still running at the function's timeout is an error, and nothing of it is deleted.
        timeoutMs: DELIVERY_FUNCTION_TIMEOUT_SECONDS * 1000,
        batchSize: WEBHOOK_QUEUE_SETTINGS.batchSize,
        concurrency: WEBHOOK_LANE_CONCURRENCY[lane],
        ...(lane === 'fast' ? { provisioned: { minimumPollers: FAST_LANE.minimumPollers } } : {}),
      }),
    );
    // The planning worker's event source mapping, as the stack's (five batches at first, up to PLANNING_QUEUE.maxConcurrency):
    // one company's slice being planned never holds another's, and the fair queue hands quiet tenants' slices out first.
    const invokePlan = (event: SQSEvent) => {
      const context = lambdaContext({ functionName: 'plan-webhook-deliveries', timeoutMs: PLANNING_QUEUE.functionTimeoutSeconds * 1000 });
      return runInInvocationScope(context, () => plan(event, context));
    };
    // Each mode's planning queue with its own mapping: test mode's capped apart (TEST_PLANNING_QUEUE).
    for (const [queue, concurrency] of [
      [planning, PLANNING_QUEUE.maxConcurrency],
      [testPlanning, TEST_PLANNING_QUEUE.maxConcurrency],
    ] as const)
      pollers.push(
        startQueuePoller({
          client,
          queueUrl: queue.queueUrl,
          queueArn: queue.queueArn,
          region,
          handler: invokePlan,
          timeoutMs: PLANNING_QUEUE.functionTimeoutSeconds * 1000,
          batchSize: PLANNING_QUEUE.batchSize,
          concurrency,
        }),
      );
    stoppers.push(async () => {
      await Promise.all(pollers.map((p) => p.stop()));
      client.destroy();
    });

    return {
      deliveryQueueUrl: queues.fast.queueUrl,
      slowQueueUrl: queues.slow.queueUrl,
      testDeliveryQueueUrl: queues.testFast.queueUrl,
      testSlowQueueUrl: queues.testSlow.queueUrl,
      deadLetterQueueUrl: dlq.queueUrl,
      planningQueueUrl: planning.queueUrl,
      testPlanningQueueUrl: testPlanning.queueUrl,
      planningDeadLetterQueueUrl: planningDlq.queueUrl,
      secretKey,
      queueDepth: () => ({
        fast: sqs.depth(WEBHOOK_QUEUE_NAMES.fast),
        slow: sqs.depth(WEBHOOK_QUEUE_NAMES.slow),
        testFast: sqs.depth(WEBHOOK_QUEUE_NAMES.testFast),
        testSlow: sqs.depth(WEBHOOK_QUEUE_NAMES.testSlow),
        deadLetters: sqs.depth(WEBHOOK_QUEUE_NAMES.deadLetter),
        planning: sqs.depth(WEBHOOK_QUEUE_NAMES.planning),
        testPlanning: sqs.depth(WEBHOOK_QUEUE_NAMES.testPlanning),
        planningDeadLetters: sqs.depth(WEBHOOK_QUEUE_NAMES.planningDeadLetter),
      }),
      sweep,
      streamDrained: async () => {
        await stream.drained();
        // Planned too: the slices forwarded are off the planning queues (a message is deleted once planned).
        while (sqs.depth(WEBHOOK_QUEUE_NAMES.planning) + sqs.depth(WEBHOOK_QUEUE_NAMES.testPlanning) > 0)
          await new Promise((resolve) => setTimeout(resolve, 20));
      },
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
