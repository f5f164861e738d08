/**
 * The single owner of the DynamoDB key design. Every item lives in one table with a string
 * partition key `pk` and sort key `sk`; one sparse global secondary index (`gsi1`) serves the
 * operator's listings. Nothing outside this module builds a key string.
 *
 * | Item                 | pk                    | sk                 | gsi1pk               | gsi1sk            |
 * |----------------------|-----------------------|--------------------|----------------------|-------------------|
 * | Company              | COMPANY#<companyId>   | PROFILE            | COMPANIES            | <createdAt>#<id>  |
 * | API key              | KEY#<keyId>           | KEY                | COMPANY#<id>#KEYS    | <createdAt>#<kid> |
 * | Case                 | CASE#<caseId>         | CASE               | -                    | -                 |
 * | Attestation audit    | CASE#<caseId>         | ATTESTATION        | -                    | -                 |
 * | invoiceRef guard     | COMPANY#<companyId>   | INVREF#<normRef>   | -                    | -                 |
 * | Idempotency claim    | COMPANY#<companyId>   | IDEMPOTENCY#<key>  | -                    | -                 |
 * | Reference counter    | COUNTER#CASE_REFERENCE| COUNTER            | -                    | -                 |
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
 * | Claim / complete / release an idempotency | PutItem (attribute_not_exists) / UpdateItem /      |
 * |   key                                     | DeleteItem, expiring through the `ttl` attribute   |
 * | Reserve a block of case references        | UpdateItem ADD on the counter                      |
 * | List companies (operator)                 | Query gsi1 COMPANIES                               |
 * | List a company's keys (operator)          | Query gsi1 COMPANY#<id>#KEYS                       |
 *
 * Cases are keyed by their own id rather than under the company partition so that a read can
 * fetch the case in parallel with the API key; tenancy is enforced by comparing `companyId`
 * before anything is returned, and a foreign case is answered exactly like a missing one.
 */

export const TTL_ATTRIBUTE = 'ttl';
export const GSI1 = 'gsi1';

export interface ItemKey {
  pk: string;
  sk: string;
}

export const keys = {
  company: (companyId: string): ItemKey => ({ pk: `COMPANY#${companyId}`, sk: 'PROFILE' }),
  companyListing: (createdAt: string, companyId: string) => ({
    gsi1pk: 'COMPANIES',
    gsi1sk: `${createdAt}#${companyId}`,
  }),
  companiesIndexPk: (): string => 'COMPANIES',

  apiKey: (keyId: string): ItemKey => ({ pk: `KEY#${keyId}`, sk: 'KEY' }),
  apiKeyListing: (companyId: string, createdAt: string, keyId: string) => ({
    gsi1pk: `COMPANY#${companyId}#KEYS`,
    gsi1sk: `${createdAt}#${keyId}`,
  }),
  companyKeysIndexPk: (companyId: string): string => `COMPANY#${companyId}#KEYS`,

  case: (caseId: string): ItemKey => ({ pk: `CASE#${caseId}`, sk: 'CASE' }),
  attestation: (caseId: string): ItemKey => ({ pk: `CASE#${caseId}`, sk: 'ATTESTATION' }),

  invoiceRefGuard: (companyId: string, normalisedInvoiceRef: string): ItemKey => ({
    pk: `COMPANY#${companyId}`,
    sk: `INVREF#${normalisedInvoiceRef}`,
  }),

  idempotencyClaim: (companyId: string, idempotencyKey: string): ItemKey => ({
    pk: `COMPANY#${companyId}`,
    sk: `IDEMPOTENCY#${idempotencyKey}`,
  }),

  caseReferenceCounter: (): ItemKey => ({ pk: 'COUNTER#CASE_REFERENCE', sk: 'COUNTER' }),
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
} as const;

/** Table definition shared by the local stack, the tests and the CDK stack. */
export const TABLE_DEFINITION = {
  partitionKey: 'pk',
  sortKey: 'sk',
  gsi1: { name: GSI1, partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
  ttlAttribute: TTL_ATTRIBUTE,
} as const;
