import { Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { InvoiceBucketAccess, TableAccess } from '../contract/routes/index.js';
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
 * The IAM statements every function may hold, as data: `GRANTS` says, for each kind of access a
 * function is given (the route manifest's `grants`, infra/contract/routes/; the workers' constructs),
 * which statements it holds, and `grantStatements` turns them into IAM. Every statement names the
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
  apiKey: `${PARTITION_PREFIXES.apiKey}*`,
  // Cases and their attestation audit records.
  case: `${PARTITION_PREFIXES.case}*`,
  company: `${PARTITION_PREFIXES.company}*`,
  // invoiceRef guards and Idempotency-Key claims: each in a partition of its own.
  invoiceRefGuard: `${PARTITION_PREFIXES.invoiceRefGuard}*`,
  idempotencyClaim: `${PARTITION_PREFIXES.idempotencyClaim}*`,
  // The case-reference counter: one exact partition.
  referenceCounter: keys.caseReferenceCounter().pk,
  // One partition per invoice file; per event (the outbox, both modes); per company and mode (its webhook
  // endpoints and their counter); per endpoint and mode (its delivery log; its lane slots and waiting deliveries).
  upload: `${PARTITION_PREFIXES.upload}*`,
  event: `${PARTITION_PREFIXES.event}*`,
  webhookEndpoints: `${PARTITION_PREFIXES.webhookEndpoints}*`,
  webhookDeliveries: `${PARTITION_PREFIXES.webhookDeliveries}*`,
  webhookDeliverySlots: `${PARTITION_PREFIXES.webhookDeliverySlots}*`,
  // One partition per applied back-office update (company, mode and updateId).
  recoveryUpdate: `${PARTITION_PREFIXES.recoveryUpdate}*`,
} as const;

/** gsi2 partition patterns for `dynamodb:LeadingKeys` on index queries: the case list's and the event list's shards, both modes. */
export const INDEX_PARTITIONS = {
  caseList: `${INDEX_PARTITION_PREFIXES.caseList}*`,
  eventList: `${INDEX_PARTITION_PREFIXES.eventList}*`,
} as const;

/** The test-mode partitions the test-confirm helper writes (`CASE#TEST#…`, `EVENT#TEST#…`): deployed in prod, it can never change a live case. */
export const TEST_PARTITIONS = {
  case: `${keys.case('test', '').pk}*`,
  event: `${keys.event('test', '').pk}*`,
  // `INVREF#TEST#*`: the guard key of an empty company and ref ends in its separator, dropped here.
  invoiceRefGuard: `${keys.invoiceRefGuard('test', '', '').pk.slice(0, -1)}*`,
} as const;

type CasePartitions = { case: string; event: string };
type RecoveryPartitions = CasePartitions & { invoiceRefGuard: string };

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
    ...words('type companyId idempotencyKey state requestId claimedAt claimedAtEpoch requestHash'),
    TTL_ATTRIBUTE,
    ...GSI1_ATTRIBUTES,
  ],
  idempotencyCompletion: [PK, SK, 'state', 'response', 'responseGz', 'completedAt', 'requestId'],
  referenceCounter: [PK, SK, 'sequence', 'type'],
  // A present record or a tombstone (lib/adapters/dynamodb/upload-records.ts), with its TTL.
  upload: [PK, SK, 'type', 'fileKey', 'companyId', 'size', 'uploadedAt', 'removedAt', 'sequencer', 'state', TTL_ATTRIBUTE],
  // A case change (lib/adapters/dynamodb/case-change-store.ts): the lifecycle fields it sets and
  // the ones its condition reads (`pk`, `status`, `recoveryGate`, `debtorVerification`, `revision`).
  caseLifecycle: [PK, SK, 'status', 'recoveryGate', 'debtorVerification', 'statusHistory', 'updatedAt', 'revision'],
  // The confirmation record put beside it (a test one carries its test-data listing, gsi1).
  confirmation: [
    PK,
    SK,
    ...words('type caseId companyId mode confirmedBy confirmedAt requestId source principal eventId'),
    ...GSI1_ATTRIBUTES,
  ],
  // The one event item shape (lib/adapters/dynamodb/event-items.ts): fields, its listing (gsi2), a test item's gsi1, its TTL.
  event: [
    ...[PK, SK, ...words('type eventId eventType companyId caseId mode createdAt payload'), TTL_ATTRIBUTE],
    ...[TABLE_DEFINITION.gsi2.partitionKey, TABLE_DEFINITION.gsi2.sortKey, ...GSI1_ATTRIBUTES],
  ],
  // A recovery change (lib/adapters/dynamodb/recovery-store.ts RECOVERY_CASE_ATTRIBUTES): what it sets
  // on the case and what its condition reads (`pk`, `status`, `revision`). Never the principal or the debtor.
  caseRecovery: [PK, SK, 'status', 'statusHistory', 'updatedAt', 'revision', 'paymentFacts', 'closure'],
  // A payment's immutable item in its case's partition (a test one carries its test-data listing, gsi1).
  payment: [
    PK,
    SK,
    ...words('type paymentId caseId companyId mode sequence source amountPence paidAt reference recordedAt requestId'),
    ...GSI1_ATTRIBUTES,
  ],
  // The record of an applied back-office update, in a partition of its own.
  recoveryUpdate: [
    PK,
    SK,
    ...words('type updateId companyId mode caseId update by appliedAt requestId source eventId'),
    ...GSI1_ATTRIBUTES,
  ],
  // The withdrawn case left in its invoiceRef's partition (`WITHDRAWN#...`) when its guard is given up.
  withdrawnInvoiceRef: [PK, SK, 'type', 'caseId', 'companyId', 'reference', 'createdAt', 'withdrawnAt', 'mode', ...GSI1_ATTRIBUTES],
};

