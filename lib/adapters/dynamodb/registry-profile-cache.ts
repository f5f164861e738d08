import { ConditionalCheckFailedException, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { CachedAnswer, DefinitiveAnswer, FetchLease, ProfileCache } from '../../cases/verification/ports.js';
import { PROFILE_REUSE_MS } from '../../cases/verification/verify-debtor.js';
import type { Deadline } from '../../deadline.js';
import { randomBase62 } from '../../random-id.js';
import { withRetries } from '../retry.js';
import { ITEM_TYPES, keys, TTL_ATTRIBUTE } from './table-keys.js';

/**
 * The registry's answers by company number, shared by every verifier worker in every Lambda
 * instance (the ProfileCache port, lib/cases/verification/ports.ts): one item per number,
 * `REGISTRY#PROFILE#<number>` (table-keys.ts), holding the last definitive answer (`answer`,
 * `fetchedAt`) and the lease of the worker asking the registry now (`leaseToken`, `leaseUntil`).
 *
 * Every write is one conditional UpdateItem, so concurrent workers agree without a read first:
 * - `lease` succeeds only while no fresh answer is stored and no unexpired lease is held: of any
 *   number of workers missing the cache together, one holds the number; the others learn from the
 *   failed condition's old image (ALL_OLD) whether a fresh answer arrived or whose lease to wait for.
 * - `put` stores the answer and ends the lease in one write when the token still holds it; a lease
 *   taken over meanwhile (ours expired) keeps its holder and the answer is stored on its own. An
 *   answer older than the one stored never replaces it.
 * - `release` ends the lease only for its own token.
 * `fetchedAt` is ISO 8601 UTC from toISOString (fixed width), so DynamoDB's string comparison is
 * the time order. Whether an answer may be reused is the domain's decision (`freshSince`,
 * PROFILE_REUSE_MS); the `ttl` only clears items nobody can reuse any more, a day after that.
 */
const HOUSEKEEPING_MARGIN_S = 24 * 60 * 60;

interface StoredProfileItem {
  answer?: DefinitiveAnswer;
  fetchedAt?: string;
  leaseToken?: string;
  leaseUntil?: number;
}

function isConditionFailure(error: unknown): error is ConditionalCheckFailedException {
  return error instanceof ConditionalCheckFailedException || (error as { name?: string })?.name === 'ConditionalCheckFailedException';
}

/** The old image a failed condition returns (raw attribute values: lib-dynamodb leaves it unconverted). */
function oldImage(error: ConditionalCheckFailedException): StoredProfileItem {
  const raw = error.Item as Record<string, AttributeValue> | undefined;
  return raw ? (unmarshall(raw) as StoredProfileItem) : {};
}

/** Only the fields of the port, whatever else an item may carry. */
function cachedOf(item: StoredProfileItem): CachedAnswer | undefined {
  if (!item.answer || typeof item.fetchedAt !== 'string') return undefined;
  const answer: DefinitiveAnswer =
    item.answer.kind === 'found'
      ? {
          kind: 'found',
          profile: {
            companyNumber: item.answer.profile.companyNumber,
            companyName: item.answer.profile.companyName,
            companyStatus: item.answer.profile.companyStatus,
          },
        }
      : { kind: 'not-found' };
  return { answer, fetchedAt: item.fetchedAt };
}

const epochSeconds = (ms: number) => Math.ceil(ms / 1000);

export class DynamoRegistryProfileCache implements ProfileCache {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly deadline?: () => Deadline,
  ) {}

  async get(companyNumber: string): Promise<CachedAnswer | undefined> {
    const out = await withRetries(
      (options) =>
        this.client.send(
          new GetCommand({ TableName: this.tableName, Key: keys.registryProfile(companyNumber), ConsistentRead: true }),
          options,
        ),
      this.deadline?.(),
    );
    return out.Item ? cachedOf(out.Item as StoredProfileItem) : undefined;
  }

  async lease(companyNumber: string, request: { now: Date; until: Date; freshSince: Date }): Promise<FetchLease> {
    const token = randomBase62(22);
    try {
      await withRetries(
        (options) =>
          this.client.send(
            new UpdateCommand({
              TableName: this.tableName,
              Key: keys.registryProfile(companyNumber),
              UpdateExpression: 'SET #type = :type, companyNumber = :number, leaseToken = :token, leaseUntil = :until, #ttl = :ttl',
              // The token clause: an earlier attempt of this very write landed and only its answer was lost.
              ConditionExpression:
                '((attribute_not_exists(fetchedAt) OR fetchedAt < :freshSince) AND (attribute_not_exists(leaseUntil) OR leaseUntil <= :now)) OR leaseToken = :token',
              ExpressionAttributeNames: { '#type': 'type', '#ttl': TTL_ATTRIBUTE },
              ExpressionAttributeValues: {
                ':type': ITEM_TYPES.registryProfile,
                ':number': companyNumber,
                ':token': token,
                ':until': request.until.getTime(),
                ':now': request.now.getTime(),
                ':freshSince': request.freshSince.toISOString(),
                ':ttl': epochSeconds(request.until.getTime()) + HOUSEKEEPING_MARGIN_S,
              },
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            }),
            options,
          ),
        this.deadline?.(),
      );
      return { kind: 'taken', token };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const item = oldImage(error);
      const cached = cachedOf(item);
      if (cached && cached.fetchedAt >= request.freshSince.toISOString()) return { kind: 'cached', cached };
      if (typeof item.leaseUntil === 'number' && item.leaseUntil > request.now.getTime())
        return { kind: 'held', heldUntil: new Date(item.leaseUntil) };
      // The condition failed on a state that satisfies it (it cannot): say so rather than guess.
      throw new Error(`Registry profile lease of ${companyNumber}: condition failed on an item that allows it`, { cause: error });
    }
  }

  async put(companyNumber: string, cached: CachedAnswer, token: string): Promise<void> {
    const answerValues = {
      ':type': ITEM_TYPES.registryProfile,
      ':number': companyNumber,
      ':answer': cachedOf(cached)!.answer,
      ':fetchedAt': cached.fetchedAt,
      ':ttl': epochSeconds(Date.parse(cached.fetchedAt) + PROFILE_REUSE_MS) + HOUSEKEEPING_MARGIN_S,
    };
    const storeAnswer = 'SET #type = :type, companyNumber = :number, answer = :answer, fetchedAt = :fetchedAt, #ttl = :ttl';
    const notOlder = '(attribute_not_exists(fetchedAt) OR fetchedAt <= :fetchedAt)';
    const names = { '#type': 'type', '#ttl': TTL_ATTRIBUTE };
    // The usual case, one write: our lease still holds, answer stored and lease ended together.
    try {
      await this.update(companyNumber, {
        UpdateExpression: `${storeAnswer} REMOVE leaseToken, leaseUntil`,
        ConditionExpression: `leaseToken = :token AND ${notOlder}`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ...answerValues, ':token': token },
      });
      return;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
    // Our lease was taken over (it expired) or is gone: store the answer, leave the lease to its holder.
    try {
      await this.update(companyNumber, {
        UpdateExpression: storeAnswer,
        ConditionExpression: notOlder,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: answerValues,
      });
    } catch (error) {
      // A newer answer is stored already: it stays.
      if (!isConditionFailure(error)) throw error;
    }
  }

  async release(companyNumber: string, token: string): Promise<void> {
    try {
      await this.update(companyNumber, {
        UpdateExpression: 'REMOVE leaseToken, leaseUntil',
        ConditionExpression: 'leaseToken = :token',
        ExpressionAttributeValues: { ':token': token },
      });
    } catch (error) {
      // Not ours any more (taken over after it expired), or never stored: nothing to give back.
      if (!isConditionFailure(error)) throw error;
    }
  }

  private async update(
    companyNumber: string,
    expression: Pick<
      ConstructorParameters<typeof UpdateCommand>[0],
      'UpdateExpression' | 'ConditionExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'
    >,
  ): Promise<void> {
    await withRetries(
      (options) =>
        this.client.send(
          new UpdateCommand({ TableName: this.tableName, Key: keys.registryProfile(companyNumber), ...expression }),
          options,
        ),
      this.deadline?.(),
    );
  }
}
