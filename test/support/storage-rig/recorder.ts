/**
 * Records every storage call a handler makes, through an SDK middleware added to the DynamoDB and
 * S3 clients the benchmark (and the round-trip-depth test) build. Product code is untouched: the
 * handlers get these clients through their dependency-injection builders.
 *
 * The middleware sits at the very top of the stack (`initialize`, high priority), so one record is
 * one `client.send(...)` as the handler sees it: it opens when the handler issues the call and
 * closes when the handler could continue (SDK retries, if any, happen inside it). Each record takes
 * a strictly increasing sequence number at its start and at its end; "B starts after A ended" is
 * decided on those numbers, so the depth does not depend on clock resolution or machine speed.
 *
 * With `delayMs` > 0 each request's answer reaches the SDK no sooner than that long after the
 * request went to the transport: a fixed, simulated network + service time per storage call (the
 * latency floor is depth × delay).
 */

export type StorageService = 'dynamodb' | 's3';

export interface StorageCall {
  service: StorageService;
  command: string;
  /** Sequence numbers of the call's start and end events (shared counter, strictly increasing). */
  startSeq: number;
  endSeq: number;
  /** performance.now() at start and end, for reports. */
  startMs: number;
  endMs: number;
  /** Requests actually sent for this call (more than 1 when the SDK retried). */
  attempts: number;
  ok: boolean;
  /** The error's name when the call failed (a failed condition is an answer, not a fault). */
  error?: string;
  /** The command's input as the handler passed it (DocumentClient: plain values), for the partition-heat estimate. */
  input?: Record<string, unknown>;
}

/** An SDK client's middleware stack (DynamoDB, DocumentClient, S3): `client.middlewareStack`. */
export type MiddlewareStackLike = object;

interface AddToStack {
  add(middleware: unknown, options: { step: 'initialize' | 'deserialize'; name: string; priority: 'high' | 'low' }): void;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class StorageRecorder {
  readonly calls: StorageCall[] = [];
  /** Simulated network + service time of each storage request (each attempt). */
  delayMs = 0;
  private seq = 0;
  private readonly open = new WeakMap<object, StorageCall>();

  /** Forgets the recorded calls (the delay stays). */
  reset(): void {
    this.calls.length = 0;
  }

  /**
   * Adds the recording middleware to a client's stack: one at the top (`initialize`) that opens
   * and closes the record, and one at the bottom (`deserialize`, next to the transport) that marks
   * the call as sent and holds its answer for the delay. A command that never reaches the transport (a
   * presigned URL: the presigner stops the stack before signing a request to send) is not a
   * storage call and leaves no record.
   */
  attach(stack: MiddlewareStackLike, service: StorageService): void {
    const outer =
      (next: (args: unknown) => Promise<unknown>, context: { commandName?: string }) =>
      async (args: unknown): Promise<unknown> => {
        const call: StorageCall = {
          service,
          command: (context.commandName ?? 'Unknown').replace(/Command$/, ''),
          startSeq: ++this.seq,
          endSeq: Number.POSITIVE_INFINITY,
          startMs: performance.now(),
          endMs: Number.NaN,
          attempts: 0,
          ok: false,
          input: (args as { input?: Record<string, unknown> }).input,
        };
        this.open.set(context, call);
        this.calls.push(call);
        try {
          const out = await next(args);
          call.ok = true;
          return out;
        } catch (error) {
          call.error = (error as Error)?.name ?? 'Error';
          throw error;
        } finally {
          call.endMs = performance.now();
          call.endSeq = ++this.seq;
          this.open.delete(context);
          if (call.attempts === 0) this.calls.splice(this.calls.indexOf(call), 1);
        }
      };
    const inner =
      (next: (args: unknown) => Promise<unknown>, context: object) =>
      async (args: unknown): Promise<unknown> => {
        const call = this.open.get(context);
        if (call) call.attempts++;
        if (this.delayMs === 0) return next(args);
        // The delay stands for network and service time together: the request goes to the
        // transport at once and its answer is released when the delay is over (or when it
        // arrives, if later), so a stand-in's own serving time is not added on top of it.
        const [answer] = await Promise.allSettled([next(args), sleep(this.delayMs)]);
        if (answer.status === 'rejected') throw answer.reason;
        return answer.value;
      };
    const target = stack as AddToStack;
    target.add(outer, { step: 'initialize', name: `benchStorageRecorder-${service}`, priority: 'high' });
    target.add(inner, { step: 'deserialize', name: `benchStorageDelay-${service}`, priority: 'low' });
  }

  /** The calls recorded so far, as a critical-path summary. */
  summary(): DepthSummary {
    return summarise(this.calls);
  }
}

/**
 * The longest chain of calls in which each call starts after the previous one ended: the number
 * of storage round trips the request had to wait for one after another, whatever ran beside them.
 */
export function criticalPath(calls: readonly StorageCall[]): StorageCall[] {
  const sorted = [...calls].sort((a, b) => a.startSeq - b.startSeq);
  const best: number[] = [];
  const previous: number[] = [];
  let end = -1;
  for (let i = 0; i < sorted.length; i++) {
    best[i] = 1;
    previous[i] = -1;
    for (let j = 0; j < i; j++) {
      if (sorted[j]!.endSeq < sorted[i]!.startSeq && best[j]! + 1 > best[i]!) {
        best[i] = best[j]! + 1;
        previous[i] = j;
      }
    }
    if (end < 0 || best[i]! > best[end]!) end = i;
  }
  const chain: StorageCall[] = [];
  for (let i = end; i >= 0; i = previous[i]!) chain.unshift(sorted[i]!);
  return chain;
}

export function criticalPathDepth(calls: readonly StorageCall[]): number {
  return criticalPath(calls).length;
}

export interface DepthSummary {
  depth: number;
  /** Total storage calls, and per command (e.g. `dynamodb:TransactWriteItems`). */
  calls: number;
  byCommand: Record<string, number>;
  /** Requests sent beyond one per call (SDK retries). */
  sdkRetries: number;
  /** Calls that ended in an error, per error name (a failed condition is expected on duplicates). */
  errors: Record<string, number>;
  /** The critical path, e.g. `GetItem → UpdateItem → TransactWriteItems`. */
  path: string;
}

export function summarise(calls: readonly StorageCall[]): DepthSummary {
  const byCommand: Record<string, number> = {};
  const errors: Record<string, number> = {};
  let sdkRetries = 0;
  for (const call of calls) {
    const name = `${call.service}:${call.command}`;
    byCommand[name] = (byCommand[name] ?? 0) + 1;
    sdkRetries += Math.max(0, call.attempts - 1);
    if (call.error) errors[call.error] = (errors[call.error] ?? 0) + 1;
  }
  const chain = criticalPath(calls);
  return { depth: chain.length, calls: calls.length, byCommand, sdkRetries, errors, path: chain.map((c) => c.command).join(' → ') };
}