/**
 * The attributes of a delivery record (lib/adapters/dynamodb/webhook-delivery-store.ts): what its
 * PutItem writes (the record with its test-data listing and TTL) and what recording an attempt sets
 * or reads in its condition. A write naming anything else is refused.
 */
export const WEBHOOK_DELIVERY_ATTRIBUTES = [
  ...[PK, SK, ...GSI1_ATTRIBUTES, ...words('type kind deliveryId endpointId companyId eventId eventType mode createdAt status')],
  ...words('attempts nextAttemptAt updatedAt'),
  TTL_ATTRIBUTE,
];

/**
 * What recording a delivery's effect on its endpoint may change (WebhookEndpointStore.recordHealth):
 * the health fields, and `pk`/`status` its condition reads. Never the URL, the events or the sealed
 * secrets: the delivery function cannot redirect an endpoint or replace its secrets.
 */
export const WEBHOOK_ENDPOINT_HEALTH_ATTRIBUTES = [PK, SK, ...words('failingSince lastFailureAt status disabledReason updatedAt version')];

/** The registry's shared cache and rate-limiter items (docs/lifecycle-design.md step 5): the debtor verifier's only. */
const REGISTRY_PARTITIONS = 'REGISTRY#*';

/**
 * One statement, as data; its conditions (grantStatements spells them): `partitions` and
 * `exactPartitions` (LeadingKeys, all like / equal to these), `touching` (a deny's: any like these),
 * `writes` (every attribute named is one of these), `beyond` (a deny's: some is not), `including`
 * (some is), `transaction` (`only`: a part of a TransactWriteItems; `outside`: not one) and `select`.
 */
export type Rule = Conditions & { sid: string; effect: 'Allow' | 'Deny'; actions: readonly string[]; on: Target };
type Target = 'table' | 'gsi1' | 'gsi2' | 'invoice-objects' | 'invoice-bucket';
interface Conditions {
  partitions?: readonly string[];
  exactPartitions?: readonly string[];
  touching?: readonly string[];
  writes?: readonly string[];
  beyond?: readonly string[];
  including?: readonly string[];
  transaction?: 'only' | 'outside';
  select?: 'SPECIFIC_ATTRIBUTES';
}
type More = Conditions & { on?: Target };

function words(list: string): string[] {
  return list.split(' ');
}
const rule = (effect: Rule['effect'], sid: string, actions: string, more: More): Rule => ({
  ...{ sid, effect, actions: words(actions).map((a) => (a.includes(':') ? a : `dynamodb:${a}`)), on: 'table' },
  ...more,
});
/** An Allow of the actions (space-separated) on the table's partitions, with further conditions. */
const allow = (sid: string, actions: string, partitions: readonly string[], more: More = {}) =>
  rule('Allow', sid, actions, { ...(partitions.length ? { partitions } : {}), ...more });
