import { DynamoDBClient, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { config } from '../../lib/runtime/config.js';
import { createHttpHandler, LOCAL_CREDENTIALS } from '../../lib/adapters/dynamodb/dynamo-client.js';
import { TABLE_DEFINITION } from '../../lib/adapters/dynamodb/table-keys.js';
import { plainInput } from './plain-items.js';

/**
 * A DocumentClient over DynamoDB Local that injects faults into chosen calls: throttling,
 * transaction conflicts, timeouts, lost responses (the call succeeds, the reply is lost) and slow
 * calls; and, optionally, DynamoDB's eventual consistency. DynamoDB Local serialises transactions
 * and is always consistent, so neither real conflicts nor stale reads happen locally.
 *
 * - `slow`: the call is held for `slowCallMs` before it is sent, and gives up with an AbortError
 *   (as the SDK's HTTP handler does) as soon as the `abortSignal` passed to
 *   `send(command, { abortSignal })` aborts, before or while it waits.
 * - `late-commit` (TransactWriteItems only): the client gives up on the call at once (a timeout),
 *   while DynamoDB goes on applying it: the transaction is sent `lateCommitMs` later, with its
 *   ClientRequestToken, outside the caller's reach. Meanwhile DynamoDB answers any attempt with the
 *   same token `TransactionInProgressException` (`in-progress`), as it does for a transaction it
 *   is still applying. `lateWrites()` resolves once every such transaction has landed or failed.
 * - A plan may also return an Error of its own (e.g. a TransactionCanceledException with chosen
 *   cancellation reasons): the call fails with it, without reaching DynamoDB.
 * - Eventual consistency (`staleReadWindowMs`): a GetItem or Query without `ConsistentRead: true`
 *   does not see what this client wrote in the last `staleReadWindowMs`: it answers with the item
 *   as this client knew it before that write (from an earlier read or write), or as if absent when
 *   it knew none (so a freshly created item is always missed). GSI queries are never consistent.
 *   Only writes made through this client count; a deleted item does not reappear in a Query.
 */
export type Fault = 'throttle' | 'conflict' | 'timeout' | 'lost-response' | 'internal' | 'slow' | 'late-commit' | 'in-progress';

export interface FaultPlan {
  /** Decides, per storage call, whether to inject a fault (or fail it with an error of the plan's own). */
  decide(commandName: string, input: Record<string, unknown>): Fault | Error | undefined;
}

export interface FaultCounter {
  injected: Record<Fault, number>;
  calls: number;
  /** Reads answered from before a recent write (eventual-consistency mode). */
  staleReads: number;
  /** `late-commit` transactions that landed after the client gave up on them. */
  landed: number;
}

export interface FaultyClientOptions {
  /** How long a `slow` call waits before it is sent (default 60 s: longer than any deadline). */
  slowCallMs?: number;
  /** Eventual-consistency mode: reads without ConsistentRead miss this client's writes of the last N ms. */
  staleReadWindowMs?: number;
  /** The clock of the staleness window (tests pass their own to step over it). */
  now?: () => number;
  /** How long after the client gave up a `late-commit` transaction lands (default 300 ms). */
  lateCommitMs?: number;
  /**
   * The given-up `late-commit` request is still on the network: DynamoDB has not seen it, so it
   * answers same-token attempts meanwhile as new requests (by the plan) instead of TransactionInProgress.
   */
  lateCommitUnseen?: boolean;
}

const DEFAULT_SLOW_CALL_MS = 60_000;
const DEFAULT_LATE_COMMIT_MS = 300;

function abortError(): Error {
  return Object.assign(new Error('Request aborted'), { name: 'AbortError' });
}

/** Waits `ms`, or rejects with an AbortError as soon as the signal aborts. */
function delay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortError());
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function makeError(fault: Exclude<Fault, 'lost-response' | 'slow' | 'late-commit'>, itemCount: number): Error {
  switch (fault) {
    case 'in-progress':
      return Object.assign(new Error('Transaction is ongoing for the idempotent request'), {
        name: 'TransactionInProgressException',
        $metadata: { httpStatusCode: 400 },
      });
    case 'throttle':
      return Object.assign(new Error('Rate of requests exceeds the allowed throughput.'), {
        name: 'ThrottlingException',
        $metadata: { httpStatusCode: 400 },
      });
    case 'conflict':
      return new TransactionCanceledException({
        message: 'Transaction cancelled, please refer cancellation reasons for specific reasons [TransactionConflict]',
        $metadata: { httpStatusCode: 400 },
        CancellationReasons: Array.from({ length: Math.max(1, itemCount) }, (_, i) => ({ Code: i === 0 ? 'TransactionConflict' : 'None' })),
      });
    case 'timeout':
      return Object.assign(new Error('Request timed out'), { name: 'TimeoutError' });
    case 'internal':
      return Object.assign(new Error('Internal server error'), { name: 'InternalServerError', $metadata: { httpStatusCode: 500 } });
  }
}

