import { Duration, Validations } from 'aws-cdk-lib';
import { ComparisonOperator, GraphWidget, Metric } from 'aws-cdk-lib/aws-cloudwatch';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { ServiceAlarms } from './alarms.js';
import { METRIC_PERIOD } from './service-metrics.js';

/**
 * How S3's events reach the record-upload function, which S3 invokes asynchronously. Lambda tries
 * a failed event again (at most twice) for up to `maxEventAgeHours`; then it goes to the on-failure
 * queue, where it waits `queueRetentionDays` for an operator to replay it. The sum is the latest a
 * creation event can still arrive, which a removal's tombstone must outlast
 * (REMOVAL_REMEMBERED_DAYS in lib/uploads/record-uploads.ts; a stack test holds it).
 */
export const RECORD_UPLOAD_DELIVERY = {
  retryAttempts: 2,
  /** Lambda's maximum. */
  maxEventAgeHours: 6,
  /** SQS's maximum. */
  queueRetentionDays: 14,
} as const;

/**
 * The on-failure destination of the record-upload function's asynchronous invocations: a standard
 * SQS queue, encrypted (SSE-SQS: no key policy for Lambda to be granted) and TLS-only, holding
 * each failed event with Lambda's record of why it failed. An event left there is an upload whose
 * record is missing or out of date: batch creation HEADs a file without a present record, but a
 * missed removal leaves a record vouching for a deleted invoice, so the queue's depth pages.
 */
export class UploadRecordDelivery extends Construct {
  readonly failedEvents: Queue;

  constructor(
    scope: Construct,
    id: string,
    private readonly fn: IFunction,
  ) {
    super(scope, id);
    this.failedEvents = new Queue(this, 'FailedEvents', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(RECORD_UPLOAD_DELIVERY.queueRetentionDays),
    });
    Validations.of(this.failedEvents).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        "This queue is itself the dead-letter destination of record-upload's failed invocations; an operator replays it, nothing consumes it.",
    });
    // Grants the function's role sqs:SendMessage on this queue (Lambda sends with that role).
    fn.configureAsyncInvoke({
      retryAttempts: RECORD_UPLOAD_DELIVERY.retryAttempts,
      maxEventAge: Duration.hours(RECORD_UPLOAD_DELIVERY.maxEventAgeHours),
      onFailure: new SqsDestination(this.failedEvents),
    });
  }

  /** Events Lambda dropped after their retries and age ran out (each also sent to the queue). */
  eventsDropped(): Metric {
    return this.fn.metric('AsyncEventsDropped', { statistic: 'Sum', period: METRIC_PERIOD });
  }

  /** Events that could not even be sent to the queue: lost. */
  destinationDeliveryFailures(): Metric {
    return this.fn.metric('DestinationDeliveryFailures', { statistic: 'Sum', period: METRIC_PERIOD });
  }

  /** Failed events waiting in the queue for an operator. */
  waiting(): Metric {
    return this.failedEvents.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: METRIC_PERIOD });
  }

  /** Each pages at the first datapoint: every one is an upload record that may be missing or stale. */
  addAlarms(alarms: Pick<ServiceAlarms, 'add'>): void {
    const first = { threshold: 1, comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD, evaluationPeriods: 1 };
    alarms.add('RecordUploadErrors', this.fn.metricErrors({ statistic: 'Sum', period: METRIC_PERIOD }), {
      ...first,
      description:
        'RecordUpload: an S3 event could not be recorded (storage failure, crash or timeout); Lambda retries it, then queues it.',
    });
    alarms.add('RecordUploadEventsDropped', this.eventsDropped(), {
      ...first,
      description: 'RecordUpload: S3 events ran out of retries or age and went to the on-failure queue; replay them (docs/uploads.md).',
    });
    alarms.add('RecordUploadEventsLost', this.destinationDeliveryFailures(), {
      ...first,
      description: 'RecordUpload: failed S3 events could not be sent to the on-failure queue and are lost; check the function log.',
    });
    alarms.add('RecordUploadFailedEventsWaiting', this.waiting(), {
      ...first,
      description: 'S3 events that record-upload could not apply are waiting in the on-failure queue; replay them (docs/uploads.md).',
    });
  }

  /** The dashboard row: the function's errors, and what went to the queue. */
  widgets(): GraphWidget[] {
    const period = METRIC_PERIOD;
    return [
      new GraphWidget({
        title: 'Upload records: record-upload',
        left: [
          this.fn.metricInvocations({ statistic: 'Sum', period, label: 'invocations' }),
          this.fn.metricErrors({ statistic: 'Sum', period, label: 'errors' }),
          this.eventsDropped().with({ label: 'events dropped' }),
        ],
        width: 12,
        height: 6,
      }),
      new GraphWidget({
        title: 'Upload records: failed events waiting',
        left: [this.waiting().with({ label: 'in the on-failure queue' })],
        width: 12,
        height: 6,
      }),
    ];
  }
}