const deny = (sid: string, actions: string, touching: readonly string[], more: More = {}) =>
  rule('Deny', sid, actions, { touching, ...more });
const [inTransaction, P, W] = [{ transaction: 'only' } as const, PARTITIONS, WRITABLE_ATTRIBUTES];

/**
 * What every function but the debtor verifier is refused whatever else it is granted, so a broader
 * grant added later cannot quietly undo it: API keys are written only by the operator's admin CLI (a
 * function may only set `lastUsedAt`); cases and attestation audit records are never deleted, created
 * only inside the all-or-nothing case transaction, and updated only inside a case change's transaction
 * and only in their lifecycle and recovery fields (WRITABLE_ATTRIBUTES.caseLifecycle and caseRecovery:
 * never the amount, the debtor or the attestation). Only the functions granted a case change may do even that.
 * A BatchWriteItem (puts and deletes, never in a transaction) naming a key or a case is refused as they are.
 */
const GUARDRAILS: readonly Rule[] = [
  deny('NeverCreateOrDeleteApiKeys', 'PutItem DeleteItem BatchWriteItem', [P.apiKey]),
  deny('NeverChangeApiKeysBeyondLastUse', 'UpdateItem', [P.apiKey], { beyond: W.apiKeyUse }),
  deny('NeverDeleteCasesOrAuditRecords', 'DeleteItem BatchWriteItem', [P.case]),
  deny('CasesChangeOnlyInTheirChangeTransaction', 'UpdateItem', [P.case], { transaction: 'outside' }),
  deny('CasesChangeOnlyTheirLifecycle', 'UpdateItem', [P.case], { beyond: [...new Set([...W.caseLifecycle, ...W.caseRecovery])] }),
  deny('CasesAndAuditRecordsOnlyInTheCaseTransaction', 'PutItem BatchWriteItem', [P.case], { transaction: 'outside' }),
];

/**
 * What a function may read with GetItem, by partition: only the kinds of item its code reads
 * (test/integration/function-item-reads.test.ts records every request the real handlers send and
 * evaluates this policy against them; test/unit/infra/iam.test.ts shows each can read nothing else).
 * No function may GetItem an idempotency claim (stored responses), an upload record, the reference
 * counter or, except create-cases, a company profile.
 */
const readItems = (...partitions: string[]) => allow('ReadTableItems', 'GetItem', partitions);

/** What each kind of access may GetItem (its ReadTableItems statement). */
export function itemReads(access: TableAccess): readonly string[] {
  return GRANTS[access].find((r) => r.sid === 'ReadTableItems')?.partitions ?? [];
}

/**
 * A partner route's function: authentication (GetItem of the API key and what else it reads; and
 * recording the key's last use: UpdateItem of `lastUsedAt` only, on `KEY#` items), the
 * guardrails, then what its route does.
 */
const partnerRoute = (reads: string[], ...rules: Rule[]): Rule[] => [
  readItems(P.apiKey, ...reads),
  allow('RecordApiKeyUse', 'UpdateItem', [P.apiKey], { writes: W.apiKeyUse }),
  ...GUARDRAILS,
  ...rules,
];

/**
 * What a case change writes (case-change-store.ts), each only as a part of its TransactWriteItems:
 * the case's lifecycle fields and its `case.updated` event; confirming adds the confirmation record
 * (its own attributes only, so neither a case nor an audit record can be created here).
 */
const caseChange = (on: CasePartitions): Rule[] => [
  allow('ChangeCaseLifecycle', 'UpdateItem', [on.case], { writes: W.caseLifecycle, ...inTransaction }),
  allow('WriteCaseEvents', 'PutItem', [on.event], { writes: W.event, ...inTransaction }),
];
const caseConfirm = (on: CasePartitions): Rule[] => [
  ...caseChange(on),
  allow('WriteConfirmationRecords', 'PutItem', [on.case], { writes: W.confirmation, ...inTransaction }),
];

/**
 * What a recovery change writes (recovery-store.ts), each only as a part of its TransactWriteItems:
 * the case's recovery fields, its `case.updated` event, the payment's item (its own attributes only,
 * so no case or audit record can be created through it), and, when the change closes the case, the
 * invoiceRef given up as a withdrawal gives it up.
 */
