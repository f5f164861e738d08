import { EVENT_RETENTION_MS } from '../../cases/event-retention.js';
import type { Mode } from '../../mode.js';

/**
 * The single owner of the DynamoDB key design. Every item lives in one table with a string
 * partition key `pk` and sort key `sk`. Two sparse global secondary indexes: `gsi1` serves the
 * operator's listings, `gsi2` a company's cases newest first. Nothing outside this module builds
 * a key string.
 *
 * | Item                 | pk                       | sk          | gsi1pk / gsi2pk                 | gsi1sk / gsi2sk      |
 * |----------------------|--------------------------|-------------|---------------------------------|----------------------|
 * | Company              | COMPANY#<companyId>      | PROFILE     | gsi1: COMPANIES                 | <createdAt>#<id>     |
 * | API key              | KEY#<keyId>              | KEY         | gsi1: COMPANY#<id>#KEYS         | <createdAt>#<kid>    |
 * | Case                 | CASE#<m><caseId>         | CASE        | gsi2: CASES#<m><companyId>#<s>  | <createdAt>#<caseId> |
 * |                      |                          |             | gsi1 (test): TESTDATA#<cid>     | <pk>#<sk>            |
 * | Attestation audit    | CASE#<m><caseId>         | ATTESTATION | gsi1 (test): TESTDATA#<cid>     | <pk>#<sk>            |
 * | invoiceRef guard     | INVREF#<m><cid>#<normRef>| GUARD       | gsi1 (test): TESTDATA#<cid>     | <pk>#<sk>            |
 * | Idempotency claim    | IDEMPOTENCY#<m><cid>#<k> | CLAIM       | gsi1 (test): TESTDATA#<cid>     | <pk>#<sk>            |
 * | Reference counter    | COUNTER#CASE_REFERENCE   | COUNTER     | -                               | -                    |
 * | Upload record        | UPLOAD#<fileKey>         | UPLOAD      | -                               | -                    |
 * | Case event (outbox)  | EVENT#<m><eventId>       | EVENT       | gsi2: EVENTS#<m><companyId>#<s> | <createdAt>#<evtId>  |
 * |                      |                          |             | gsi1 (test): TESTDATA#<cid>     | <pk>#<sk>            |
 * | Confirmation record  | CASE#<m><caseId>         | CONFIRMATION| gsi1 (test): TESTDATA#<cid>     | <pk>#<sk>            |
 * | Payment              | CASE#<m><caseId>         | PAYMENT#<nnn>| gsi1 (test): TESTDATA#<cid>    | <pk>#<sk>            |
 * | Recovery update record | RECOVERY#<m><cid>#<updateId> | UPDATE | gsi1 (test): TESTDATA#<cid>    | <pk>#<sk>            |
 * | Withdrawn case's ref | INVREF#<m><cid>#<normRef>| WITHDRAWN#<createdAt>#<caseId> | gsi1 (test): TESTDATA#<cid> | <pk>#<sk> |
 * | Registry answer      | REGISTRY#PROFILE#<number>| PROFILE     | -                               | -                    |
 * | Registry rate window | REGISTRY#RATE            | WINDOW#<name>| -                              | -                    |
 * | A company's share    | REGISTRY#RATE            | WINDOW#<name>#COMPANY#<cid> | -               | -                    |
 * | Webhook endpoint     | WHEP#<m><companyId>      | EP#<endpointId> | gsi1 (test): TESTDATA#<cid> | <pk>#<sk>            |
 * | Webhook endpoint count | WHEP#<m><companyId>    | COUNT       | gsi1 (test): TESTDATA#<cid>     | <pk>#<sk>            |
 * | Webhook delivery     | WHD#<m><endpointId>      | <createdAt>#<deliveryId> | gsi1 (test): TESTDATA#<cid> | <pk>#<sk> |
 * | Endpoint's slots     | WHW#<m><endpointId>      | SLOTS       | -                               | -                    |
 * | Waiting delivery     | WHW#<m><endpointId>      | W#<createdAt>#<deliveryId> | -                | -                    |
 *
 * `<s>` is the case's list shard, 0 to CASE_LIST_SHARDS - 1, a hash of the case id. An event is
 * listed in its case's shard, so the events of one case are in one index partition.
 *
 * Events (product rules "Events") are a transactional outbox: each is written in the same
 * TransactWriteItems as the change it announces, expires through `ttl` 30 days after `createdAt`,
 * and leaves the table by its DynamoDB stream. A withdrawn case gives its invoiceRef guard up in the
 * transaction that withdraws it and leaves a `WITHDRAWN#` item in the guard's partition, so one
 * consistent Query of that partition finds every case that ever held the invoiceRef.
 *
 * `<m>` is the mode segment (product rules "Test mode (sandbox)"): empty for live, `TEST#` for
 * test. Live keys keep the shape they had before test mode existed; every test key carries the
 * mode. Ids never contain `#` (case ids and company ids are base62 with a fixed prefix), so no
 * live key can equal a test key: a live caller reading a test case's id looks up `CASE#<id>`,
 * which does not exist, and gets the same 404 as for any missing case. The mode is in the key,
 * not a filter applied after reading. Test items also carry a `gsi1` listing under
 * `TESTDATA#<companyId>`, so `company clear-test-data` finds every test item of a company with
 * one query and never reads or deletes a live one (live items have no such listing). That listing
 * is one index partition per company (three items per test case, one per test claim): at an index
 * partition's 1,000 writes a second, one company's test traffic beyond about 300 cases a second
 * would be throttled there. Live traffic never touches it.
 *
 * Access patterns:
 * | Pattern                                   | Operation                                          |
 * |-------------------------------------------|----------------------------------------------------|
 * | Authenticate a request                    | GetItem KEY#<keyId> (key id parsed from the key)   |
 * | Record key use (<= once a minute)         | UpdateItem KEY#<keyId>, conditional on lastUsedAt   |
 * | Read a case                               | GetItem CASE#<caseId>; companyId compared after    |
 * | Company settings (auto-attestation)       | GetItem COMPANY#<id> / PROFILE                     |
 * | Duplicate guard                           | TransactWriteItems: Put guard (attribute_not_exists)|
 * |                                           | + Put case + Put audit record, all or nothing      |
 * |                                           | per case, up to 33 cases per transaction           |
 * | Read guards back after a lost answer      | BatchGetItem INVREF#... , ConsistentRead           |
 * | Record an upload / its removal (S3 event) | PutItem UPLOAD#<fileKey> if its sequencer is newer; |
 * |                                           | a removal is a tombstone expiring through `ttl`    |
 * | Which cited files S3 reported uploaded    | BatchGetItem UPLOAD#<fileKey>..., ConsistentRead;   |
 * |                                           | HEAD the files without a present record            |
 * | Claim / complete / release an idempotency | PutItem (attribute_not_exists) / UpdateItem /      |
 * |   key                                     | DeleteItem, expiring through the `ttl` attribute   |
 * | Reserve a block of case references        | UpdateItem ADD on the counter, once per 1,000       |
 * |                                           | references per process (lib/adapters/dynamodb/     |
 * |                                           | reference-allocator.ts), not once per batch        |
 * | List a company's cases, newest first      | Query gsi2 CASES#<id>#<s> for every shard s in     |
 * |   (date range, status, recoveryGate)      | parallel, descending, date range as the gsi2sk     |
 * |                                           | range, status / gate as a filter; merged           |
 * | Find a case by invoiceRef (consistent)    | GetItem the guard, then GetItem CASE#<caseId>,     |
 * |                                           | both ConsistentRead                                |
 * | Find every case with an invoiceRef        | Query INVREF#... (GUARD and WITHDRAWN#...),        |
 * |   (withdrawn ones too)                    | ConsistentRead, then BatchGetItem the cases        |
 * | Change a case (confirm, withdraw, verify, | TransactWriteItems: Update CASE conditional on its |
 * |   settle)                                 | lifecycle fields and revision + Put EVENT (+ Put   |
 * |                                           | CONFIRMATION, or Delete GUARD naming the case + Put|
 * |                                           | WITHDRAWN#)                                        |
 * | A recovery change (payment, back-office   | TransactWriteItems: Update CASE conditional on its |
 * |   update; recovery-store.ts)              | revision and status + Put EVENT + Put PAYMENT#<nnn>|
 * |                                           | (attribute_not_exists) + Put RECOVERY#… (attribute_|
 * |                                           | not_exists: the updateId once, forever, no TTL) +, |
 * |                                           | when it closes the case, Delete GUARD + Put        |
 * |                                           | WITHDRAWN# (the invoiceRef given up, as withdraw)  |
 * | A case's payments, oldest first           | Query CASE#<m><caseId>, sk begins_with PAYMENT#,   |
 * |                                           | ConsistentRead (GET of the case reads none: the    |
 * |                                           | case item holds `paymentFacts`)                    |
 * | Was a back-office update applied          | GetItem RECOVERY#<m><cid>#<updateId>, consistent   |
 * | Read an event                             | GetItem EVENT#<m><eventId>; companyId compared     |
 * | List a company's events, newest first     | Query gsi2 EVENTS#<m><id>#<s>, every shard, merged |
 * |                                           | (a caseId filter: its one shard)                   |
 * | Registry answer of a company number       | GetItem REGISTRY#PROFILE#<n>, ConsistentRead; lease,|
 * |   (debtor verification, shared by workers)| answer and release: UpdateItem conditional on the  |
 * |                                           | answer's age and the lease's token and expiry      |
 * | A registry request's permit               | UpdateItem REGISTRY#RATE: ADD to the current slot, |
 * |                                           | conditional on the window's counts (no read first: |
 * |                                           | the last state seen, or the failed condition's);   |
 * |                                           | the company's share's item first, the same way     |
 * | Create a webhook endpoint (at most 16 per | TransactWriteItems: Put EP#<id> (attribute_not_    |
 * |   company and mode, under any race)       | exists) + Update COUNT (endpointCount < 16, ADD 1) |
 * | Delete a webhook endpoint                 | TransactWriteItems: Delete EP#<id> (attribute_     |
 * |                                           | exists) + Update COUNT (ADD -1)                    |
 * | List a company's webhook endpoints        | Query WHEP#<m><cid>, sk begins_with EP#, consistent|
 * | Read / change one webhook endpoint        | GetItem WHEP#<m><cid> / EP#<id>, consistent; an    |
 * |                                           | UpdateItem of the settings only, conditional on its|
 * |                                           | `version` (never the health read with them)        |
 * | Start a webhook delivery (once per event  | PutItem WHD#<m><endpointId> / <createdAt>#<id>     |
 * |   and endpoint, however often fanned out) | (attribute_not_exists), the id derived from both   |
 * | Record a delivery attempt                 | UpdateItem, conditional on the attempts' count     |
 * | An endpoint's delivery log, newest first  | Query WHD#<m><endpointId>, descending, consistent  |
 * |                                           | sk >= the oldest createdAt not yet expired (TTL    |
 * |                                           | deletes within days: expired ones never read)      |
 * | Record an endpoint's delivery health      | UpdateItem WHEP#… / EP#<id> (failingSince, status) |
 * |                                           | + lastFailureAt, conditional on the stored run     |
 * | Wait for an endpoint's slot (fan-out)     | BatchWriteItem of up to 25 Put WHW#<m><epId> /     |
 * |                                           | W#<createdAt>#<id> (one alone: PutItem)            |
 * | Claim free slots for the oldest waiting   | Query WHW#<m><epId> ascending, consistent (SLOTS,  |
 * |   deliveries (delivery-slots.ts fill)     | then W# oldest first); UpdateItem SLOTS SET one    |
 * |                                           | held#<createdAt>#<id> per job (not yet there) and  |
 * |                                           | heldCount + k (heldCount <= cap - k)               |
 * | A trickle's new jobs listed, started and  | TransactWriteItems: per endpoint its W# Puts, its  |
 * |   claimed at once (the stream consumer's  | WHD# Puts (attribute_not_exists) and the SLOTS     |
 * |   small slices: slots.startClaimed)       | UpdateItem above (an endpoint without free slots:  |
 * |                                           | its W# and WHD# Puts only); sent again with an     |
 * |                                           | endpoint refused for want of a slot listed so, and |
 * |                                           | without one whose record exists                    |
 * | A job ended: its slot handed on           | UpdateItem SLOTS REMOVE its held# (there) SET the  |
 * |                                           | next job's, for jobs an earlier Query saw; else    |
 * |                                           | REMOVE it, heldCount - 1, then the claim above     |
 * | Queued: off the waiting list              | DeleteItem WHW#… / W#… (several: BatchWriteItem)   |
 * | List companies (operator)                 | Query gsi1 COMPANIES                               |
 * | List a company's keys (operator)          | Query gsi1 COMPANY#<id>#KEYS                       |
 * | A company's test data (operator clear)    | Query gsi1 TESTDATA#<id>, then per case one        |
 * |                                           | TransactWriteItems deleting case, audit, guard     |
 * |                                           | (while it names the case), events, confirmation,   |
 * |                                           | payments, recovery update records, WITHDRAWN# item;|
 * |                                           | claims by BatchWriteItem (test                     |
 * |                                           | items only)                                        |
 *
 * Cases are keyed by their own id rather than under the company partition so that a read can
 * fetch the case in parallel with the API key; tenancy is enforced by comparing `companyId`
 * before anything is returned, and a foreign case is answered exactly like a missing one.
 *
 * No hot partitions: a partition takes at most 1,000 WCU/s, and nothing a busy partner does writes
 * one partition per case. Each invoiceRef guard and each Idempotency-Key claim is a partition of
 * its own (a 100-case batch used to write 100 guards into `COMPANY#<id>`), a case and its audit
 * record share only their own, and the reference counter is written once per 1,000 references per
 * Lambda instance rather than by every batch. The company profile and an API key are read (strongly
 * consistent, 1 RCU) once per request of that company or key: 3,000 RCU/s per partition leaves room
 * for about 1,500 requests a second per key. The partition prefixes below are what IAM conditions
 * name (`infra/stack/grants.ts`): claims and guards in partitions of their own let the release of a
 * claim be granted on claims only.
 *
 * The case list is spread over CASE_LIST_SHARDS index partitions per company, so that a large
 * partner's batch of 100 cases lands on several partitions instead of one (an index partition
 * takes about 1,000 writes a second) and a list reads them all at once. Changing the number of
 * shards re-homes existing cases: it needs a backfill of `gsi2pk`.
 */

