import { ITEM_TYPES, TABLE_DEFINITION } from '../../lib/adapters/dynamodb/table-keys.js';

/**
 * The table stream's event source mappings, which the stack deploys (infra/stack/webhook-delivery.ts,
 * infra/stack/debtor-verifier.ts) and the local world imitates on DynamoDB Local's stream
 * (infra/local/stream-poller.ts): one source, so what a handler is handed cannot differ between them.
 *
 * `filterPattern` is a Lambda event filtering pattern: Lambda drops a record that does not match
 * before the invocation, and the local poller evaluates the same pattern. A DynamoDB event source
 * mapping filters on the record's `dynamodb` key only (Lambda developer guide, "Using event
 * filtering with a DynamoDB event source"), so `eventName` cannot be used: an INSERT is the record
 * without an old image. The stream carries both images (TABLE_DEFINITION.streamViewType), so every
 * MODIFY and REMOVE has an `OldImage` holding the item's partition key. `exists` only tests leaf
 * nodes (an intermediate node such as `OldImage` itself would never count as present, so
 * `OldImage: [{ exists: false }]` would also let a MODIFY through): the pattern tests the key's
 * string value, a leaf every old image has.
 */
export interface StreamFilterPattern {
  dynamodb: {
    OldImage: Record<string, { S: readonly [{ exists: false }] }>;
    NewImage: { type: { S: readonly string[] } };
  };
}

/** INSERTs (no old image) of items of one `type`. */
function insertsOf(type: string): StreamFilterPattern {
  return {
    dynamodb: {
      OldImage: { [TABLE_DEFINITION.partitionKey]: { S: [{ exists: false }] } },
      NewImage: { type: { S: [type] } },
    },
  };
}

/** The webhook fan-out: every event item written (the transactional outbox), once. */
export const FAN_OUT_STREAM = {
  batchSize: 100,
  /** Retries of a failing record (bisected) before it goes to the on-failure queue. */
  retryAttempts: 10,
  /** The stream keeps records 24 h; an event not fanned out within 6 h goes to the on-failure queue to be replayed. */
  maxRecordAgeHours: 6,
  filterPattern: insertsOf(ITEM_TYPES.event),
  /** The fan-out function's timeout: a batch still running then fails whole and is retried (here and on the local poller). */
  functionTimeoutSeconds: 60,
} as const;

/** The debtor verification worker: every case item created. */
export const VERIFIER_STREAM = {
  batchSize: 100,
  /** Retries of a failing record (bisected) before it goes to the on-failure queue. */
  retryAttempts: 5,
  /** A record older than this goes to the on-failure queue: new cases are verified within the day. */
  maxRecordAgeHours: 6,
  filterPattern: insertsOf(ITEM_TYPES.case),
} as const;

/** The debtor verification worker's timeout (both its mappings: the stream and its retry queue). */
export const VERIFIER_FUNCTION_TIMEOUT_SECONDS = 60;

/**
 * The worker's retry queue (a registry answer it must wait for), deployed by the stack and created
 * on the local SQS with the same settings (infra/local/verification-engines.ts).
 */
export const VERIFIER_RETRY_QUEUE = {
  batchSize: 10,
  /** Receives before a message goes to the dead-letter queue. */
  maxReceiveCount: 5,
  /** AWS's advice for an SQS event source: at least six times the function's timeout (AWS refuses less than once). */
  visibilityTimeoutSeconds: 6 * VERIFIER_FUNCTION_TIMEOUT_SECONDS,
  retentionDays: 4,
} as const;
