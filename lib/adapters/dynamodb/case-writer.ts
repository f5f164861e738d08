import { createHash } from 'node:crypto';
import {
  TransactionCanceledException,
  TransactWriteItemsCommand,
  type AttributeValue,
  type CancellationReason,
} from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { convertToAttr, unmarshall } from '@aws-sdk/util-dynamodb';
import type { StoredCase } from '../../cases/case-record.js';
import type { CaseWriter, NewCase, WriteOutcome } from '../../cases/ports.js';
import { logger } from '../../runtime/logger.js';
import { isPast, standaloneDeadline, type Deadline } from '../../deadline.js';
import { attempt, DEFAULT_RETRY_POLICY, isRetryable, isTransactionCancelled, SETTLE_AFTER_MS, sleep, untilProcessed } from '../retry.js';
import type { Attempted, Failure, RetryPolicy } from '../retry.js';
import { attributeMap } from './attribute-values.js';
import { eventItem } from './event-items.js';
import { ITEM_TYPES, keys } from './table-keys.js';

type Resolved = Exclude<WriteOutcome, { kind: 'failed' }>;

/** TransactWriteItems takes at most 100 actions; a case is four (guard, case, audit record, its `case.created` event). */
export const ACTIONS_PER_CASE = 4;
export const CASES_PER_TRANSACTION = Math.floor(100 / ACTIONS_PER_CASE);

/** Every item of a case is new: its guard, the case, its audit record and its event. */
const NOT_EXISTS = 'attribute_not_exists(pk)';

/** The guard's place among a case's actions: its cancellation reason carries the existing guard. */
const GUARD_ACTION = 0;

/**
 * Several cases per TransactWriteItems: for each case the invoiceRef guard (conditional on not
 * existing), the case, its attestation record and its `case.created` event (event-items.ts: the
 * transactional outbox). All four or none for each case, so there is never a guard without its
 * case, a case without its audit record, nor an event without its case or a case without its
 * event. A batch is split into as few transactions as the 100-action limit allows, of even size,
 * sent in parallel: 25 cases of four actions each, so a 100-case batch is four transactions.
 *
 * A transaction is all or nothing for every case in it, so one case DynamoDB refuses cancels the
 * others: the cancellation reasons name, per action, what refused it. A case whose guard exists
 * is answered from the guard's reason (ReturnValuesOnConditionCheckFailure: ALL_OLD): duplicate,
 * or created when the guard holds our own case id (a retry of our own write); a case refused for
 * another reason (a ValidationError on one of its items) fails alone. The rest were not written
 * and are sent again as a further round: progress, not a retry, so it takes nothing from the
 * request's retry budget. Transaction conflicts and throttling are retried like any transient
 * failure, within the policy, the budget and the deadline (lib/adapters/retry.ts).
 *
 * Lost answers: every round carries a ClientRequestToken derived from its content (the case ids
 * it writes, fixed before the first attempt), so a retry of the same round is recognised by
 * DynamoDB as the same transaction, and a later round, whose content differs, has a token of its
 * own (a token is only valid for an identical request). A round that committed but lost its
 * answer meets, on its retry, DynamoDB's memory of the token or guards holding our own case ids:
 * both count as created.
 *
 * In doubt: an attempt cut off without an answer (a timeout, a network error, a 5xx, the
 * deadline's abort) may still be applied by DynamoDB after we gave up on it, and
 * TransactionInProgressException says one is being applied. Only an answer to the same token
 * settles that: success (created) or a cancellation (nothing written). When the retries run out
 * with the round in doubt, it is settled as far as the time kept for it allows
 * (`Deadline.forVerification`, so completing the Idempotency-Key keeps its own share):
 *   1. one more same-token attempt at least SETTLE_AFTER_MS after the first, which DynamoDB
 *      documents as the way to have it finish an idempotent transaction still in progress;
 *   2. otherwise, or when that too is cut off, the guards read back in one consistent BatchGetItem:
 *      a guard found answers its case (created, or duplicate);
 *   3. a case still unanswered is failed with `outcomeUnknown`: it may yet be written, and the
 *      caller must not say "nothing was written" nor give the request's Idempotency-Key back.
 */