/** The first segment of each item kind's partition key; IAM `dynamodb:LeadingKeys` patterns use them. */
export const PARTITION_PREFIXES = {
  company: 'COMPANY#',
  apiKey: 'KEY#',
  case: 'CASE#',
  invoiceRefGuard: 'INVREF#',
  idempotencyClaim: 'IDEMPOTENCY#',
  referenceCounter: 'COUNTER#CASE_REFERENCE',
  upload: 'UPLOAD#',
  event: 'EVENT#',
  registryProfile: 'REGISTRY#PROFILE#',
  registryRate: 'REGISTRY#RATE',
  webhookEndpoints: 'WHEP#',
  webhookDeliveries: 'WHD#',
  webhookDeliverySlots: 'WHW#',
  recoveryUpdate: 'RECOVERY#',
} as const;

/** The first segment of the gsi2 list partitions; IAM `dynamodb:LeadingKeys` patterns of index queries use them. */
export const INDEX_PARTITION_PREFIXES = {
  caseList: 'CASES#',
  eventList: 'EVENTS#',
} as const;

export const TTL_ATTRIBUTE = 'ttl';
/** The gsi1 key attributes (a test item's listing under its company's test data writes them). */
export const GSI1_ATTRIBUTES = ['gsi1pk', 'gsi1sk'] as const;
export const GSI1 = 'gsi1';
export const GSI2 = 'gsi2';

