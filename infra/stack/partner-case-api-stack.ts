import * as path from 'node:path';
import { CfnOutput, Duration, Stack, Tags, Validations, type StackProps } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { ApiFunction } from './api-function.js';
import { CURSOR_SECRET } from './cursor-secret.js';
import { KeyMaterialSecret } from './key-material-secret.js';
import { WEBHOOK_SECRET_KEY } from './webhook-secret-key.js';
import { ServiceAlarms } from './alarms.js';
import { DataStores } from './data-stores.js';
import { PartnerApi } from './http-api.js';
import { ServiceDashboard } from './service-dashboard.js';
import { UploadRecordDelivery } from './upload-record-delivery.js';
import { DebtorVerifier } from './debtor-verifier.js';
import { WebhookDelivery } from './webhook-delivery.js';
import { functionEnvironment, SERVICE_METRICS, type StackConfig } from '../contract/stack-config.js';
import {
  API_FUNCTIONS,
  API_FUNCTION_IDS,
  byApiFunction,
  IDEMPOTENCY_CLAIM_HORIZON_SECONDS,
  memoryOf,
  ROUTE_MANIFEST,
  ROUTE_TABLE,
  type ApiFunctionId,
} from '../contract/route-table.js';
import { ApiFirewall, RATE_RULE_NAMES } from './waf.js';
import { EventType } from 'aws-cdk-lib/aws-s3';
import { LambdaDestination } from 'aws-cdk-lib/aws-s3-notifications';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { FILE_KEY_PREFIXES } from '../../lib/uploads/file-key.js';

/** The record-upload function's handler file. */
export const RECORD_UPLOAD_ENTRY = 'functions/record-upload.ts';

/**
 * S3 bucket notifications are configured by the CDK's own singleton custom resource
 * (BucketNotificationsHandler), whose role CDK builds with the basic-execution managed policy.
 * Acknowledged on that role, once the handler exists.
 */
function acknowledgeBucketNotificationsHandler(stack: Stack): void {
  const handler = stack.node.tryFindChild('BucketNotificationsHandler050a0587b7544547bf325f094a3db834');
  const role = handler?.node.tryFindChild('Role');
  if (!role) return;
  Validations.of(role).acknowledge({
    id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
    reason:
      'CDK-managed custom resource that sets the invoice bucket notification at deploy time; it only writes its own logs with this policy.',
  });
}

export interface PartnerCaseApiStackProps extends StackProps {
  config: StackConfig;
  /** The directory holding package-lock.json and functions/. Defaults to the working directory. */
  projectRoot?: string;
}

/**
 * The whole service in one stack: table and buckets (retained), the functions, the list cursors' secret, the REST API,
 * the WAF web ACL (context `waf`), alarms and the outputs operators need.
 */
export class PartnerCaseApiStack extends Stack {
  readonly data: DataStores;
  readonly api: PartnerApi;
  readonly functions: Readonly<Record<ApiFunctionId, ApiFunction>>;
  /** Records invoice uploads from the bucket's events (not an API route). */
  readonly recordUpload: ApiFunction;
  /** Its asynchronous invocations' retries and on-failure queue. */
  readonly recordUploadDelivery: UploadRecordDelivery;
  readonly debtorVerifier: DebtorVerifier;
  /** Webhook fan-out from the stream, the delivery lanes and their function. */
  readonly webhookDelivery: WebhookDelivery;
  readonly cursorSecret: KeyMaterialSecret;
  readonly webhookSecretKey: KeyMaterialSecret;
  readonly firewall: ApiFirewall | undefined;
  readonly alarms: ServiceAlarms;
  readonly dashboard: ServiceDashboard;