export class DynamoCaseWriter implements CaseWriter {
  private readonly settleAfterMs: number;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly policy: RetryPolicy = DEFAULT_RETRY_POLICY,
    options: { settleAfterMs?: number } = {},
  ) {
    this.settleAfterMs = options.settleAfterMs ?? SETTLE_AFTER_MS;
  }

  /** One case: the same path as a batch of one. */
  async write(newCase: NewCase, deadline: Deadline = standaloneDeadline()): Promise<WriteOutcome> {
    const [outcome] = await this.writeAll([newCase], deadline);
    return outcome!;
  }

  async writeAll(newCases: readonly NewCase[], deadline: Deadline = standaloneDeadline()): Promise<WriteOutcome[]> {
    const outcomes = new Array<WriteOutcome>(newCases.length);
    await Promise.all(
      transactionsOf(newCases).map(async (indexes) => {
        const results = await this.writeTransaction(
          indexes.map((i) => newCases[i]!),
          deadline,
        );
        indexes.forEach((caseIndex, k) => (outcomes[caseIndex] = results[k]!));
      }),
    );
    return outcomes;
  }

  /** The cases of one transaction (at most CASES_PER_TRANSACTION, distinct guards), in rounds until each is answered. */
  private async writeTransaction(cases: readonly NewCase[], deadline: Deadline): Promise<WriteOutcome[]> {
    const outcomes = new Array<WriteOutcome | undefined>(cases.length);
    let pending = cases.map((_, i) => i);
    while (pending.length > 0) {
      const round = pending.map((i) => cases[i]!);
      const answers = await this.writeRound(round, deadline);
      pending.forEach((caseIndex, k) => {
        const answer = answers[k];
        if (answer) outcomes[caseIndex] = answer;
      });
      pending = pending.filter((_, k) => !answers[k]);
    }
    return outcomes.map((o) => o!);
  }

  /**
   * One round, one token: an outcome for each of its cases, or undefined for a case that was not
   * written because another case cancelled the round (it goes into the next round).
   */
  private async writeRound(round: readonly NewCase[], deadline: Deadline): Promise<(WriteOutcome | undefined)[]> {
    const command = this.transaction(round);
    const sent = await attempt((options) => this.client.send(command, options), deadline, this.policy, { settles: settlesTheToken });
    if (sent.ok) return round.map(() => ({ kind: 'created', attempts: sent.attempts }));
    // Nothing was started (the request's time was up) or DynamoDB answered this token: nothing is in flight.
    if (!sent.inDoubt) return this.answered(sent.error, round, sent.attempts, deadline);

    const verification = deadline.forVerification();
    const settled = await this.settle(command, sent, verification);
    if (settled?.ok) return round.map(() => ({ kind: 'created', attempts: sent.attempts + 1 }));
    // Only an answer to the token settles it; a throttled or cut-off settling attempt leaves the round in doubt.
    if (settled && settlesTheToken(settled.error)) return this.answered(settled.error, round, sent.attempts + 1, deadline);

    const attempts = sent.attempts + (settled ? 1 : 0);
    const readBack = await this.readBack(round, attempts, verification);
    const lastError = describe(settled?.error ?? sent.error);
    return round.map((newCase, k) => {
      const found = readBack[k];
      if (found) return found;
      logger.warn('case write outcome unknown', { caseId: newCase.stored.caseId, attempts, error: lastError });
      return { kind: 'failed', attempts, error: lastError, outcomeUnknown: true };
    });
  }

  /**
   * The answer to a round nothing of which is in flight: the cases the cancellation answers, and
   * for the others undefined (sent again) or, when the round was refused as a whole, failed.
   */
  private answered(error: unknown, round: readonly NewCase[], attempts: number, deadline: Deadline): (WriteOutcome | undefined)[] {
    const answers = this.cancellationOutcomes(error, round, attempts);
    const someAnswered = answers.some((a) => a !== undefined);
    // Some cases answered: the others were not written and go again, while there is time.
    if (someAnswered && !isPast(deadline)) return answers;
    const lastError = someAnswered ? 'DeadlinePassed' : describe(error);
    return round.map((newCase, k) => {
      const answer = answers[k];
      if (answer) return answer;
      logger.warn('case write failed', { caseId: newCase.stored.caseId, attempts, error: lastError });
      return { kind: 'failed', attempts, error: lastError };
    });
  }

  /**
   * One more attempt with the round's token, no sooner than `settleAfterMs` after its first: the
   * attempt that makes DynamoDB finish a transaction still in progress, and tells us how it ended.
   * Undefined when the time kept for verification does not reach that moment.
   */
  private async settle(command: TransactWriteItemsCommand, sent: Failure, verification: Deadline): Promise<Attempted<unknown> | undefined> {
    const at = Math.max(Date.now(), sent.firstAttemptAt + this.settleAfterMs);
    if (at + SETTLE_ATTEMPT_MIN_MS > verification.workBy) return undefined;
    await sleep(at - Date.now());
    return attempt((options) => this.client.send(command, options), verification, ONE_ATTEMPT, { settles: settlesTheToken });
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
      TransactItems: round.flatMap(({ stored, audit, event }) => {
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
              Item: caseItem(stored),
              ConditionExpression: NOT_EXISTS,
            },
          },
          {
            Put: {
              TableName,
              Item: attributeMap(
                keys.withTestDataListing(mode, companyId, keys.attestation(mode, caseId)),
                { type: ITEM_TYPES.attestation },
                audit,
              ),
              ConditionExpression: NOT_EXISTS,
            },
          },
          {
            Put: {
              TableName,
              Item: eventItem(event, companyId, mode),
              ConditionExpression: NOT_EXISTS,
            },
          },
        ];
      }),
    });
  }

  /**
   * What a cancelled round says of each of its cases, by position: the guard's condition failed
   * (duplicate, or created when it holds our own case id); another refusal of one of its actions
   * that will not change on a retry (a failed condition on the case, audit record or event, which
   * our random case and event ids cannot produce; a ValidationError): failed, with that reason's code; or
   * undefined when the case itself was not refused. All undefined when the error is no cancellation.
   */
  private cancellationOutcomes(error: unknown, round: readonly NewCase[], attempts: number): (WriteOutcome | undefined)[] {
    const reasons = cancellationReasons(error) ?? [];
    return round.map((newCase, k) => {
      const own = reasons.slice(k * ACTIONS_PER_CASE, (k + 1) * ACTIONS_PER_CASE);
      const guard = existingGuard(own[GUARD_ACTION]);
      if (guard) return outcomeOf(guard, newCase.stored, attempts);
      const refusal = own.find((r) => r.Code !== undefined && r.Code !== 'None' && !isRetryable(cancelledFor(r)));
      return refusal ? { kind: 'failed', attempts, error: refusal.Code! } : undefined;
    });
  }

  /**
   * A round in doubt: what each of its guards says, in one consistent BatchGetItem (keys it leaves
   * unprocessed are asked again, retry.ts's `untilProcessed`). Undefined for a case whose guard is
   * absent or could not be read: its transaction may still land.
   */
  private async readBack(round: readonly NewCase[], attempts: number, deadline: Deadline): Promise<(Resolved | undefined)[]> {
    type GuardKey = ReturnType<typeof keys.invoiceRefGuard>;
    const guardKey = (stored: StoredCase) => keys.invoiceRefGuard(stored.mode, stored.companyId, stored.invoiceRefKey);
    const idOf = (key: { pk?: unknown; sk?: unknown }) => `${String(key.pk)}\u0000${String(key.sk)}`;
    const found = new Map<string, { caseId: string; reference: string }>();
    const { failure } = await untilProcessed<GuardKey>(
      round.map(({ stored }) => guardKey(stored)),
      async (wanted, options) => {
        const read = new BatchGetCommand({ RequestItems: { [this.tableName]: { Keys: [...wanted], ConsistentRead: true } } });
        const out = await this.client.send(read, options);
        for (const item of out.Responses?.[this.tableName] ?? []) {
          if (typeof item.caseId === 'string' && typeof item.reference === 'string')
            found.set(idOf(item), { caseId: item.caseId, reference: item.reference });
        }
        return (out.UnprocessedKeys?.[this.tableName]?.Keys ?? []) as GuardKey[];
      },
      deadline,
      this.policy,
    );
    if (failure) {
      logger.error('case write read-back failed', { caseIds: round.map((c) => c.stored.caseId), error: describe(failure.error) });
    }
    return round.map(({ stored }) => {
      const guard = found.get(idOf(guardKey(stored)));
      return guard ? outcomeOf(guard, stored, attempts) : undefined;
    });
  }
}

