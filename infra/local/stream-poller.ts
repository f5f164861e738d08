import { DescribeStreamCommand, DynamoDBStreamsClient, GetShardIteratorCommand } from '@aws-sdk/client-dynamodb-streams';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { LOCAL_CREDENTIALS } from '../../lib/adapters/dynamodb/dynamo-client.js';
import { answerWithinTimeout } from './answer-within-timeout.js';
import { assertDynamoDbStreamFilterPattern, matchesFilterPattern } from './match-filter-pattern.js';
import { reportedFailures } from './reported-failures.js';

/**
 * What the Lambda event source mapping does with the table's stream in AWS, for DynamoDB Local's
 * stream (it serves the Streams API on its own port): reads every shard from its oldest record,
 * hands the handler batches in the same event shape (`DynamoDBStreamEvent`), and honours partial
 * batch failures: the records before the first failed one are done, the batch is retried from the
 * failed one (with a growing pause), and after `maxRetryAttempts` retries the record is given to
 * `onFailure` (the on-failure destination's stand-in) and skipped, so one bad record never blocks
 * the shard for good. A handler that throws, or is still running at its function's timeout, fails
 * the whole batch, as in AWS (where the timed-out invocation is stopped; here it is only no longer
 * waited for, and the handlers are idempotent either way). Bisecting is not imitated: with partial
 * batch responses the failed record is known without it; what is given up is that one record,
 * where AWS gives up the rest of the batch it retried (after bisecting it down).
 */
export interface StreamPollerOptions {
  endpoint: string;
  region: string;
  tableName: string;
  handler: (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse | void>;
  /** Records per event, at most (the stack's batch size). */
  batchSize?: number;
  /** Pause between polls of a shard that had nothing new (AWS polls a shard about 4 times a second). */
  idleMs?: number;
  /**
   * Retries of a failed record before `onFailure` (default 3). The stack's mappings retry 5 or 10
   * times (infra/contract/stream-consumers.ts); with this poller's growing pause that would hold a
   * shard, and every test behind a bad record, for 15 s (docs/lifecycle-design.md, "Locally").
   */
  maxRetryAttempts?: number;
  /** The function's timeout: a batch still running then is a failed invocation (the whole batch retried), as in AWS. */
  timeoutMs?: number;
  onFailure?: (records: DynamoDBRecord[], reason: string) => void;
  /**
   * The event source mapping's filter pattern (infra/contract/stream-consumers.ts, the stack's own):
   * records it refuses are never handed to the handler (and count as read), as Lambda drops them
   * before the invocation. The handlers check again. A pattern with a key outside `dynamodb` is
   * refused at start, as AWS filters a DynamoDB stream on that key only.
   */
  filterPattern?: object;
}

export interface StreamPoller {
  /** Resolves when every record written so far has been handled (or given up), for tests and the bench. */
  drained(): Promise<void>;
  stop(): Promise<void>;
}

interface ShardState {
  iterator: string | undefined;
  lastSequence: string | undefined;
  /** Read but not yet handled (the tail of a batch that partly failed). */
  pending: DynamoDBRecord[];
  attempts: number;
  closed: boolean;
}

/** A record as the Streams API's JSON has it (GetRecords), which is the Lambda event's own attribute-value JSON. */
interface WireRecord {
  eventID?: string;
  eventName?: string;
  eventVersion?: string;
  dynamodb?: {
    ApproximateCreationDateTime?: number;
    Keys?: Record<string, unknown>;
    NewImage?: Record<string, unknown>;
    OldImage?: Record<string, unknown>;
    SequenceNumber?: string;
    SizeBytes?: number;
    StreamViewType?: string;
  };
}

/** The Lambda event's record, from the Streams API's (the same attribute-value JSON; times in whole epoch seconds). */
export function lambdaRecord(record: WireRecord, streamArn: string, region: string): DynamoDBRecord {
  const d = record.dynamodb ?? {};
  type Image = NonNullable<DynamoDBRecord['dynamodb']>['NewImage'];
  return {
    eventID: record.eventID,
    eventName: record.eventName as DynamoDBRecord['eventName'],
    eventVersion: record.eventVersion ?? '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: region,
    eventSourceARN: streamArn,
    dynamodb: {
      ...(d.ApproximateCreationDateTime !== undefined ? { ApproximateCreationDateTime: Math.floor(d.ApproximateCreationDateTime) } : {}),
      Keys: d.Keys as Image,
      ...(d.NewImage ? { NewImage: d.NewImage as Image } : {}),
      ...(d.OldImage ? { OldImage: d.OldImage as Image } : {}),
      SequenceNumber: d.SequenceNumber,
      SizeBytes: d.SizeBytes,
      StreamViewType: d.StreamViewType as NonNullable<DynamoDBRecord['dynamodb']>['StreamViewType'],
    },
  };
}

/** GetRecords refused the iterator as expired: a new one is asked for (after the last record read). */
class ExpiredIterator extends Error {}

/**
 * GetRecords refused the iterator as pointing before the shard's oldest record. In AWS that means
 * records older than the stream's 24 hours were trimmed before they were read. DynamoDB Local also
 * says it of every `TRIM_HORIZON` iterator taken while the shard was still empty, once the shard's
 * first record has a later sequence number than the shard's start, which happens whenever another
 * table was written in between (sequence numbers are counted across the whole store). A table
 * polled before its first write (a fresh `npm start`, the tests) can meet it; the iterator then
 * stays refused for good (an empty read hands back one at the same place).
 */
class TrimmedIterator extends Error {}

/**
 * GetRecords, read as JSON rather than through the SDK: its answer is already the Lambda event's
 * attribute-value JSON, and the SDK's typed reading of every image (about a tenth of a millisecond a
 * record) was, in a webhook burst, an eighth of the one Node process's time: every item the engines
 * write is on the stream and read by both consumers. Only DynamoDB Local is ever asked (the local
 * world's stream): it needs an access key in the Authorization header and checks no signature.
 */
async function getRecords(
  endpoint: string,
  region: string,
  iterator: string,
  limit: number,
): Promise<{ Records?: WireRecord[]; NextShardIterator?: string }> {
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-amz-json-1.0',
      'x-amz-target': 'DynamoDBStreams_20120810.GetRecords',
      authorization: `AWS4-HMAC-SHA256 Credential=${LOCAL_CREDENTIALS.accessKeyId}/20000101/${region}/dynamodb/aws4_request, SignedHeaders=host;x-amz-target, Signature=local`,
    },
    body: JSON.stringify({ ShardIterator: iterator, Limit: limit }),
    // A store that stops answering fails this poll (the loop polls again), never hangs the poller.
    signal: AbortSignal.timeout(GET_RECORDS_TIMEOUT_MS),
  });
  const text = await response.text();
  let body: { Records?: WireRecord[]; NextShardIterator?: string; __type?: string; message?: string; Message?: string };
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    throw new Error(`GetRecords: HTTP ${response.status}, not JSON: ${text.slice(0, 200)}`);
  }
  if (response.ok) return body;
  const type = body.__type?.split('#').pop() ?? `HTTP ${response.status}`;
  if (type === 'ExpiredIteratorException') throw new ExpiredIterator(type);
  if (type === 'TrimmedDataAccessException') throw new TrimmedIterator(type);
  throw new Error(`GetRecords: HTTP ${response.status} ${type}: ${body.message ?? body.Message ?? ''}`);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Records one GetRecords may return, at most (the DynamoDB Streams API's limit). Lambda's poller reads
 * a shard this way and applies the mapping's filter before it makes batches (of `batchSize` records
 * that match), so a stream crowded with records the filter drops (every item the webhook engines
 * write) is read a thousand at a time, not a batch's worth: reading only `batchSize` a call made the
 * twin slower than AWS at reaching the records a consumer wants.
 */
