import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { ITEM_TYPES, keys, TTL_ATTRIBUTE } from './table-keys.js';

export interface StoredBatchResponse {
  statusCode: number;
  created: unknown[];
  rejected: unknown[];
}

export type ClaimResult =
  | { claimed: true }
  | { claimed: false; state: 'IN_PROGRESS' }
  | { claimed: false; state: 'COMPLETED'; response: StoredBatchResponse };

export interface ClaimRequest {
  companyId: string;
  idempotencyKey: string;
  requestId: string;
  now: Date;
  ttlSeconds: number;
  /** An IN_PROGRESS claim older than this is abandoned (its Lambda died) and may be taken over. */
  staleAfterSeconds: number;
}

export interface IdempotencyStore {
  claim(request: ClaimRequest): Promise<ClaimResult>;
  complete(companyId: string, idempotencyKey: string, requestId: string, response: StoredBatchResponse, now: Date): Promise<void>;
  release(companyId: string, idempotencyKey: string, requestId: string): Promise<void>;
}

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

  async claim(request: ClaimRequest): Promise<ClaimResult> {
    const nowSeconds = Math.floor(request.now.getTime() / 1000);
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            ...keys.idempotencyClaim(request.companyId, request.idempotencyKey),
            type: ITEM_TYPES.idempotencyClaim,
            companyId: request.companyId,
            idempotencyKey: request.idempotencyKey,
            state: 'IN_PROGRESS',
            requestId: request.requestId,
            claimedAt: request.now.toISOString(),
            claimedAtEpoch: nowSeconds,
            [TTL_ATTRIBUTE]: nowSeconds + request.ttlSeconds,
          },
          ConditionExpression:
            'attribute_not_exists(pk) OR #ttl < :now OR (#state = :inProgress AND claimedAtEpoch < :staleBefore)',
          ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE, '#state': 'state' },
          ExpressionAttributeValues: { ':now': nowSeconds, ':inProgress': 'IN_PROGRESS', ':staleBefore': nowSeconds - request.staleAfterSeconds },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { claimed: true };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const raw = error.Item as Record<string, AttributeValue> | undefined;
      const item = raw ? unmarshall(raw) : {};
      if (item.state === 'COMPLETED' && item.response) {
        return { claimed: false, state: 'COMPLETED', response: item.response as StoredBatchResponse };
      }
      return { claimed: false, state: 'IN_PROGRESS' };
    }
  }

  async complete(companyId: string, idempotencyKey: string, requestId: string, response: StoredBatchResponse, now: Date): Promise<void> {
    await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: keys.idempotencyClaim(companyId, idempotencyKey),
        UpdateExpression: 'SET #state = :completed, #response = :response, completedAt = :at',
        ConditionExpression: 'requestId = :requestId',
        ExpressionAttributeNames: { '#state': 'state', '#response': 'response' },
        ExpressionAttributeValues: { ':completed': 'COMPLETED', ':response': response, ':at': now.toISOString(), ':requestId': requestId },
      }),
    );
  }

  async release(companyId: string, idempotencyKey: string, requestId: string): Promise<void> {
    try {
      await this.client.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: keys.idempotencyClaim(companyId, idempotencyKey),
          ConditionExpression: 'requestId = :requestId AND #state = :inProgress',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ':requestId': requestId, ':inProgress': 'IN_PROGRESS' },
        }),
      );
    } catch (error) {
      // Someone else's claim now (ours went stale and was taken over): leave it alone.
      if (error instanceof ConditionalCheckFailedException) return;
      throw error;
    }
  }
}
