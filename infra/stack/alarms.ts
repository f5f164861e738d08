import { ArnFormat, Stack } from 'aws-cdk-lib';
import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import { Alarm, ComparisonOperator, MathExpression, TreatMissingData, type IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Operation, type ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Effect, PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import { caseMetric, METRIC_PERIOD, wafMetric } from './service-metrics.js';
import { API_FUNCTION_IDS, API_FUNCTIONS, type ApiFunctionId } from '../contract/route-table.js';

export interface ServiceAlarmsProps {
  /** Prefix of every alarm name (the stack name), so an alarm e-mail says which stack it is. */
  namePrefix: string;
  stage: Stage;
  /** Every API function, keyed by the route table's ids: each gets its alarms, named by its construct id. */
  functions: Readonly<Record<ApiFunctionId, IFunction>>;
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
 * CloudWatch alarms for what a partner would notice: server errors, slow responses, spikes of
 * 4XX answers and WAF blocks, cases that could not be written (TEMPORARY_FAILURE) or whose write
 * has an unknown outcome, function failures and throttles, and DynamoDB throttling or errors. All
 * notify one SNS topic (alarm and recovery); an operator e-mail is subscribed when `alarmEmail` is
 * given (stack-config.ts requires one for prod).
 */
export class ServiceAlarms extends Construct {
  readonly topic: Topic;
  readonly alarms: Alarm[] = [];

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
        expression: `IF(requests >= ${CLIENT_ERROR_MIN_REQUESTS}, clientErrors / requests, 0)`,
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

    for (const [name, fn] of API_FUNCTION_IDS.map((id) => [API_FUNCTIONS[id].constructId, props.functions[id]] as const)) {
      // The handlers turn every failure into a problem response, so an Errors datapoint means a
      // crash, a timeout or an out-of-memory: worth a page at the first one.
      this.add(`${name}Errors`, fn.metricErrors({ statistic: 'Sum', period: PERIOD }), {
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        description: `${name}: the function failed (crash, timeout or out of memory).`,
      });
      this.add(`${name}Throttles`, fn.metricThrottles({ statistic: 'Sum', period: PERIOD }), {
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        description: `${name}: invocations were throttled (account concurrency exhausted).`,
      });
    }

    const operations = [...TABLE_OPERATIONS];
    this.add('TableThrottledRequests', props.table.metricThrottledRequestsForOperations({ operations, period: PERIOD }), {
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      description: 'DynamoDB throttled requests to the table (on-demand limits or a hot partition).',
    });
    this.add('TableSystemErrors', props.table.metricSystemErrorsForOperations({ operations, period: PERIOD }), {
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      description: 'DynamoDB returned 5XX errors for table requests.',
    });
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
      // No traffic is not an outage.
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    const action = new SnsAction(this.topic);
    alarm.addAlarmAction(action);
    alarm.addOkAction(action);
    this.alarms.push(alarm);
  }
}