/** Index partitions per company for the case list (see the header). */
export const CASE_LIST_SHARDS = 8;

/** FNV-1a over the case id: stable, cheap, and uniform enough over random base62 ids. */
function caseListShard(caseId: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < caseId.length; i++) {
    hash ^= caseId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % CASE_LIST_SHARDS;
}

export interface ItemKey {
  pk: string;
  sk: string;
}

/** The segment each mode adds after a partition prefix: none for live (their keys predate test mode). */
const MODE_SEGMENT: Readonly<Record<Mode, string>> = { live: '', test: 'TEST#' };

/** The gsi1 listing of a test item under its company's test data; live items have none. */
function testDataListing(mode: Mode, companyId: string, key: ItemKey): { gsi1pk: string; gsi1sk: string } | Record<string, never> {
  return mode === 'test' ? { gsi1pk: keys.testDataIndexPk(companyId), gsi1sk: `${key.pk}#${key.sk}` } : {};
}

export const keys = {
  company: (companyId: string): ItemKey => ({ pk: `${PARTITION_PREFIXES.company}${companyId}`, sk: 'PROFILE' }),
  companyListing: (createdAt: string, companyId: string) => ({
    gsi1pk: 'COMPANIES',
    gsi1sk: `${createdAt}#${companyId}`,
  }),
  companiesIndexPk: (): string => 'COMPANIES',

  apiKey: (keyId: string): ItemKey => ({ pk: `${PARTITION_PREFIXES.apiKey}${keyId}`, sk: 'KEY' }),
  apiKeyListing: (companyId: string, createdAt: string, keyId: string) => ({
    gsi1pk: `COMPANY#${companyId}#KEYS`,
    gsi1sk: `${createdAt}#${keyId}`,
  }),
  companyKeysIndexPk: (companyId: string): string => `COMPANY#${companyId}#KEYS`,

  case: (mode: Mode, caseId: string): ItemKey => ({ pk: `${PARTITION_PREFIXES.case}${MODE_SEGMENT[mode]}${caseId}`, sk: 'CASE' }),
  attestation: (mode: Mode, caseId: string): ItemKey => ({
    pk: `${PARTITION_PREFIXES.case}${MODE_SEGMENT[mode]}${caseId}`,
    sk: 'ATTESTATION',
  }),

  /** The gsi2 attributes of a case item: its place in its company's list of its mode. */
  caseListing: (mode: Mode, companyId: string, createdAt: string, caseId: string): { gsi2pk: string; gsi2sk: string } => ({
    gsi2pk: keys.caseListPartition(mode, companyId, caseListShard(caseId)),
    gsi2sk: keys.caseListPosition(createdAt, caseId),
  }),
  caseListShard,
  caseListPartition: (mode: Mode, companyId: string, shard: number): string =>
    `${INDEX_PARTITION_PREFIXES.caseList}${MODE_SEGMENT[mode]}${companyId}#${shard}`,
  /**
   * A case's gsi2sk. `createdAt` is fixed-width ISO 8601 UTC (toISOString), so the string order is
   * the time order, and the id breaks ties the way the list does (id descending).
   */
  caseListPosition: (createdAt: string, caseId: string): string => `${createdAt}#${caseId}`,
  /**
   * The gsi2sk bound of an instant: every case created at or after it sorts at or above it, every
   * case created before it sorts below it (the instant is a prefix of its own cases' keys).
   */
  caseListBound: (instant: string): string => instant,

  invoiceRefGuard: (mode: Mode, companyId: string, normalisedInvoiceRef: string): ItemKey => ({
    pk: `${PARTITION_PREFIXES.invoiceRefGuard}${MODE_SEGMENT[mode]}${companyId}#${normalisedInvoiceRef}`,
    sk: 'GUARD',
  }),

  idempotencyClaim: (mode: Mode, companyId: string, idempotencyKey: string): ItemKey => ({
    pk: `${PARTITION_PREFIXES.idempotencyClaim}${MODE_SEGMENT[mode]}${companyId}#${idempotencyKey}`,
    sk: 'CLAIM',
  }),

  /** The immutable record of a case's confirmation (one per case: a gate is confirmed once). */
  confirmation: (mode: Mode, caseId: string): ItemKey => ({
    pk: `${PARTITION_PREFIXES.case}${MODE_SEGMENT[mode]}${caseId}`,
    sk: 'CONFIRMATION',
  }),
  /** A withdrawn case under its invoiceRef guard's partition (the guard itself was given up). */
  withdrawnInvoiceRef: (mode: Mode, companyId: string, normalisedInvoiceRef: string, createdAt: string, caseId: string): ItemKey => ({
    pk: keys.invoiceRefGuard(mode, companyId, normalisedInvoiceRef).pk,
    sk: `${WITHDRAWN_SK_PREFIX}${createdAt}#${caseId}`,
  }),

  /**
   * A payment, immutable, in its case's partition: `PAYMENT#` and its sequence zero-padded to three
   * digits (at most 100 a case), so the partition's sort order is the order recorded.
   */
  payment: (mode: Mode, caseId: string, sequence: number): ItemKey => ({
    pk: `${PARTITION_PREFIXES.case}${MODE_SEGMENT[mode]}${caseId}`,
    sk: `${PAYMENT_SK_PREFIX}${String(sequence).padStart(3, '0')}`,
  }),
  /**
   * The record of one applied back-office update, a partition of its own per company, mode and
   * updateId (the back office's id, 1–100 characters), so "applied before?" is one GetItem and the
   * conditional Put lets one of two racing requests win. Never expires.
   */
  recoveryUpdate: (mode: Mode, companyId: string, updateId: string): ItemKey => ({
    pk: `${PARTITION_PREFIXES.recoveryUpdate}${MODE_SEGMENT[mode]}${companyId}#${updateId}`,
    sk: 'UPDATE',
  }),

  event: (mode: Mode, eventId: string): ItemKey => ({ pk: `${PARTITION_PREFIXES.event}${MODE_SEGMENT[mode]}${eventId}`, sk: 'EVENT' }),
  /** The gsi2 attributes of an event: its place in its company's event list, in its case's shard. */
  eventListing: (
    mode: Mode,
    companyId: string,
    caseId: string,
    createdAt: string,
    eventId: string,
  ): { gsi2pk: string; gsi2sk: string } => ({
    gsi2pk: keys.eventListPartition(mode, companyId, caseListShard(caseId)),
    gsi2sk: `${createdAt}#${eventId}`,
  }),
  eventListPartition: (mode: Mode, companyId: string, shard: number): string =>
    `${INDEX_PARTITION_PREFIXES.eventList}${MODE_SEGMENT[mode]}${companyId}#${shard}`,
  /** The gsi2sk bound of an instant in the event list (as `caseListBound`: the instant is a prefix of its own events' keys). */
  eventListBound: (instant: string): string => instant,

  /**
   * A company's webhook endpoints of one mode share one partition with their counter, so the
   * limit's transaction and the list stay within it (16 small items; a partner's dashboard, not a
   * hot path) and the company id in the key keeps tenancy in the key, like the mode.
   */
  webhookEndpoint: (mode: Mode, companyId: string, endpointId: string): ItemKey => ({
    pk: keys.webhookEndpointPartition(mode, companyId),
    sk: `${WEBHOOK_ENDPOINT_SK_PREFIX}${endpointId}`,
  }),
  webhookEndpointCounter: (mode: Mode, companyId: string): ItemKey => ({ pk: keys.webhookEndpointPartition(mode, companyId), sk: 'COUNT' }),
  webhookEndpointPartition: (mode: Mode, companyId: string): string =>
    `${PARTITION_PREFIXES.webhookEndpoints}${MODE_SEGMENT[mode]}${companyId}`,

  /**
   * A webhook delivery's log record: each endpoint's deliveries one partition, sorted by createdAt
   * (a scheduled delivery's is its event's, so every copy of a stream record names the same item),
   * so the log is one descending Query. An endpoint's partition takes about 1,000 writes a second,
   * three per delivery at most when the first attempt succeeds: far beyond one receiver's rate.
   */
  webhookDelivery: (key: { mode: Mode; endpointId: string; createdAt: string; deliveryId: string }): ItemKey => ({
    pk: keys.webhookDeliveryPartition(key.mode, key.endpointId),
    sk: `${key.createdAt}#${key.deliveryId}`,
  }),
  webhookDeliveryPartition: (mode: Mode, endpointId: string): string =>
    `${PARTITION_PREFIXES.webhookDeliveries}${MODE_SEGMENT[mode]}${endpointId}`,

  /**
   * An endpoint's share of the delivery lanes (lib/webhooks/delivery-slots.ts): the `SLOTS` item,
   * whose string set `holders` names the deliveries (`<createdAt>#<deliveryId>`) holding its slots,
   * and its waiting deliveries, `W#<createdAt>#<deliveryId>`, oldest first. One partition per
   * endpoint: a burst of one endpoint writes its own partition only, and each of its items is
   * written a few times per delivery (a marker put, promoted, deleted; the slot claimed, released).
   * `SLOTS` sorts before `W#`, so one Query reads the holders and the oldest waiting together.
   */
  webhookDeliverySlots: (mode: Mode, endpointId: string): ItemKey => ({
    pk: keys.webhookDeliverySlotPartition(mode, endpointId),
    sk: 'SLOTS',
  }),
  webhookDeliveryWaiting: (key: { mode: Mode; endpointId: string; createdAt: string; deliveryId: string }): ItemKey => ({
    pk: keys.webhookDeliverySlotPartition(key.mode, key.endpointId),
    sk: `${WEBHOOK_WAITING_SK_PREFIX}${key.createdAt}#${key.deliveryId}`,
  }),
  webhookDeliverySlotPartition: (mode: Mode, endpointId: string): string =>
    `${PARTITION_PREFIXES.webhookDeliverySlots}${MODE_SEGMENT[mode]}${endpointId}`,

  /** The whole key of an item of a mode's world: its pk/sk plus, for a test item, its test-data listing. */
  withTestDataListing: (mode: Mode, companyId: string, key: ItemKey) => ({ ...key, ...testDataListing(mode, companyId, key) }),
  testDataIndexPk: (companyId: string): string => `TESTDATA#${companyId}`,
  /** Whether a partition key is one of a test item (the mode segment follows the kind's prefix). */
  isTestPartition: (pk: string): boolean =>
    [
      PARTITION_PREFIXES.case,
      PARTITION_PREFIXES.invoiceRefGuard,
      PARTITION_PREFIXES.idempotencyClaim,
      PARTITION_PREFIXES.event,
      PARTITION_PREFIXES.webhookEndpoints,
      PARTITION_PREFIXES.webhookDeliveries,
      PARTITION_PREFIXES.webhookDeliverySlots,
      PARTITION_PREFIXES.recoveryUpdate,
    ].some((prefix) => pk.startsWith(`${prefix}${MODE_SEGMENT.test}`)),

  caseReferenceCounter: (): ItemKey => ({ pk: PARTITION_PREFIXES.referenceCounter, sk: 'COUNTER' }),

  /**
   * The registry's last answer about a company number and the lease of whoever is asking it now
   * (lib/adapters/dynamodb/registry-profile-cache.ts). Not per mode: test mode never asks the registry.
   * Each number a partition of its own.
   */
  registryProfile: (companyNumber: string): ItemKey => ({ pk: `${PARTITION_PREFIXES.registryProfile}${companyNumber}`, sk: 'PROFILE' }),
  /**
   * The shared rate window of registry requests (lib/adapters/dynamodb/registry-rate-limiter.ts):
   * one item per limited key, `name` the registry's (tests use names of their own).
   */
  registryRateWindow: (name: string): ItemKey => ({ pk: PARTITION_PREFIXES.registryRate, sk: `WINDOW#${name}` }),
  /** One company's share of that window: a window of its own beside the registry's (at most a few hundred permits in 5 minutes each). */
  registryCompanyShare: (name: string, companyId: string): ItemKey => ({
    pk: PARTITION_PREFIXES.registryRate,
    sk: `WINDOW#${name}#COMPANY#${companyId}`,
  }),

  /** The record that S3 reported an object under this fileKey (each file a partition of its own). */
  upload: (fileKey: string): ItemKey => ({ pk: `${PARTITION_PREFIXES.upload}${fileKey}`, sk: 'UPLOAD' }),
};

