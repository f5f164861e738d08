import { createHash } from 'node:crypto';
import { TransactionCanceledException, TransactWriteItemsCommand, type AttributeValue, type CancellationReason } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { StoredCase } from '../../cases/case-record.js';
import type { CaseWriter, NewCase, WriteOutcome } from '../../cases/ports.js';
import { logger } from '../../runtime/logger.js';
import { isPast, standaloneDeadline, type Deadline } from '../../deadline.js';
import { backoffMs, DEFAULT_RETRY_POLICY, isDeadlineAbort, isRetryable, mayRetry, sendOptions, sleep, type RetryPolicy } from '../retry.js';
import { attributeMap } from './attribute-values.js';
import { ITEM_TYPES, keys } from './table-keys.js';

type Resolved = Exclude<WriteOutcome, { kind: 'failed' }>;

/** TransactWriteItems takes at most 100 actions; a case is three (guard, case, audit record). */
export const ACTIONS_PER_CASE = 3;
export const CASES_PER_TRANSACTION = Math.floor(100 / ACTIONS_PER_CASE);

/** Every item of a case is new: its guard, the case and its audit record. */
const NOT_EXISTS = 'attribute_not_exists(pk)';

/** The guard's place among a case's actions: its cancellation reason carries the existing guard. */
const GUARD_ACTION = 0;

/**
 * Several cases per TransactWriteItems: for each case the invoiceRef guard (conditional on not
 * existing), the case and its attestation record. All three or none for each case, so there is
 * never a guard without its case nor a case without its audit record. A batch is split into as
 * few transactions as the 100-action limit allows, of even size, sent in parallel; a 100-case
 * batch is four transactions where it used to be a hundred.
 *
 * A transaction is all or nothing for every case in it, so a case whose guard already exists
 * cancels the others: the cancellation reasons name, per action, the condition that failed, and
 * the guard's reason carries the existing guard (ReturnValuesOnConditionCheckFailure: ALL_OLD).
 * Those cases are answered (duplicate, or created when the guard holds our own case id: a retry
 * of our own write) and the rest are sent again as a further round.
 *
 * Lost answers: every round carries a ClientRequestToken derived from its content (the case ids
 * it writes; their items are fixed before the first attempt), so a retry of the same round is
 * recognised by DynamoDB as the same transaction, and a later round, whose content differs, has a
 * token of its own (a token is only valid for an identical request). Case ids are fixed before
 * the first attempt, so a round that committed but lost its answer meets, on its retry, either
 * DynamoDB's memory of the token or guards holding our own case ids: both count as created.
 * When the retries run out after an attempt whose outcome is unknown (a timeout, a network error
 * or a 5xx), the round's guards are read back, strongly consistent, in one BatchGetItem before
 * its cases are reported as failed: a case that was written is reported created, never
 * TEMPORARY_FAILURE ("nothing was written").
 *
 * Transaction conflicts (another batch writing the same guard at the same moment) and throttling
 * are retried like any transient failure: within the policy, the request's retry budget and its
 * deadline. A round that only drops the cases whose condition failed is progress, not a retry,
 * and takes nothing from the budget.
 */
