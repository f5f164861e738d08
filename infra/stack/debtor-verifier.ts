import { Duration, Validations } from 'aws-cdk-lib';
import { ComparisonOperator, Metric } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { FilterCriteria, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { VERIFIER_FUNCTION_TIMEOUT_SECONDS, VERIFIER_RETRY_QUEUE, VERIFIER_STREAM } from '../contract/stream-consumers.js';
import type { ServiceAlarms } from './alarms.js';
import { ApiFunction } from './api-function.js';
import { WRITABLE_ATTRIBUTES } from './grants.js';
import { METRIC_PERIOD } from './service-metrics.js';

/**
 * The debtor verifier in AWS (functions/verify-debtors.ts; the local world runs the same handler
 * from infra/local/verification-engines.ts):
 *
 * - the table's stream → an event source mapping filtered to INSERTs of case items, in batches,
 *   bisecting a failing batch, with partial batch responses, bounded retries and record age, and an
 *   on-failure queue (SQS) whose depth pages;
 * - the retry queue (delays up to 15 minutes; longer waits re-delay themselves) → a second event
 *   source mapping on the same function, with partial batch responses; a message that failed 5
 *   receives goes to its dead-letter queue, whose depth pages;
 * - the metric `DebtorVerificationExhausted` (a case still PENDING after the 24 h horizon) pages;
 * - the Companies House key in a Secrets Manager secret the function reads (once per cold start,
 *   again after a 401), created empty: docs/deploy.md says how to set and rotate it.
 *
 * Rights (grants.ts GRANTS `verify-debtors`): GetItem and UpdateItem of case items, the update limited to what verification changes
 * (`dynamodb:Attributes`); PutItem of event items; the registry's cache and rate-limiter items
 * (`REGISTRY#`); the secret; sending to its own retry queue. Nothing else of the table.
 */
export const VERIFY_DEBTORS_ENTRY = 'functions/verify-debtors.ts';
export { VERIFIER_STREAM };

export { VERIFIER_RETRY_QUEUE };

/**
 * What the worker's UpdateItem of a case may name: the lifecycle fields a verification or a settling
 * changes, plus what the change store's condition reads: the same as any case change's
 * (grants.ts GRANTS `verify-debtors`).
 */
export const VERIFIER_CASE_ATTRIBUTES = WRITABLE_ATTRIBUTES.caseLifecycle;

export interface DebtorVerifierProps {
  table: ITable;
  projectRoot: string;
  environment: Record<string, string>;
  logRetention: RetentionDays;
}

export class DebtorVerifier extends Construct {
  readonly worker: ApiFunction;
  readonly retryQueue: Queue;
  readonly retryDeadLetters: Queue;
  readonly failedStreamRecords: Queue;
  readonly registryKey: Secret;

  constructor(scope: Construct, id: string, props: DebtorVerifierProps) {
    super(scope, id);
    const { table } = props;
    const queueDefaults = { encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true } as const;

    this.registryKey = new Secret(this, 'RegistryKey', {
      description: 'Companies House public data API key of the debtor verifier (docs/deploy.md: set and rotate it)',
    });
    Validations.of(this.registryKey).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason: 'A Companies House API key is issued by Companies House, not generated: it is rotated by hand (docs/deploy.md).',
    });

    this.retryDeadLetters = new Queue(this, 'RetryDeadLetters', { ...queueDefaults, retentionPeriod: Duration.days(14) });
    this.retryQueue = new Queue(this, 'RetryQueue', {
      ...queueDefaults,
      visibilityTimeout: Duration.seconds(VERIFIER_RETRY_QUEUE.visibilityTimeoutSeconds),
      retentionPeriod: Duration.days(VERIFIER_RETRY_QUEUE.retentionDays),
      deliveryDelay: Duration.seconds(0),
      deadLetterQueue: { queue: this.retryDeadLetters, maxReceiveCount: VERIFIER_RETRY_QUEUE.maxReceiveCount },
    });
    this.failedStreamRecords = new Queue(this, 'FailedStreamRecords', { ...queueDefaults, retentionPeriod: Duration.days(14) });
    Validations.of(this.failedStreamRecords).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: "This queue is itself the stream mapping's on-failure destination; an operator inspects and replays it.",
    });

    this.worker = new ApiFunction(this, 'Worker', {
      entry: `${props.projectRoot}/${VERIFY_DEBTORS_ENTRY}`,
      projectRoot: props.projectRoot,
      description: 'Debtor verification worker: new cases from the table stream, retries from its queue',
      memorySize: 512,
      timeout: Duration.seconds(VERIFIER_FUNCTION_TIMEOUT_SECONDS),
      environment: {
        ...props.environment,
        VERIFICATION_RETRY_QUEUE_URL: this.retryQueue.queueUrl,
        COMPANIES_HOUSE_API_KEY_SECRET: this.registryKey.secretArn,
      },
      logRetention: props.logRetention,
    });

    this.worker.bindTable(table, 'verify-debtors');
    this.registryKey.grantRead(this.worker.role);
    this.retryQueue.grantSendMessages(this.worker.role);

    this.worker.function.addEventSource(
      new DynamoEventSource(table, {
        startingPosition: StartingPosition.TRIM_HORIZON,
        batchSize: VERIFIER_STREAM.batchSize,
        bisectBatchOnError: true,
        reportBatchItemFailures: true,
        retryAttempts: VERIFIER_STREAM.retryAttempts,
        maxRecordAge: Duration.hours(VERIFIER_STREAM.maxRecordAgeHours),
        onFailure: new SqsDlq(this.failedStreamRecords),
        filters: [FilterCriteria.filter(VERIFIER_STREAM.filterPattern)],
      }),
    );
    this.worker.function.addEventSource(
      new SqsEventSource(this.retryQueue, { batchSize: VERIFIER_RETRY_QUEUE.batchSize, reportBatchItemFailures: true }),
    );
  }

  /** A case still PENDING after the 24 h horizon (functions/verify-debtors.ts EXHAUSTED_METRIC). */
  exhausted(): Metric {
    return new Metric({
      namespace: 'PartnerCaseApi',
      metricName: 'DebtorVerificationExhausted',
      dimensionsMap: { service: 'partner-case-api' },
      statistic: 'Sum',
      period: METRIC_PERIOD,
    });
  }

  addAlarms(alarms: Pick<ServiceAlarms, 'add' | 'addSilentStreamConsumer'>): void {
    alarms.addSilentStreamConsumer('DebtorVerifierSilent', this.worker.function, 'Debtor verifier');
    const first = { threshold: 1, comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD, evaluationPeriods: 1 };
    alarms.add('DebtorVerificationExhausted', this.exhausted(), {
      ...first,
      description: 'Debtor verification: a case is still PENDING after 24 h of registry failures; check the registry and the worker log.',
    });
    alarms.add(
      'DebtorVerifierFailedStreamRecords',
      this.failedStreamRecords.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: METRIC_PERIOD }),
      { ...first, description: 'Debtor verifier: new cases it could not process are in the on-failure queue; inspect and replay them.' },
    );
    alarms.add(
      'DebtorVerifierRetryDeadLetters',
      this.retryDeadLetters.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: METRIC_PERIOD }),
      {
        ...first,
        description: 'Debtor verifier: retry messages failed 5 times and are in the dead-letter queue; inspect and replay them.',
      },
    );
  }
}
