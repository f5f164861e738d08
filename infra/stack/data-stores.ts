import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, StreamViewType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership, type LifecycleRule } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { TABLE_DEFINITION } from '../../lib/adapters/dynamodb/table-keys.js';

export interface DataStoresProps {
  noncurrentVersionExpirationDays: number;
  invoiceExpirationDays: number | undefined;
  accessLogExpirationDays: number;
}

/**
 * The stateful part of the service: the single DynamoDB table and the invoice bucket (plus the
 * bucket that receives its S3 server access logs). All three are retained when the stack is
 * deleted or a resource is replaced: they hold partners' cases, audit records and invoices.
 */
export class DataStores extends Construct {
  readonly table: Table;
  readonly invoiceBucket: Bucket;
  readonly accessLogBucket: Bucket;

  constructor(scope: Construct, id: string, props: DataStoresProps) {
    super(scope, id);

    this.table = new Table(this, 'Table', {
      partitionKey: { name: TABLE_DEFINITION.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE_DEFINITION.sortKey, type: AttributeType.STRING },
      timeToLiveAttribute: TABLE_DEFINITION.ttlAttribute,
      // On-demand: partner traffic is bursty (a batch of 100 cases is ~300 writes at once) and
      // small; there is no capacity to forecast or autoscale.
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
      // AWS managed key (aws/dynamodb): encrypted with KMS and every use of the key is visible in
      // CloudTrail, with no key policy to maintain and no grants for the functions to hold. A
      // customer managed key would only pay off for cross-account access or crypto-shredding,
      // neither of which this service needs; it would add a key policy, rotation and cost.
      encryption: TableEncryption.AWS_MANAGED,
      // The debtor verifier reads new cases from the stream (functions/verify-debtors.ts); both
      // images, so a consumer sees what a change replaced without reading the table again.
      stream: StreamViewType[TABLE_DEFINITION.streamViewType],
    });
    this.table.addGlobalSecondaryIndex({
      indexName: TABLE_DEFINITION.gsi1.name,
      partitionKey: { name: TABLE_DEFINITION.gsi1.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE_DEFINITION.gsi1.sortKey, type: AttributeType.STRING },
      projectionType: ProjectionType.ALL,
    });
    // A company's cases newest first, spread over shards (lib/adapters/dynamodb/table-keys.ts). ALL:
    // a list page is served from the index alone, without a read of each case.
    this.table.addGlobalSecondaryIndex({
      indexName: TABLE_DEFINITION.gsi2.name,
      partitionKey: { name: TABLE_DEFINITION.gsi2.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE_DEFINITION.gsi2.sortKey, type: AttributeType.STRING },
      projectionType: ProjectionType.ALL,
    });

    this.accessLogBucket = new Bucket(this, 'AccessLogBucket', {
      // S3 server access log delivery supports SSE-S3 only, not SSE-KMS.
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      lifecycleRules: [
        { id: 'ExpireAccessLogs', expiration: Duration.days(props.accessLogExpirationDays) },
        { id: 'AbortIncompleteUploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
      removalPolicy: RemovalPolicy.RETAIN,
    });

    const invoiceLifecycle: LifecycleRule[] = [
      { id: 'AbortIncompleteUploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      {
        id: 'ExpireNoncurrentVersions',
        noncurrentVersionExpiration: Duration.days(props.noncurrentVersionExpirationDays),
      },
    ];
    if (props.invoiceExpirationDays !== undefined) {
      invoiceLifecycle.push({ id: 'ExpireInvoices', expiration: Duration.days(props.invoiceExpirationDays) });
    }

    this.invoiceBucket = new Bucket(this, 'InvoiceBucket', {
      // SSE-S3: partners upload with a presigned PUT and the create function HEADs the object;
      // with SSE-S3 neither needs KMS permissions nor an encryption header the partner must send.
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      // A re-upload to the same key (or a delete) keeps the previous invoice recoverable for the
      // noncurrent-version window.
      versioned: true,
      lifecycleRules: invoiceLifecycle,
      serverAccessLogsBucket: this.accessLogBucket,
      serverAccessLogsPrefix: 'invoice-bucket/',
      // No CORS configuration on purpose: partners upload from their back-end finance systems,
      // not from browsers, so no cross-origin browser access is needed or allowed.
      removalPolicy: RemovalPolicy.RETAIN,
    });
  }
}