  constructor(scope: Construct, id: string, props: PartnerCaseApiStackProps) {
    super(scope, id, {
      description: `Partner Case API (${props.config.stage}): invoice uploads, batch recovery-case creation and case status.`,
      ...props,
      // The stage decides where the stack goes and whether it can be deleted; a caller cannot override either.
      env: { account: props.config.target.account, region: props.config.target.region },
      terminationProtection: props.config.terminationProtection,
    });
    const { config } = props;
    const projectRoot = path.resolve(props.projectRoot ?? process.cwd());
    // Not on the dashboard: CloudFormation's schema as cfn-lint checks it (.ci/run) has no Tags on
    // AWS::CloudWatch::Dashboard, and a dashboard needs none (cost allocation is by the resources it shows).
    const untagged = { excludeResourceTypes: ['AWS::CloudWatch::Dashboard'] };
    Tags.of(this).add('service', SERVICE_METRICS.service, untagged);
    Tags.of(this).add('stage', config.stage, untagged);

    this.data = new DataStores(this, 'DataStores', {
      noncurrentVersionExpirationDays: config.noncurrentVersionExpirationDays,
      invoiceExpirationDays: config.invoiceExpirationDays,
      accessLogExpirationDays: config.accessLogExpirationDays,
    });
    const { table, invoiceBucket } = this.data;

    const environment = functionEnvironment(config, {
      tableName: table.tableName,
      bucketName: invoiceBucket.bucketName,
      claimHorizonSeconds: IDEMPOTENCY_CLAIM_HORIZON_SECONDS,
    });
    // Entry, timeout and memory setting come from the route manifest (infra/contract/routes/), which the local server and
    // `npm run invoke` read too. Memory sizes are starting points the benchmark refines (more
    // memory also means proportionally more CPU, which shortens cold starts and the hashing work).
    const fn = (id: ApiFunctionId) => {
      const spec = API_FUNCTIONS[id];
      const routes = ROUTE_TABLE.filter((r) => r.function === id).map((r) => `${r.method} ${r.resource}`);
      return new ApiFunction(this, spec.constructId, {
        entry: path.join(projectRoot, spec.entry),
        projectRoot,
        description: routes.join(', '),
        memorySize: memoryOf(spec, config),
        timeout: Duration.seconds(spec.timeoutSeconds),
        environment,
        logRetention: config.logRetentionDays,
      });
    };
    this.functions = Object.fromEntries(API_FUNCTION_IDS.map((id) => [id, fn(id)])) as Record<ApiFunctionId, ApiFunction>;

    this.cursorSecret = new KeyMaterialSecret(this, 'CursorSecret', CURSOR_SECRET);
    this.webhookSecretKey = new KeyMaterialSecret(this, 'WebhookSecretKey', WEBHOOK_SECRET_KEY);
    for (const id of API_FUNCTION_IDS) {
      // What each function may reach is its manifest entry's `grants` (least privilege: grants.ts).
      const { grants } = ROUTE_MANIFEST[id];
      this.functions[id].bindTable(table, grants.table);
      if (grants.cursorSecret) this.functions[id].bindCursorSecret(this.cursorSecret.secret);
      if (grants.webhookSecretKey) this.functions[id].bindWebhookSecretKey(this.webhookSecretKey.secret);
      if (grants.invoiceBucket) this.functions[id].bindInvoiceBucket(invoiceBucket, grants.invoiceBucket);
    }
    // Each API function's Lambda, by function id: the API's integrations, the alarms and the dashboard.
    const lambdas: Record<ApiFunctionId, IFunction> = byApiFunction((id) => this.functions[id].function);

    // Batch creation confirms an invoice file from its upload record (one read for the whole
    // batch) instead of a HEAD per file: S3 reports each invoice object created, removed or expired.
    this.recordUpload = new ApiFunction(this, 'RecordUpload', {
      entry: path.join(projectRoot, RECORD_UPLOAD_ENTRY),
      projectRoot,
      description: 'Records invoice uploads from the invoice bucket events',
      memorySize: 256,
      timeout: Duration.seconds(10),
      environment,
      logRetention: config.logRetentionDays,
    });
    this.recordUpload.bindTable(table, 'record-uploads');
    this.recordUploadDelivery = new UploadRecordDelivery(this, 'RecordUploadDelivery', this.recordUpload.function);
    // Both modes' uploads are recorded (and their records removed with the objects, as when
    // `company clear-test-data` deletes test uploads); the two prefixes do not overlap.
    for (const prefix of Object.values(FILE_KEY_PREFIXES)) {
      for (const event of [EventType.OBJECT_CREATED, EventType.OBJECT_REMOVED, EventType.LIFECYCLE_EXPIRATION]) {
        invoiceBucket.addEventNotification(event, new LambdaDestination(this.recordUpload.function), { prefix });
      }
    }
    acknowledgeBucketNotificationsHandler(this);

    // New cases settled and their debtors verified off the create path, from the table's stream.
    this.debtorVerifier = new DebtorVerifier(this, 'DebtorVerifier', {
      table,
      projectRoot,
      environment,
      logRetention: config.logRetentionDays,
    });

    // Case events fanned out to partners' webhook endpoints and delivered from SQS (docs/webhooks-design.md).
    this.webhookDelivery = new WebhookDelivery(this, 'WebhookDelivery', {
      table,
      projectRoot,
      environment,
      logRetention: config.logRetentionDays,
      secretKey: this.webhookSecretKey.secret,
    });
    for (const id of API_FUNCTION_IDS) {
      if (ROUTE_MANIFEST[id].grants.webhookRedeliveries) this.webhookDelivery.grantEnqueueRedelivery(this.functions[id]);
    }

    this.api = new PartnerApi(this, 'Api', {
      stageName: config.stageName,
      throttleRate: config.throttleRate,
      throttleBurst: config.throttleBurst,
      logRetention: config.logRetentionDays,
      cloudWatchRole: config.apiGatewayCloudWatchRole,
      customDomain: config.customDomain,
      handlers: lambdas,
      internalPrincipals: config.internalPrincipals,
    });

    if (config.waf) {
      this.firewall = new ApiFirewall(this, 'Firewall', {
        name: this.stackName,
        stage: this.api.stage,
        logRetention: config.logRetentionDays,
        rateLimitPerKey: config.wafRateLimitPerKey,
        rateLimitPerIp: config.wafRateLimitPerIp,
      });
    } else {
      Validations.of(this.api.stage).acknowledge({
        id: 'AwsSolutions-APIG3',
        reason: 'WAF is switched off with the context flag waf=false (development stacks only; see docs/deploy.md).',
      });
    }

    const webAcl = this.firewall ? { metricName: this.firewall.metricName, region: this.region } : undefined;
    this.alarms = new ServiceAlarms(this, 'Alarms', {
      namePrefix: this.stackName,
      stage: this.api.stage,
      table,
      latencyP99Ms: config.alarmLatencyP99Ms,
      serverErrorRate: config.alarmServerErrorRate,
      clientErrorRate: config.alarmClientErrorRate,
      webAcl: webAcl && { ...webAcl, blockedRequestsThreshold: config.alarmWafBlockedRequests },
      alarmEmail: config.alarmEmail,
    });
    this.recordUploadDelivery.addAlarms(this.alarms);
    this.debtorVerifier.addAlarms(this.alarms);
    this.webhookDelivery.addAlarms(this.alarms);
    // Last, once every construct has added its own: Errors, Throttles, IteratorAge, backlog, age and
    // in-flight alarms for every function, stream mapping and queue built above.
    this.alarms.watchAsyncWork(this);

    this.dashboard = new ServiceDashboard(this, 'Dashboard', {
      dashboardName: this.stackName,
      stage: this.api.stage,
      functions: lambdas,
      table,
      createCasesLogGroup: this.functions.createCases.logGroup,
      accessLogGroup: this.api.accessLogGroup,
      webAcl: webAcl && { ...webAcl, rateRuleMetricNames: [...RATE_RULE_NAMES] },
      alarms: this.alarms.alarms,
    });
    this.dashboard.dashboard.addWidgets(...this.recordUploadDelivery.widgets());
    this.dashboard.dashboard.addWidgets(...this.webhookDelivery.widgets());

    new CfnOutput(this, 'ApiUrl', {
      value: this.api.url,
      description: 'Base URL of the stage; routes are under api/v1/ (e.g. <ApiUrl>api/v1/cases).',
    });
    new CfnOutput(this, 'TableName', { value: table.tableName, description: 'DynamoDB table (TABLE_NAME for npm run admin).' });
    new CfnOutput(this, 'BucketName', { value: invoiceBucket.bucketName, description: 'Invoice bucket.' });
    new CfnOutput(this, 'AlarmTopicArn', { value: this.alarms.topic.topicArn, description: 'SNS topic the alarms notify.' });
    new CfnOutput(this, 'DashboardName', {
      value: this.dashboard.dashboard.dashboardName,
      description: 'CloudWatch dashboard of the partner path.',
    });
    // What npm run admin's case reverify and webhook redeliver need beside TABLE_NAME (docs/deploy.md runbook).
    new CfnOutput(this, 'VerificationRetryQueueUrl', {
      value: this.debtorVerifier.retryQueue.queueUrl,
      description: 'VERIFICATION_RETRY_QUEUE_URL for npm run admin -- case reverify.',
    });
    new CfnOutput(this, 'CompaniesHouseApiKeySecret', {
      value: this.debtorVerifier.registryKey.secretArn,
      description: 'COMPANIES_HOUSE_API_KEY_SECRET for npm run admin -- case reverify.',
    });
    new CfnOutput(this, 'WebhookDeliveryQueueUrl', {
      value: this.webhookDelivery.fastLane.queueUrl,
      description: 'WEBHOOK_DELIVERY_QUEUE_URL for npm run admin -- webhook redeliver.',
    });
    new CfnOutput(this, 'WebhookTestDeliveryQueueUrl', {
      value: this.webhookDelivery.testFastLane.queueUrl,
      description: 'WEBHOOK_TEST_DELIVERY_QUEUE_URL for npm run admin -- webhook redeliver.',
    });
    if (this.api.domain) {
      new CfnOutput(this, 'CustomDomainTarget', {
        value: this.api.domain.domainNameAliasDomainName,
        description: 'Point the custom domain at this name (CNAME, or a Route 53 alias with the regional hosted zone).',
      });
    }
  }
}
