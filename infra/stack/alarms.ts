import { ArnFormat, Duration, Stack } from 'aws-cdk-lib';
import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import { Alarm, ComparisonOperator, MathExpression, Metric, TreatMissingData, type IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Operation, type ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Effect, PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { CfnEventSourceMapping, Function as LambdaFunction, type IFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct, type IConstruct } from 'constructs';
import { caseMetric, METRIC_PERIOD, wafMetric } from './service-metrics.js';

export interface ServiceAlarmsProps {
  /** Prefix of every alarm name (the stack name), so an alarm e-mail says which stack it is. */
  namePrefix: string;
  stage: Stage;
  table: ITable;
  latencyP99Ms: number;
  serverErrorRate: number;
  /** The 4XX share of requests above which to alarm (once a period holds CLIENT_ERROR_MIN_REQUESTS). */
  clientErrorRate: number;
  /** The WAF web ACL in front of the stage, when there is one, and how many blocks in 5 minutes alarm. */
  webAcl?: { metricName: string; region: string; blockedRequestsThreshold: number } | undefined;
  alarmEmail: string | undefined;
}

/**
 * A 4XX share means little on a handful of requests (one partner's typo at night is 100%), so the
 * 4XX alarm only counts periods with at least this many requests.
 */
export const CLIENT_ERROR_MIN_REQUESTS = 50;

/**
 * The table operations the service performs (the functions, and the admin CLI's Query).
 * BatchGetItem is every citing batch's read of its upload records and the read-back of a case
 * transaction's guards (lib/adapters/dynamodb/upload-records.ts, case-writer.ts).
 */
export const TABLE_OPERATIONS: readonly Operation[] = [
  Operation.GET_ITEM,
  Operation.BATCH_GET_ITEM,
  Operation.PUT_ITEM,
  Operation.UPDATE_ITEM,
  Operation.DELETE_ITEM,
  Operation.TRANSACT_WRITE_ITEMS,
  Operation.QUERY,
];

const PERIOD = METRIC_PERIOD;

/**
 * The alarms `watchAsyncWork` gives every function, stream mapping and queue of the stack.
 * SQS's in-flight quota: a standard queue holds about 120,000 messages received and not yet
 * deleted; past it, receives quietly return nothing, so the alarm fires well before.
 */
export const WORKLOAD_ALARMS = {
  /** A stream mapping's oldest record handed to its function, sustained (2 of 3 five-minute periods). */
  iteratorAgeMs: 5 * 60 * 1000,
  /** Messages visible in a consumed queue for 15 minutes: its consumer does not keep up. */
  backlogMessages: 1000,
  /** The oldest message of a consumed queue without an age alarm of its own. */
  oldestMessageAgeSeconds: 60 * 60,
  inFlightMessages: 100_000,
  sqsInFlightQuota: 120_000,
} as const;

/**
 * The sum of sparse metrics (published only when something happened), each FILLed with 0: a plain
 * `a + b` has no value in a period where one of them has none, so a sum (or a share) over them
 * would go missing exactly when only the bad one is there, and an alarm on it would stay OK.
 */
export function sumOfSparse(label: string, metrics: Record<string, IMetric>, period: Duration = PERIOD): MathExpression {
  return new MathExpression({
    label,
    expression: Object.keys(metrics)
      .map((id) => `FILL(${id}, 0)`)
      .join(' + '),
    usingMetrics: metrics,
    period,
  });
}

/**
 * CloudWatch alarms for what a partner would notice: server errors, slow responses, spikes of
 * 4XX answers and WAF blocks, cases that could not be written (TEMPORARY_FAILURE) or whose write
 * has an unknown outcome, cases whose half-year has no reference rate, DynamoDB throttling or
 * errors, and (watchAsyncWork) every function's, stream mapping's and queue's failures,
 * throttles, age, backlog and in-flight messages. All notify one SNS topic (alarm and recovery); an
 * operator e-mail is subscribed when `alarmEmail` is given (stack-config.ts requires one for prod).
 */
export class ServiceAlarms extends Construct {
  readonly topic: Topic;
  readonly alarms: Alarm[] = [];
  /** The plain metrics the alarms watch, for watchAsyncWork to add none twice. */
  private readonly watched: { metricName: string; dimensionValues: unknown[] }[] = [];

  constructor(
    scope: Construct,
    id: string,
    private readonly props: ServiceAlarmsProps,
  ) {
    super(scope, id);

    // Not KMS-encrypted: the topic only carries alarm state changes (names and thresholds, no
    // partner data), and CloudWatch cannot publish to a topic encrypted with the aws/sns key.
    this.topic = new Topic(this, 'Topic', { displayName: `${props.namePrefix} alarms`, enforceSSL: true });
    // A topic policy written by the stack replaces SNS's default one, which is what let the
    // account's CloudWatch publish: allow it again, for this account's alarms of this stack only
    // (every alarm name starts with the prefix), so no other account or alarm can use the topic.
    const stack = Stack.of(this);
    this.topic.addToResourcePolicy(
      new PolicyStatement({
        sid: 'AllowThisStacksAlarmsToPublish',
        effect: Effect.ALLOW,
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [this.topic.topicArn],
        conditions: {
          StringEquals: { 'aws:SourceAccount': stack.account },
          ArnLike: {
            'aws:SourceArn': stack.formatArn({
              service: 'cloudwatch',
              resource: 'alarm',
              resourceName: `${props.namePrefix}-*`,
              arnFormat: ArnFormat.COLON_RESOURCE_NAME,
            }),
          },
        },
      }),
    );
    if (props.alarmEmail) this.topic.addSubscription(new EmailSubscription(props.alarmEmail));

    // The share of requests answered 5XX (the Average of the 0/1 5XXError metric).
    this.add('ApiServerErrorRate', props.stage.metricServerError({ statistic: 'Average', period: PERIOD }), {
      threshold: props.serverErrorRate,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      description: `More than ${props.serverErrorRate * 100}% of API requests failed with 5XX in 2 of 3 five-minute periods.`,
    });
    this.add('ApiLatencyP99', props.stage.metricLatency({ statistic: 'p99', period: PERIOD }), {
      threshold: props.latencyP99Ms,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 3,
      datapointsToAlarm: 3,
      description: `API p99 latency above ${props.latencyP99Ms} ms for 15 minutes.`,
    });

    this.add(
      'ApiClientErrorRate',
      new MathExpression({
        label: '4XX share of requests',
        // FILLed like every metric in the alarms' math, though API Gateway publishes both in any period with a request.
        expression: `IF(FILL(requests, 0) >= ${CLIENT_ERROR_MIN_REQUESTS}, FILL(clientErrors, 0) / FILL(requests, 0), 0)`,
        usingMetrics: {
          clientErrors: props.stage.metricClientError({ statistic: 'Sum', period: PERIOD }),
          requests: props.stage.metricCount({ statistic: 'Sum', period: PERIOD }),
        },
        period: PERIOD,
      }),
      {
        threshold: props.clientErrorRate,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 3,
        datapointsToAlarm: 2,
        description:
          `More than ${props.clientErrorRate * 100}% of API requests answered 4XX in 2 of 3 five-minute periods ` +
          `(periods with at least ${CLIENT_ERROR_MIN_REQUESTS} requests): a partner integration broken, keys revoked, or an attack.`,
      },
    );

    // A batch answers 200/201 even when cases fail, so these are the only trace of a failed write.
    this.add('CasesTemporaryFailure', caseMetric('temporaryFailure'), {
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      description: 'Cases were rejected TEMPORARY_FAILURE (storage failed after retries); partners must resubmit them.',
    });
    this.add('CaseWriteOutcomeUnknown', caseMetric('outcomeUnknown'), {
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      description:
        'A case write ended with an unknown outcome: the case may exist although the partner was told TEMPORARY_FAILURE. ' +
        'Check the create-cases log ("case write failed") and the invoiceRef guard.',
    });

    // A case's half-year without a reference rate shows interest null until an operator adds the
    // rate; the metric is published while such cases are created or read. An hour's period, so the
    // alarm does not flap between ALARM and OK (each one notifies) while such cases are read now and then.
    this.add('ReferenceRateMissing', caseMetric('referenceRateMissing', { period: Duration.hours(1) }), {
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      description:
        "Cases were created or read whose half-year (2014-H1 on) has no reference rate: their statutory interest shows null. Add the half-year's rate; " +
        'see docs/deploy.md, "Adding a reference rate".',
    });

    if (props.webAcl) {
      this.add('WafBlockedRequests', wafMetric('BlockedRequests', props.webAcl), {
        threshold: props.webAcl.blockedRequestsThreshold,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        description:
          `WAF blocked at least ${props.webAcl.blockedRequestsThreshold} requests in five minutes (rate limits, IP reputation ` +
          'or managed rules): an attack, or a partner being blocked. The WAF log group says which rule.',
      });
    }

    // Each operation's series is published only in periods it was throttled or failed: summed with FILL.
    const perOperation = (metricName: string) =>
      Object.fromEntries(
        TABLE_OPERATIONS.map((operation) => [
          operation.toLowerCase(),
          new Metric({
            namespace: 'AWS/DynamoDB',
            metricName,
            dimensionsMap: { TableName: props.table.tableName, Operation: operation },
            statistic: 'Sum',
            period: PERIOD,
          }),
        ]),
      );
    this.add('TableThrottledRequests', sumOfSparse('throttled requests, all operations', perOperation('ThrottledRequests')), {
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      description: 'DynamoDB throttled requests to the table (on-demand limits or a hot partition).',
    });
    this.add('TableSystemErrors', sumOfSparse('system errors, all operations', perOperation('SystemErrors')), {
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      description: 'DynamoDB returned 5XX errors for table requests.',
    });
  }

  /**
   * Alarms for every function, stream mapping and queue in `scope` (the stack), found by walking
   * it, so a queue or a worker added later gets them without naming it here. Call it once, after
   * everything else was built and each construct added its own alarms (an alarm a construct already
   * set on the same metric of the same function or queue is kept, and none is added beside it):
   *
   * - every function: `<Function>Errors` and `<Function>Throttles` (at the first one);
   * - every function a stream mapping feeds: `<Function>IteratorAge`;
   * - every queue an event source mapping consumes: `<Queue>Backlog` (visible messages),
   *   `<Queue>OldestMessageAge`;
   * - every other queue (a dead-letter or on-failure queue: nothing consumes it): `<Queue>Waiting` at
   *   the first message;
   * - every queue: `<Queue>InFlight` near SQS's in-flight quota.
   *
   * `<Function>` and `<Queue>` are the construct's path in the stack without its `Function` leaf
   * (`WebhookDeliveryFanOut`, `GetCase`, `WebhookDeliveryFastLane`). Every family has its runbook
   * entry in docs/deploy.md ("Alarms: what each one means and what to do").
   */
  watchAsyncWork(scope: IConstruct): void {
    const stack = Stack.of(scope);
    const all = scope.node.findAll();
    const same = (a: unknown, b: unknown) => JSON.stringify(stack.resolve(a)) === JSON.stringify(stack.resolve(b));
    const mappings = all.filter((c): c is CfnEventSourceMapping => c instanceof CfnEventSourceMapping);
    const name = (construct: IConstruct) =>
      construct.node.scopes
        .slice(construct.node.scopes.indexOf(stack) + 1)
        .map((c) => c.node.id)
        .filter((id, i, ids) => !(i === ids.length - 1 && i > 0 && id === 'Function'))
        .join('')
        .replace(/[^A-Za-z0-9]/g, '');
    const first = { threshold: 1, comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD, evaluationPeriods: 1 };

    for (const fn of all.filter((c): c is LambdaFunction => c instanceof LambdaFunction)) {
      const id = name(fn);
      if (!this.watches('Errors', fn.functionName))
        this.add(`${id}Errors`, fn.metricErrors({ statistic: 'Sum', period: PERIOD }), {
          ...first,
          description: `${id}: invocations failed (a crash, a timeout, out of memory, or a batch failed as a whole); see docs/deploy.md, runbook.`,
        });
      if (!this.watches('Throttles', fn.functionName))
        this.add(`${id}Throttles`, fn.metricThrottles({ statistic: 'Sum', period: PERIOD }), {
          ...first,
          description: `${id}: invocations were throttled (the account's or the function's concurrency is used up); see docs/deploy.md, runbook.`,
        });
      const fedByStream = mappings.some((m) => m.startingPosition !== undefined && same(m.functionName, fn.functionName));
      if (fedByStream && !this.watches('IteratorAge', fn.functionName))
        this.add(`${id}IteratorAge`, fn.metric('IteratorAge', { statistic: 'Maximum', period: PERIOD }), {
          threshold: WORKLOAD_ALARMS.iteratorAgeMs,
          comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 3,
          datapointsToAlarm: 2,
          description:
            `${id}: the stream records it is handed are older than ${WORKLOAD_ALARMS.iteratorAgeMs / 60_000} minutes ` +
            '(failing batches retried, or too slow for the write rate); see docs/deploy.md, runbook.',
        });
    }

    for (const queue of all.filter((c): c is Queue => c instanceof Queue)) {
      const id = name(queue);
      const consumed = mappings.some((m) => same(m.eventSourceArn, queue.queueArn));
      const visible = queue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: PERIOD });
      if (consumed) {
        if (!this.watches('ApproximateNumberOfMessagesVisible', queue.queueName))
          this.add(`${id}Backlog`, visible, {
            threshold: WORKLOAD_ALARMS.backlogMessages,
            comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            evaluationPeriods: 3,
            datapointsToAlarm: 3,
            description: `${id}: at least ${WORKLOAD_ALARMS.backlogMessages} messages waiting for 15 minutes: its consumer does not keep up; see docs/deploy.md, runbook.`,
          });
        if (!this.watches('ApproximateAgeOfOldestMessage', queue.queueName))
          this.add(`${id}OldestMessageAge`, queue.metricApproximateAgeOfOldestMessage({ statistic: 'Maximum', period: PERIOD }), {
            threshold: WORKLOAD_ALARMS.oldestMessageAgeSeconds,
            comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
            evaluationPeriods: 1,
            description: `${id}: a message is older than ${WORKLOAD_ALARMS.oldestMessageAgeSeconds / 60} minutes; see docs/deploy.md, runbook.`,
          });
      } else if (!this.watches('ApproximateNumberOfMessagesVisible', queue.queueName))
        this.add(`${id}Waiting`, visible, {
          ...first,
          description: `${id}: messages nothing consumes (failed work) are waiting for an operator; see docs/deploy.md, runbook.`,
        });
      if (!this.watches('ApproximateNumberOfMessagesNotVisible', queue.queueName))
        this.add(`${id}InFlight`, queue.metricApproximateNumberOfMessagesNotVisible({ statistic: 'Maximum', period: PERIOD }), {
          threshold: WORKLOAD_ALARMS.inFlightMessages,
          comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          evaluationPeriods: 1,
          description:
            `${id}: ${WORKLOAD_ALARMS.inFlightMessages} messages in flight, near SQS's ${WORKLOAD_ALARMS.sqsInFlightQuota} ` +
            'quota past which receives quietly return nothing; see docs/deploy.md, runbook.',
        });
    }
  }

  /**
   * An alarm for a stream consumer that is never invoked although its records were written: every
   * case created writes a case item and its `case.created` event item in one transaction, so in
   * two hours in a row with cases created (`CasesCreated`) a healthy fan-out and verifier are
   * invoked. A filter pattern AWS refuses or never matches, or a disabled mapping, invokes nothing,
   * and then neither Errors nor IteratorAge has a datapoint to fire on.
   */
  addSilentStreamConsumer(id: string, fn: IFunction, consumer: string): void {
    const period = Duration.hours(1);
    this.add(
      id,
      new MathExpression({
        label: `${consumer}: hours with cases created and no invocation`,
        expression: 'IF(FILL(created, 0) >= 1 AND FILL(invocations, 0) == 0, 1, 0)',
        usingMetrics: {
          created: caseMetric('created', { period }),
          invocations: fn.metricInvocations({ statistic: 'Sum', period }),
        },
        period,
      }),
      {
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 2,
        datapointsToAlarm: 2,
        description:
          `${consumer}: cases were created for two hours and it was never invoked: its stream mapping is disabled, ` +
          'or its filter pattern matches nothing; see docs/deploy.md, runbook.',
      },
    );
  }

  /** Whether an alarm of this construct already watches the metric of the function or queue named (its one dimension). */
  private watches(metricName: string, resourceName: string): boolean {
    const stack = Stack.of(this);
    const key = JSON.stringify(stack.resolve(resourceName));
    return this.watched.some((w) => w.metricName === metricName && w.dimensionValues.some((v) => JSON.stringify(stack.resolve(v)) === key));
  }

  /** One alarm on the topic, named after the stack; also used by constructs with alarms of their own (upload-record-delivery.ts). */
  add(
    id: string,
    metric: IMetric,
    options: {
      threshold: number;
      comparisonOperator: ComparisonOperator;
      evaluationPeriods: number;
      datapointsToAlarm?: number;
      description: string;
      /**
       * Every alarm here watches something that is published only when there is traffic or work
       * (a sparse metric, or SQS's, which stops for a queue empty and untouched for 6 hours):
       * no datapoint means nothing happened, not an outage. Say otherwise for a heartbeat.
       */
      treatMissingData?: TreatMissingData;
    },
  ): void {
    const alarm = new Alarm(this, id, {
      alarmName: `${this.props.namePrefix}-${id}`,
      alarmDescription: options.description,
      metric,
      threshold: options.threshold,
      comparisonOperator: options.comparisonOperator,
      evaluationPeriods: options.evaluationPeriods,
      datapointsToAlarm: options.datapointsToAlarm,
      treatMissingData: options.treatMissingData ?? TreatMissingData.NOT_BREACHING,
    });
    if (metric instanceof Metric)
      this.watched.push({ metricName: metric.metricName, dimensionValues: Object.values(metric.dimensions ?? {}) as unknown[] });
    const action = new SnsAction(this.topic);
    alarm.addAlarmAction(action);
    alarm.addOkAction(action);
    this.alarms.push(alarm);
  }
}