export const GET_RECORDS_LIMIT = 1000;
const GET_RECORDS_TIMEOUT_MS = 10_000;

export async function startStreamPoller(options: StreamPollerOptions): Promise<StreamPoller> {
  const batchSize = options.batchSize ?? 100;
  const { filterPattern } = options;
  if (filterPattern) assertDynamoDbStreamFilterPattern(filterPattern);
  const idleMs = options.idleMs ?? 100;
  const maxRetryAttempts = options.maxRetryAttempts ?? 3;
  const { timeoutMs } = options;
  const onFailure =
    options.onFailure ??
    ((records, reason) =>
      console.error(`stream poller: gave up on ${records.length} record(s) after ${maxRetryAttempts} retries (${reason})`));
  const clientOptions = { endpoint: options.endpoint, region: options.region, credentials: LOCAL_CREDENTIALS };
  const tables = new DynamoDBClient(clientOptions);
  const streams = new DynamoDBStreamsClient(clientOptions);
  const table = await tables.send(new DescribeTableCommand({ TableName: options.tableName }));
  tables.destroy();
  const streamArn = table.Table?.LatestStreamArn;
  if (!streamArn) throw new Error(`table ${options.tableName} has no stream: ensureTable enables it`);

  const shards = new Map<string, ShardState>();
  let stopped = false;
  /** Callers of drained(), each with the round it was called in: only a later idle round answers it. */
  let idleWaiters: { after: number; resolve: () => void }[] = [];
  let round = 0;

  async function discoverShards(): Promise<void> {
    let start: string | undefined;
    do {
      const out = await streams.send(new DescribeStreamCommand({ StreamArn: streamArn, ExclusiveStartShardId: start }));
      for (const shard of out.StreamDescription?.Shards ?? []) {
        if (shard.ShardId && !shards.has(shard.ShardId))
          shards.set(shard.ShardId, { iterator: undefined, lastSequence: undefined, pending: [], attempts: 0, closed: false });
      }
      start = out.StreamDescription?.LastEvaluatedShardId;
    } while (start);
  }

  async function iteratorFor(shardId: string, state: ShardState): Promise<string | undefined> {
    const out = await streams.send(
      new GetShardIteratorCommand({
        StreamArn: streamArn,
        ShardId: shardId,
        ...(state.lastSequence
          ? { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: state.lastSequence }
          : { ShardIteratorType: 'TRIM_HORIZON' }),
      }),
    );
    return out.ShardIterator;
  }

  /** Hands the shard's pending records to the handler, batch by batch; false when a batch must wait for a retry. */
  async function deliver(state: ShardState): Promise<boolean> {
    while (state.pending.length > 0) {
      const batch = state.pending.slice(0, batchSize);
      let failedAt: number;
      let reason: string;
      try {
        const response = await answerWithinTimeout(options.handler({ Records: batch }), timeoutMs);
        const failed = reportedFailures(
          response?.batchItemFailures,
          batch.map((r) => r.dynamodb?.SequenceNumber),
        );
        failedAt = failed === 'whole-batch' ? 0 : batch.findIndex((r) => failed.has(r.dynamodb?.SequenceNumber ?? ''));
        reason =
          failed === 'whole-batch'
            ? 'batchItemFailures named no record of the batch (an empty, missing or unknown itemIdentifier)'
            : 'reported in batchItemFailures';
      } catch (error) {
        failedAt = 0;
        reason = (error as Error).message;
      }
      if (failedAt < 0) {
        state.pending.splice(0, batch.length);
        state.attempts = 0;
        continue;
      }
      // As the event source mapping: the records before the failed one are checkpointed.
      state.pending.splice(0, failedAt);
      if (failedAt > 0) state.attempts = 0;
      state.attempts++;
      if (state.attempts > maxRetryAttempts) {
        onFailure(state.pending.splice(0, 1), reason);
        state.attempts = 0;
        continue;
      }
      return false;
    }
    return true;
  }

  async function pollShard(shardId: string, state: ShardState): Promise<boolean> {
    if (state.pending.length > 0) return deliver(state).then(() => true);
    if (state.closed) return false;
    state.iterator ??= await iteratorFor(shardId, state);
    if (!state.iterator) {
      state.closed = true;
      return false;
    }
    let out;
    try {
      out = await getRecords(options.endpoint, options.region, state.iterator, GET_RECORDS_LIMIT);
    } catch (error) {
      if (error instanceof ExpiredIterator) {
        state.iterator = undefined;
        return true;
      }
      if (!(error instanceof TrimmedIterator)) throw error;
      // Nothing read yet: the shard's oldest record is where a new TRIM_HORIZON iterator starts, and
      // nothing is lost. After a record was read, an iterator after it can only be refused once the
      // records after it are gone (past the 24 hours): that loss is said and the mapping reads on from
      // the oldest record kept, never asking again with an iterator that is refused for ever.
      if (state.lastSequence)
        console.error(
          `stream poller: records of shard ${shardId} after sequence number ${state.lastSequence} were trimmed before they were read; reading on from the oldest record kept`,
        );
      state.lastSequence = undefined;
      state.iterator = undefined;
      return true;
    }
    state.iterator = out.NextShardIterator;
    if (!out.NextShardIterator) state.closed = true;
    const read = (out.Records ?? []).map((r) => lambdaRecord(r, streamArn!, options.region));
    if (read.length === 0) return false;
    state.lastSequence = read[read.length - 1]!.dynamodb?.SequenceNumber;
    state.pending.push(...(filterPattern ? read.filter((record) => matchesFilterPattern(filterPattern, record)) : read));
    await deliver(state);
    return true;
  }

  const loop = (async () => {
    while (!stopped) {
      const thisRound = ++round;
      try {
        if (thisRound % 50 === 1) await discoverShards();
        let worked = false;
        for (const [shardId, state] of shards) worked = (await pollShard(shardId, state)) || worked;
        const waiting = [...shards.values()].some((s) => s.pending.length > 0);
        if (!worked && !waiting) {
          const ready = idleWaiters.filter((w) => w.after < thisRound);
          idleWaiters = idleWaiters.filter((w) => w.after >= thisRound);
          for (const w of ready) w.resolve();
        }
        if (!worked) await sleep(waiting ? Math.min(2000, idleMs * 2 ** Math.max(...[...shards.values()].map((s) => s.attempts))) : idleMs);
      } catch (error) {
        if (stopped) break;
        console.error(`stream poller: ${(error as Error).message}`);
        await sleep(1000);
      }
    }
  })();

  return {
    drained: () =>
      new Promise<void>((resolve) => {
        // A round that starts after this call reads every record written before it.
        idleWaiters.push({ after: round, resolve });
      }),
    stop: async () => {
      stopped = true;
      await loop;
      streams.destroy();
      for (const w of idleWaiters) w.resolve();
    },
  };
}