type Next = (args: { input: unknown }) => Promise<{ output: unknown }>;
interface MiddlewareContext {
  commandName?: string;
  /** Where the SDK keeps what was passed to `send` (see @smithy/core's Command). */
  __smithy_context?: { abortSignal?: AbortSignal };
}

interface StackLike {
  add(middleware: (next: Next, context: MiddlewareContext) => Next, options: { step: 'initialize'; name: string }): void;
}

/** Transactions the client gave up on that DynamoDB is still applying, by ClientRequestToken. */
interface LateCommits {
  applying: Set<string>;
  landings: Promise<void>[];
  /** Sends a transaction as DynamoDB would go on applying it: outside the caller's client and deadline. */
  apply(input: Record<string, unknown>): Promise<unknown>;
  delayMs: number;
  /** See FaultyClientOptions.lateCommitUnseen. */
  unseen: boolean;
}

/** Adds the fault-injecting middleware to a client's stack; S3 has no transactions, so a conflict there is an internal error. */
function injectFaults(
  stack: StackLike,
  plan: FaultPlan,
  transactional: boolean,
  options: FaultyClientOptions,
  late?: LateCommits,
): FaultCounter {
  const counter: FaultCounter = {
    injected: { throttle: 0, conflict: 0, timeout: 0, 'lost-response': 0, internal: 0, slow: 0, 'late-commit': 0, 'in-progress': 0 },
    calls: 0,
    staleReads: 0,
    landed: 0,
  };
  stack.add(
    (next, context) => async (args) => {
      counter.calls++;
      const input = args.input as Record<string, unknown>;
      const token = context.commandName === 'TransactWriteItemsCommand' ? input.ClientRequestToken : undefined;
      if (late && !late.unseen && typeof token === 'string' && late.applying.has(token)) {
        counter.injected['in-progress']++;
        throw makeError('in-progress', 0);
      }
      const fault = plan.decide(context.commandName ?? '', plainInput(input));
      if (!fault) return next(args);
      if (fault instanceof Error) throw fault;
      counter.injected[fault]++;
      if (fault === 'slow') {
        await delay(options.slowCallMs ?? DEFAULT_SLOW_CALL_MS, context.__smithy_context?.abortSignal);
        return next(args);
      }
      if (fault === 'lost-response') {
        await next(args);
        throw makeError('timeout', 0);
      }
      if (fault === 'late-commit') {
        if (!late || typeof token !== 'string') throw new Error('late-commit applies to a TransactWriteItems with a ClientRequestToken');
        late.applying.add(token);
        const landing = delay(late.delayMs, undefined)
          .then(() => late.apply(input))
          .then(
            () => void counter.landed++,
            () => undefined,
          )
          .finally(() => late.applying.delete(token));
        late.landings.push(landing);
        throw makeError('timeout', 0);
      }
      if (!transactional && fault === 'conflict') throw makeError('internal', 0);
      throw makeError(fault, (input.TransactItems as unknown[] | undefined)?.length ?? 0);
    },
    { step: 'initialize', name: 'faultInjection' },
  );
  return counter;
}

type Item = Record<string, unknown>;

/**
 * Eventual consistency over DynamoDB Local: remembers, per item key, when this client last wrote
 * it and the version it knew before; inconsistent reads are answered from that version while the
 * write is younger than the window. Runs outside the fault middleware, so a read or write the
 * plan fails never counts.
 */
