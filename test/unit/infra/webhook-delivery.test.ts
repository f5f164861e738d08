import type { CfnElement } from 'aws-cdk-lib';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoWebhookDeliveryStore } from '../../../lib/adapters/dynamodb/webhook-delivery-store.js';
import { DynamoWebhookEndpointStore } from '../../../lib/adapters/dynamodb/webhook-endpoint-store.js';
import { keys } from '../../../lib/adapters/dynamodb/table-keys.js';
import { SecretBox } from '../../../lib/adapters/webhooks/secret-box.js';
import { MODES } from '../../../lib/mode.js';
import { MAX_SEND_DELAY_SECONDS, maxAttempts } from '../../../lib/webhooks/retry-schedule.js';
import type { WebhookEndpoint } from '../../../lib/webhooks/webhook-endpoint.js';
import { scheduledDeliveryId, type WebhookDelivery } from '../../../lib/webhooks/webhook-delivery.js';
import {
  DELIVERY_FUNCTION_TIMEOUT_SECONDS,
  DELIVERY_LANES,
  FAN_OUT_STREAM,
  FAST_LANE,
  PLANNING_QUEUE,
  SLOW_LANE,
  TEST_FAST_LANE,
  TEST_SLOW_LANE,
  WEBHOOK_ALARMS,
} from '../../../infra/stack/webhook-delivery.js';
import { DELIVERY_SWEEP, TEST_PLANNING_QUEUE } from '../../../infra/contract/webhook-lanes.js';
import { WEBHOOK_METRIC_NAMES } from '../../../infra/stack/service-metrics.js';
import { SWEEP_METRICS } from '../../../functions/sweep-webhook-deliveries.js';
import { METRICS, TEST_METRICS } from '../../../functions/deliver-webhooks.js';
import { WEBHOOK_ENDPOINT_HEALTH_ATTRIBUTES } from '../../../infra/stack/grants.js';
import { decide, RecordingClient, type ItemRequest } from './dynamodb-iam.js';
import { actionsOf, PLATFORM_ACTIONS, resourcesOfType, statementsOfFunction, synth, type Resource, type Statement } from './synth.js';

/** Webhook delivery in the stack: the lanes, the dead-letter queue, both functions, their event sources, rights and alarms. */
const synthesised = synth();
const { stack, template } = synthesised;
const delivery = stack.webhookDelivery;

const logicalIdOf = (element: CfnElement): string => stack.resolve(stack.getLogicalId(element)) as string;
const idOf = (construct: { node: { defaultChild?: unknown } }) => logicalIdOf(construct.node.defaultChild as CfnElement);
const queue = (q: { node: { defaultChild?: unknown } }): Resource => resourcesOfType(template, 'AWS::SQS::Queue')[idOf(q)]!;
const fn = (f: { function: { node: { defaultChild?: unknown } } }): Resource =>
  resourcesOfType(template, 'AWS::Lambda::Function')[idOf(f.function)]!;

function mappingsOf(f: { function: { node: { defaultChild?: unknown } } }): Resource[] {
  return Object.values(resourcesOfType(template, 'AWS::Lambda::EventSourceMapping')).filter(
    (m) => (m.Properties.FunctionName as { Ref: string }).Ref === idOf(f.function),
  );
}

function statementsOf(f: { role: { node: { defaultChild?: unknown } } }): Statement[] {
  const roleId = idOf(f.role);
  return Object.values(resourcesOfType(template, 'AWS::IAM::Policy'))
    .filter((p) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === roleId))
    .flatMap((p) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
}

function alarm(id: string): Resource {
  const found = Object.values(resourcesOfType(template, 'AWS::CloudWatch::Alarm')).filter(
    (a) => a.Properties.AlarmName === `PartnerCaseApi-dev-${id}`,
  );
  if (found.length !== 1) throw new Error(`expected one alarm ${id}, found ${found.length}`);
  return found[0] as Resource;
}

/** The queues (by logical id) a statement names, as `Fn::GetAtt [id, 'Arn']`. */
const queuesNamed = (statement: Statement): string[] =>
  (Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource]).map(
    (r) => (r as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0],
  );

/** Each SQS action a role holds, with the queues it holds it on. */
function sqsRights(statements: Statement[]): Record<string, string[]> {
  const rights: Record<string, string[]> = {};
  for (const s of statements.filter((s) => s.Effect === 'Allow')) {
    for (const action of actionsOf(s).filter((a) => a.startsWith('sqs:'))) {
      rights[action] = [...new Set([...(rights[action] ?? []), ...queuesNamed(s)])].sort();
    }
  }
  return rights;
}

