import { TransactionCanceledException, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { GetCommand, TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { StoredCase } from '../../cases/case-record.js';
import type { CaseWriter, NewCase, WriteOutcome } from '../../cases/ports.js';
import { logger } from '../../runtime/logger.js';
import { isPast, standaloneDeadline, type Deadline } from '../../deadline.js';
import { backoffMs, DEFAULT_RETRY_POLICY, isDeadlineAbort, isRetryable, mayRetry, sendOptions, sleep, type RetryPolicy } from '../retry.js';
import { ITEM_TYPES, keys } from './table-keys.js';

type Resolved = Exclude<WriteOutcome, { kind: 'failed' }>;

/**
 * One TransactWriteItems per case: the invoiceRef guard (conditional on not existing), the case
 * and its attestation record. All three or none, so there is never a guard without its case nor
 * a case without its audit record. The transaction carries a ClientRequestToken that stays the
 * same across our retries, and the case id is fixed before the first attempt: if a response is
 * lost after the write committed, the retry either is recognised by DynamoDB as the same
 * transaction or meets the guard holding our own case id, and both count as created.
 *
 * When the retries run out after an attempt whose outcome is unknown (a timeout, a network error
 * or a 5xx: the transaction may have committed and only its answer been lost), the guard is read
 * back with a strongly consistent read before the case is reported as failed: a case that was
 * written is reported created, never TEMPORARY_FAILURE ("nothing was written").
 */
export class DynamoCaseWriter implements CaseWriter {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly policy: RetryPolicy = DEFAULT_RETRY_POLICY,
  ) {}

  async write(newCase: NewCase, deadline: Deadline = standaloneDeadline()): Promise<WriteOutcome> {
    const { stored, audit } = newCase;
    const command = new TransactWriteCommand({
      ClientRequestToken: stored.caseId.slice(0, 36),
      TransactItems: [
        {
          Put: {
            TableName: this.tableName,
            Item: {
              ...keys.withTestDataListing(stored.mode, stored.companyId, keys.invoiceRefGuard(stored.mode, stored.companyId, stored.invoiceRefKey)),
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
            Item: {
              ...keys.withTestDataListing(stored.mode, stored.companyId, keys.case(stored.mode, stored.caseId)),
              ...keys.caseListing(stored.mode, stored.companyId, stored.createdAt, stored.caseId),
              type: ITEM_TYPES.case,
              ...stored,
            },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        {
          Put: {
            TableName: this.tableName,
            Item: { ...keys.withTestDataListing(stored.mode, stored.companyId, keys.attestation(stored.mode, stored.caseId)), type: ITEM_TYPES.attestation, ...audit },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
      ],
    });

    // Nothing is started once the request's time is up: nothing was written, resubmitting is safe.
    if (isPast(deadline)) return { kind: 'failed', attempts: 0, error: 'DeadlinePassed' };
    let outcomeUnknown = false;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.client.send(command, sendOptions(deadline));
        return { kind: 'created', attempts: attempt };
      } catch (error) {
        const guard = guardConflict(error);
        if (guard) return this.outcomeOf(guard, stored, attempt);
        // An attempt cut off by the deadline may have reached DynamoDB: its outcome is unknown too.
        outcomeUnknown ||= mayHaveCommitted(error);
        const abortedInFlight = (error as { name?: string })?.name === 'AbortError';
        const lastError = describe(error);
        const delay = backoffMs(attempt, this.policy);
        if (isDeadlineAbort(error, deadline) || !isRetryable(error) || !mayRetry(attempt, delay, deadline, this.policy)) {
          // The read-back is clean-up: it may use the time kept back for the answer.
          const readBack = outcomeUnknown ? await this.readBack(stored, attempt, deadline.forCleanUp()) : 'absent';
          if (typeof readBack === 'object') return readBack;
          logger.warn('case write failed', { caseId: stored.caseId, attempts: attempt, error: lastError });
          // A transaction cut off in flight may still reach DynamoDB after the read-back saw no
          // guard: "nothing was written" cannot be promised then, only that a resubmission is safe.
          const unknown = readBack === 'unknown' || abortedInFlight;
          return { kind: 'failed', attempts: attempt, error: lastError, ...(unknown ? { outcomeUnknown: true as const } : {}) };
        }
        await sleep(delay);
      }
    }
  }

  private outcomeOf(guard: { caseId: string; reference: string }, stored: StoredCase, attempts: number): Resolved {
    if (guard.caseId === stored.caseId) return { kind: 'created', attempts };
    return { kind: 'duplicate', existingCaseId: guard.caseId, existingReference: guard.reference, attempts };
  }

  /** After an attempt with an unknown outcome: what the guard says; `absent` when nothing was written; `unknown` when storage cannot tell. */
  private async readBack(stored: StoredCase, attempts: number, deadline: Deadline): Promise<Resolved | 'absent' | 'unknown'> {
    for (let read = 1; ; read++) {
      try {
        const out = await this.client.send(
          new GetCommand({ TableName: this.tableName, Key: keys.invoiceRefGuard(stored.mode, stored.companyId, stored.invoiceRefKey), ConsistentRead: true }),
          sendOptions(deadline),
        );
        const item = out.Item;
        if (item && typeof item.caseId === 'string' && typeof item.reference === 'string') {
          return this.outcomeOf({ caseId: item.caseId, reference: item.reference }, stored, attempts);
        }
        return 'absent';
      } catch (error) {
        const delay = backoffMs(read, this.policy);
        if (isDeadlineAbort(error, deadline) || !mayRetry(read, delay, deadline, this.policy)) {
          logger.error('case write outcome unknown', { caseId: stored.caseId, error: describe(error) });
          return 'unknown';
        }
        await sleep(delay);
      }
    }
  }
}

/**
 * Whether a failed attempt may nevertheless have committed: the request may have reached
 * DynamoDB and only the answer was lost (timeout, network error, 5xx), or an earlier attempt with
 * the same ClientRequestToken is still running. A cancelled transaction or another 4xx answer
 * means nothing was written.
 */
function mayHaveCommitted(error: unknown): boolean {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } } | undefined;
  if (e?.name === 'AbortError') return true;
  if (error instanceof TransactionCanceledException || e?.name === 'TransactionCanceledException') return false;
  if (e?.name === 'TransactionInProgressException') return true;
  const status = e?.$metadata?.httpStatusCode;
  return !(typeof status === 'number' && status >= 400 && status < 500);
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