export class DynamoCaseWriter implements CaseWriter {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly policy: RetryPolicy = DEFAULT_RETRY_POLICY,
  ) {}

  /** One case: the same path as a batch of one. */
  async write(newCase: NewCase, deadline: Deadline = standaloneDeadline()): Promise<WriteOutcome> {
    const [outcome] = await this.writeAll([newCase], deadline);
    return outcome!;
  }

  async writeAll(newCases: readonly NewCase[], deadline: Deadline = standaloneDeadline()): Promise<WriteOutcome[]> {
    const outcomes = new Array<WriteOutcome>(newCases.length);
    await Promise.all(
      transactionsOf(newCases).map(async (indexes) => {
        const results = await this.writeTransaction(indexes.map((i) => newCases[i]!), deadline);
        indexes.forEach((caseIndex, k) => (outcomes[caseIndex] = results[k]!));
      }),
    );
    return outcomes;
  }

  /** The cases of one transaction (at most CASES_PER_TRANSACTION, distinct guards), in rounds until each is answered. */
  private async writeTransaction(cases: readonly NewCase[], deadline: Deadline): Promise<WriteOutcome[]> {
    const outcomes = new Array<WriteOutcome | undefined>(cases.length);
    // Nothing is started once the request's time is up: nothing was written, resubmitting is safe.
    if (isPast(deadline)) return cases.map(() => ({ kind: 'failed', attempts: 0, error: 'DeadlinePassed' }));
    let pending = cases.map((_, i) => i);
    let outcomeUnknown = false;
    let attempt = 1;
    while (pending.length > 0) {
      const round = pending.map((i) => cases[i]!);
      try {
        await this.client.send(this.transaction(round), sendOptions(deadline));
        for (const i of pending) outcomes[i] = { kind: 'created', attempts: attempt };
        break;
      } catch (error) {
        const answered = this.conditionOutcomes(error, round, attempt);
        if (answered.size > 0) {
          // Cancelled because some guards exist: those cases are answered; nothing of the others
          // was written, so they go again in a round of their own (new content, new token).
          pending.forEach((caseIndex, k) => {
            const outcome = answered.get(k);
            if (outcome) outcomes[caseIndex] = outcome;
          });
          pending = pending.filter((_, k) => !answered.has(k));
          if (isPast(deadline)) {
            for (const i of pending) outcomes[i] = { kind: 'failed', attempts: attempt, error: 'DeadlinePassed' };
            break;
          }
          continue;
        }
        // An attempt cut off by the deadline may have reached DynamoDB: its outcome is unknown too.
        outcomeUnknown ||= mayHaveCommitted(error);
        const abortedInFlight = (error as { name?: string })?.name === 'AbortError';
        const lastError = describe(error);
        const delay = backoffMs(attempt, this.policy);
        if (isDeadlineAbort(error, deadline) || !isRetryable(error) || !mayRetry(attempt, delay, deadline, this.policy)) {
          // The read-back is clean-up: it may use the time kept back for the answer.
          const readBack = outcomeUnknown ? await this.readBack(round, attempt, deadline.forCleanUp()) : undefined;
          pending.forEach((caseIndex, k) => {
            const found = readBack?.[k];
            if (found && typeof found === 'object') {
              outcomes[caseIndex] = found;
              return;
            }
            logger.warn('case write failed', { caseId: cases[caseIndex]!.stored.caseId, attempts: attempt, error: lastError });
            // A transaction cut off in flight may still reach DynamoDB after the read-back saw no
            // guard: "nothing was written" cannot be promised then, only that a resubmission is safe.
            const unknown = found === 'unknown' || abortedInFlight;
            outcomes[caseIndex] = { kind: 'failed', attempts: attempt, error: lastError, ...(unknown ? { outcomeUnknown: true as const } : {}) };
          });
          break;
        }
        await sleep(delay);
        attempt++;
      }
    }
    return outcomes.map((o) => o!);
  }

  /**
   * One round as a transaction, its items in AttributeValue form (attribute-values.ts): sent
   * through the DocumentClient's stack as the plain DynamoDB command, so it is not marshalled a
   * second time. The SDK's own serializer writes, signs and sends it: writing the body ourselves
   * saved about 4 ms of CPU per 100-case batch, but hooked middleware an SDK upgrade may rename.
   */
  private transaction(round: readonly NewCase[]): TransactWriteItemsCommand {
    const TableName = this.tableName;
    return new TransactWriteItemsCommand({
      ClientRequestToken: roundToken(round),
      TransactItems: round.flatMap(({ stored, audit }) => {
        const { mode, companyId, caseId } = stored;
        return [
          {
            Put: {
              TableName,
              Item: attributeMap(keys.withTestDataListing(mode, companyId, keys.invoiceRefGuard(mode, companyId, stored.invoiceRefKey)), {
                type: ITEM_TYPES.invoiceRefGuard,
                companyId,
                invoiceRef: stored.invoiceRef,
                caseId,
                reference: stored.reference,
                createdAt: stored.createdAt,
              }),
              ConditionExpression: NOT_EXISTS,
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
            },
          },
          {
            Put: {
              TableName,
              Item: attributeMap(
                keys.withTestDataListing(mode, companyId, keys.case(mode, caseId)),
                keys.caseListing(mode, companyId, stored.createdAt, caseId),
                { type: ITEM_TYPES.case },
                stored,
              ),
              ConditionExpression: NOT_EXISTS,
            },
          },
          {
            Put: {
              TableName,
              Item: attributeMap(keys.withTestDataListing(mode, companyId, keys.attestation(mode, caseId)), { type: ITEM_TYPES.attestation }, audit),
              ConditionExpression: NOT_EXISTS,
            },
          },
        ];
      }),
    });
  }

  /**
   * The cases of a cancelled round whose guard condition failed, by their position in the round,
   * with their outcome. A condition failing on a case or audit record without its guard (which
   * our keys cannot produce: case ids are random and written only with their guard) fails that
   * case rather than retrying it for ever. Empty when the round was not cancelled on a condition.
   */
  private conditionOutcomes(error: unknown, round: readonly NewCase[], attempts: number): Map<number, WriteOutcome> {
    const answered = new Map<number, WriteOutcome>();
    const reasons = cancellationReasons(error);
    if (!reasons) return answered;
    round.forEach((newCase, k) => {
      const own = reasons.slice(k * ACTIONS_PER_CASE, (k + 1) * ACTIONS_PER_CASE);
      const guard = existingGuard(own[GUARD_ACTION]);
      if (guard) answered.set(k, outcomeOf(guard, newCase.stored, attempts));
      else if (own.some((r) => r.Code === 'ConditionalCheckFailed')) answered.set(k, { kind: 'failed', attempts, error: 'ConditionalCheckFailed' });
    });
    return answered;
  }

  /**
   * After an attempt with an unknown outcome: what each guard of the round says, in one
   * consistent BatchGetItem (keys it leaves unprocessed are asked again); `absent` when nothing
   * was written; `unknown` when storage cannot tell.
   */
  private async readBack(round: readonly NewCase[], attempts: number, deadline: Deadline): Promise<(Resolved | 'absent' | 'unknown')[]> {
    const guardKey = (stored: StoredCase) => keys.invoiceRefGuard(stored.mode, stored.companyId, stored.invoiceRefKey);
    const idOf = (key: { pk?: unknown; sk?: unknown }) => `${String(key.pk)}\u0000${String(key.sk)}`;
    const found = new Map<string, { caseId: string; reference: string }>();
    let wanted = round.map(({ stored }) => guardKey(stored));
    for (let read = 1; wanted.length > 0; ) {
      try {
        const out = await this.client.send(new BatchGetCommand({ RequestItems: { [this.tableName]: { Keys: wanted, ConsistentRead: true } } }), sendOptions(deadline));
        for (const item of out.Responses?.[this.tableName] ?? []) {
          if (typeof item.caseId === 'string' && typeof item.reference === 'string') found.set(idOf(item), { caseId: item.caseId, reference: item.reference });
        }
        const unprocessed = out.UnprocessedKeys?.[this.tableName]?.Keys ?? [];
        wanted = unprocessed as typeof wanted;
        if (wanted.length === 0) break;
        // Unprocessed keys are DynamoDB shedding load: ask again after a backoff, like a throttle.
        const delay = backoffMs(read, this.policy);
        if (!mayRetry(read, delay, deadline, this.policy)) break;
        read++;
        await sleep(delay);
      } catch (error) {
        const delay = backoffMs(read, this.policy);
        if (isDeadlineAbort(error, deadline) || !mayRetry(read, delay, deadline, this.policy)) {
          logger.error('case write outcome unknown', { caseIds: round.map((c) => c.stored.caseId), error: describe(error) });
          break;
        }
        read++;
        await sleep(delay);
      }
    }
    const unanswered = new Set(wanted.map(idOf));
    return round.map(({ stored }) => {
      const id = idOf(guardKey(stored));
      if (unanswered.has(id)) return 'unknown';
      const guard = found.get(id);
      return guard ? outcomeOf(guard, stored, attempts) : 'absent';
    });
  }
}