describe('the webhook delivery lanes', () => {
  it('keep messages 14 days (retries run 3½ days), encrypted, TLS only, redriven to the dead-letter queue above the most attempts a delivery makes', () => {
    const dlq = idOf(delivery.deadLetters);
    expect(DELIVERY_LANES.maxReceiveCount).toBe(maxAttempts() + 10);
    for (const lane of [delivery.fastLane, delivery.slowLane]) {
      expect(queue(lane).Properties).toMatchObject({
        MessageRetentionPeriod: 14 * 24 * 3600,
        SqsManagedSseEnabled: true,
        VisibilityTimeout: DELIVERY_LANES.visibilityTimeoutSeconds,
        RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [dlq, 'Arn'] }, maxReceiveCount: maxAttempts() + 10 },
      });
    }
    for (const q of [delivery.deadLetters, delivery.failedStreamRecords]) {
      expect(queue(q).Properties).toMatchObject({ MessageRetentionPeriod: 14 * 24 * 3600, SqsManagedSseEnabled: true });
      expect(queue(q).Properties.RedrivePolicy).toBeUndefined();
    }
    const policies = Object.values(resourcesOfType(template, 'AWS::SQS::QueuePolicy'));
    for (const q of [delivery.fastLane, delivery.slowLane, delivery.deadLetters, delivery.failedStreamRecords]) {
      const policy = policies.find((p) => JSON.stringify(p.Properties.Queues).includes(idOf(q)));
      expect(JSON.stringify(policy?.Properties.PolicyDocument)).toContain('"aws:SecureTransport":"false"');
    }
  });

  it('give a receive six times the delivery function\u2019s timeout (AWS\u2019s advice for SQS event sources), which leaves room for one 10 s attempt per message', () => {
    expect(fn(delivery.deliver).Properties.Timeout).toBe(DELIVERY_FUNCTION_TIMEOUT_SECONDS);
    expect(DELIVERY_FUNCTION_TIMEOUT_SECONDS).toBeGreaterThanOrEqual(20);
    expect(DELIVERY_LANES.visibilityTimeoutSeconds).toBeGreaterThanOrEqual(6 * DELIVERY_FUNCTION_TIMEOUT_SECONDS);
  });

  it('are all four consumed by the delivery function, ten messages at a time, at once, with partial batch responses; the slow and test lanes capped', () => {
    const mappings = mappingsOf(delivery.deliver);
    expect(mappings).toHaveLength(4);
    const on = (q: { node: { defaultChild?: unknown } }) =>
      mappings.find((m) => JSON.stringify(m.Properties.EventSourceArn).includes(idOf(q)))!.Properties;
    // Test mode's lanes are queues and mappings of their own, capped: a test key never takes live's pollers or queue.
    expect(on(delivery.testFastLane).ScalingConfig).toEqual({ MaximumConcurrency: TEST_FAST_LANE.maxConcurrency });
    expect(on(delivery.testSlowLane).ScalingConfig).toEqual({ MaximumConcurrency: TEST_SLOW_LANE.maxConcurrency });
    expect(on(delivery.testFastLane).ProvisionedPollerConfig).toBeUndefined();
    for (const lane of [delivery.fastLane, delivery.slowLane, delivery.testFastLane, delivery.testSlowLane]) {
      expect(on(lane)).toMatchObject({
        BatchSize: 10,
        MaximumBatchingWindowInSeconds: 0,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
      });
    }
    expect(on(delivery.slowLane).ScalingConfig).toEqual({ MaximumConcurrency: SLOW_LANE.maxConcurrency });
    // The fast lane in provisioned mode (its pollers ready when an endpoint starts hanging); the two settings exclude each other.
    expect(on(delivery.fastLane).ScalingConfig).toBeUndefined();
    expect(on(delivery.fastLane).ProvisionedPollerConfig).toEqual({
      MinimumPollers: FAST_LANE.minimumPollers,
      MaximumPollers: FAST_LANE.maximumPollers,
    });
    expect(on(delivery.slowLane).ProvisionedPollerConfig).toBeUndefined();
  });

  it('are fed by the fan-out from INSERTs of event items on the table\u2019s stream, bisecting, with partial failures, bounded retries and age, and an on-failure queue', () => {
    const [stream, ...others] = mappingsOf(delivery.fanOut);
    expect(others).toEqual([]);
    expect(stream!.Properties).toMatchObject({
      BatchSize: FAN_OUT_STREAM.batchSize,
      BisectBatchOnFunctionError: true,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      MaximumRetryAttempts: FAN_OUT_STREAM.retryAttempts,
      MaximumRecordAgeInSeconds: FAN_OUT_STREAM.maxRecordAgeHours * 3600,
      StartingPosition: 'TRIM_HORIZON',
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [idOf(delivery.failedStreamRecords), 'Arn'] } } },
    });
    expect(JSON.stringify(stream!.Properties.EventSourceArn)).toContain('StreamArn');
    const filters = (stream!.Properties.FilterCriteria as { Filters: { Pattern: string }[] }).Filters.map((f) => JSON.parse(f.Pattern));
    // INSERTs (no old image) of event items, on the dynamodb key only (the one key AWS filters a DynamoDB stream on).
    expect(filters).toEqual([{ dynamodb: { OldImage: { pk: { S: [{ exists: false }] } }, NewImage: { type: { S: ['EVENT'] } } } }]);
  });

  it("plan each company's slices on its mode's planning queue, a fair queue with a dead-letter queue, with enough invocations in flight for SQS to tell a noisy company", () => {
    const mappings = mappingsOf(delivery.plan);
    expect(mappings).toHaveLength(2);
    const on = (q: { node: { defaultChild?: unknown } }) =>
      mappings.find((m) => JSON.stringify(m.Properties.EventSourceArn) === JSON.stringify({ 'Fn::GetAtt': [idOf(q), 'Arn'] }));
    // Test mode's bursts on a queue and a mapping of their own, capped apart: whatever a free test key sends (from any
    // number of companies, each one quiet to the fair queue), the live mapping's invocations stay the live slices'.
    for (const [q, maxConcurrency] of [
      [delivery.planningQueue, PLANNING_QUEUE.maxConcurrency],
      [delivery.testPlanningQueue, TEST_PLANNING_QUEUE.maxConcurrency],
    ] as const) {
      expect(on(q)?.Properties).toMatchObject({
        BatchSize: PLANNING_QUEUE.batchSize,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        ScalingConfig: { MaximumConcurrency: maxConcurrency },
      });
      // Fair queues mark a tenant noisy from 30 messages in flight: the worker may hold more than that.
      expect(maxConcurrency * PLANNING_QUEUE.batchSize).toBeGreaterThan(30);
      expect(queue(q).Properties).toMatchObject({
        VisibilityTimeout: PLANNING_QUEUE.visibilityTimeoutSeconds,
        RedrivePolicy: {
          deadLetterTargetArn: { 'Fn::GetAtt': [idOf(delivery.planningDeadLetters), 'Arn'] },
          maxReceiveCount: PLANNING_QUEUE.maxReceiveCount,
        },
        SqsManagedSseEnabled: true,
      });
      // A standard queue: fair queues are standard queues whose messages carry a MessageGroupId (FIFO would lock each company's group).
      expect(queue(q).Properties.FifoQueue).toBeUndefined();
    }
    expect(TEST_PLANNING_QUEUE.maxConcurrency).toBeLessThan(PLANNING_QUEUE.maxConcurrency);
    expect(PLANNING_QUEUE.visibilityTimeoutSeconds).toBeGreaterThanOrEqual(6 * PLANNING_QUEUE.functionTimeoutSeconds);
    expect(fn(delivery.plan).Properties.Timeout).toBe(PLANNING_QUEUE.functionTimeoutSeconds);
  });

  it('give each function the queue URLs the contract names, and the delivery function the key that opens endpoint secrets', () => {
    const env = (r: Resource) => (r.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    const ref = (q: { node: { defaultChild?: unknown } }) => ({ Ref: idOf(q) });
    const lanes = {
      WEBHOOK_DELIVERY_QUEUE_URL: ref(delivery.fastLane),
      WEBHOOK_SLOW_QUEUE_URL: ref(delivery.slowLane),
      WEBHOOK_TEST_DELIVERY_QUEUE_URL: ref(delivery.testFastLane),
      WEBHOOK_TEST_SLOW_QUEUE_URL: ref(delivery.testSlowLane),
    };
    // The fan-out plans small slices (the lanes) and forwards large ones (each mode's planning queue); no key.
    expect(env(fn(delivery.fanOut))).toMatchObject({
      ...lanes,
      WEBHOOK_PLANNING_QUEUE_URL: ref(delivery.planningQueue),
      WEBHOOK_TEST_PLANNING_QUEUE_URL: ref(delivery.testPlanningQueue),
    });
    expect(env(fn(delivery.fanOut)).WEBHOOK_SECRET_KEY_ARN).toBeUndefined();
    expect(env(fn(delivery.fanOut)).WEBHOOK_DEAD_LETTER_QUEUE_URL).toBeUndefined();
    expect(env(fn(delivery.plan))).toMatchObject(lanes);
    expect(env(fn(delivery.sweep))).toMatchObject(lanes);
    expect(env(fn(delivery.plan)).WEBHOOK_DEAD_LETTER_QUEUE_URL).toBeUndefined();
    expect(env(fn(delivery.plan)).WEBHOOK_SECRET_KEY_ARN).toBeUndefined();
    expect(env(fn(delivery.deliver))).toMatchObject({
      ...lanes,
      WEBHOOK_SECRET_KEY_ARN: { Ref: idOf(stack.webhookSecretKey.secret) },
    });
    // The dead-letter queue is filled by the lanes' redrive policy alone: the function sends nothing there.
    expect(env(fn(delivery.deliver)).WEBHOOK_DEAD_LETTER_QUEUE_URL).toBeUndefined();
  });
});