const recoveryChange = (on: RecoveryPartitions): Rule[] => [
  allow('ChangeCaseRecovery', 'UpdateItem', [on.case], { writes: W.caseRecovery, ...inTransaction }),
  allow('WriteCaseEvents', 'PutItem', [on.event], { writes: W.event, ...inTransaction }),
  allow('WritePayments', 'PutItem', [on.case], { writes: W.payment, including: ['paymentId'], ...inTransaction }),
  allow('ReleaseInvoiceRefGuards', 'DeleteItem', [on.invoiceRefGuard], inTransaction),
  allow('KeepWithdrawnInvoiceRefs', 'PutItem', [on.invoiceRefGuard], {
    writes: W.withdrawnInvoiceRef,
    including: ['withdrawnAt'],
    ...inTransaction,
  }),
];

/**
 * A Query of endpoints that returns every attribute but the sealed secrets: it must send `Select`
 * SPECIFIC_ATTRIBUTES and name only ENDPOINT_VIEW_ATTRIBUTES (the store's projection); without a
 * projection (ALL_ATTRIBUTES) or projecting `sealedSecrets` it is refused. AWS's documented pattern
 * tests Select with `StringEqualsIfExists`, but a request whose context lacked Select would then pass
 * with no Attributes either; so StringEquals, and the store sends Select (iam.test.ts checks its Query).
 */
const queryEndpointsWithoutSecrets = (sid: string) =>
  allow(sid, 'Query', [P.webhookEndpoints], { writes: ENDPOINT_VIEW_ATTRIBUTES, select: 'SPECIFIC_ATTRIBUTES' });
/** The endpoints' slots and waiting lists (webhook-delivery-slots.ts): fan-out, delivery, sweeper and redeliver; nothing outside `WHW#` (a BatchWriteItem of waiting entries: every key `WHW#`). */
const DELIVERY_SLOTS = allow('UseWebhookDeliverySlots', 'Query GetItem UpdateItem PutItem DeleteItem BatchWriteItem', [
  P.webhookDeliverySlots,
]);
const readDeliveries = (sid: string) => allow(sid, 'GetItem', [P.webhookDeliveries]);
const writeDeliveries = (sid: string, actions = 'PutItem') =>
  allow(sid, actions, [P.webhookDeliveries], { writes: WEBHOOK_DELIVERY_ATTRIBUTES });

/**
 * Every kind of access a function is given, and the statements it holds, in the order its role's
 * policy lists them. IAM cannot tie a partition to the caller's company (one role serves every
 * company): the use cases key every call by it.
 */