function addStaleReads(stack: StackLike, windowMs: number, now: () => number, counter: FaultCounter): void {
  const { partitionKey, sortKey } = TABLE_DEFINITION;
  const keyOf = (item: Item | undefined): string | undefined =>
    item && item[partitionKey] !== undefined ? JSON.stringify([item[partitionKey], item[sortKey]]) : undefined;
  /** The latest version of each item this client saw; undefined value: absent, or unknown after an update. */
  const known = new Map<string, Item | undefined>();
  const written = new Map<string, { at: number; before: Item | undefined }>();
  const recordWrite = (key: string | undefined, after: Item | undefined) => {
    if (!key) return;
    written.set(key, { at: now(), before: known.get(key) });
    known.set(key, after);
  };
  const staleVersion = (key: string | undefined): { stale: boolean; item?: Item } => {
    const write = key ? written.get(key) : undefined;
    if (!write || now() - write.at >= windowMs) return { stale: false };
    return { stale: true, item: write.before };
  };

  stack.add(
    (next, context) => async (args) => {
      const input = plainInput(args.input as Item);
      const result = await next(args);
      const output = result.output as Item;
      switch (context.commandName) {
        case 'PutItemCommand':
          recordWrite(keyOf(input.Item as Item), input.Item as Item);
          break;
        case 'UpdateItemCommand':
          recordWrite(keyOf(input.Key as Item), undefined);
          break;
        case 'DeleteItemCommand':
          recordWrite(keyOf(input.Key as Item), undefined);
          break;
        case 'TransactWriteItemsCommand':
          for (const entry of (input.TransactItems ?? []) as { Put?: { Item: Item }; Update?: { Key: Item }; Delete?: { Key: Item } }[]) {
            if (entry.Put) recordWrite(keyOf(entry.Put.Item), entry.Put.Item);
            else if (entry.Update) recordWrite(keyOf(entry.Update.Key), undefined);
            else if (entry.Delete) recordWrite(keyOf(entry.Delete.Key), undefined);
          }
          break;
        case 'GetItemCommand': {
          const key = keyOf(input.Key as Item);
          if (input.ConsistentRead === true) {
            if (key) known.set(key, output.Item as Item | undefined);
            break;
          }
          const { stale, item } = staleVersion(key);
          if (!stale) {
            if (key) known.set(key, output.Item as Item | undefined);
            break;
          }
          counter.staleReads++;
          const { Item: _fresh, ...rest } = output;
          return { ...result, output: item ? { ...rest, Item: item } : rest };
        }
        case 'QueryCommand': {
          if (input.ConsistentRead === true) break;
          const items = (output.Items ?? []) as Item[];
          let changed = false;
          const seen: Item[] = [];
          for (const fresh of items) {
            const { stale, item } = staleVersion(keyOf(fresh));
            if (!stale) {
              seen.push(fresh);
              continue;
            }
            changed = true;
            if (item) seen.push(item);
          }
          if (!changed) break;
          counter.staleReads++;
          return { ...result, output: { ...output, Items: seen, Count: seen.length } };
        }
      }
      return result;
    },
    { step: 'initialize', name: 'eventualConsistency' },
  );
}

export function faultyDocumentClient(
  plan: FaultPlan,
  options: FaultyClientOptions = {},
): { client: DynamoDBDocumentClient; counter: FaultCounter; lateWrites: () => Promise<void> } {
  const cfg = config();
  const clientConfig = {
    region: cfg.region,
    endpoint: cfg.dynamoEndpoint,
    credentials: LOCAL_CREDENTIALS,
    requestHandler: createHttpHandler(),
    // Our own retries are under test: the SDK's would hide the injected faults.
    maxAttempts: 1,
  };
  const base = new DynamoDBClient(clientConfig);
  // DynamoDB's side of a transaction the client gave up on: a client of its own, without faults.
  const applier = DynamoDBDocumentClient.from(new DynamoDBClient(clientConfig));
  const late: LateCommits = {
    applying: new Set(),
    landings: [],
    apply: (input) => applier.send(new TransactWriteCommand(plainInput(input) as unknown as TransactWriteCommand['input'])),
    delayMs: options.lateCommitMs ?? DEFAULT_LATE_COMMIT_MS,
    unseen: options.lateCommitUnseen ?? false,
  };
  const stack = base.middlewareStack as unknown as StackLike;
  // Added after the fault middleware, so it runs inside it: only calls that reached DynamoDB are recorded.
  const counter = injectFaults(stack, plan, true, options, late);
  if (options.staleReadWindowMs !== undefined) addStaleReads(stack, options.staleReadWindowMs, options.now ?? Date.now, counter);
  const lateWrites = async () => {
    await Promise.all(late.landings);
  };
  return { client: DynamoDBDocumentClient.from(base, { marshallOptions: { removeUndefinedValues: true } }), counter, lateWrites };
}

/** An S3 client over the local S3 whose calls can fail the same way. */
export function faultyS3Client(
  plan: FaultPlan,
  options: Pick<FaultyClientOptions, 'slowCallMs'> = {},
): { client: S3Client; counter: FaultCounter } {
  const cfg = config();
  const client = new S3Client({
    region: cfg.region,
    endpoint: cfg.s3Endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    maxAttempts: 1,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const counter = injectFaults(client.middlewareStack as unknown as StackLike, plan, false, options);
  return { client, counter };
}