describe('webhook alarms and the dashboard row', () => {
  it('page on dead letters, on slices the planning worker could not plan and on events the fan-out could not process, at the first message', () => {
    for (const [id, q] of [
      ['WebhookDeadLetters', delivery.deadLetters],
      ['WebhookPlanningDeadLetters', delivery.planningDeadLetters],
      ['WebhookFanOutFailedStreamRecords', delivery.failedStreamRecords],
    ] as const) {
      expect(alarm(id).Properties).toMatchObject({
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [idOf(q), 'QueueName'] } }],
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      });
    }
  });

  it('page when a slice waits on either planning queue longer than its planning could take', () => {
    for (const [id, q, threshold] of [
      ['WebhookPlanningAge', delivery.planningQueue, WEBHOOK_ALARMS.planningAgeSeconds],
      ['WebhookTestPlanningAge', delivery.testPlanningQueue, WEBHOOK_ALARMS.testPlanningAgeSeconds],
    ] as const)
      expect(alarm(id).Properties).toMatchObject({
        MetricName: 'ApproximateAgeOfOldestMessage',
        Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [idOf(q), 'QueueName'] } }],
        Threshold: threshold,
        ComparisonOperator: 'GreaterThanThreshold',
      });
    // Test mode's pages only on a dead consumer: a backlog of many test companies' bursts there delays no live delivery.
    expect(WEBHOOK_ALARMS.testPlanningAgeSeconds).toBeGreaterThan(WEBHOOK_ALARMS.planningAgeSeconds + 30 * 60);
  });

  it('page when a quarter of delivery attempts fail, over the metrics the delivery function publishes, in periods with enough attempts', () => {
    const props = alarm('WebhookFailureRate').Properties;
    expect(props).toMatchObject({
      Threshold: WEBHOOK_ALARMS.failureRate,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 3,
    });
    const queries = props.Metrics as { Id: string; Expression?: string; MetricStat?: { Metric: Record<string, unknown>; Stat: string } }[];
    // Each FILLed: at a 100 % failure rate `delivered` has no datapoint, and an unFILLed sum none either.
    expect(queries.find((q) => q.Expression)?.Expression).toBe(
      'IF(FILL(failed, 0) + FILL(delivered, 0) >= 20, FILL(failed, 0) / (FILL(failed, 0) + FILL(delivered, 0)), 0)',
    );
    const byId = Object.fromEntries(queries.filter((q) => q.MetricStat).map((q) => [q.Id, q.MetricStat]));
    const service = [{ Name: 'service', Value: 'partner-case-api' }];
    expect(byId.delivered).toEqual({
      Metric: { Namespace: 'PartnerCaseApi', MetricName: 'WebhookDelivered', Dimensions: service },
      Period: 300,
      Stat: 'Sum',
    });
    expect(byId.failed).toEqual({
      Metric: { Namespace: 'PartnerCaseApi', MetricName: 'WebhookAttemptFailed', Dimensions: service },
      Period: 300,
      Stat: 'Sum',
    });
  });

  it('count routine give-ups apart from processing failures: their own metric, paged on their share of finished deliveries per hour', () => {
    const props = alarm('WebhookGiveUpRate').Properties;
    expect(props).toMatchObject({ Threshold: WEBHOOK_ALARMS.giveUpRate, ComparisonOperator: 'GreaterThanThreshold', EvaluationPeriods: 1 });
    const queries = props.Metrics as { Id: string; Expression?: string; MetricStat?: { Metric: Record<string, unknown>; Stat: string } }[];
    expect(queries.find((q) => q.Expression)?.Expression).toBe(
      'IF(FILL(givenUp, 0) + FILL(delivered, 0) >= 20, FILL(givenUp, 0) / (FILL(givenUp, 0) + FILL(delivered, 0)), 0)',
    );
    const byId = Object.fromEntries(queries.filter((q) => q.MetricStat).map((q) => [q.Id, q.MetricStat]));
    const service = [{ Name: 'service', Value: 'partner-case-api' }];
    expect(byId.givenUp).toEqual({
      Metric: { Namespace: 'PartnerCaseApi', MetricName: 'WebhookDeliveryGivenUp', Dimensions: service },
      Period: 3600,
      Stat: 'Sum',
    });
    // The dead-letter alarm means processing failures only: nothing but the redrive policy fills its queue.
    expect(alarm('WebhookDeadLetters').Properties.AlarmDescription).toMatch(/received maxAttempts\(\) \+ 10 times without being settled/);
    expect(alarm('WebhookDeadLetters').Properties.AlarmDescription).not.toMatch(/3 days/);
  });

  it('every lane pages when its oldest message outlives the longest delay a retry or hop is sent with: routine retries never page, a stuck consumer does', () => {
    const lanes = [
      ['WebhookFastLaneAge', delivery.fastLane, WEBHOOK_ALARMS.fastLaneAgeSeconds],
      ['WebhookSlowLaneAge', delivery.slowLane, WEBHOOK_ALARMS.slowLaneAgeSeconds],
      ['WebhookTestFastLaneAge', delivery.testFastLane, WEBHOOK_ALARMS.testLaneAgeSeconds],
      ['WebhookTestSlowLaneAge', delivery.testSlowLane, WEBHOOK_ALARMS.testLaneAgeSeconds],
    ] as const;
    // A delayed message ages while it waits (SQS counts from the send): a healthy lane holds messages as old as the
    // longest delay sent, plus one visibility timeout for a receipt that failed.
    const healthy = MAX_SEND_DELAY_SECONDS + DELIVERY_LANES.visibilityTimeoutSeconds;
    for (const [id, q, threshold] of lanes) {
      expect(alarm(id).Properties).toMatchObject({
        MetricName: 'ApproximateAgeOfOldestMessage',
        Statistic: 'Maximum',
        Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [idOf(q), 'QueueName'] } }],
        Threshold: threshold,
        ComparisonOperator: 'GreaterThanThreshold',
      });
      expect({ id, aboveRoutine: threshold > healthy }).toEqual({ id, aboveRoutine: true });
    }
    // A stuck live consumer pages within minutes of the longest delay (retries never past their schedule); the test
    // lanes wait an hour more, so a partner's failing test endpoints never page, but a dead consumer still does.
    expect(WEBHOOK_ALARMS.fastLaneAgeSeconds - healthy).toBeLessThanOrEqual(60);
    expect(WEBHOOK_ALARMS.slowLaneAgeSeconds - healthy).toBeLessThanOrEqual(15 * 60);
    expect(WEBHOOK_ALARMS.testLaneAgeSeconds - healthy).toBe(60 * 60);
    // One lane, one age alarm: none added beside them by watchAsyncWork.
    const ages = Object.values(resourcesOfType(template, 'AWS::CloudWatch::Alarm')).filter(
      (a) => a.Properties.MetricName === 'ApproximateAgeOfOldestMessage',
    );
    for (const [id, q] of lanes)
      expect({ id, alarms: ages.filter((a) => JSON.stringify(a.Properties.Dimensions).includes(`"${idOf(q)}"`)).length }).toEqual({
        id,
        alarms: 1,
      });
  });

  it('the sweeper pages when it could not sweep an endpoint in three runs in a row, on the metric it publishes', () => {
    expect(WEBHOOK_METRIC_NAMES).toMatchObject({
      slotsReleased: SWEEP_METRICS.released,
      jobsRequeued: SWEEP_METRICS.requeued,
      sweepFailures: SWEEP_METRICS.failures,
    });
    expect(alarm('WebhookSweepFailures').Properties).toMatchObject({
      Namespace: 'PartnerCaseApi',
      MetricName: 'WebhookSweepFailures',
      Dimensions: [{ Name: 'service', Value: 'partner-case-api' }],
      Statistic: 'Sum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 3,
      DatapointsToAlarm: 3,
    });
    // A run every 5 minutes and a 5-minute period: three periods are three runs.
    expect(DELIVERY_SWEEP.everyMinutes * 60).toBe(300);
  });

  it('a failed sweep is not retried by Lambda beside the next scheduled run (which sweeps every endpoint again), so two sweeps never race for one stale promotion that way', () => {
    const configs = Object.values(resourcesOfType(template, 'AWS::Lambda::EventInvokeConfig')).filter(
      (c) => JSON.stringify(c.Properties.FunctionName) === JSON.stringify({ Ref: idOf(delivery.sweep.function) }),
    );
    expect(configs.map((c) => c.Properties)).toEqual([
      expect.objectContaining({ MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: DELIVERY_SWEEP.everyMinutes * 60 }),
    ]);
  });

  it('a sweeper that is never invoked (its schedule disabled or deleted) pages: no invocation in three periods in a row, missing data counted as breaching', () => {
    expect(alarm('WebhookSweepSilent').Properties).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'Invocations',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: idOf(delivery.sweep.function) } }],
      Statistic: 'Sum',
      Period: DELIVERY_SWEEP.everyMinutes * 60,
      Threshold: 1,
      ComparisonOperator: 'LessThanThreshold',
      EvaluationPeriods: 3,
      DatapointsToAlarm: 3,
      TreatMissingData: 'breaching',
    });
  });

  it('the dashboard has a webhook row: outcomes with give-ups, every lane of both modes, the sweeper, the queues', () => {
    const dashboard = Object.values(resourcesOfType(template, 'AWS::CloudWatch::Dashboard'))[0]!;
    const body = JSON.stringify(stack.resolve(dashboard.Properties.DashboardBody));
    for (const text of [
      'Webhooks: outcomes',
      'WebhookDelivered',
      'WebhookAttemptFailed',
      'WebhookDeliveryGivenUp',
      'delivery given up (3 days)',
      'WebhookEndpointDisabled',
      'Webhooks: oldest message per lane (s)',
      'live fast lane',
      'live slow lane',
      'test fast lane',
      'test slow lane',
      'ApproximateAgeOfOldestMessage',
      'ApproximateNumberOfMessagesDelayed',
      'Webhooks: sweeper',
      'WebhookSlotsReleased',
      'WebhookJobsRequeued',
      'WebhookSweepFailures',
      'Webhooks: test-mode outcomes',
      'WebhookTestDelivered',
      'WebhookTestAttemptFailed',
      'WebhookTestDeliveryGivenUp',
      'WebhookTestEndpointDisabled',
    ])
      expect(body).toContain(text);
    for (const q of [delivery.fastLane, delivery.slowLane, delivery.testFastLane, delivery.testSlowLane])
      expect(body).toContain(`"${idOf(q)}"`);
  });

  it('reads the metrics the delivery function publishes, live and test mode, under the same names', () => {
    expect(WEBHOOK_METRIC_NAMES).toMatchObject({
      delivered: METRICS.delivered,
      attemptFailed: METRICS.attemptFailed,
      givenUp: METRICS.givenUp,
      endpointDisabled: METRICS.endpointDisabled,
      testDelivered: TEST_METRICS.delivered,
      testAttemptFailed: TEST_METRICS.attemptFailed,
      testGivenUp: TEST_METRICS.givenUp,
      testEndpointDisabled: TEST_METRICS.endpointDisabled,
    });
  });

  it('no alarm reads a test-mode webhook metric: a test key’s failing endpoints page no one', () => {
    const alarms = JSON.stringify(stack.resolve(Object.values(resourcesOfType(template, 'AWS::CloudWatch::Alarm'))));
    expect(alarms).toContain('"MetricName":"WebhookAttemptFailed"');
    expect(alarms).not.toMatch(/"MetricName":"WebhookTest/);
  });
});

