import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { AttributeValue, TransactWriteItem } from '@aws-sdk/client-dynamodb';
import { convertToAttr } from '@aws-sdk/util-dynamodb';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { CreatedItem, RejectedItem } from '../../cases/batch-result.js';
import type {
  ClaimCompletion,
  ClaimRequest,
  ClaimResult,
  IdempotencyStore,
  StoredBatchResponse,
  StoredResponse,
} from '../../cases/ports.js';
import { MAX_LISTED_UNKNOWN_FIELDS } from '../../errors.js';
import type { Deadline } from '../../deadline.js';
import type { Mode } from '../../mode.js';
import { withRetries } from '../retry.js';
import { attributeMap } from './attribute-values.js';
import { ITEM_TYPES, keys, TTL_ATTRIBUTE } from './table-keys.js';

/**
 * Idempotency-Key claims: one item per (company, key), claimed with a conditional put before any
 * case is written, completed with the response, expiring through DynamoDB TTL. The condition
 * also admits an item whose TTL has passed but which DynamoDB has not deleted yet (deletion can
 * lag by days), and an IN_PROGRESS claim abandoned long ago by a request that died mid-way: the
 * new request then proceeds, and the invoiceRef guard turns whatever the dead request wrote into
 * DUPLICATE rejections rather than second cases.
 */
export class DynamoIdempotencyStore implements IdempotencyStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async claim(request: ClaimRequest, deadline?: Deadline): Promise<ClaimResult> {
    const nowSeconds = Math.floor(request.now.getTime() / 1000);
    try {
      await withRetries(
        (options) =>
          this.client.send(
            new PutCommand({
              TableName: this.tableName,
              Item: {
                ...keys.withTestDataListing(
                  request.mode,
                  request.companyId,
                  keys.idempotencyClaim(request.mode, request.companyId, request.idempotencyKey),
                ),
                type: ITEM_TYPES.idempotencyClaim,
                companyId: request.companyId,
                idempotencyKey: request.idempotencyKey,
                state: 'IN_PROGRESS',
                requestId: request.requestId,
                claimedAt: request.now.toISOString(),
                claimedAtEpoch: nowSeconds,
                requestHash: request.requestHash,
                [TTL_ATTRIBUTE]: nowSeconds + request.ttlSeconds,
              },
              ConditionExpression: 'attribute_not_exists(pk) OR #ttl < :now OR (#state = :inProgress AND claimedAtEpoch < :staleBefore)',
              ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE, '#state': 'state' },
              ExpressionAttributeValues: {
                ':now': nowSeconds,
                ':inProgress': 'IN_PROGRESS',
                ':staleBefore': nowSeconds - request.staleAfterSeconds,
              },
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            }),
            options,
          ),
        deadline,
      );
      return { claimed: true };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const raw = error.Item as Record<string, AttributeValue> | undefined;
      const item = raw ? unmarshall(raw) : {};
      // Our own claim: an earlier attempt of this very put was applied and only its answer lost.
      if (item.state === 'IN_PROGRESS' && item.requestId === request.requestId) return { claimed: true };
      const requestHash = typeof item.requestHash === 'string' ? { requestHash: item.requestHash } : {};
      const response = item.state === 'COMPLETED' ? decodeResponse(item, request.mode) : undefined;
      if (response) {
        return { claimed: false, state: 'COMPLETED', response, ...requestHash };
      }
      return { claimed: false, state: 'IN_PROGRESS', claimedAt: Number(item.claimedAtEpoch) || nowSeconds, ...requestHash };
    }
  }

  async complete(
    mode: Mode,
    companyId: string,
    idempotencyKey: string,
    requestId: string,
    response: StoredResponse,
    now: Date,
    deadline?: Deadline,
  ): Promise<void> {
    const update = completion({ mode, companyId, idempotencyKey, requestId, response, now });
    await withRetries(
      (options) => this.client.send(new UpdateCommand({ TableName: this.tableName, Key: update.key, ...update.expression }), options),
      deadline,
    );
  }

  async release(mode: Mode, companyId: string, idempotencyKey: string, requestId: string, deadline?: Deadline): Promise<void> {
    try {
      await withRetries(
        (options) =>
          this.client.send(
            new DeleteCommand({
              TableName: this.tableName,
              Key: keys.idempotencyClaim(mode, companyId, idempotencyKey),
              ConditionExpression: 'requestId = :requestId AND #state = :inProgress',
              ExpressionAttributeNames: { '#state': 'state' },
              ExpressionAttributeValues: { ':requestId': requestId, ':inProgress': 'IN_PROGRESS' },
            }),
            options,
          ),
        deadline,
      );
    } catch (error) {
      // Someone else's claim now (ours went stale and was taken over): leave it alone.
      if (error instanceof ConditionalCheckFailedException) return;
      throw error;
    }
  }
}

