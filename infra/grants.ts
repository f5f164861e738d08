import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import { FILE_KEY_PREFIX } from '../lib/uploads/file-key.js';

/**
 * The IAM statements the API functions may hold, one builder per need. Every statement names the
 * table (never its indexes: no function queries `gsi1`; the operator's admin CLI does, with the
 * operator's own credentials) or the invoice objects, never `*`.
 *
 * Statement ids are stable so tests and reviewers can find each grant in the synthesised policy.
 */

/** API-key items start with this partition-key prefix (lib/data/table-keys.ts: `KEY#<keyId>`). */
export const API_KEY_PARTITION_PATTERN = 'KEY#*';

/**
 * Authentication, shared by every function: read the key item (GetItem on the table; the same
 * permission reads cases and company profiles), and record the key's last use. The UpdateItem is
 * limited by `dynamodb:LeadingKeys` to items whose partition key starts with `KEY#`, so a function
 * that only reads or issues uploads cannot modify a case, a company, a guard or a counter.
 */
export function apiKeyAuthenticationStatements(table: ITable): PolicyStatement[] {
  return [
    new PolicyStatement({
      sid: 'ReadTableItems',
      actions: ['dynamodb:GetItem'],
      resources: [table.tableArn],
    }),
    new PolicyStatement({
      sid: 'RecordApiKeyUse',
      actions: ['dynamodb:UpdateItem'],
      resources: [table.tableArn],
      conditions: {
        'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [API_KEY_PARTITION_PATTERN] },
      },
    }),
  ];
}

/**
 * Case creation: the idempotency claim (PutItem, UpdateItem, DeleteItem), the reference counter
 * (UpdateItem), the company profile (GetItem) and the all-or-nothing case write. TransactWriteItems
 * has no IAM action of its own: it is authorised through the actions of its parts (Put, Update,
 * Delete, ConditionCheck).
 */
export function caseWriteStatements(table: ITable): PolicyStatement[] {
  return [
    new PolicyStatement({
      sid: 'WriteCases',
      actions: [
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
        'dynamodb:DeleteItem',
        'dynamodb:ConditionCheckItem',
      ],
      resources: [table.tableArn],
    }),
  ];
}

/**
 * The objects the functions may touch: every fileKey the service issues lies under `invoices/`
 * (lib/uploads/file-key.ts); the per-company part of the key is enforced by the handlers.
 */
export function invoiceObjectsArn(bucket: IBucket): string {
  return bucket.arnForObjects(`${FILE_KEY_PREFIX}*`);
}

/** Presigning an invoice PUT: the URL carries the signer's authority, so it needs PutObject. */
export function invoiceUploadStatements(bucket: IBucket): PolicyStatement[] {
  return [
    new PolicyStatement({
      sid: 'PresignInvoiceUploads',
      actions: ['s3:PutObject'],
      resources: [invoiceObjectsArn(bucket)],
    }),
  ];
}

/**
 * Checking that an invoice was uploaded: HeadObject is authorised by s3:GetObject. Without
 * s3:ListBucket, S3 answers a HEAD for a missing key with 403 rather than 404; the handler reads a
 * 403 as "not uploaded" (lib/uploads/file-store.ts), and the function cannot list the bucket.
 */
export function invoiceCheckStatements(bucket: IBucket): PolicyStatement[] {
  return [
    new PolicyStatement({
      sid: 'CheckInvoiceUploads',
      actions: ['s3:GetObject'],
      resources: [invoiceObjectsArn(bucket)],
    }),
  ];
}