const COMPANY = 'co_7f3a';
const box = new SecretBox(Buffer.alloc(32, 7));

function endpoint(mode: (typeof MODES)[number]): WebhookEndpoint {
  return {
    endpointId: 'we_1',
    companyId: COMPANY,
    mode,
    url: 'https://hooks.partner.example/in',
    events: ['*'],
    description: '',
    status: 'enabled',
    createdAt: '2026-03-01T09:00:00.000Z',
    updatedAt: '2026-03-01T09:00:00.000Z',
    version: 1,
  };
}

/** A stored endpoint item with its sealed secrets, as the store writes it. */
async function storedItem(mode: (typeof MODES)[number]): Promise<Record<string, unknown>> {
  const client = new RecordingClient();
  let written: Record<string, unknown> = {};
  const capturing = {
    send: (command: { input: { TransactItems: { Put?: { Item: Record<string, unknown> } }[] } }) => {
      written = command.input.TransactItems[0]!.Put!.Item;
      return client.send(command as never);
    },
  };
  await new DynamoWebhookEndpointStore(capturing as unknown as DynamoDBDocumentClient, 't', async () => box).create(
    endpoint(mode),
    [{ secret: 'whsec_AAAA', createdAt: '2026-03-01T09:00:00.000Z' }],
    16,
  );
  return written;
}

