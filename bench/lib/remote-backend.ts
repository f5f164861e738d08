import { Readable } from 'node:stream';
import { Worker } from 'node:worker_threads';
import { bodyBytes } from '../../test/support/storage-rig/memory-backend.js';

/**
 * The store stand-in (test/support/storage-rig/memory-backend.ts) on a thread of its own, as the
 * clients' HTTP handler: the section-2 measurements then put on the handler's thread only what
 * the handler does, as on Lambda, where DynamoDB and S3 parse, check and store on their own
 * machines. Run in-process, the stand-in's serving (a quarter of a 100-case create's time on
 * this machine) was counted as the handler's CPU and added to its latency on top of the
 * injected per-call delay, which already stands for network and service time.
 *
 * The main thread still pays for handing the request over and reading the answer (a structured
 * clone of the body each way). `busyMs` is the time the stand-in spent serving, as before.
 */
export interface BackendRequest {
  id: number;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Uint8Array | undefined;
}

export type BackendReply =
  | {
      id: number;
      statusCode: number;
      reason?: string;
      headers: Record<string, string>;
      body: Uint8Array;
      busyMs: number;
      error?: undefined;
    }
  | { id: number; error: string };

interface HttpRequestLike {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: unknown;
}

export class RemoteBackend {
  /** Time the stand-in spent serving, summed from its replies. */
  busyMs = 0;
  readonly metadata = { handlerProtocol: 'http/1.1' };
  private readonly worker: Worker;
  private readonly pending = new Map<number, (reply: BackendReply) => void>();
  private sequence = 0;
  private failure: string | undefined;

  constructor() {
    // The worker loads TypeScript through tsx, as the bench itself does.
    const entry = new URL('./backend-worker.ts', import.meta.url).href;
    this.worker = new Worker(`import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(entry)}); })`, {
      eval: true,
    });
    this.worker.on('message', (reply: BackendReply) => {
      this.pending.get(reply.id)?.(reply);
      this.pending.delete(reply.id);
    });
    this.worker.on('error', (error) => this.fail(error.stack ?? String(error)));
    this.worker.on('exit', (code) => this.fail(`the stand-in's worker exited (code ${code})`));
  }

  /** Answers every waiting request with the failure, and every later one too. */
  private fail(reason: string): void {
    this.failure ??= reason;
    for (const settle of this.pending.values()) settle({ id: -1, error: reason });
    this.pending.clear();
  }

  /** The smithy HttpHandler entry point. */
  async handle(
    request: HttpRequestLike,
  ): Promise<{ response: { statusCode: number; reason?: string; headers: Record<string, string>; body: Readable } }> {
    const id = ++this.sequence;
    const bytes = request.body === undefined || request.body === null ? undefined : await bodyBytes(request.body);
    if (this.failure) throw new Error(`store stand-in failed: ${this.failure}`);
    // An exact-size copy, handed over rather than cloned (a view's whole buffer would be copied).
    const body = bytes && new Uint8Array(bytes);
    const reply = await new Promise<BackendReply>((resolve) => {
      this.pending.set(id, resolve);
      const message: BackendRequest = { id, method: request.method, path: request.path, headers: { ...request.headers }, body };
      this.worker.postMessage(message, body ? [body.buffer as ArrayBuffer] : []);
    });
    if (reply.error !== undefined) throw new Error(`store stand-in failed: ${reply.error}`);
    this.busyMs += reply.busyMs;
    return {
      response: {
        statusCode: reply.statusCode,
        ...(reply.reason ? { reason: reply.reason } : {}),
        headers: reply.headers,
        body: Readable.from([Buffer.from(reply.body.buffer, reply.body.byteOffset, reply.body.byteLength)]),
      },
    };
  }

  updateHttpClientConfig(): void {}
  httpHandlerConfigs(): Record<string, never> {
    return {};
  }
  /** The clients' destroy() calls this; the worker outlives them until close(). */
  destroy(): void {}

  async close(): Promise<void> {
    await this.worker.terminate();
  }
}
