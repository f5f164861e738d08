import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { verificationAdapters } from '../lib/adapters/production-verification-adapters.js';
import { caseFromItem } from '../lib/adapters/dynamodb/case-reader.js';
import { ITEM_TYPES } from '../lib/adapters/dynamodb/table-keys.js';
import { retryMessageSchema } from '../lib/adapters/sqs/verification-retry-queue.js';
import {
  attemptVerification,
  processNewCase,
  workForNewCase,
  type AttemptResult,
  type CaseVerificationDeps,
} from '../lib/cases/verification/verify-case-debtor.js';
import { logger } from '../lib/runtime/logger.js';
import { metrics, MetricUnit } from '../lib/runtime/metrics.js';
import { builtOnFirstEvent, workerHandler } from '../lib/runtime/worker-handler.js';

/**
 * The debtor verification worker, one function for its two event sources:
 *
 * - the table's DynamoDB stream, filtered to INSERTs of case items (the event source mapping's
 *   filter; checked again here): every new case is settled (`READY` when its gates are already
 *   satisfied) and, when its debtor is `PENDING`, verified;
 * - the verification retry queue (SQS): a case whose registry could not answer yet, attempted
 *   again; a message that arrives before its `notBefore` (SQS delays at most 15 minutes) is sent
 *   again with the remaining delay; a message it cannot read stays in the queue (reported as a
 *   failure) until the redrive policy moves it to the dead-letter queue, which an alarm watches.
 *
 * One function rather than two: both run the same attempt with the same rights, registry key and
 * per-process cache, and the event's source tells them apart. Each record succeeds or fails on
 * its own (`batchItemFailures`): a failed stream record is retried from its sequence number (the
 * records before it are not replayed), a failed message alone returns to its queue. Replays are
 * harmless: the change use cases write nothing twice.
 *
 * A case still `PENDING` after the retry horizon (24 h) is counted in the metric
 * `DebtorVerificationExhausted`, which an alarm watches.
 */
export const EXHAUSTED_METRIC = 'DebtorVerificationExhausted';

export type VerifierEvent = DynamoDBStreamEvent | SQSEvent;
export type VerifierResult = DynamoDBBatchResponse | SQSBatchResponse;

export type VerifyDebtorsDeps = CaseVerificationDeps;

function isSqsEvent(event: VerifierEvent): event is SQSEvent {
  return event.Records.length > 0 && (event.Records[0] as { eventSource?: string }).eventSource === 'aws:sqs';
}

function countOutcome(result: AttemptResult | undefined): void {
  if (!result) return;
  if (result.kind === 'recorded') metrics.addMetric(`DebtorVerification_${result.status}`, MetricUnit.Count, 1);
  if (result.kind === 'retry-scheduled') metrics.addMetric('DebtorVerificationRetryScheduled', MetricUnit.Count, 1);
  if (result.kind === 'exhausted') metrics.addMetric(EXHAUSTED_METRIC, MetricUnit.Count, 1);
}

export function buildVerifyDebtorsCore(deps: VerifyDebtorsDeps) {
  const now = deps.changes.now;

  async function streamRecord(record: DynamoDBRecord): Promise<void> {
    const image = record.dynamodb?.NewImage;
    if (record.eventName !== 'INSERT' || !image) return;
    const item = unmarshall(image as Record<string, AttributeValue>);
    if (item.type !== ITEM_TYPES.case) return;
    const created = caseFromItem(item);
    const work = workForNewCase(created, now());
    if (!work.settles && !work.pending) return;
    const result = await processNewCase(deps, { mode: created.mode, caseId: created.caseId, ...work });
    countOutcome(result.verification);
    logResult(created.caseId, result.verification, { settled: result.settled });
  }

  async function queueRecord(record: SQSRecord): Promise<void> {
    const message = retryMessageSchema.safeParse(parseJson(record.body));
    if (!message.success) {
      // Not dropped: it stays, and the queue's redrive policy moves it to the dead-letter queue,
      // which an alarm watches (a case behind it would otherwise stay PENDING with nobody told).
      logger.error('verification retry message unreadable: left for the dead-letter queue', { messageId: record.messageId });
      throw new UnreadableMessage();
    }
    const { notBefore, ...attempt } = message.data;
    // SQS delays at most 15 minutes; a longer wait is served in several legs.
    if (new Date(notBefore).getTime() > now().getTime() + 1000) {
      await deps.retries.schedule(attempt, new Date(notBefore));
      return;
    }
    const result = await attemptVerification(deps, attempt);
    countOutcome(result);
    logResult(attempt.caseId, result, { failures: attempt.failures });
  }

  return async (event: VerifierEvent): Promise<VerifierResult> => {
    if (isSqsEvent(event)) {
      const settled = await Promise.allSettled(event.Records.map(queueRecord));
      return { batchItemFailures: failuresOf(settled, event.Records, (r) => r.messageId) };
    }
    const records = event.Records;
    const settled = await Promise.allSettled(records.map(streamRecord));
    return { batchItemFailures: failuresOf(settled, records, (r) => r.dynamodb?.SequenceNumber ?? '') };
  };
}

/** A retry message the worker cannot read: reported in batchItemFailures, already logged. */
class UnreadableMessage extends Error {}

function parseJson(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

function failuresOf<R>(settled: PromiseSettledResult<void>[], records: R[], id: (record: R) => string): { itemIdentifier: string }[] {
  const failures: { itemIdentifier: string }[] = [];
  settled.forEach((outcome, i) => {
    if (outcome.status === 'fulfilled') return;
    const error = outcome.reason as Error;
    if (!(error instanceof UnreadableMessage))
      logger.error('verification record failed: left for a retry', {
        itemIdentifier: id(records[i]!),
        error: error?.message ?? String(error),
      });
    failures.push({ itemIdentifier: id(records[i]!) });
  });
  return failures;
}

function logResult(caseId: string, result: AttemptResult | undefined, extra: Record<string, unknown>): void {
  if (result?.kind === 'exhausted') {
    logger.error('debtor verification exhausted: the case stays PENDING', { caseId, failures: result.failures, detail: result.detail });
    return;
  }
  logger.debug('verification worker', {
    caseId,
    ...extra,
    result: result?.kind,
    ...(result?.kind === 'retry-scheduled' ? { reason: result.reason } : {}),
  });
}

export function buildVerifyDebtorsHandler(deps: VerifyDebtorsDeps) {
  return workerHandler(buildVerifyDebtorsCore(deps));
}

export const handler = builtOnFirstEvent(() => buildVerifyDebtorsHandler(verificationAdapters()));