const fanOutPolicy = () => statementsOf(delivery.fanOut);
const planPolicy = () => statementsOf(delivery.plan);
const deliverPolicy = () => statementsOf(delivery.deliver);

describe.each(MODES)('what the webhook functions may do in %s mode, evaluated as IAM evaluates them', (m) => {
  it.each([
    ['the fan-out', fanOutPolicy],
    ['the planning worker', planPolicy],
  ] as const)(
    '%s may query a company\u2019s endpoints exactly as the store does, without their sealed secrets, and nothing else of the table',
    async (_role, policy) => {
      const item = await storedItem(m);
      const client = new RecordingClient((name) => (name === 'QueryCommand' ? { Items: [item] } : {}));
      const listed = await new DynamoWebhookEndpointStore(client as unknown as DynamoDBDocumentClient, 't').list(m, COMPANY);
      expect(listed.map((e) => e.endpointId)).toEqual(['we_1']);
      expect(client.requests).toHaveLength(1);
      const [query] = client.requests as [ItemRequest];
      expect(query).toMatchObject({ action: 'dynamodb:Query', leadingKeys: [keys.webhookEndpointPartition(m, COMPANY)] });
      expect(query.attributes).not.toContain('sealedSecrets');
      expect(decide(policy(), query)).toBe('allow');
      // The whole item (no projection: ALL_ATTRIBUTES), or one projecting the secrets, is refused.
      const { attributes: _, ...whole } = query;
      expect(decide(policy(), { ...whole, attributes: [], select: 'ALL_ATTRIBUTES' })).toBe('implicit-deny');
      expect(decide(policy(), { ...query, attributes: [...query.attributes, 'sealedSecrets'] })).toBe('implicit-deny');
      // Another kind of partition, any item request.
      expect(decide(policy(), { ...query, leadingKeys: [keys.case(m, 'case_1').pk] })).toBe('implicit-deny');
      for (const action of ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'] as const) {
        expect(decide(policy(), { action, leadingKeys: [keys.webhookEndpoint(m, COMPANY, 'we_1').pk], attributes: ['pk', 'sk'] })).toBe(
          'implicit-deny',
        );
      }
    },
  );

  it('the delivery function may read an endpoint with its secrets and record its health exactly as the store does, and change nothing else of it', async () => {
    const item = await storedItem(m);
    const client = new RecordingClient((name) => (name === 'GetCommand' ? { Item: item } : {}));
    const store = new DynamoWebhookEndpointStore(client as unknown as DynamoDBDocumentClient, 't', async () => box);
    const read = await store.getWithSecrets(m, COMPANY, 'we_1');
    expect(read?.secrets.map((s) => s.secret)).toEqual(['whsec_AAAA']);
    await store.recordHealth(m, COMPANY, 'we_1', { status: 'enabled', failingSince: '2026-03-01T10:00:00.000Z' });
    await store.recordHealth(m, COMPANY, 'we_1', { status: 'enabled' });
    await store.recordHealth(
      m,
      COMPANY,
      'we_1',
      { status: 'enabled', failingSince: '2026-03-01T10:00:00.000Z' },
      { disabledReason: 'failing for 5 days' },
    );
    expect(client.requests.map((r) => r.action)).toEqual([
      'dynamodb:GetItem',
      'dynamodb:UpdateItem',
      'dynamodb:UpdateItem',
      'dynamodb:UpdateItem',
    ]);
    for (const request of client.requests)
      expect({ request, decision: decide(deliverPolicy(), request) }).toEqual({ request, decision: 'allow' });
    const key = keys.webhookEndpoint(m, COMPANY, 'we_1');
    const change = (attributes: string[]): ItemRequest => ({
      action: 'dynamodb:UpdateItem',
      leadingKeys: [key.pk],
      attributes: ['pk', 'sk', ...attributes],
    });
    for (const attribute of ['url', 'events', 'sealedSecrets', 'companyId'])
      expect(decide(deliverPolicy(), change(['failingSince', attribute]))).toBe('implicit-deny');
    expect(decide(deliverPolicy(), change([...WEBHOOK_ENDPOINT_HEALTH_ATTRIBUTES]))).toBe('allow');
    expect(decide(deliverPolicy(), { action: 'dynamodb:PutItem', leadingKeys: [key.pk], attributes: ['pk', 'sk', 'url'] })).toBe(
      'implicit-deny',
    );
    expect(decide(deliverPolicy(), { action: 'dynamodb:DeleteItem', leadingKeys: [key.pk], attributes: ['pk', 'sk'] })).toBe(
      'implicit-deny',
    );
  });

  it('the delivery function’s batch reads and waiting-list writes name only the kinds of item it may touch: one case or key among them refuses the whole request', () => {
    const endpoint = keys.webhookEndpoint(m, COMPANY, 'we_1').pk;
    const event = keys.event(m, 'evt_1').pk;
    const record = keys.webhookDeliveryPartition(m, 'we_1');
    const waiting = keys.webhookDeliverySlotPartition(m, 'we_1');
    const read = (leadingKeys: string[]): ItemRequest => ({ action: 'dynamodb:BatchGetItem', leadingKeys, attributes: [] });
    const write = (leadingKeys: string[]): ItemRequest => ({ action: 'dynamodb:BatchWriteItem', leadingKeys, attributes: [] });
    expect(decide(deliverPolicy(), read([endpoint, event, record]))).toBe('allow');
    expect(decide(deliverPolicy(), read([endpoint, event, record, keys.case(m, 'case_1').pk]))).toBe('implicit-deny');
    expect(decide(deliverPolicy(), read([endpoint, keys.apiKey('k').pk]))).toBe('implicit-deny');
    expect(decide(deliverPolicy(), write([waiting, keys.webhookDeliverySlotPartition(m, 'we_2')]))).toBe('allow');
    expect(decide(deliverPolicy(), write([waiting, record]))).toBe('implicit-deny');
    // The guardrails refuse it outright, whatever a broader grant added later allows.
    expect(decide(deliverPolicy(), write([waiting, keys.case(m, 'case_1').pk]))).toBe('explicit-deny');
    expect(decide(deliverPolicy(), write([waiting, keys.apiKey('k').pk]))).toBe('explicit-deny');
  });

  it('the delivery function may start a delivery record, read it and record attempts exactly as the delivery store does, and nothing of cases, keys or claims', async () => {
    const createdAt = '2026-03-01T09:00:00.000Z';
    const record: WebhookDelivery = {
      mode: m,
      endpointId: 'we_1',
      createdAt,
      deliveryId: scheduledDeliveryId('we_1', 'evt_1'),
      kind: 'scheduled',
      companyId: COMPANY,
      eventId: 'evt_1',
      eventType: 'case.created',
      status: 'pending',
      attempts: [],
      updatedAt: createdAt,
    };
    const stored = { ...keys.webhookDelivery(record), ...record, ttl: 4_000_000_000 };
    // The start finds the record there (a stream record delivered twice) and reads it; an attempt is recorded
    // once pending, once failing for good, and once stale (read again).
    const conflict = () => {
      throw new ConditionalCheckFailedException({ message: 'condition', $metadata: {} });
    };
    let updates = 0;
    const client = new RecordingClient((name) => {
      if (name === 'PutCommand') conflict();
      if (name === 'UpdateCommand' && ++updates === 3) conflict();
      return name === 'GetCommand' ? { Item: stored } : {};
    });
    const store = new DynamoWebhookDeliveryStore(client as unknown as DynamoDBDocumentClient, 't', () => new Date('2026-03-01T09:00:05Z'));
    await store.start(record);
    const attempt = { at: '2026-03-01T09:00:01.000Z', statusCode: 503, durationMs: 40, error: 'status 503' };
    await store.recordAttempt(record, 0, attempt, { status: 'pending', nextAttemptAt: '2026-03-01T09:00:06.000Z' });
    await store.recordAttempt(record, 1, attempt, { status: 'failed' });
    await store.recordAttempt(record, 2, attempt, { status: 'delivered' });
    await store.get(record);
    expect(client.requests.map((r) => `${r.action} ${r.leadingKeys[0]}`)).toEqual([
      `dynamodb:PutItem ${stored.pk}`,
      `dynamodb:GetItem ${stored.pk}`,
      `dynamodb:UpdateItem ${stored.pk}`,
      `dynamodb:UpdateItem ${stored.pk}`,
      `dynamodb:UpdateItem ${stored.pk}`,
      `dynamodb:GetItem ${stored.pk}`,
      `dynamodb:GetItem ${stored.pk}`,
    ]);
    for (const request of client.requests)
      expect({ request, decision: decide(deliverPolicy(), request) }).toEqual({ request, decision: 'allow' });

    const get = (pk: string): ItemRequest => ({ action: 'dynamodb:GetItem', leadingKeys: [pk], attributes: [] });
    expect(decide(deliverPolicy(), get(keys.event(m, 'evt_1').pk))).toBe('allow');
    for (const pk of [
      keys.case(m, 'case_1').pk,
      keys.apiKey('k_1').pk,
      keys.idempotencyClaim(m, COMPANY, 'i').pk,
      keys.company(COMPANY).pk,
    ])
      expect(decide(deliverPolicy(), get(pk))).toBe('implicit-deny');
    expect(
      decide(deliverPolicy(), {
        action: 'dynamodb:PutItem',
        leadingKeys: [stored.pk],
        attributes: ['pk', 'sk', 'status', 'attempts', 'secretHash'],
      }),
    ).toBe('implicit-deny');
    expect(
      decide(deliverPolicy(), { action: 'dynamodb:PutItem', leadingKeys: [keys.event(m, 'evt_1').pk], attributes: ['pk', 'sk'] }),
    ).toBe('implicit-deny');
    expect(decide(deliverPolicy(), { action: 'dynamodb:DeleteItem', leadingKeys: [stored.pk], attributes: ['pk', 'sk'] })).toBe(
      'implicit-deny',
    );
    expect(decide(deliverPolicy(), { action: 'dynamodb:Query', leadingKeys: [stored.pk], attributes: [], select: 'ALL_ATTRIBUTES' })).toBe(
      'implicit-deny',
    );
  });

  it('every function that touches table items carries the guardrail: never an API key beyond its last use, never a case created, changed or deleted', () => {
    for (const policy of [fanOutPolicy(), planPolicy(), deliverPolicy()]) {
      const caseKey = keys.case(m, 'case_1');
      expect(decide(policy, { action: 'dynamodb:DeleteItem', leadingKeys: [caseKey.pk], attributes: ['pk', 'sk'] })).toBe('explicit-deny');
      expect(decide(policy, { action: 'dynamodb:UpdateItem', leadingKeys: [caseKey.pk], attributes: ['pk', 'sk', 'status'] })).toBe(
        'explicit-deny',
      );
      expect(decide(policy, { action: 'dynamodb:PutItem', leadingKeys: [keys.apiKey('k').pk], attributes: ['pk', 'sk'] })).toBe(
        'explicit-deny',
      );
    }
  });
});

