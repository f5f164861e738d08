import { Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import {
  GSI1_ATTRIBUTES,
  INDEX_PARTITION_PREFIXES,
  keys,
  PARTITION_PREFIXES,
  TABLE_DEFINITION,
  TTL_ATTRIBUTE,
} from '../../lib/adapters/dynamodb/table-keys.js';
import { ENDPOINT_SETTINGS_ATTRIBUTES, ENDPOINT_VIEW_ATTRIBUTES } from '../../lib/adapters/dynamodb/webhook-endpoint-store.js';
import { FILE_KEY_PREFIXES } from '../../lib/uploads/file-key.js';
import { MODES } from '../../lib/mode.js';

/**
 * The IAM statements the API functions may hold, one builder per need. Every statement names the
 * table, one index (the list function queries `gsi2`; of `gsi1` only the webhook delivery
 * sweeper queries, and only its COMPANIES partition; the operator's admin CLI reads the rest with
 * the operator's own credentials) or the invoice objects, never `*`.
 *
 * How IAM sees a DynamoDB write, and so what these statements can and cannot say:
 * - `dynamodb:LeadingKeys` is the item's partition key; IAM never sees the sort key. Items that
 *   share a partition (a case and its attestation audit record) cannot be told apart; every other
 *   kind has partitions of its own (invoiceRef guards and idempotency claims each one per item).
 * - `dynamodb:Attributes` is the set of attribute names a request writes (the whole item for a
 *   put, the updated attributes for an update), key attributes included. The lists below also
 *   hold the names the requests' condition expressions read, so whichever way IAM counts those,
 *   the service's own requests pass.
 * - `TransactWriteItems` has no IAM action of its own: each part is authorised as the PutItem,
 *   UpdateItem, DeleteItem or ConditionCheckItem it is, with `dynamodb:EnclosingOperation` set to
 *   `TransactWriteItems`.
 * - Nothing in IAM sees a condition expression, so "create only, never overwrite" is the
 *   service's `attribute_not_exists(pk)`, not IAM's.
 *
 * Statement ids are stable so tests and reviewers can find each grant in the synthesised policy.
 */

const { partitionKey: PK, sortKey: SK } = TABLE_DEFINITION;

/**
 * Partition-key patterns for `dynamodb:LeadingKeys`, from the key module's own partition prefixes,
 * so they follow any change of the key design (test/unit/infra/iam.test.ts checks each pattern
 * against real keys of every item kind).
 */
export const PARTITIONS = {
  /** API-key items. */
  apiKey: `${PARTITION_PREFIXES.apiKey}*`,
  /** Cases and their attestation audit records. */
  case: `${PARTITION_PREFIXES.case}*`,
  /** Company profiles. */
  company: `${PARTITION_PREFIXES.company}*`,
  /** invoiceRef guards: each in a partition of its own. */
  invoiceRefGuard: `${PARTITION_PREFIXES.invoiceRefGuard}*`,
  /** Idempotency-Key claims: each in a partition of its own. */
  idempotencyClaim: `${PARTITION_PREFIXES.idempotencyClaim}*`,
  /** The case-reference counter: one exact partition. */
  referenceCounter: keys.caseReferenceCounter().pk,
  /** Upload records: one partition per invoice file. */
  upload: `${PARTITION_PREFIXES.upload}*`,
  /** Case events (the outbox): one partition per event, both modes. */
  event: `${PARTITION_PREFIXES.event}*`,
  /** A company's webhook endpoints of one mode and their counter: one partition per company and mode. */
  webhookEndpoints: `${PARTITION_PREFIXES.webhookEndpoints}*`,
  /** An endpoint's delivery log (one partition per endpoint and mode). */
  webhookDeliveries: `${PARTITION_PREFIXES.webhookDeliveries}*`,
  /** An endpoint's slots in the delivery lanes and its waiting deliveries (one partition per endpoint and mode). */
  webhookDeliverySlots: `${PARTITION_PREFIXES.webhookDeliverySlots}*`,
} as const;

/** gsi2 partition patterns for `dynamodb:LeadingKeys` on index queries: the case list's and the event list's shards, both modes. */
export const INDEX_PARTITIONS = {
  caseList: `${INDEX_PARTITION_PREFIXES.caseList}*`,
  eventList: `${INDEX_PARTITION_PREFIXES.eventList}*`,
} as const;

/**
 * The test-mode partitions of the kinds the test-confirm helper writes (`CASE#TEST#…`,
 * `EVENT#TEST#…`: the mode segment follows the kind's prefix, table-keys.ts), so a helper deployed
 * in prod can never change a live case.
 */
export const TEST_PARTITIONS = {
  case: `${keys.case('test', '').pk}*`,
  event: `${keys.event('test', '').pk}*`,
} as const;

/** The partitions a case change may write: every case and event, or (the test helper) test ones only. */
type CasePartitions = { case: string; event: string };

/**
 * The attributes each narrow write may name (lib/adapters/dynamodb/api-key-store.ts `touch`,
 * lib/adapters/dynamodb/idempotency-store.ts `claim` and `complete`, lib/adapters/dynamodb/reference-allocator.ts `reserve`).
 * test/unit/infra/iam.test.ts drives those stores and checks every request they send against the
 * synthesised policy, so a renamed attribute fails there, not in production.
 */
export const WRITABLE_ATTRIBUTES = {
  apiKeyUse: [PK, SK, 'lastUsedAt'],
  // A test-mode claim also carries its test-data listing (gsi1), so clear-test-data finds it.
  idempotencyClaim: [
    PK,
    SK,
    'type',
    'companyId',
    'idempotencyKey',
    'state',
    'requestId',
    'claimedAt',
    'claimedAtEpoch',
    'requestHash',
    TTL_ATTRIBUTE,
    ...GSI1_ATTRIBUTES,
  ],
  idempotencyCompletion: [PK, SK, 'state', 'response', 'responseGz', 'completedAt', 'requestId'],
  referenceCounter: [PK, SK, 'sequence', 'type'],
  // A present record or a tombstone (lib/adapters/dynamodb/upload-records.ts), with its TTL.
  upload: [PK, SK, 'type', 'fileKey', 'companyId', 'size', 'uploadedAt', 'removedAt', 'sequencer', 'state', TTL_ATTRIBUTE],
  // A case change (lib/adapters/dynamodb/case-change-store.ts): the lifecycle fields it sets and
  // the ones its condition reads (`pk`, `status`, `recoveryGate`, `debtorVerification`).
  caseLifecycle: [PK, SK, 'status', 'recoveryGate', 'debtorVerification', 'statusHistory', 'updatedAt'],
  // The confirmation record put beside it (a test one carries its test-data listing, gsi1).
  confirmation: [
    PK,
    SK,
    'type',
    'caseId',
    'companyId',
    'mode',
    'confirmedBy',
    'confirmedAt',
    'requestId',
    'source',
    'principal',
    'eventId',
    ...GSI1_ATTRIBUTES,
  ],
  // The one event item shape (lib/adapters/dynamodb/event-items.ts): fields, its listing (gsi2), a test item's gsi1, its TTL.
  event: [
    PK,
    SK,
    'type',
    'eventId',
    'eventType',
    'companyId',
    'caseId',
    'mode',
    'createdAt',
    'payload',
    TTL_ATTRIBUTE,
    TABLE_DEFINITION.gsi2.partitionKey,
    TABLE_DEFINITION.gsi2.sortKey,
    ...GSI1_ATTRIBUTES,
  ],
  // The withdrawn case left in its invoiceRef's partition (`WITHDRAWN#...`) when its guard is given up.
  withdrawnInvoiceRef: [PK, SK, 'type', 'caseId', 'companyId', 'reference', 'createdAt', 'withdrawnAt', 'mode', ...GSI1_ATTRIBUTES],
} as const;

const TRANSACTION = { 'dynamodb:EnclosingOperation': 'TransactWriteItems' };

const onPartitions = (...patterns: string[]) => ({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': patterns } });
const writingOnly = (attributes: readonly string[]) => ({ 'ForAllValues:StringEquals': { 'dynamodb:Attributes': [...attributes] } });
const touchingPartitions = (...patterns: string[]) => ({ 'ForAnyValue:StringLike': { 'dynamodb:LeadingKeys': patterns } });

/**
 * What each API function may read with GetItem, by partition: only the kinds of item its code
 * reads (test/integration/function-item-reads.test.ts records every request the real handlers
 * send and evaluates this policy against them; test/unit/infra/iam.test.ts shows each function can
 * read nothing else). Every function reads the API key (authentication). Beyond that:
 * - `read` (get-case): the case (`CASE#`, which also holds its attestation audit record: IAM
 *   cannot see the sort key);
 * - `list-cases`: nothing more (the look-up by invoiceRef queries and batch-reads, caseListStatements);
 * - `write-cases` (create-cases): the company profile (auto-attestation setting). IAM cannot tie
 *   it to the caller's company; the use case reads the caller's own only;
 * - `withdraw-case`: the case it changes (`CASE#`, as get-case);
 * - `authenticate` (create-upload): nothing more.
 * - `read-events` (get-event): the event (`EVENT#`);
 * - `list-events`: nothing more (it queries the index only: eventListStatements).
 * No function may GetItem an idempotency claim (stored responses), an upload record, the
 * reference counter or, except create-cases, a company profile.
 */
export const ITEM_READS = {
  authenticate: [PARTITIONS.apiKey],
  read: [PARTITIONS.apiKey, PARTITIONS.case],
  'list-cases': [PARTITIONS.apiKey],
  'write-cases': [PARTITIONS.apiKey, PARTITIONS.company],
  'read-events': [PARTITIONS.apiKey, PARTITIONS.event],
  'list-events': [PARTITIONS.apiKey],
  'withdraw-case': [PARTITIONS.apiKey, PARTITIONS.case],
  // Confirmation: the case it changes (the internal route has no API key to read).
  'confirm-cases': [PARTITIONS.case],
  // The test helper: test cases only (TEST_PARTITIONS).
  'confirm-test-cases': [PARTITIONS.apiKey, TEST_PARTITIONS.case],
  // Webhook endpoint management: list (Query), create and delete (transactions) read only the key;
  // get, update and rotate read the endpoint too.
  'webhook-endpoints-list': [PARTITIONS.apiKey],
  'webhook-endpoints-create': [PARTITIONS.apiKey],
  'webhook-endpoints-read': [PARTITIONS.apiKey, PARTITIONS.webhookEndpoints],
  'webhook-endpoints-change': [PARTITIONS.apiKey, PARTITIONS.webhookEndpoints],
  'webhook-endpoints-delete': [PARTITIONS.apiKey],
  // Ping reads the endpoint with its sealed secrets (it signs); the delivery log reads the endpoint
  // (tenancy: the log of a foreign endpoint is not found); redeliver reads the endpoint and the event.
  'webhook-endpoints-ping': [PARTITIONS.apiKey, PARTITIONS.webhookEndpoints],
  'webhook-deliveries-list': [PARTITIONS.apiKey, PARTITIONS.webhookEndpoints],
  // Its delivery record's start reads the record back when a retried Put finds it written (the first answer lost).
  'webhook-deliveries-redeliver': [PARTITIONS.apiKey, PARTITIONS.webhookEndpoints, PARTITIONS.event, PARTITIONS.webhookDeliveries],
} as const satisfies Record<string, readonly string[]>;

/**
 * Authentication, shared by every API function: GetItem of the partitions it needs (ITEM_READS;
 * the API key always), and recording the key's last use: UpdateItem on `KEY#` items, of
 * `lastUsedAt` only. A function that only reads or issues uploads can modify nothing else.
 */
export function apiKeyAuthenticationStatements(table: ITable, reads: keyof typeof ITEM_READS): PolicyStatement[] {
  return [
    new PolicyStatement({
      sid: 'ReadTableItems',
      actions: ['dynamodb:GetItem'],
      resources: [table.tableArn],
      conditions: onPartitions(...ITEM_READS[reads]),
    }),
    new PolicyStatement({
      sid: 'RecordApiKeyUse',
      actions: ['dynamodb:UpdateItem'],
      resources: [table.tableArn],
      conditions: { ...onPartitions(PARTITIONS.apiKey), ...writingOnly(WRITABLE_ATTRIBUTES.apiKeyUse) },
    }),
  ];
}

/**
 * What every function is refused whatever else it is granted, so a broader grant added later
 * cannot quietly undo it: API keys are written only by the operator's admin CLI (a function may
 * only set `lastUsedAt`); cases and attestation audit records are never deleted, created only
 * inside the all-or-nothing case transaction, and updated only inside a case change's transaction
 * and only in their lifecycle fields (WRITABLE_ATTRIBUTES.caseLifecycle: never the amount, the
 * debtor or the attestation). Only the functions granted a case change may do even that.
 */
export function tableGuardrailStatements(table: ITable): PolicyStatement[] {
  return [
    new PolicyStatement({
      sid: 'NeverCreateOrDeleteApiKeys',
      effect: Effect.DENY,
      actions: ['dynamodb:PutItem', 'dynamodb:DeleteItem'],
      resources: [table.tableArn],
      conditions: touchingPartitions(PARTITIONS.apiKey),
    }),
    new PolicyStatement({
      sid: 'NeverChangeApiKeysBeyondLastUse',
      effect: Effect.DENY,
      actions: ['dynamodb:UpdateItem'],
      resources: [table.tableArn],
      conditions: {
        ...touchingPartitions(PARTITIONS.apiKey),
        'ForAnyValue:StringNotEquals': { 'dynamodb:Attributes': [...WRITABLE_ATTRIBUTES.apiKeyUse] },
      },
    }),
    new PolicyStatement({
      sid: 'NeverDeleteCasesOrAuditRecords',
      effect: Effect.DENY,
      actions: ['dynamodb:DeleteItem'],
      resources: [table.tableArn],
      conditions: touchingPartitions(PARTITIONS.case),
    }),
    new PolicyStatement({
      sid: 'CasesChangeOnlyInTheirChangeTransaction',
      effect: Effect.DENY,
      actions: ['dynamodb:UpdateItem'],
      resources: [table.tableArn],
      // A missing key (a plain UpdateItem) also satisfies StringNotEquals.
      conditions: { ...touchingPartitions(PARTITIONS.case), StringNotEquals: TRANSACTION },
    }),
    new PolicyStatement({
      sid: 'CasesChangeOnlyTheirLifecycle',
      effect: Effect.DENY,
      actions: ['dynamodb:UpdateItem'],
      resources: [table.tableArn],
      conditions: {
        ...touchingPartitions(PARTITIONS.case),
        'ForAnyValue:StringNotEquals': { 'dynamodb:Attributes': [...WRITABLE_ATTRIBUTES.caseLifecycle] },
      },
    }),
    new PolicyStatement({
      sid: 'CasesAndAuditRecordsOnlyInTheCaseTransaction',
      effect: Effect.DENY,
      actions: ['dynamodb:PutItem'],
      resources: [table.tableArn],
      // A missing key (a plain PutItem) also satisfies StringNotEquals.
      conditions: { ...touchingPartitions(PARTITIONS.case), StringNotEquals: TRANSACTION },
    }),
  ];
}

/** The ARN of the list index (gsi2: the case list and the event list): the only index a function may query. */
export function caseListIndexArn(table: ITable): string {
  return `${table.tableArn}/index/${TABLE_DEFINITION.gsi2.name}`;
}

/**
 * The case list (list-cases only): Query on the case-list index, only on the case list's
 * partitions (`CASES#`): the event list's partitions share the index but are not granted. The
 * partition a query names is built from the caller's company by the handler; IAM cannot tie it to
 * the key (one role serves every company). The look-up by invoiceRef queries the invoiceRef's own
 * partition of the table (its guard and its `WITHDRAWN#` items) and batch-reads the cases they
 * name: Query of the table only on `INVREF#` partitions, BatchGetItem only of `CASE#` items (which
 * IAM cannot tell from their audit records).
 */
export function caseListStatements(table: ITable): PolicyStatement[] {
  return [
    new PolicyStatement({
      sid: 'ListCasesByCompany',
      actions: ['dynamodb:Query'],
      resources: [caseListIndexArn(table)],
      // The case list's partitions only (`CASES#`), as eventListStatements (which says what LeadingKeys carries here).
      conditions: onPartitions(INDEX_PARTITIONS.caseList),
    }),
    new PolicyStatement({
      sid: 'FindCasesByInvoiceRef',
      actions: ['dynamodb:Query'],
      resources: [table.tableArn],
      conditions: onPartitions(PARTITIONS.invoiceRefGuard),
    }),
    new PolicyStatement({
      sid: 'ReadCasesFoundByInvoiceRef',
      actions: ['dynamodb:BatchGetItem'],
      resources: [table.tableArn],
      conditions: onPartitions(PARTITIONS.case),
    }),
  ];
}

/**
 * The event list (list-events only): Query on the list index (gsi2), read-only, and only on the
 * event list's partitions (`EVENTS#`): the case list's partitions share the index but are not
 * granted. The only partition key value a query on the index names is the gsi2pk of its key
 * condition, so that is what `dynamodb:LeadingKeys` can carry (AWS does not spell out index
 * queries); with `ForAllValues` a request whose context lacked the key would pass as well, so the
 * condition can narrow the grant but never break the function's own queries. The partition a
 * query names is built from the caller's company by the handler; IAM cannot tie it to the key.
 */
export function eventListStatements(table: ITable): PolicyStatement[] {
  return [
    new PolicyStatement({
      sid: 'ListEventsByCompany',
      actions: ['dynamodb:Query'],
      resources: [caseListIndexArn(table)],
      conditions: onPartitions(INDEX_PARTITIONS.eventList),
    }),
  ];
}

/**
 * Case creation (create-cases only), each write as narrow as IAM can say it:
 * - the case transaction: PutItem of the case and its audit record (`CASE#`), the invoiceRef
 *   guard (`INVREF#`) and the case's `case.created` event (`EVENT#`), only as parts of a
 *   TransactWriteItems;
 * - the idempotency claim: PutItem of a claim-shaped item under `COMPANY#`, UpdateItem of the
 *   completion attributes only, DeleteItem (release) under `COMPANY#`;
 * - the reference counter: UpdateItem of its sequence, on its one partition.
 * - BatchGetItem of invoiceRef guards (the read-back of a case transaction whose answer was lost)
 *   and of upload records (which cited invoice files S3 reported), nothing else.
 * It is never granted UpdateItem or DeleteItem under `CASE#`, nor any write of an API key beyond
 * `lastUsedAt` (see tableGuardrailStatements). ConditionCheckItem is not granted: no transaction
 * uses one.
 */
export function caseWriteStatements(table: ITable): PolicyStatement[] {
  const resources = [table.tableArn];
  return [
    new PolicyStatement({
      sid: 'WriteCaseTransactions',
      actions: ['dynamodb:PutItem'],
      resources,
      conditions: { ...onPartitions(PARTITIONS.case, PARTITIONS.invoiceRefGuard, PARTITIONS.event), StringEquals: TRANSACTION },
    }),
    new PolicyStatement({
      sid: 'BatchReadGuardsAndUploadRecords',
      actions: ['dynamodb:BatchGetItem'],
      resources,
      conditions: onPartitions(PARTITIONS.invoiceRefGuard, PARTITIONS.upload),
    }),
    new PolicyStatement({
      sid: 'ClaimIdempotencyKeys',
      actions: ['dynamodb:PutItem'],
      resources,
      conditions: { ...onPartitions(PARTITIONS.idempotencyClaim), ...writingOnly(WRITABLE_ATTRIBUTES.idempotencyClaim) },
    }),
    new PolicyStatement({
      sid: 'CompleteIdempotencyClaims',
      actions: ['dynamodb:UpdateItem'],
      resources,
      conditions: { ...onPartitions(PARTITIONS.idempotencyClaim), ...writingOnly(WRITABLE_ATTRIBUTES.idempotencyCompletion) },
    }),
    new PolicyStatement({
      sid: 'ReleaseIdempotencyClaims',
      actions: ['dynamodb:DeleteItem'],
      resources,
      conditions: onPartitions(PARTITIONS.idempotencyClaim),
    }),
    new PolicyStatement({
      sid: 'ReserveCaseReferences',
      actions: ['dynamodb:UpdateItem'],
      resources,
      conditions: {
        'ForAllValues:StringEquals': {
          'dynamodb:LeadingKeys': [PARTITIONS.referenceCounter],
          'dynamodb:Attributes': [...WRITABLE_ATTRIBUTES.referenceCounter],
        },
      },
    }),
  ];
}

/**
 * What every case change writes (lib/adapters/dynamodb/case-change-store.ts), each only as a part of
 * its TransactWriteItems: the case's lifecycle fields (`CASE#`; tableGuardrailStatements refuses
 * every other attribute and any update outside a transaction) and its `case.updated` event
 * (`EVENT#`, the event item's attributes only). Withdraw and confirm add their own parts.
 */
function caseChangeStatements(table: ITable, partitions: CasePartitions = PARTITIONS): PolicyStatement[] {
  const resources = [table.tableArn];
  return [
    new PolicyStatement({
      sid: 'ChangeCaseLifecycle',
      actions: ['dynamodb:UpdateItem'],
      resources,
      conditions: { ...onPartitions(partitions.case), ...writingOnly(WRITABLE_ATTRIBUTES.caseLifecycle), StringEquals: TRANSACTION },
    }),
    new PolicyStatement({
      sid: 'WriteCaseEvents',
      actions: ['dynamodb:PutItem'],
      resources,
      conditions: { ...onPartitions(partitions.event), ...writingOnly(WRITABLE_ATTRIBUTES.event), StringEquals: TRANSACTION },
    }),
  ];
}

/**
 * Withdrawing a case (withdraw-case only): the parts of the one TransactWriteItems of
 * lib/adapters/dynamodb/case-change-store.ts, each only as a part of such a transaction:
 * - UpdateItem of a case's lifecycle fields (`CASE#`; tableGuardrailStatements refuses every other
 *   attribute and any update outside a transaction);
 * - PutItem of an event item (`EVENT#`), of the event's attributes only;
 * - DeleteItem under `INVREF#`: the invoiceRef guard, given up (the service's condition: only while
 *   it names this case);
 * - PutItem under `INVREF#` of the withdrawn case's item only: it must carry `withdrawnAt` and
 *   nothing beyond that item's attributes, so no guard can be written through this grant.
 * IAM never sees the sort key: a case's attestation audit record shares its partition, and a
 * guard's partition also holds its `WITHDRAWN#` items, so those are told apart by the service's
 * keys and conditions, not by IAM. Nothing here is granted to any other partner function.
 */
export function caseWithdrawStatements(table: ITable): PolicyStatement[] {
  const resources = [table.tableArn];
  return [
    ...caseChangeStatements(table),
    new PolicyStatement({
      sid: 'ReleaseInvoiceRefGuards',
      actions: ['dynamodb:DeleteItem'],
      resources,
      conditions: { ...onPartitions(PARTITIONS.invoiceRefGuard), StringEquals: TRANSACTION },
    }),
    new PolicyStatement({
      sid: 'KeepWithdrawnInvoiceRefs',
      actions: ['dynamodb:PutItem'],
      resources,
      conditions: {
        ...onPartitions(PARTITIONS.invoiceRefGuard),
        ...writingOnly(WRITABLE_ATTRIBUTES.withdrawnInvoiceRef),
        'ForAnyValue:StringEquals': { 'dynamodb:Attributes': ['withdrawnAt'] },
        StringEquals: TRANSACTION,
      },
    }),
  ];
}

/**
 * Reading what a function needs by GetItem (ITEM_READS) without an API key: the internal routes,
 * whose callers API Gateway authorises with IAM.
 */
export function itemReadStatements(table: ITable, reads: keyof typeof ITEM_READS): PolicyStatement[] {
  return [
    new PolicyStatement({
      sid: 'ReadTableItems',
      actions: ['dynamodb:GetItem'],
      resources: [table.tableArn],
      conditions: onPartitions(...ITEM_READS[reads]),
    }),
  ];
}

/**
 * Confirming a case (confirm-cases, test-confirm-case), one TransactWriteItems per case
 * (lib/adapters/dynamodb/case-change-store.ts), each part only inside such a transaction:
 * - UpdateItem of the case's lifecycle fields (`CASE#`; tableGuardrailStatements refuses any other);
 * - PutItem of the confirmation record (`CASE#`, its own attributes only: a case or an audit
 *   record has others, so neither can be created here);
 * - PutItem of the `case.updated` event (`EVENT#`, the event item's attributes only).
 * No DeleteItem: withdrawal's guard release is not needed to confirm. The test helper
 * (`test-only`), which every prod deploy carries, gets each of these on test partitions only
 * (TEST_PARTITIONS): its handler confirms test cases only, and IAM holds it to that too.
 */
export function caseConfirmStatements(table: ITable, cases: 'any' | 'test-only' = 'any'): PolicyStatement[] {
  const resources = [table.tableArn];
  const partitions = cases === 'test-only' ? TEST_PARTITIONS : PARTITIONS;
  return [
    ...caseChangeStatements(table, partitions),
    new PolicyStatement({
      sid: 'WriteConfirmationRecords',
      actions: ['dynamodb:PutItem'],
      resources,
      conditions: { ...onPartitions(partitions.case), ...writingOnly(WRITABLE_ATTRIBUTES.confirmation), StringEquals: TRANSACTION },
    }),
  ];
}

/**
 * The record-upload function (invoked by the invoice bucket's events): PutItem of upload records
 * only, of their own attributes only (a present record, or a tombstone with its TTL; each put is
 * conditional on the event being newer). It deletes nothing, reads nothing and is granted nothing else.
 */
export function uploadRecordStatements(table: ITable): PolicyStatement[] {
  return [
    new PolicyStatement({
      sid: 'RecordUploads',
      actions: ['dynamodb:PutItem'],
      resources: [table.tableArn],
      conditions: { ...onPartitions(PARTITIONS.upload), ...writingOnly(WRITABLE_ATTRIBUTES.upload) },
    }),
  ];
}

/**
 * The objects the functions may touch: every fileKey the service issues lies under `invoices/`
 * (live) or `test-invoices/` (test mode; lib/uploads/file-key.ts); the per-company and per-mode
 * part of the key is enforced by the handlers.
 */
export function invoiceObjectsArns(bucket: IBucket): string[] {
  return MODES.map((mode) => bucket.arnForObjects(`${FILE_KEY_PREFIXES[mode]}*`));
}

/** Presigning an invoice PUT: the URL carries the signer's authority, so it needs PutObject. */
export function invoiceUploadStatements(bucket: IBucket): PolicyStatement[] {
  return [
    new PolicyStatement({
      sid: 'PresignInvoiceUploads',
      actions: ['s3:PutObject'],
      resources: invoiceObjectsArns(bucket),
    }),
  ];
}

/**
 * Checking that an invoice was uploaded: HeadObject is authorised by s3:GetObject on the invoice
 * objects. s3:ListBucket on the bucket makes S3 answer a HEAD of a missing key with 404 rather than
 * 403 (S3's HeadObject documentation), so the handler reads only a 404 as "not uploaded" and a 403
 * as the storage failure it is (lib/adapters/s3/invoice-file-store.ts). The grant is on the bucket
 * without an `s3:prefix` condition: a HEAD request carries no prefix, and whether S3 evaluates that
 * key for the 404-or-403 decision is not documented; a condition it cannot satisfy would quietly
 * bring the 403 back. The function's code never lists, and the bucket holds invoices only.
 */
export function invoiceCheckStatements(bucket: IBucket): PolicyStatement[] {
  return [
    new PolicyStatement({
      sid: 'CheckInvoiceUploads',
      actions: ['s3:GetObject'],
      resources: invoiceObjectsArns(bucket),
    }),
    new PolicyStatement({
      sid: 'TellMissingInvoicesApart',
      actions: ['s3:ListBucket'],
      resources: [bucket.bucketArn],
    }),
  ];
}

export type WebhookEndpointAccess =
  | 'webhook-endpoints-list'
  | 'webhook-endpoints-create'
  | 'webhook-endpoints-read'
  | 'webhook-endpoints-change'
  | 'webhook-endpoints-delete'
  | 'webhook-endpoints-ping'
  | 'webhook-deliveries-list'
  | 'webhook-deliveries-redeliver';

/**
 * Webhook endpoint management (lib/adapters/dynamodb/webhook-endpoint-store.ts), each function only
 * what its route does, all on `WHEP#` partitions only:
 * - list: Query of the table (no index);
 * - create: PutItem of the endpoint and UpdateItem of the counter, only inside a transaction;
 * - read (get): the GetItem of ITEM_READS only;
 * - change (update, rotate): UpdateItem of the endpoint's settings only (ENDPOINT_SETTINGS_ATTRIBUTES,
 *   conditional on its version): never a whole item, so never the delivery health read with it;
 * - delete: DeleteItem of the endpoint and UpdateItem of the counter, only inside a transaction.
 * IAM cannot tie the partition to the caller's company (the use cases key every call by it).
 */
export function webhookEndpointStatements(table: ITable, access: WebhookEndpointAccess): PolicyStatement[] {
  const resources = [table.tableArn];
  const on = onPartitions(PARTITIONS.webhookEndpoints);
  switch (access) {
    case 'webhook-endpoints-list':
      return [queryEndpointsWithoutSecrets(table, 'QueryWebhookEndpoints')];
    // Ping: the GetItem of ITEM_READS (the endpoint with its sealed secrets) and the key (bindWebhookSecretKey), nothing else.
    case 'webhook-endpoints-ping':
      return [];
    case 'webhook-deliveries-list':
      return [
        new PolicyStatement({
          sid: 'QueryWebhookDeliveries',
          actions: ['dynamodb:Query'],
          resources,
          conditions: onPartitions(PARTITIONS.webhookDeliveries),
        }),
      ];
    case 'webhook-deliveries-redeliver':
      return [
        new PolicyStatement({
          sid: 'StartWebhookRedeliveries',
          actions: ['dynamodb:PutItem'],
          resources,
          conditions: { ...onPartitions(PARTITIONS.webhookDeliveries), ...writingOnly(WEBHOOK_DELIVERY_ATTRIBUTES) },
        }),
      ];
    case 'webhook-endpoints-create':
      return [
        new PolicyStatement({
          sid: 'CreateWebhookEndpoints',
          actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem'],
          resources,
          conditions: { ...on, StringEquals: TRANSACTION },
        }),
      ];
    case 'webhook-endpoints-read':
      return [];
    case 'webhook-endpoints-change':
      return [
        new PolicyStatement({
          sid: 'ChangeWebhookEndpoints',
          actions: ['dynamodb:UpdateItem'],
          resources,
          conditions: { ...on, ...writingOnly(ENDPOINT_SETTINGS_ATTRIBUTES) },
        }),
      ];
    case 'webhook-endpoints-delete':
      return [
        new PolicyStatement({
          sid: 'DeleteWebhookEndpoints',
          actions: ['dynamodb:DeleteItem', 'dynamodb:UpdateItem'],
          resources,
          conditions: { ...on, StringEquals: TRANSACTION },
        }),
      ];
  }
}

/**
 * The attributes of a delivery record (lib/adapters/dynamodb/webhook-delivery-store.ts): what its
 * PutItem writes (the record with its test-data listing and TTL) and what recording an attempt sets
 * or reads in its condition. A write naming anything else is refused.
 */
export const WEBHOOK_DELIVERY_ATTRIBUTES = [
  PK,
  SK,
  ...GSI1_ATTRIBUTES,
  'type',
  'kind',
  'deliveryId',
  'endpointId',
  'companyId',
  'eventId',
  'eventType',
  'mode',
  'createdAt',
  'status',
  'attempts',
  'nextAttemptAt',
  'updatedAt',
  TTL_ATTRIBUTE,
] as const;

/**
 * What recording a delivery's effect on its endpoint may change (WebhookEndpointStore.recordHealth):
 * the health fields, and `pk`/`status` its condition reads. Never the URL, the events or the sealed
 * secrets: the delivery function cannot redirect an endpoint or replace its secrets.
 */
export const WEBHOOK_ENDPOINT_HEALTH_ATTRIBUTES = [
  PK,
  SK,
  'failingSince',
  'lastFailureAt',
  'status',
  'disabledReason',
  'updatedAt',
  'version',
] as const;

/**
 * A Query of endpoint partitions that can return every endpoint attribute except the sealed
 * secrets: the request must send `Select` SPECIFIC_ATTRIBUTES and name only
 * ENDPOINT_VIEW_ATTRIBUTES, the store's projection. A Query without a projection asks for
 * ALL_ATTRIBUTES and is refused; one projecting `sealedSecrets` names an attribute outside the
 * list and is refused. AWS's documented pattern for attribute-level read access (IAM user guide,
 * "Amazon DynamoDB: Allows access to specific attributes") tests Select with
 * `StringEqualsIfExists`, and AWS does not document what the key holds for a request that sends no
 * Select: with IfExists, a request whose context lacked it would pass with no Attributes either, and
 * read the secrets. So Select is required with StringEquals, and the store sends it explicitly;
 * test/unit/infra/iam.test.ts evaluates the store's real Query against it.
 */
function queryEndpointsWithoutSecrets(table: ITable, sid: string): PolicyStatement {
  return new PolicyStatement({
    sid,
    actions: ['dynamodb:Query'],
    resources: [table.tableArn],
    conditions: {
      ...onPartitions(PARTITIONS.webhookEndpoints),
      'ForAllValues:StringEquals': { 'dynamodb:Attributes': [...ENDPOINT_VIEW_ATTRIBUTES] },
      StringEquals: { 'dynamodb:Select': 'SPECIFIC_ATTRIBUTES' },
    },
  });
}

/**
 * The fan-out (functions/fan-out-webhook-events.ts, on the table's stream): it reads the event from
 * the stream record itself; its table rights are the Query of a company's endpoints of one mode,
 * without their secrets (queryEndpointsWithoutSecrets), and the start of each delivery record
 * (`WHD#`: a conditional PutItem of the record's attributes only, and the GetItem that reads back a
 * record a replayed stream record finds started). It sends to the delivery lanes (webhook-delivery.ts
 * grants those on the queues).
 */
export function webhookFanOutStatements(table: ITable): PolicyStatement[] {
  const resources = [table.tableArn];
  return [
    queryEndpointsWithoutSecrets(table, 'QueryWebhookEndpointsWithoutSecrets'),
    new PolicyStatement({
      sid: 'StartWebhookDeliveries',
      actions: ['dynamodb:PutItem'],
      resources,
      conditions: { ...onPartitions(PARTITIONS.webhookDeliveries), ...writingOnly(WEBHOOK_DELIVERY_ATTRIBUTES) },
    }),
    new PolicyStatement({
      sid: 'ReadStartedWebhookDeliveries',
      actions: ['dynamodb:GetItem'],
      resources,
      conditions: onPartitions(PARTITIONS.webhookDeliveries),
    }),
    webhookSlotStatement(table),
  ];
}

/**
 * The endpoints' slots and waiting lists (lib/adapters/dynamodb/webhook-delivery-slots.ts), for the
 * fan-out, the delivery function and the sweeper: read the partition (Query, GetItem), put and
 * delete waiting deliveries (PutItem, DeleteItem), claim, promote and release (UpdateItem, inside a
 * transaction or alone). Nothing outside `WHW#` partitions.
 */
function webhookSlotStatement(table: ITable): PolicyStatement {
  return new PolicyStatement({
    sid: 'UseWebhookDeliverySlots',
    actions: ['dynamodb:Query', 'dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem', 'dynamodb:DeleteItem'],
    resources: [table.tableArn],
    conditions: onPartitions(PARTITIONS.webhookDeliverySlots),
  });
}

/**
 * The delivery sweeper (functions/sweep-webhook-deliveries.ts): the companies (Query of `gsi1`'s
 * COMPANIES partition, the one index partition it may read), their endpoints without secrets, the
 * delivery records of slot holders (GetItem of `WHD#`), and the slots and waiting lists.
 */
export function webhookSweepStatements(table: ITable): PolicyStatement[] {
  return [
    new PolicyStatement({
      sid: 'ListCompanies',
      actions: ['dynamodb:Query'],
      resources: [`${table.tableArn}/index/${TABLE_DEFINITION.gsi1.name}`],
      conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [keys.companiesIndexPk()] } },
    }),
    queryEndpointsWithoutSecrets(table, 'QueryWebhookEndpointsWithoutSecrets'),
    new PolicyStatement({
      sid: 'ReadWebhookDeliveries',
      actions: ['dynamodb:GetItem'],
      resources: [table.tableArn],
      conditions: onPartitions(PARTITIONS.webhookDeliveries),
    }),
    webhookSlotStatement(table),
  ];
}

/**
 * The delivery function (functions/deliver-webhooks.ts, on every delivery lane), each right on its
 * own partitions:
 * - GetItem of the event (`EVENT#`: the stored bytes it sends) and of the endpoint (`WHEP#`, with
 *   its sealed secrets; the key to open them is bindWebhookSecretKey's);
 * - UpdateItem of the endpoint's health attributes only (WEBHOOK_ENDPOINT_HEALTH_ATTRIBUTES);
 * - GetItem, PutItem and UpdateItem of delivery records (`WHD#`), of their attributes only;
 * - the endpoints' slots and waiting lists (`WHW#`: webhookSlotStatement).
 * No Query or DeleteItem outside `WHW#`, no PutItem of an endpoint, nothing of cases, keys or claims.
 */
export function webhookDeliveryStatements(table: ITable): PolicyStatement[] {
  const resources = [table.tableArn];
  return [
    new PolicyStatement({
      sid: 'ReadEventsAndEndpoints',
      actions: ['dynamodb:GetItem'],
      resources,
      conditions: onPartitions(PARTITIONS.event, PARTITIONS.webhookEndpoints),
    }),
    new PolicyStatement({
      sid: 'RecordEndpointHealth',
      actions: ['dynamodb:UpdateItem'],
      resources,
      conditions: { ...onPartitions(PARTITIONS.webhookEndpoints), ...writingOnly(WEBHOOK_ENDPOINT_HEALTH_ATTRIBUTES) },
    }),
    new PolicyStatement({
      sid: 'ReadWebhookDeliveries',
      actions: ['dynamodb:GetItem'],
      resources,
      conditions: onPartitions(PARTITIONS.webhookDeliveries),
    }),
    new PolicyStatement({
      sid: 'WriteWebhookDeliveries',
      actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem'],
      resources,
      conditions: { ...onPartitions(PARTITIONS.webhookDeliveries), ...writingOnly(WEBHOOK_DELIVERY_ATTRIBUTES) },
    }),
    webhookSlotStatement(table),
  ];
}