/** The settling attempt is only worth sending with at least this long left to answer. */
const SETTLE_ATTEMPT_MIN_MS = 200;
/** The settling attempt is one attempt: its failure is read back, not retried. */
const ONE_ATTEMPT: RetryPolicy = { ...DEFAULT_RETRY_POLICY, maxAttempts: 1 };

/**
 * An answer that settles every attempt of the round's token: a cancellation whose cause an earlier
 * attempt still on the network would meet too (a failed condition, a refused item). A cancellation
 * for a conflict or throttling does not: it says nothing of an earlier attempt that had not reached
 * DynamoDB yet, which may still commit.
 */
function settlesTheToken(error: unknown): boolean {
  return cancellationReasons(error) !== undefined && !isRetryable(error);
}

/** One cancellation reason as the error it would be alone, for the retry layer's judgement. */
function cancelledFor(reason: CancellationReason): TransactionCanceledException {
  return new TransactionCanceledException({ message: reason.Message ?? '', $metadata: {}, CancellationReasons: [reason] });
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

/** The case item: its flat attributes in one pass, and the lifecycle's two nested ones (a map and a list) marshalled by the SDK. */
function caseItem(stored: StoredCase): Record<string, AttributeValue> {
  // A new case has no payments, closure or revision yet (recovery-store.ts writes them); they are never flat.
  const { debtorVerification, statusHistory, paymentFacts: _payments, closure: _closure, revision: _revision, ...flat } = stored;
  const { mode, companyId, caseId } = stored;
  const item = attributeMap(
    keys.withTestDataListing(mode, companyId, keys.case(mode, caseId)),
    keys.caseListing(mode, companyId, stored.createdAt, caseId),
    { type: ITEM_TYPES.case },
    flat,
  );
  if (debtorVerification) item.debtorVerification = convertToAttr(debtorVerification);
  if (statusHistory) item.statusHistory = convertToAttr(statusHistory);
  return item;
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
  return isTransactionCancelled(error) ? (error.CancellationReasons ?? []) : undefined;
}

/** The existing guard named by a guard action's cancellation reason; undefined when its condition held. */
function existingGuard(reason: CancellationReason | undefined): { caseId: string; reference: string } | undefined {
  if (reason?.Code !== 'ConditionalCheckFailed' || !reason.Item) return undefined;
  // lib-dynamodb leaves cancellation items in their raw AttributeValue form.
  const item = unmarshall(reason.Item as Record<string, AttributeValue>);
  if (typeof item.caseId !== 'string' || typeof item.reference !== 'string') return undefined;
  return { caseId: item.caseId, reference: item.reference };
}

function describe(error: unknown): string {
  if (error === undefined) return 'DeadlinePassed';
  if (isTransactionCancelled(error)) {
    return `TransactionCanceled[${(error.CancellationReasons ?? []).map((r) => r.Code ?? 'None').join(',')}]`;
  }
  return (error as Error)?.name ?? 'Error';
}