describe('the webhook functions\u2019 other rights', () => {
  it('the fan-out may read the stream, plan small slices as the planning worker does, send to the fast lanes and the planning queues (and its stream mapping to its on-failure queue), and nothing else: no secret, no slow lane', () => {
    const statements = fanOutPolicy();
    const sends = [
      idOf(delivery.planningQueue),
      idOf(delivery.testPlanningQueue),
      idOf(delivery.failedStreamRecords),
      idOf(delivery.fastLane),
      idOf(delivery.testFastLane),
    ].sort();
    expect(sqsRights(statements)).toEqual({ 'sqs:GetQueueAttributes': sends, 'sqs:GetQueueUrl': sends, 'sqs:SendMessage': sends });
    const allowed = new Set(statements.filter((s) => s.Effect === 'Allow').flatMap(actionsOf));
    expect([...allowed].filter((a) => !PLATFORM_ACTIONS.includes(a) && !a.startsWith('sqs:')).sort()).toEqual([
      // The planning worker's table rights (GRANTS['webhook-fan-out']), for the slices it plans itself.
      'dynamodb:BatchWriteItem',
      'dynamodb:DeleteItem',
      'dynamodb:DescribeStream',
      'dynamodb:GetItem',
      'dynamodb:GetRecords',
      'dynamodb:GetShardIterator',
      'dynamodb:ListStreams',
      'dynamodb:PutItem',
      'dynamodb:Query',
      'dynamodb:UpdateItem',
    ]);
    // The stream rights are on the table's stream only.
    for (const s of statements.filter((s) => actionsOf(s).includes('dynamodb:GetRecords')))
      expect(JSON.stringify(s.Resource)).toContain('StreamArn');
  });

  it('the planning worker consumes the planning queues, sends to the fast lanes, starts delivery records, uses the slots, and nothing else: no secret, no dead-letter queue, no stream', () => {
    const statements = planPolicy();
    const sends = [idOf(delivery.fastLane), idOf(delivery.testFastLane)].sort();
    const planning = [idOf(delivery.planningQueue), idOf(delivery.testPlanningQueue)].sort();
    expect(sqsRights(statements)).toEqual({
      'sqs:ReceiveMessage': planning,
      'sqs:ChangeMessageVisibility': planning,
      'sqs:DeleteMessage': planning,
      // The mapping's own grant (consuming) and the lanes' (sending) both carry these two.
      'sqs:GetQueueAttributes': [...sends, ...planning].sort(),
      'sqs:GetQueueUrl': [...sends, ...planning].sort(),
      'sqs:SendMessage': sends,
    });
    const allowed = new Set(statements.filter((s) => s.Effect === 'Allow').flatMap(actionsOf));
    expect([...allowed].filter((a) => !PLATFORM_ACTIONS.includes(a) && !a.startsWith('sqs:')).sort()).toEqual([
      // The waiting jobs' removal (WHW# only: the slots and waiting lists).
      'dynamodb:BatchWriteItem',
      'dynamodb:DeleteItem',
      // The delivery record's start (PutItem) and its read-back after a replayed slice (GetItem), on WHD# only.
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:Query',
      // A slot claimed and its jobs promoted (WHW# only).
      'dynamodb:UpdateItem',
    ]);
  });

  it('the delivery function consumes the four lanes (its event source mappings), sends to them (retries, hops, the next waiting job), never to the dead-letter queue, and reads only the secret key', () => {
    const statements = deliverPolicy();
    const lanes = [delivery.fastLane, delivery.slowLane, delivery.testFastLane, delivery.testSlowLane].map(idOf).sort();
    const all = lanes;
    expect(sqsRights(statements)).toEqual({
      'sqs:ReceiveMessage': lanes,
      // The event source mappings' own grant; the function never calls it (a retry is a new message).
      'sqs:ChangeMessageVisibility': lanes,
      'sqs:DeleteMessage': lanes,
      'sqs:GetQueueAttributes': all,
      'sqs:GetQueueUrl': all,
      'sqs:SendMessage': all,
    });
    const allowed = new Set(statements.filter((s) => s.Effect === 'Allow').flatMap(actionsOf));
    expect([...allowed].filter((a) => !PLATFORM_ACTIONS.includes(a) && !a.startsWith('sqs:')).sort()).toEqual([
      'dynamodb:BatchGetItem',
      'dynamodb:BatchWriteItem',
      'dynamodb:DeleteItem',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:Query',
      'dynamodb:UpdateItem',
      'secretsmanager:DescribeSecret',
      'secretsmanager:GetSecretValue',
    ]);
    const secret = statements.filter((s) => actionsOf(s).some((a) => a.startsWith('secretsmanager:')));
    expect(secret.map((s) => s.Resource)).toEqual([{ Ref: idOf(stack.webhookSecretKey.secret) }]);
  });
});

