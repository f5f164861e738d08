import { CfnElement, Duration, Stack } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import {
  ComparisonOperator,
  GraphWidget,
  TreatMissingData,
  MathExpression,
  type IMetric,
  type IWidget,
  type Metric,
  type MetricOptions,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { FilterCriteria, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
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
import { Schedule, ScheduleExpression } from 'aws-cdk-lib/aws-scheduler';
import { LambdaInvoke } from 'aws-cdk-lib/aws-scheduler-targets';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Validations } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { MAX_SEND_DELAY_SECONDS } from '../../lib/webhooks/retry-schedule.js';
import type { ServiceAlarms } from './alarms.js';
import { ApiFunction } from './api-function.js';
import { METRIC_PERIOD, webhookMetric } from './service-metrics.js';

/**
 * Webhook delivery in AWS (docs/webhooks-design.md, "The contract of the delivery engine"; the local
 * world runs the same handlers from infra/local on fauxqs and DynamoDB Local's stream):
 *
 * - the fan-out function on the table's stream, filtered to INSERTs of event items, in batches,
 *   bisecting a failing batch, with partial batch responses, bounded retries and record age, and an
 *   on-failure queue whose depth pages; it plans a batch's small company-and-mode slices itself
 *   (a trickle) and sends each large one (a burst) to its mode's planning queue, an SQS fair
 *   queue (MessageGroupId = mode and company);
 * - the planning worker on those queues (live up to PLANNING_QUEUE.maxConcurrency invocations, test
 *   up to TEST_PLANNING_QUEUE.maxConcurrency, so a test key's bursts never take a live slice's
 *   invocation; one dead-letter queue): each slice's deliveries listed, their records started, each endpoint's
 *   free slots queued on its mode's fast lane; a company's burst is planned beside, never ahead
 *   of, another company's events (docs/webhooks-design.md, "Planning: at once or on the fair queue");
 * - four delivery lanes (SQS), live and test apart: per mode `fast` (first attempts and early
 *   retries) and `slow` (retries of deliveries in sustained failure); one delivery function
 *   consumes all four, the live fast lane's mapping in provisioned mode (FAST_LANE: 20 invocations
 *   ready from the first message; infra/contract/webhook-lanes.ts says why), the live slow lane's
 *   capped at SLOW_LANE.maxConcurrency, the test lanes' at TEST_FAST_LANE / TEST_SLOW_LANE, so
 *   neither failing endpoints nor test mode can take the concurrency live deliveries need; each
 *   endpoint holds at most MAX_JOBS_PER_ENDPOINT messages in them (lib/webhooks/delivery-slots.ts);
 * - the delivery sweeper, invoked by an EventBridge Scheduler schedule every
 *   DELIVERY_SWEEP.everyMinutes minutes (functions/sweep-webhook-deliveries.ts);
 * - the dead-letter queue: a message SQS received more than maxAttempts() + 10 times (crashes,
 *   timeouts) is moved there by the redrive policy; its depth pages. Processing failures only: a
 *   delivery that gave up after 3 days is no failure of ours; its record says `failed`, the
 *   metric `WebhookDeliveryGivenUp` counts it, and its own alarm watches the share of give-ups.
 *   A give-up sends nothing, so it cannot be lost between a record and a send.
 *
 * Rights (grants.ts): the fan-out and the planning worker query endpoints without their secrets,
 * start records, list and claim slots, and send to the fast lanes (the fan-out to the planning
 * queues too); the delivery function reads events and endpoints (with secrets, and the key that opens
 * them), records endpoint health, delivery records and slots, consumes every lane (the event source
 * mappings) and sends to every lane. Nothing else.
 */
export const FAN_OUT_WEBHOOK_EVENTS_ENTRY = 'functions/fan-out-webhook-events.ts';
export const PLAN_WEBHOOK_DELIVERIES_ENTRY = 'functions/plan-webhook-deliveries.ts';
export const DELIVER_WEBHOOKS_ENTRY = 'functions/deliver-webhooks.ts';
export const SWEEP_WEBHOOK_DELIVERIES_ENTRY = 'functions/sweep-webhook-deliveries.ts';
export {
  DELIVERY_FUNCTION_TIMEOUT_SECONDS,
  DELIVERY_LANES,
  FAST_LANE,
  PLANNING_QUEUE,
  SLOW_LANE,
  TEST_FAST_LANE,
  TEST_PLANNING_QUEUE,
  TEST_SLOW_LANE,
  FAN_OUT_STREAM,
};

/**
 * Alarm thresholds. Failure rate: the share of attempts that failed in a period with at least
 * FAILURE_RATE_MIN_ATTEMPTS attempts. Give-ups: the share of finished deliveries (delivered or
 * given up) that gave up, in an hour with at least GIVE_UP_RATE_MIN_DELIVERIES.
 *
 * Lane age (`ApproximateAgeOfOldestMessage`): SQS counts a message's age from when it was sent, and
 * its guide leaves out of the metric only messages received three times or more (poison pills),
 * not delayed ones, so a retry or a hop sent with DelaySeconds is taken to age while it waits.
 * Every lane carries such messages (fast-lane retries before sustained failure, slow-lane retries
 * and hops of ≤ MAX_SEND_DELAY_SECONDS, and on either lane a copy that came early and hops until
 * due), so a healthy lane's oldest message may be as old as the longest delay, plus one
 * visibility timeout when a receipt failed and the message came back. Each threshold is that, plus
 * how long a due message may wait for the lane's consumers: beyond it the consumer is stuck
 * (mapping disabled, function failing or throttled), whichever way SQS counts a delay. The test
 * lanes wait longest: a partner's test endpoints failing only makes retries (and one company holds
 * at most MAX_JOBS_PER_ENDPOINT messages per endpoint), so they page only when test deliveries due
 * an hour ago are not taken, a dead consumer, never a partner's dead receiver.
 */
const LONGEST_HEALTHY_AGE_SECONDS = MAX_SEND_DELAY_SECONDS + DELIVERY_LANES.visibilityTimeoutSeconds;
export const WEBHOOK_ALARMS = {
  failureRate: 0.25,
  failureRateMinAttempts: 20,
  giveUpRate: 0.05,
  giveUpRateMinDeliveries: 20,
  /** The oldest message a healthy lane may hold: the longest delay, and one failed receipt's visibility timeout. */
  longestHealthyAgeSeconds: LONGEST_HEALTHY_AGE_SECONDS,
  /** Live first attempts: due ones are taken within a second; a minute past the longest delay means stuck. */
  fastLaneAgeSeconds: LONGEST_HEALTHY_AGE_SECONDS + 60,
  /** Live retries in sustained failure: 5 concurrent invocations; 15 minutes past the longest delay means stuck. */
  slowLaneAgeSeconds: LONGEST_HEALTHY_AGE_SECONDS + 15 * 60,
  /** Test mode's lanes: an hour past the longest delay, a dead consumer only. */
  testLaneAgeSeconds: LONGEST_HEALTHY_AGE_SECONDS + 60 * 60,
  /**
   * The live planning queue: its messages are never delayed and a slice is planned in seconds; one that
   * failed comes back after the visibility timeout (180 s) and is planned then. So a slice older than
   * that and a minute more has failed twice or waits for a worker that is failing, throttled or
   * stopped: first attempts of the companies behind it wait too.
   */
  planningAgeSeconds: PLANNING_QUEUE.visibilityTimeoutSeconds + 60,
  /**
   * Test mode's planning queue: an hour more, a dead consumer only, as for the test lanes. Its
   * mapping is capped apart (TEST_PLANNING_QUEUE), and many test companies bursting at once make a
   * backlog there that delays nobody's live delivery: no page for that.
   */
  testPlanningAgeSeconds: PLANNING_QUEUE.visibilityTimeoutSeconds + 60 + 60 * 60,
  /**
   * The sweeper: runs in a row (one every DELIVERY_SWEEP.everyMinutes) in which it could not sweep
   * an endpoint, or was not invoked at all. One is retried on the next run by design; three in a
   * row is a lasting fault.
   */
  sweepFailureRuns: 3,
} as const;

export interface WebhookDeliveryProps {
  table: ITable;
  projectRoot: string;
  environment: Record<string, string>;
  logRetention: RetentionDays;
  /** The key that opens endpoint secrets (webhook-secret-key.ts). */
  secretKey: ISecret;
}

export class WebhookDelivery extends Construct {
  readonly fanOut: ApiFunction;
  /** The planning worker (functions/plan-webhook-deliveries.ts) on the planning queues, live and test. */
  readonly plan: ApiFunction;
  /** The fair queue of live company slices the fan-out forwards (`WEBHOOK_PLANNING_QUEUE_URL`). */
  readonly planningQueue: Queue;
  /** Test mode's (`WEBHOOK_TEST_PLANNING_QUEUE_URL`): its own mapping, capped (TEST_PLANNING_QUEUE), as the test lanes are. */
  readonly testPlanningQueue: Queue;
  /** Slices (of either mode) received PLANNING_QUEUE.maxReceiveCount times without being planned. */
  readonly planningDeadLetters: Queue;
  readonly deliver: ApiFunction;
  /** Live first attempts and early retries (`WEBHOOK_DELIVERY_QUEUE_URL`). */
  readonly fastLane: Queue;
  /** Live retries of deliveries in sustained failure (`WEBHOOK_SLOW_QUEUE_URL`). */
  readonly slowLane: Queue;
  /** Test mode's lanes (`WEBHOOK_TEST_DELIVERY_QUEUE_URL`, `WEBHOOK_TEST_SLOW_QUEUE_URL`). */
  readonly testFastLane: Queue;
  readonly testSlowLane: Queue;
  /** The delivery sweeper, on an EventBridge Scheduler schedule. */
  readonly sweep: ApiFunction;
  /** Messages received too often without being settled (the lanes' redrive policy). */
  readonly deadLetters: Queue;
  /** Stream records the fan-out could not process. */
  readonly failedStreamRecords: Queue;

  constructor(scope: Construct, id: string, props: WebhookDeliveryProps) {
    super(scope, id);
    const { table } = props;
    const queueDefaults = { encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true } as const;
    const retentionPeriod = Duration.days(DELIVERY_LANES.retentionDays);

    this.deadLetters = new Queue(this, 'DeadLetters', { ...queueDefaults, retentionPeriod });
    const lane = (laneId: string) =>
      new Queue(this, laneId, {
        ...queueDefaults,
        retentionPeriod,
        visibilityTimeout: Duration.seconds(DELIVERY_LANES.visibilityTimeoutSeconds),
        deadLetterQueue: { queue: this.deadLetters, maxReceiveCount: DELIVERY_LANES.maxReceiveCount },
      });
    this.fastLane = lane('FastLane');
    this.slowLane = lane('SlowLane');
    this.testFastLane = lane('TestFastLane');
    this.testSlowLane = lane('TestSlowLane');
    const allLanes = [this.fastLane, this.slowLane, this.testFastLane, this.testSlowLane];
    this.failedStreamRecords = new Queue(this, 'FailedStreamRecords', { ...queueDefaults, retentionPeriod });
    Validations.of(this.failedStreamRecords).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: "This queue is itself the fan-out stream mapping's on-failure destination; an operator inspects and replays it.",
    });

    const lanes = {
      WEBHOOK_DELIVERY_QUEUE_URL: this.fastLane.queueUrl,
      WEBHOOK_SLOW_QUEUE_URL: this.slowLane.queueUrl,
      WEBHOOK_TEST_DELIVERY_QUEUE_URL: this.testFastLane.queueUrl,
      WEBHOOK_TEST_SLOW_QUEUE_URL: this.testSlowLane.queueUrl,
    };

    // The planning queues: standard queues whose messages carry MessageGroupId (mode and company), which
    // makes each an SQS fair queue: quiet tenants' slices are received before a noisy tenant's backlog.
    // One per mode (test-mode bursts never hold a planning invocation a live slice needs), one dead-letter queue.
    this.planningDeadLetters = new Queue(this, 'PlanningDeadLetters', { ...queueDefaults, retentionPeriod });
    const planningQueue = (queueId: string) =>
      new Queue(this, queueId, {
        ...queueDefaults,
        retentionPeriod: Duration.days(PLANNING_QUEUE.retentionDays),
        visibilityTimeout: Duration.seconds(PLANNING_QUEUE.visibilityTimeoutSeconds),
        deadLetterQueue: { queue: this.planningDeadLetters, maxReceiveCount: PLANNING_QUEUE.maxReceiveCount },
      });
    this.planningQueue = planningQueue('PlanningQueue');
    this.testPlanningQueue = planningQueue('TestPlanningQueue');

    this.fanOut = new ApiFunction(this, 'FanOut', {
      entry: `${props.projectRoot}/${FAN_OUT_WEBHOOK_EVENTS_ENTRY}`,
      projectRoot: props.projectRoot,
      description: "Webhook fan-out: a table stream batch's small company slices planned, the large ones to their mode's planning queue",
      memorySize: 512,
      timeout: Duration.seconds(FAN_OUT_STREAM.functionTimeoutSeconds),
      environment: {
        ...props.environment,
        ...lanes,
        WEBHOOK_PLANNING_QUEUE_URL: this.planningQueue.queueUrl,
        WEBHOOK_TEST_PLANNING_QUEUE_URL: this.testPlanningQueue.queueUrl,
      },
      logRetention: props.logRetention,
    });
    // It plans small slices itself (the planning worker's table access and fast lanes) and forwards the rest.
    this.fanOut.bindTable(table, 'webhook-fan-out');
    this.fastLane.grantSendMessages(this.fanOut.role);
    this.testFastLane.grantSendMessages(this.fanOut.role);
    this.planningQueue.grantSendMessages(this.fanOut.role);
    this.testPlanningQueue.grantSendMessages(this.fanOut.role);
    this.fanOut.function.addEventSource(
      new DynamoEventSource(table, {
        startingPosition: StartingPosition.TRIM_HORIZON,
        batchSize: FAN_OUT_STREAM.batchSize,
        bisectBatchOnError: true,
        reportBatchItemFailures: true,
        retryAttempts: FAN_OUT_STREAM.retryAttempts,
        maxRecordAge: Duration.hours(FAN_OUT_STREAM.maxRecordAgeHours),
        onFailure: new SqsDlq(this.failedStreamRecords),
        filters: [FilterCriteria.filter(FAN_OUT_STREAM.filterPattern)],
      }),
    );

    this.plan = new ApiFunction(this, 'Plan', {
      entry: `${props.projectRoot}/${PLAN_WEBHOOK_DELIVERIES_ENTRY}`,
      projectRoot: props.projectRoot,
      description: 'Webhook planning: one delivery job per (event, endpoint) of a company slice, queued as endpoint slots allow',
      memorySize: 512,
      timeout: Duration.seconds(PLANNING_QUEUE.functionTimeoutSeconds),
      environment: { ...props.environment, ...lanes },
      logRetention: props.logRetention,
    });
    // The table access the fan-out had before it forwarded: endpoints without secrets, records started, slots.
    this.plan.bindTable(table, 'webhook-fan-out');
    // Its fills queue first attempts: the fast lanes only.
    this.fastLane.grantSendMessages(this.plan.role);
    this.testFastLane.grantSendMessages(this.plan.role);
    // Several invocations at once (a noisy company's slice never holds a quiet one's); enough in flight for SQS to see a noisy
    // tenant. Test mode's on its own mapping, capped apart: its bursts take none of the live mapping's invocations.
    for (const [queue, maxConcurrency] of [
      [this.planningQueue, PLANNING_QUEUE.maxConcurrency],
      [this.testPlanningQueue, TEST_PLANNING_QUEUE.maxConcurrency],
    ] as const)
      this.plan.function.addEventSource(
        new SqsEventSource(queue, {
          batchSize: PLANNING_QUEUE.batchSize,
          maxBatchingWindow: Duration.seconds(0),
          reportBatchItemFailures: true,
          maxConcurrency,
        }),
      );

    this.deliver = new ApiFunction(this, 'Deliver', {
      entry: `${props.projectRoot}/${DELIVER_WEBHOOKS_ENTRY}`,
      projectRoot: props.projectRoot,
      description: 'Webhook delivery: signed attempts from the fast and slow delivery lanes',
      memorySize: 512,
      timeout: Duration.seconds(DELIVERY_FUNCTION_TIMEOUT_SECONDS),
      environment: { ...props.environment, ...lanes },
      logRetention: props.logRetention,
    });
    this.deliver.bindTable(table, 'webhook-deliver');
    this.deliver.bindWebhookSecretKey(props.secretKey);
    // The event source mappings consume every lane (ReceiveMessage, DeleteMessage, ChangeMessageVisibility,
    // GetQueueAttributes); the function sends retries and hops to any lane and the next waiting job to a fast lane.
    for (const queue of allLanes) queue.grantSendMessages(this.deliver.role);
    const fromLane = { batchSize: DELIVERY_LANES.batchSize, maxBatchingWindow: Duration.seconds(0), reportBatchItemFailures: true };
    // Provisioned pollers on the live fast lane (FAST_LANE: capacity ready when an endpoint starts hanging); the others capped.
    this.deliver.function.addEventSource(new SqsEventSource(this.fastLane, { ...fromLane, provisionedPollerConfig: { ...FAST_LANE } }));
    this.deliver.function.addEventSource(new SqsEventSource(this.slowLane, { ...fromLane, maxConcurrency: SLOW_LANE.maxConcurrency }));
    this.deliver.function.addEventSource(
      new SqsEventSource(this.testFastLane, { ...fromLane, maxConcurrency: TEST_FAST_LANE.maxConcurrency }),
    );
    this.deliver.function.addEventSource(
      new SqsEventSource(this.testSlowLane, { ...fromLane, maxConcurrency: TEST_SLOW_LANE.maxConcurrency }),
    );

    this.sweep = new ApiFunction(this, 'Sweep', {
      entry: `${props.projectRoot}/${SWEEP_WEBHOOK_DELIVERIES_ENTRY}`,
      projectRoot: props.projectRoot,
      description: 'Webhook delivery sweeper: releases leaked slots, queues deliveries promoted but never queued, fills free slots',
      memorySize: 512,
      timeout: Duration.seconds(DELIVERY_SWEEP.timeoutSeconds),
      environment: { ...props.environment, ...lanes },
      logRetention: props.logRetention,
    });
    this.sweep.bindTable(table, 'webhook-sweep');
    // It queues first attempts (and promoted ones again): the fast lanes only.
    this.fastLane.grantSendMessages(this.sweep.role);
    this.testFastLane.grantSendMessages(this.sweep.role);
    // Run by EventBridge Scheduler (AWS's engine, not a timer of ours), which invokes it asynchronously: Lambda would
    // retry a failed run twice on its own, beside the next scheduled one, so two sweeps could queue the same stale
    // promotion twice. No retry and no event older than a period: a run that fails is followed by the next, five
    // minutes later, which sweeps every endpoint again. (A run of a full 300 s can still meet the next: harmless.)
    this.sweep.function.configureAsyncInvoke({
      retryAttempts: 0,
      maxEventAge: Duration.minutes(DELIVERY_SWEEP.everyMinutes),
    });
    // Its role may invoke the sweeper only (LambdaInvoke grants the function and its versions).
    const scheduleRole = new Role(this, 'SweepScheduleRole', { assumedBy: new ServicePrincipal('scheduler.amazonaws.com') });
    const sweepLogicalId = Stack.of(this).resolve(
      Stack.of(this).getLogicalId(this.sweep.function.node.defaultChild as CfnElement),
    ) as string;
    Validations.of(scheduleRole).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${sweepLogicalId}.Arn>:*]`,
      reason:
        "lambda:InvokeFunction on the sweeper's own versions and aliases, which the scheduler target's grant adds; no other function.",
    });
    new Schedule(this, 'SweepSchedule', {
      schedule: ScheduleExpression.rate(Duration.minutes(DELIVERY_SWEEP.everyMinutes)),
      target: new LambdaInvoke(this.sweep.function, {
        role: scheduleRole,
        retryAttempts: 2,
        maxEventAge: Duration.minutes(DELIVERY_SWEEP.everyMinutes),
      }),
      description: 'Webhook delivery sweeper (functions/sweep-webhook-deliveries.ts)',
    });
  }

  /** The redeliver route: it sends a new delivery to its mode's fast lane, and is given their URLs. */
  grantEnqueueRedelivery(fn: ApiFunction): void {
    this.fastLane.grantSendMessages(fn.role);
    this.testFastLane.grantSendMessages(fn.role);
    fn.function.addEnvironment('WEBHOOK_DELIVERY_QUEUE_URL', this.fastLane.queueUrl);
    fn.function.addEnvironment('WEBHOOK_TEST_DELIVERY_QUEUE_URL', this.testFastLane.queueUrl);
  }

  /** The lanes, by mode and by speed, with what their age alarm and dashboard line are called. */
  private lanes(): { queue: Queue; alarmId: string; label: string; threshold: number; what: string }[] {
    return [
      {
        queue: this.fastLane,
        alarmId: 'WebhookFastLaneAge',
        label: 'live fast lane',
        threshold: WEBHOOK_ALARMS.fastLaneAgeSeconds,
        what: 'live first attempts and early retries',
      },
      {
        queue: this.slowLane,
        alarmId: 'WebhookSlowLaneAge',
        label: 'live slow lane',
        threshold: WEBHOOK_ALARMS.slowLaneAgeSeconds,
        what: 'live retries in sustained failure',
      },
      {
        queue: this.testFastLane,
        alarmId: 'WebhookTestFastLaneAge',
        label: 'test fast lane',
        threshold: WEBHOOK_ALARMS.testLaneAgeSeconds,
        what: 'test-mode first attempts and early retries',
      },
      {
        queue: this.testSlowLane,
        alarmId: 'WebhookTestSlowLaneAge',
        label: 'test slow lane',
        threshold: WEBHOOK_ALARMS.testLaneAgeSeconds,
        what: 'test-mode retries in sustained failure',
      },
    ];
  }

  /** The age of a lane's oldest message (a delayed retry or hop included: see WEBHOOK_ALARMS). */
  private oldestMessage(queue: Queue, options: MetricOptions = {}): Metric {
    return queue.metricApproximateAgeOfOldestMessage({ statistic: 'Maximum', period: METRIC_PERIOD, ...options });
  }

  /**
   * The share of attempts that failed, in periods with enough attempts to mean something. Both
   * metrics are published only when counted, so each is FILLed with 0: at a 100 % failure rate
   * `delivered` has no datapoint, and without FILL the expression would have none either.
   */
  failureRate(): IMetric {
    return shareOf(
      'failed share of webhook attempts',
      ['failed', webhookMetric('attemptFailed')],
      ['delivered', webhookMetric('delivered')],
      {
        minimum: WEBHOOK_ALARMS.failureRateMinAttempts,
        period: METRIC_PERIOD,
      },
    );
  }

  /** The share of finished deliveries that gave up after 3 days, per hour with enough of them. */
  giveUpRate(): IMetric {
    const period = Duration.hours(1);
    return shareOf(
      'given-up share of finished deliveries',
      ['givenUp', webhookMetric('givenUp', { period })],
      ['delivered', webhookMetric('delivered', { period })],
      { minimum: WEBHOOK_ALARMS.giveUpRateMinDeliveries, period },
    );
  }

  addAlarms(alarms: Pick<ServiceAlarms, 'add' | 'addSilentStreamConsumer'>): void {
    alarms.addSilentStreamConsumer('WebhookFanOutSilent', this.fanOut.function, 'Webhook fan-out');
    const first = { threshold: 1, comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD, evaluationPeriods: 1 };
    const depth = (queue: Queue) => queue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: METRIC_PERIOD });
    alarms.add('WebhookDeadLetters', depth(this.deadLetters), {
      ...first,
      description:
        'Webhooks: delivery messages were received maxAttempts() + 10 times without being settled (the delivery function ' +
        'crashed or timed out on them) and are in the dead-letter queue; see docs/deploy.md, runbook.',
    });
    alarms.add('WebhookGiveUpRate', this.giveUpRate(), {
      threshold: WEBHOOK_ALARMS.giveUpRate,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      description:
        `Webhooks: more than ${WEBHOOK_ALARMS.giveUpRate * 100}% of finished deliveries gave up after 3 days of failed attempts in an hour ` +
        `(hours with at least ${WEBHOOK_ALARMS.giveUpRateMinDeliveries}); see docs/deploy.md, runbook.`,
    });
    alarms.add('WebhookPlanningDeadLetters', depth(this.planningDeadLetters), {
      ...first,
      description:
        `Webhooks: company slices of events were received ${PLANNING_QUEUE.maxReceiveCount} times without being planned and are in the ` +
        'planning dead-letter queue: no delivery was scheduled for their events; see docs/deploy.md, runbook.',
    });
    for (const [alarmId, queue, mode, threshold] of [
      ['WebhookPlanningAge', this.planningQueue, 'live', WEBHOOK_ALARMS.planningAgeSeconds],
      ['WebhookTestPlanningAge', this.testPlanningQueue, 'test', WEBHOOK_ALARMS.testPlanningAgeSeconds],
    ] as const)
      alarms.add(alarmId, this.oldestMessage(queue), {
        threshold,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        description:
          `Webhooks: a ${mode} company slice waited more than ${threshold} s on its planning queue (slices are never ` +
          'delayed and are planned in seconds): the planning worker is failing, throttled or stopped; see docs/deploy.md, runbook.',
      });
    alarms.add('WebhookFanOutFailedStreamRecords', depth(this.failedStreamRecords), {
      ...first,
      description: 'Webhooks: events the fan-out could not process are in its on-failure queue; no delivery was scheduled for them.',
    });
    alarms.add('WebhookFailureRate', this.failureRate(), {
      threshold: WEBHOOK_ALARMS.failureRate,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      description:
        `Webhooks: more than ${WEBHOOK_ALARMS.failureRate * 100}% of delivery attempts failed in 2 of 3 five-minute periods ` +
        `(periods with at least ${WEBHOOK_ALARMS.failureRateMinAttempts} attempts).`,
    });
    for (const lane of this.lanes())
      alarms.add(lane.alarmId, this.oldestMessage(lane.queue), {
        threshold: lane.threshold,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        description:
          `Webhooks: a message on the ${lane.label} (${lane.what}) is older than ${lane.threshold} s, more than its longest ` +
          `delay (${MAX_SEND_DELAY_SECONDS} s) and one failed receipt allow: its consumer is not taking due deliveries; see docs/deploy.md, runbook.`,
      });
    alarms.add('WebhookSweepFailures', webhookMetric('sweepFailures'), {
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: WEBHOOK_ALARMS.sweepFailureRuns,
      datapointsToAlarm: WEBHOOK_ALARMS.sweepFailureRuns,
      description:
        `Webhooks: the delivery sweeper could not sweep an endpoint in ${WEBHOOK_ALARMS.sweepFailureRuns} runs in a row: leaked ` +
        'slots and deliveries started but never queued stay unrepaired; see docs/deploy.md, runbook.',
    });
    // A sweeper never invoked fails nothing and publishes nothing: only its missing invocations show it.
    alarms.add('WebhookSweepSilent', this.sweep.function.metricInvocations({ statistic: 'Sum', period: METRIC_PERIOD }), {
      threshold: 1,
      comparisonOperator: ComparisonOperator.LESS_THAN_THRESHOLD,
      evaluationPeriods: WEBHOOK_ALARMS.sweepFailureRuns,
      datapointsToAlarm: WEBHOOK_ALARMS.sweepFailureRuns,
      treatMissingData: TreatMissingData.BREACHING,
      description:
        `Webhooks: the delivery sweeper was not invoked for ${WEBHOOK_ALARMS.sweepFailureRuns} five-minute periods in a row ` +
        '(its schedule disabled or deleted, or its role refused): nothing repairs leaked slots; see docs/deploy.md, runbook.',
    });
  }

  /**
   * The dashboard row: outcomes (give-ups among them), every lane's oldest message, what the
   * sweeper repaired or could not, and the queues that page.
   */
  widgets(): IWidget[] {
    const period = METRIC_PERIOD;
    const graph = (title: string, left: IMetric[]) => new GraphWidget({ title, left, width: 6, height: 6, period });
    const visible = (queue: Queue, label: string) =>
      queue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period, label });
    const delayed = (queue: Queue, label: string) =>
      queue.metricApproximateNumberOfMessagesDelayed({ statistic: 'Maximum', period, label });
    const lanes = this.lanes();
    return [
      graph('Webhooks: outcomes', [
        webhookMetric('delivered', { label: 'delivered' }),
        webhookMetric('attemptFailed', { label: 'attempt failed' }),
        webhookMetric('givenUp', { label: 'delivery given up (3 days)' }),
        webhookMetric('endpointDisabled', { label: 'endpoint disabled' }),
      ]),
      // Test mode's, which no alarm reads: a test key's failing endpoints are its own rehearsal.
      graph('Webhooks: test-mode outcomes', [
        webhookMetric('testDelivered', { label: 'test delivered' }),
        webhookMetric('testAttemptFailed', { label: 'test attempt failed' }),
        webhookMetric('testGivenUp', { label: 'test delivery given up (3 days)' }),
        webhookMetric('testEndpointDisabled', { label: 'test endpoint disabled' }),
      ]),
      graph('Webhooks: oldest message per lane (s)', [
        ...lanes.map((lane) => this.oldestMessage(lane.queue, { label: lane.label })),
        this.oldestMessage(this.planningQueue, { label: 'planning queue' }),
        this.oldestMessage(this.testPlanningQueue, { label: 'test planning queue' }),
      ]),
      graph('Webhooks: sweeper', [
        webhookMetric('slotsReleased', { label: 'slots released' }),
        webhookMetric('jobsRequeued', { label: 'jobs requeued' }),
        webhookMetric('sweepFailures', { label: 'endpoints not swept' }),
      ]),
      graph('Webhooks: queues', [
        this.deadLetters.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period, label: 'dead letters' }),
        this.failedStreamRecords.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period, label: 'fan-out failures' }),
        visible(this.planningQueue, 'planning waiting'),
        visible(this.testPlanningQueue, 'test planning waiting'),
        this.planningDeadLetters.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period, label: 'planning dead letters' }),
        ...lanes.flatMap((lane) => [visible(lane.queue, `${lane.label} due`), delayed(lane.queue, `${lane.label} delayed`)]),
      ]),
    ];
  }
}

/**
 * `part / (part + rest)` in periods where the two add up to at least `minimum` (0 otherwise), each
 * FILLed with 0: both are published only when counted, and a plain sum has no value in a period
 * where one of them has none.
 */
function shareOf(
  label: string,
  [partId, part]: [string, IMetric],
  [restId, rest]: [string, IMetric],
  options: { minimum: number; period: Duration },
): MathExpression {
  const [p, r] = [`FILL(${partId}, 0)`, `FILL(${restId}, 0)`];
  return new MathExpression({
    label,
    expression: `IF(${p} + ${r} >= ${options.minimum}, ${p} / (${p} + ${r}), 0)`,
    usingMetrics: { [partId]: part, [restId]: rest },
    period: options.period,
  });
}
