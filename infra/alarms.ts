import { Duration, Validations } from 'aws-cdk-lib';
import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import {
  Alarm,
  ComparisonOperator,
  TreatMissingData,
  type IMetric,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Operation, type ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';

export interface ServiceAlarmsProps {
  /** Prefix of every alarm name (the stack name), so an alarm e-mail says which stack it is. */
  namePrefix: string;
  stage: Stage;
  functions: Record<string, IFunction>;
  table: ITable;
  latencyP99Ms: number;
  serverErrorRate: number;
  alarmEmail: string | undefined;
}

/** The table operations the service performs (the functions, and the admin CLI's Query). */
export const TABLE_OPERATIONS: readonly Operation[] = [
  Operation.GET_ITEM,
  Operation.PUT_ITEM,
  Operation.UPDATE_ITEM,
  Operation.DELETE_ITEM,
  Operation.TRANSACT_WRITE_ITEMS,
  Operation.QUERY,
];

const PERIOD = Duration.minutes(5);

/**
 * CloudWatch alarms for what a partner would notice: server errors, slow responses, function
 * failures and throttles, and DynamoDB throttling or errors. All notify one SNS topic (alarm and
 * recovery); an operator e-mail is subscribed when `alarmEmail` is given.
 */
export class ServiceAlarms extends Construct {
  readonly topic: Topic;
  readonly alarms: Alarm[] = [];

  constructor(scope: Construct, id: string, private readonly props: ServiceAlarmsProps) {
    super(scope, id);

    this.topic = new Topic(this, 'Topic', { displayName: `${props.namePrefix} alarms`, enforceSSL: true });
    Validations.of(this.topic).acknowledge({
      id: 'AwsSolutions-SNS2',
      reason:
        'The topic only carries alarm state changes (alarm names and thresholds, no partner data); CloudWatch ' +
        'cannot publish to a topic encrypted with the aws/sns key, and a customer managed key adds cost for no benefit.',
    });
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

    for (const [name, fn] of Object.entries(props.functions)) {
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

  private add(
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