/** Item type tags stored on every item, so a table scan (tests, operators) can tell them apart. */
export const ITEM_TYPES = {
  company: 'COMPANY',
  apiKey: 'API_KEY',
  case: 'CASE',
  attestation: 'ATTESTATION',
  invoiceRefGuard: 'INVOICE_REF_GUARD',
  idempotencyClaim: 'IDEMPOTENCY_CLAIM',
  counter: 'COUNTER',
  upload: 'UPLOAD',
  event: 'EVENT',
  confirmation: 'CONFIRMATION',
  withdrawnInvoiceRef: 'WITHDRAWN_INVOICE_REF',
  payment: 'PAYMENT',
  recoveryUpdate: 'RECOVERY_UPDATE',
  registryProfile: 'REGISTRY_PROFILE',
  registryRateWindow: 'REGISTRY_RATE_WINDOW',
  webhookEndpoint: 'WEBHOOK_ENDPOINT',
  webhookEndpointCounter: 'WEBHOOK_ENDPOINT_COUNTER',
  webhookDelivery: 'WEBHOOK_DELIVERY',
  webhookDeliverySlots: 'WEBHOOK_DELIVERY_SLOTS',
  webhookDeliveryWaiting: 'WEBHOOK_DELIVERY_WAITING',
} as const;