export const GRANTS: Readonly<Record<TableAccess | InvoiceBucketAccess, readonly Rule[]>> = {
  // create-upload: nothing beyond authentication (the bucket grant presigns).
  authenticate: partnerRoute([]),
  // get-case: the case (`CASE#`, which also holds its audit record: IAM cannot see the sort key).
  read: partnerRoute([P.case]),
  // The case list: Query on gsi2's case-list partitions only (`CASES#`: the event list's share the index
  // but are not granted); the look-up by invoiceRef: Query of `INVREF#` partitions of the table (a guard
  // and its `WITHDRAWN#` items) and BatchGetItem of the `CASE#` items they name.
  'list-cases': partnerRoute(
    [],
    allow('ListCasesByCompany', 'Query', [INDEX_PARTITIONS.caseList], { on: 'gsi2' }),
    allow('FindCasesByInvoiceRef', 'Query', [P.invoiceRefGuard]),
    allow('ReadCasesFoundByInvoiceRef', 'BatchGetItem', [P.case]),
  ),
  // Case creation: the case transaction (case, audit record, invoiceRef guard, `case.created` event); the
  // read-back of guards and of upload records; the idempotency claim (put, complete, release); the
  // reference counter's sequence. ConditionCheckItem is not granted: no transaction uses one.
  'write-cases': partnerRoute(
    // The company profile (auto-attestation); the use case reads the caller's own only.
    [P.company],
    allow('WriteCaseTransactions', 'PutItem', [P.case, P.invoiceRefGuard, P.event], inTransaction),
    allow('BatchReadGuardsAndUploadRecords', 'BatchGetItem', [P.invoiceRefGuard, P.upload]),
    allow('ClaimIdempotencyKeys', 'PutItem', [P.idempotencyClaim], { writes: W.idempotencyClaim }),
    allow('CompleteIdempotencyClaims', 'UpdateItem', [P.idempotencyClaim], { writes: W.idempotencyCompletion }),
    allow('ReleaseIdempotencyClaims', 'DeleteItem', [P.idempotencyClaim]),
    allow('ReserveCaseReferences', 'UpdateItem', [], { exactPartitions: [P.referenceCounter], writes: W.referenceCounter }),
  ),
  // Withdrawal's one transaction: the case change; the invoiceRef guard given up (the service's condition:
  // only while it names this case); the withdrawn case's item kept in its partition, which must carry
  // `withdrawnAt` and nothing beyond that item's attributes, so no guard can be written through this grant.
  'withdraw-case': partnerRoute(
    [P.case],
    ...caseChange(P),
    allow('ReleaseInvoiceRefGuards', 'DeleteItem', [P.invoiceRefGuard], inTransaction),
    allow('KeepWithdrawnInvoiceRefs', 'PutItem', [P.invoiceRefGuard], {
      writes: W.withdrawnInvoiceRef,
      including: ['withdrawnAt'],
      ...inTransaction,
    }),
  ),
  'read-events': partnerRoute([P.event]),
  // Query on gsi2's event-list partitions only (`EVENTS#`). The only partition key value a query on the
  // index names is its key condition's gsi2pk, so that is what LeadingKeys can carry (AWS does not spell
  // out index queries); with ForAllValues a request whose context lacked the key would pass too, so the
  // condition can narrow the grant but never break the function's own queries.
  'list-events': partnerRoute([], allow('ListEventsByCompany', 'Query', [INDEX_PARTITIONS.eventList], { on: 'gsi2' })),
  // The internal route reads the case it changes (it has no API key to read); the test helper, test cases only.
  'confirm-cases': [readItems(P.case), ...GUARDRAILS, ...caseConfirm(P)],
  'confirm-test-cases': partnerRoute([TEST_PARTITIONS.case], ...caseConfirm(TEST_PARTITIONS)),
  // Webhook endpoint management (webhook-endpoint-store.ts), on `WHEP#` partitions only. Get, update, rotate
  // and ping read the endpoint (ping: with its sealed secrets; it signs); update and rotate change its settings
  // only (conditional on its version), never a whole item, so never the delivery health read with it. The
  // delivery log reads the endpoint (a foreign endpoint's log is not found); redeliver reads the endpoint,
  // the event, and its delivery record back when a retried Put finds it written (the first answer lost).
  'webhook-endpoints-list': partnerRoute([], queryEndpointsWithoutSecrets('QueryWebhookEndpoints')),
  'webhook-endpoints-create': partnerRoute([], allow('CreateWebhookEndpoints', 'PutItem UpdateItem', [P.webhookEndpoints], inTransaction)),
  'webhook-endpoints-read': partnerRoute([P.webhookEndpoints]),
  'webhook-endpoints-change': partnerRoute(
    [P.webhookEndpoints],
    allow('ChangeWebhookEndpoints', 'UpdateItem', [P.webhookEndpoints], { writes: ENDPOINT_SETTINGS_ATTRIBUTES }),
  ),
  'webhook-endpoints-delete': partnerRoute(
    [],
    allow('DeleteWebhookEndpoints', 'DeleteItem UpdateItem', [P.webhookEndpoints], inTransaction),
  ),
  'webhook-endpoints-ping': partnerRoute([P.webhookEndpoints]),
  'webhook-deliveries-list': partnerRoute([P.webhookEndpoints], allow('QueryWebhookDeliveries', 'Query', [P.webhookDeliveries])),
  // Redeliver also lists its job on the endpoint's waiting list and fills the endpoint's free slots (the fair share
  // scheduled deliveries take: delivery-slots.ts).
  'webhook-deliveries-redeliver': partnerRoute(
    [P.webhookEndpoints, P.event, P.webhookDeliveries],
    writeDeliveries('StartWebhookRedeliveries'),
    DELIVERY_SLOTS,
  ),
  // The record-upload function (the invoice bucket's events): conditional PutItem of upload records, of
  // their own attributes (a present record, or a tombstone with its TTL); it reads and deletes nothing.
  'record-uploads': [allow('RecordUploads', 'PutItem', [P.upload], { writes: W.upload }), ...GUARDRAILS],
  // The fan-out (on the table's stream, which carries the event): a company's endpoints of one mode
  // without their secrets, the start of each delivery record (and the GetItem that reads back one a
  // replayed stream record finds started), the slots. Its queues are granted in webhook-delivery.ts.
  'webhook-fan-out': [
    queryEndpointsWithoutSecrets('QueryWebhookEndpointsWithoutSecrets'),
    writeDeliveries('StartWebhookDeliveries'),
    readDeliveries('ReadStartedWebhookDeliveries'),
    DELIVERY_SLOTS,
    ...GUARDRAILS,
  ],
  // The delivery function: the event (the stored bytes it sends) and the endpoint with its sealed
  // secrets; the endpoint's health attributes only (never its URL, events or secrets); its delivery
  // records, of their attributes only; the slots. Its batch reads these three kinds together (BatchGetItem, each
  // key one of them). No Query or DeleteItem outside `WHW#`, nothing of
  // cases, keys or claims.
  'webhook-deliver': [
    allow('ReadEventsAndEndpoints', 'GetItem', [P.event, P.webhookEndpoints]),
    // A batch's endpoints, records and events in one request (webhook-delivery-reads.ts): every key it names
    // must be one of these kinds.
    allow('BatchReadDeliveryInputs', 'BatchGetItem', [P.event, P.webhookEndpoints, P.webhookDeliveries]),
    allow('RecordEndpointHealth', 'UpdateItem', [P.webhookEndpoints], { writes: WEBHOOK_ENDPOINT_HEALTH_ATTRIBUTES }),
    readDeliveries('ReadWebhookDeliveries'),
    writeDeliveries('WriteWebhookDeliveries', 'PutItem UpdateItem'),
    DELIVERY_SLOTS,
    ...GUARDRAILS,
  ],
  // The sweeper: the companies (gsi1's COMPANIES partition, the one index partition it may read), their
  // endpoints without secrets, the delivery records of slot holders, the slots.
  'webhook-sweep': [
    allow('ListCompanies', 'Query', [], { on: 'gsi1', exactPartitions: [keys.companiesIndexPk()] }),
    queryEndpointsWithoutSecrets('QueryWebhookEndpointsWithoutSecrets'),
    readDeliveries('ReadWebhookDeliveries'),
    DELIVERY_SLOTS,
    ...GUARDRAILS,
  ],
  // The debtor verifier (debtor-verifier.ts): reads cases and changes their lifecycle fields (outside a
  // transaction, so it holds its own denial instead of the guardrails), puts their events, and uses the
  // registry's cache and rate limiter. No other function holds any of these.
  'verify-debtors': [
    allow('ReadCases', 'GetItem', [P.case]),
    allow('ChangeCaseVerification', 'UpdateItem', [P.case], { writes: W.caseLifecycle }),
    allow('PutCaseEvents', 'PutItem', [P.event], { writes: W.event }),
    allow('RegistryCacheAndRateLimiter', 'GetItem PutItem UpdateItem', [REGISTRY_PARTITIONS]),
    deny('NeverDeleteOrCreateCases', 'DeleteItem PutItem', [P.case]),
  ],
  // Recording a payment (record-payment.ts): the case read, then the recovery change's one transaction.
  // A payment's Idempotency-Key: claimed (and given back) as a batch's, and completed with its answer
  // inside the payment's own transaction (lib/adapters/dynamodb/recovery-store.ts), never on its own.
  'record-payments': partnerRoute(
    [P.case],
    ...recoveryChange(P),
    allow('ClaimIdempotencyKeys', 'PutItem', [P.idempotencyClaim], { writes: W.idempotencyClaim }),
    allow('CompleteIdempotencyClaims', 'UpdateItem', [P.idempotencyClaim], { writes: W.idempotencyCompletion, ...inTransaction }),
    allow('ReleaseIdempotencyClaims', 'DeleteItem', [P.idempotencyClaim]),
  ),
  // The payment list: the case read and one Query of its partition (IAM cannot see the sort key: the Query
  // is the store's, `begins_with(sk, PAYMENT#)`; the partition holds only the caller's own case's items).
  'read-payments': partnerRoute([P.case], allow('QueryCasePayments', 'Query', [P.case])),
  // The back office's internal route (and the operator's command): the case and the update records read,
  // the recovery change, and the update's record put in the same transaction (its own attributes only).
  'apply-recovery-updates': [
    readItems(P.case, P.recoveryUpdate),
    ...GUARDRAILS,
    ...recoveryChange(P),
    allow('WriteRecoveryUpdateRecords', 'PutItem', [P.recoveryUpdate], { writes: W.recoveryUpdate, ...inTransaction }),
  ],
  // The test-mode helper: the same change on test partitions only (`CASE#TEST#`, `EVENT#TEST#`, `INVREF#TEST#`),
  // with no update record (its updates carry no updateId): deployed in prod, it can never change a live case.
  'apply-test-recovery-updates': partnerRoute([TEST_PARTITIONS.case], ...recoveryChange(TEST_PARTITIONS)),
  // Presigning an invoice PUT: the URL carries the signer's authority, so it needs PutObject.
  'issue-uploads': [allow('PresignInvoiceUploads', 's3:PutObject', [], { on: 'invoice-objects' })],
  // Checking an upload: HeadObject needs s3:GetObject; s3:ListBucket makes S3 answer a missing key 404, not 403
  // (S3's HeadObject documentation), so the handler reads only a 404 as "not uploaded". No `s3:prefix`
  // condition: a HEAD carries none, and whether S3 evaluates it for the 404-or-403 decision is not documented.
  'check-uploads': [
    allow('CheckInvoiceUploads', 's3:GetObject', [], { on: 'invoice-objects' }),
    allow('TellMissingInvoicesApart', 's3:ListBucket', [], { on: 'invoice-bucket' }),
  ],
};