describe.each(MODES)('the ping, redeliver and delivery-log routes in %s mode', (m) => {
  const policy = (id: 'PingWebhookEndpoint' | 'RedeliverWebhookEvent' | 'ListWebhookDeliveries') => statementsOfFunction(synthesised, id);
  const whd = keys.webhookDelivery({ mode: m, endpointId: 'we_1', createdAt: '2026-03-01T09:00:00.000Z', deliveryId: 'wd_1' }).pk;
  const endpointPk = keys.webhookEndpoint(m, COMPANY, 'we_1').pk;
  const get = (pk: string): ItemRequest => ({ action: 'dynamodb:GetItem', leadingKeys: [pk], attributes: [] });

  it('ping may read the endpoint (with its secrets) and the key that opens them, and write nothing but the API key\u2019s last use', () => {
    expect(decide(policy('PingWebhookEndpoint'), get(endpointPk))).toBe('allow');
    expect(decide(policy('PingWebhookEndpoint'), get(keys.event(m, 'evt_1').pk))).toBe('implicit-deny');
    expect(decide(policy('PingWebhookEndpoint'), { action: 'dynamodb:PutItem', leadingKeys: [whd], attributes: ['pk', 'sk'] })).toBe(
      'implicit-deny',
    );
    expect(sqsRights(policy('PingWebhookEndpoint'))).toEqual({});
    expect(JSON.stringify(policy('PingWebhookEndpoint'))).toContain('WebhookSecretKey');
  });

  it('redeliver may read the endpoint and the event, start a delivery record, and send to the fast lane only', () => {
    for (const pk of [endpointPk, keys.event(m, 'evt_1').pk, whd]) expect(decide(policy('RedeliverWebhookEvent'), get(pk))).toBe('allow');
    expect(
      decide(policy('RedeliverWebhookEvent'), {
        action: 'dynamodb:PutItem',
        leadingKeys: [whd],
        attributes: ['pk', 'sk', 'status', 'attempts'],
      }),
    ).toBe('allow');
    expect(
      decide(policy('RedeliverWebhookEvent'), { action: 'dynamodb:UpdateItem', leadingKeys: [whd], attributes: ['pk', 'sk', 'status'] }),
    ).toBe('implicit-deny');
    const fast = [idOf(delivery.fastLane), idOf(delivery.testFastLane)].sort();
    expect(sqsRights(policy('RedeliverWebhookEvent'))).toEqual({
      'sqs:GetQueueAttributes': fast,
      'sqs:GetQueueUrl': fast,
      'sqs:SendMessage': fast,
    });
    expect(JSON.stringify(policy('RedeliverWebhookEvent'))).not.toContain('WebhookSecretKey');
  });

  it('the delivery log may read the endpoint and query its delivery records, and write nothing but the API key\u2019s last use', () => {
    expect(decide(policy('ListWebhookDeliveries'), get(endpointPk))).toBe('allow');
    expect(
      decide(policy('ListWebhookDeliveries'), { action: 'dynamodb:Query', leadingKeys: [whd], attributes: [], select: 'ALL_ATTRIBUTES' }),
    ).toBe('allow');
    expect(
      decide(policy('ListWebhookDeliveries'), {
        action: 'dynamodb:Query',
        leadingKeys: [endpointPk],
        attributes: [],
        select: 'ALL_ATTRIBUTES',
      }),
    ).toBe('implicit-deny');
    expect(decide(policy('ListWebhookDeliveries'), { action: 'dynamodb:PutItem', leadingKeys: [whd], attributes: ['pk', 'sk'] })).toBe(
      'implicit-deny',
    );
    expect(sqsRights(policy('ListWebhookDeliveries'))).toEqual({});
  });
});