/** The sort key prefix of a webhook endpoint in its company's endpoint partition. */
export const WEBHOOK_ENDPOINT_SK_PREFIX = 'EP#';

/** The sort key prefix of a delivery waiting for its endpoint's slot. */
export const WEBHOOK_WAITING_SK_PREFIX = 'W#';

/** The sort key prefix of a payment in its case's partition. */
export const PAYMENT_SK_PREFIX = 'PAYMENT#';

/**
 * The sort key prefix of a case that gave its invoiceRef up, in the invoiceRef's partition: a
 * withdrawn case, or a closed one (the name predates CLOSED; `withdrawnAt` is when it gave the ref up).
 */
export const WITHDRAWN_SK_PREFIX = 'WITHDRAWN#';

/** Events are kept 30 days (product rules "Events", lib/cases/event-retention.ts): their `ttl` is this long after `createdAt`. */
export const EVENT_RETENTION_SECONDS = EVENT_RETENTION_MS / 1000;

/** Table definition shared by the local stack, the tests and the CDK stack. */
export const TABLE_DEFINITION = {
  partitionKey: 'pk',
  sortKey: 'sk',
  gsi1: { name: GSI1, partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
  gsi2: { name: GSI2, partitionKey: 'gsi2pk', sortKey: 'gsi2sk' },
  ttlAttribute: TTL_ATTRIBUTE,
  /** The table's stream, read by the debtor verifier (and locally by infra/local/stream-poller.ts). */
  streamViewType: 'NEW_AND_OLD_IMAGES',
} as const;