/**
 * The batch's cases grouped into transactions: as few as the action limit allows, of even size
 * (so no transaction is much slower than the others), and never two cases with the same guard
 * in one transaction (DynamoDB refuses two actions on one item); such a case waits for a later
 * transaction. Returns the cases' indexes.
 */
export function transactionsOf(newCases: readonly NewCase[]): number[][] {
  const groups: { indexes: number[]; guards: Set<string> }[] = [];
  const count = Math.ceil(newCases.length / CASES_PER_TRANSACTION);
  const size = count === 0 ? 0 : Math.ceil(newCases.length / count);
  for (const [index, { stored }] of newCases.entries()) {
    const guard = `${stored.companyId}\u0000${stored.invoiceRefKey}`;
    let group = groups.find((g) => g.indexes.length < size && !g.guards.has(guard));
    if (!group) {
      group = { indexes: [], guards: new Set() };
      groups.push(group);
    }
    group.indexes.push(index);
    group.guards.add(guard);
  }
  return groups.map((g) => g.indexes);
}

/** The token of one round: a digest of the case ids it writes (at most 36 characters). */
function roundToken(round: readonly NewCase[]): string {
  return createHash('sha256')
    .update(round.map((c) => c.stored.caseId).join(','))
    .digest('base64url')
    .slice(0, 36);
}

function outcomeOf(guard: { caseId: string; reference: string }, stored: StoredCase, attempts: number): Resolved {
  if (guard.caseId === stored.caseId) return { kind: 'created', attempts };
  return { kind: 'duplicate', existingCaseId: guard.caseId, existingReference: guard.reference, attempts };
}

function cancellationReasons(error: unknown): CancellationReason[] | undefined {
  if (!(error instanceof TransactionCanceledException) && (error as { name?: string })?.name !== 'TransactionCanceledException') return undefined;
  return (error as TransactionCanceledException).CancellationReasons ?? [];
}

/** The existing guard named by a guard action's cancellation reason; undefined when its condition held. */
function existingGuard(reason: CancellationReason | undefined): { caseId: string; reference: string } | undefined {
  if (reason?.Code !== 'ConditionalCheckFailed' || !reason.Item) return undefined;
  // lib-dynamodb leaves cancellation items in their raw AttributeValue form.
  const item = unmarshall(reason.Item as Record<string, AttributeValue>);
  if (typeof item.caseId !== 'string' || typeof item.reference !== 'string') return undefined;
  return { caseId: item.caseId, reference: item.reference };
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
