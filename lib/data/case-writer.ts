import { TransactionCanceledException, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { StoredCase } from '../cases/case-record.js';
import { logger } from '../logger.js';
import { backoffMs, DEFAULT_RETRY_POLICY, isRetryable, sleep, type RetryPolicy } from './retry.js';
import { ITEM_TYPES, keys } from './table-keys.js';

/** The immutable audit record of the eligibility attestation made for one case. */
export interface AttestationRecord {
  caseId: string;
  companyId: string;
  b2b: boolean;
  under10k: boolean;
  within6years: boolean;
  undisputed: boolean;
  attestedBy: string;
  attestedAt: string;
  keyId: string;
  requestId: string;
  sourceIp: string;
  userAgent?: string;
}

export interface NewCase {
  stored: StoredCase;
  audit: AttestationRecord;
}

export type WriteOutcome =
  | { kind: 'created'; attempts: number }
  | { kind: 'duplicate'; existingCaseId: string; existingReference: string; attempts: number }
  | { kind: 'failed'; attempts: number; error: string };

export interface CaseWriter {
  /** Writes guard + case + audit record atomically; never throws. */
  write(newCase: NewCase, deadlineMs: number): Promise<WriteOutcome>;
}

/**
 * One TransactWriteItems per case: the invoiceRef guard (conditional on not existing), the case
 * and its attestation record. All three or none, so there is never a guard without its case nor
 * a case without its audit record. The transaction carries a ClientRequestToken that stays the
 * same across our retries, and the case id is fixed before the first attempt: if a response is
 * lost after the write committed, the retry either is recognised by DynamoDB as the same
 * transaction or meets the guard holding our own case id, and both count as created.
 */
export class DynamoCaseWriter implements CaseWriter {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly policy: RetryPolicy = DEFAULT_RETRY_POLICY,
  ) {}

  async write(newCase: NewCase, deadlineMs: number): Promise<WriteOutcome> {
    const { stored, audit } = newCase;
    const command = new TransactWriteCommand({
      ClientRequestToken: stored.caseId.slice(0, 36),
      TransactItems: [
        {
          Put: {
            TableName: this.tableName,
            Item: {
              ...keys.invoiceRefGuard(stored.companyId, stored.invoiceRefKey),
              type: ITEM_TYPES.invoiceRefGuard,
              companyId: stored.companyId,
              invoiceRef: stored.invoiceRef,
              caseId: stored.caseId,
              reference: stored.reference,
              createdAt: stored.createdAt,
            },
            ConditionExpression: 'attribute_not_exists(pk)',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          },
        },
        {
          Put: {
            TableName: this.tableName,
            Item: { ...keys.case(stored.caseId), type: ITEM_TYPES.case, ...stored },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        {
          Put: {
            TableName: this.tableName,
            Item: { ...keys.attestation(stored.caseId), type: ITEM_TYPES.attestation, ...audit },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
      ],
    });

    for (let attempt = 1; ; attempt++) {
      try {
        await this.client.send(command);
        return { kind: 'created', attempts: attempt };
      } catch (error) {
        const guard = guardConflict(error);
        if (guard) {
          if (guard.caseId === stored.caseId) return { kind: 'created', attempts: attempt };
          return { kind: 'duplicate', existingCaseId: guard.caseId, existingReference: guard.reference, attempts: attempt };
        }
        const lastError = describe(error);
        const delay = backoffMs(attempt, this.policy);
        if (!isRetryable(error) || attempt >= this.policy.maxAttempts || Date.now() + delay >= deadlineMs) {
          logger.warn('case write failed', { caseId: stored.caseId, attempts: attempt, error: lastError });
          return { kind: 'failed', attempts: attempt, error: lastError };
        }
        await sleep(delay);
      }
    }
  }
}

function describe(error: unknown): string {
  if (error instanceof TransactionCanceledException) {
    return `TransactionCanceled[${(error.CancellationReasons ?? []).map((r) => r.Code ?? 'None').join(',')}]`;
  }
  return (error as Error)?.name ?? 'Error';
}

/** The existing guard when the transaction failed on it; undefined otherwise. */
function guardConflict(error: unknown): { caseId: string; reference: string } | undefined {
  if (!(error instanceof TransactionCanceledException) && (error as { name?: string })?.name !== 'TransactionCanceledException') return undefined;
  const reasons = (error as TransactionCanceledException).CancellationReasons ?? [];
  const first = reasons[0];
  if (first?.Code !== 'ConditionalCheckFailed' || !first.Item) return undefined;
  // lib-dynamodb leaves cancellation items in their raw AttributeValue form.
  const item = unmarshall(first.Item as Record<string, AttributeValue>);
  if (typeof item.caseId !== 'string' || typeof item.reference !== 'string') return undefined;
  return { caseId: item.caseId, reference: item.reference };
}
