import { TABLE_DEFINITION } from '../../../lib/adapters/dynamodb/table-keys.js';
import { onlyResource, resourcesOfType, synth, type Resource } from './synth.js';

function bucket(prefix: 'DataStoresInvoiceBucket' | 'DataStoresAccessLogBucket', context: Record<string, unknown> = {}): Resource {
  const found = Object.entries(resourcesOfType(synth(context).template, 'AWS::S3::Bucket')).filter(([id]) => id.startsWith(prefix));
  expect(found).toHaveLength(1);
  return found[0]?.[1] as Resource;
}

function bucketPolicyStatements(prefix: string): Record<string, unknown>[] {
  const policies = Object.values(resourcesOfType(synth().template, 'AWS::S3::BucketPolicy')).filter((p) =>
    ((p.Properties.Bucket as { Ref: string }).Ref ?? '').startsWith(prefix),
  );
  expect(policies).toHaveLength(1);
  return (policies[0]?.Properties.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement;
}

describe('the table', () => {
  const table = () => onlyResource(synth().template, 'AWS::DynamoDB::Table');

  it('is on-demand, point-in-time recoverable, deletion-protected and retained', () => {
    const t = table();
    expect(t.Properties).toMatchObject({
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      DeletionProtectionEnabled: true,
    });
    expect(t.DeletionPolicy).toBe('Retain');
    expect(t.UpdateReplacePolicy).toBe('Retain');
  });

  it('is encrypted with the AWS managed KMS key', () => {
    // SSEEnabled without a key id is the aws/dynamodb key (not the AWS owned default).
    expect(table().Properties.SSESpecification).toEqual({ SSEEnabled: true });
  });

  it('has the keys, TTL attribute and the two indexes that lib/adapters/dynamodb/table-keys.ts defines', () => {
    const p = table().Properties;
    expect(p.KeySchema).toEqual([
      { AttributeName: TABLE_DEFINITION.partitionKey, KeyType: 'HASH' },
      { AttributeName: TABLE_DEFINITION.sortKey, KeyType: 'RANGE' },
    ]);
    expect(p.TimeToLiveSpecification).toEqual({ AttributeName: 'ttl', Enabled: true });
    expect(p.GlobalSecondaryIndexes).toEqual([
      {
        IndexName: 'gsi1',
        KeySchema: [
          { AttributeName: 'gsi1pk', KeyType: 'HASH' },
          { AttributeName: 'gsi1sk', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      },
      {
        IndexName: 'gsi2',
        KeySchema: [
          { AttributeName: 'gsi2pk', KeyType: 'HASH' },
          { AttributeName: 'gsi2sk', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      },
    ]);
    expect(p.AttributeDefinitions).toEqual(
      ['pk', 'sk', 'gsi1pk', 'gsi1sk', 'gsi2pk', 'gsi2sk'].map((AttributeName) => ({ AttributeName, AttributeType: 'S' })),
    );
  });
});

describe('the invoice bucket', () => {
  it('blocks public access, is S3-encrypted, versioned, owner-enforced and retained', () => {
    const b = bucket('DataStoresInvoiceBucket');
    expect(b.Properties).toMatchObject({
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
      VersioningConfiguration: { Status: 'Enabled' },
      OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
    });
    expect(b.DeletionPolicy).toBe('Retain');
  });

  it('refuses requests without TLS 1.2', () => {
    const statements = bucketPolicyStatements('DataStoresInvoiceBucket');
    expect(statements).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ Effect: 'Deny', Action: 's3:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        expect.objectContaining({ Effect: 'Deny', Action: 's3:*', Condition: { NumericLessThan: { 's3:TlsVersion': 1.2 } } }),
      ]),
    );
  });

  it('aborts incomplete uploads after a day and removes replaced versions after 30 days', () => {
    expect(bucket('DataStoresInvoiceBucket').Properties.LifecycleConfiguration).toEqual({
      Rules: [
        { Id: 'AbortIncompleteUploads', AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 }, Status: 'Enabled' },
        { Id: 'ExpireNoncurrentVersions', NoncurrentVersionExpiration: { NoncurrentDays: 30 }, Status: 'Enabled' },
      ],
    });
  });

  it('expires current invoices only when invoiceExpirationDays is set', () => {
    const rules = (
      bucket('DataStoresInvoiceBucket', { invoiceExpirationDays: '2555', noncurrentVersionExpirationDays: 7 }).Properties
        .LifecycleConfiguration as { Rules: Record<string, unknown>[] }
    ).Rules;
    expect(rules).toContainEqual({ Id: 'ExpireInvoices', ExpirationInDays: 2555, Status: 'Enabled' });
    expect(rules).toContainEqual({ Id: 'ExpireNoncurrentVersions', NoncurrentVersionExpiration: { NoncurrentDays: 7 }, Status: 'Enabled' });
  });

  it('has no CORS rules: partners upload from servers, not browsers', () => {
    expect(bucket('DataStoresInvoiceBucket').Properties.CorsConfiguration).toBeUndefined();
  });

  it('sends server access logs to a separate, private, retained log bucket', () => {
    expect(bucket('DataStoresInvoiceBucket').Properties.LoggingConfiguration).toEqual({
      DestinationBucketName: { Ref: expect.stringMatching(/^DataStoresAccessLogBucket/) },
      LogFilePrefix: 'invoice-bucket/',
    });
    const logs = bucket('DataStoresAccessLogBucket');
    expect(logs.Properties).toMatchObject({
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
      OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
    });
    expect(logs.DeletionPolicy).toBe('Retain');
    // Log delivery is granted by bucket policy (ACLs are disabled by BucketOwnerEnforced).
    expect(bucketPolicyStatements('DataStoresAccessLogBucket')).toContainEqual(
      expect.objectContaining({ Effect: 'Allow', Action: 's3:PutObject', Principal: { Service: 'logging.s3.amazonaws.com' } }),
    );
  });
});