/** The update that completes a claim this request holds: one shape for `complete` and for a transaction's action. */
function completion(claim: ClaimCompletion) {
  const encoded = encodeResponse(claim.response);
  return {
    key: keys.idempotencyClaim(claim.mode, claim.companyId, claim.idempotencyKey),
    expression: {
      UpdateExpression: 'SET #state = :completed, #response = :response, completedAt = :at',
      ConditionExpression: 'requestId = :requestId',
      ExpressionAttributeNames: { '#state': 'state', '#response': encoded.attribute },
      ExpressionAttributeValues: {
        ':completed': 'COMPLETED',
        ':response': encoded.value,
        ':at': claim.now.toISOString(),
        ':requestId': claim.requestId,
      } as Record<string, unknown>,
    },
  };
}

/**
 * The claim's completion as one action of another write's transaction (a recovery change records
 * a payment and completes its key together: lib/adapters/dynamodb/recovery-store.ts). Its condition
 * fails, and so the whole transaction, when the claim is no longer this request's.
 */
export function claimCompletionAction(tableName: string, claim: ClaimCompletion): TransactWriteItem {
  const { key, expression } = completion(claim);
  return {
    Update: {
      TableName: tableName,
      Key: attributeMap(key),
      ...expression,
      ExpressionAttributeValues: Object.fromEntries(
        Object.entries(expression.ExpressionAttributeValues).map(([name, value]) => [name, convertToAttr(value)]),
      ),
    },
  };
}

/**
 * A DynamoDB item holds at most 400 KB, but a batch's answer echoes every invoiceRef as submitted
 * (up to the 1 MiB body). Small answers are stored as a map (readable by operators); larger ones
 * gzipped; an answer still too large after compression keeps every `created` item whole and
 * shortens the echoes and messages of `rejected` items, marking the replay `compacted`.
 */
const PLAIN_LIMIT = 64 * 1024;
const ITEM_BUDGET = 350 * 1024;
const ECHO_LIMIT = 256;

export function encodeResponse(response: StoredResponse): { attribute: 'response' | 'responseGz'; value: unknown } {
  const json = JSON.stringify(response);
  // A payment's answer is small; gzipped JSON keeps its fields in the documented order, which a
  // DynamoDB map would not (the batch's items are re-ordered on the way back instead).
  if (!('created' in response)) return { attribute: 'responseGz', value: gzipSync(json) };
  if (Buffer.byteLength(json) <= PLAIN_LIMIT) return { attribute: 'response', value: response };
  let gz = gzipSync(json);
  if (gz.length > ITEM_BUDGET) {
    const shorten = (v: unknown) => (typeof v === 'string' && v.length > ECHO_LIMIT ? `${v.slice(0, ECHO_LIMIT)}…` : v);
    const compacted: StoredBatchResponse = {
      ...response,
      compacted: true,
      rejected: (response.rejected as Record<string, unknown>[]).map((r) => ({
        ...r,
        invoiceRef: shorten(r.invoiceRef),
        message: shorten(r.message),
        errors: ((r.errors as { field: string; message: string }[] | undefined) ?? [])
          .slice(0, MAX_LISTED_UNKNOWN_FIELDS)
          .map((e) => ({ field: shorten(e.field) as string, message: shorten(e.message) as string })),
      })),
    };
    gz = gzipSync(JSON.stringify(compacted));
  }
  return { attribute: 'responseGz', value: gz };
}

function decodeResponse(item: Record<string, unknown>, mode: Mode): StoredResponse | undefined {
  const gz = item.responseGz;
  const unzipped = () => JSON.parse(gunzipSync(gz as Uint8Array).toString('utf8')) as StoredResponse;
  const stored = item.response ? (item.response as StoredResponse) : gz instanceof Uint8Array ? unzipped() : undefined;
  if (!stored) return undefined;
  if (!('created' in stored)) return stored;
  // A map comes back from DynamoDB with its keys in any order; the replay restores the documented one.
  const created = (stored.created as CreatedItem[]).map((c) => orderCreated(c, mode));
  return { ...stored, created, rejected: (stored.rejected as RejectedItem[]).map(orderRejected) };
}

/** An answer stored before `livemode` existed was made in the claim's mode, which is the caller's. */
function orderCreated(item: CreatedItem, mode: Mode): CreatedItem {
  const { index, invoiceRef, id, reference } = item;
  return { index, invoiceRef, id, reference, livemode: item.livemode ?? mode === 'live' };
}

function orderRejected(item: RejectedItem): RejectedItem {
  const { index, invoiceRef, code, message, errors, existingCaseId, existingReference } = item;
  return {
    index,
    invoiceRef,
    code,
    message,
    errors,
    ...(existingCaseId !== undefined ? { existingCaseId } : {}),
    ...(existingReference !== undefined ? { existingReference } : {}),
  };
}