/** What a rule names; every fileKey the service issues lies under `invoices/` or `test-invoices/` (lib/uploads/file-key.ts). */
function resourcesOf(rule: Rule, table?: ITable, bucket?: IBucket): string[] {
  if (rule.on === 'invoice-objects' || rule.on === 'invoice-bucket') {
    if (!bucket) throw new Error(`${rule.sid} names the invoice bucket`);
    return rule.on === 'invoice-bucket' ? [bucket.bucketArn] : MODES.map((mode) => bucket.arnForObjects(`${FILE_KEY_PREFIXES[mode]}*`));
  }
  if (!table) throw new Error(`${rule.sid} names the table`);
  return [rule.on === 'table' ? table.tableArn : `${table.tableArn}/index/${TABLE_DEFINITION[rule.on].name}`];
}

/** The IAM statements of one kind of access (GRANTS), on the table or the invoice bucket it names. */
export function grantStatements(access: TableAccess | InvoiceBucketAccess, on: { table?: ITable; bucket?: IBucket }): PolicyStatement[] {
  return GRANTS[access].map((rule) => {
    const conditions: Record<string, Record<string, unknown>> = {};
    const add = (operator: string, key: string, value: unknown) => (conditions[operator] = { ...conditions[operator], [key]: value });
    const { partitions, exactPartitions, touching, writes, beyond, including, transaction, select } = rule;
    if (partitions) add('ForAllValues:StringLike', 'dynamodb:LeadingKeys', [...partitions]);
    if (exactPartitions) add('ForAllValues:StringEquals', 'dynamodb:LeadingKeys', [...exactPartitions]);
    if (touching) add('ForAnyValue:StringLike', 'dynamodb:LeadingKeys', [...touching]);
    if (writes) add('ForAllValues:StringEquals', 'dynamodb:Attributes', [...writes]);
    if (beyond) add('ForAnyValue:StringNotEquals', 'dynamodb:Attributes', [...beyond]);
    if (including) add('ForAnyValue:StringEquals', 'dynamodb:Attributes', [...including]);
    if (transaction) add(transaction === 'only' ? 'StringEquals' : 'StringNotEquals', 'dynamodb:EnclosingOperation', 'TransactWriteItems');
    if (select) add('StringEquals', 'dynamodb:Select', select);
    return new PolicyStatement({
      sid: rule.sid,
      effect: rule.effect === 'Deny' ? Effect.DENY : Effect.ALLOW,
      actions: [...rule.actions],
      resources: resourcesOf(rule, on.table, on.bucket),
      ...(Object.keys(conditions).length ? { conditions } : {}),
    });
  });
}
