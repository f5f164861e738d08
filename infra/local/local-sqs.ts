import { resolve } from 'node:path';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { LOCAL_DEFAULTS } from './local-ports.js';

const LOOPBACK = '127.0.0.1';

/**
 * The local world's one SQS (fauxqs 1.9, in-process, on a free loopback port): every queue the
 * local engines need (the verifier's retry queue, the webhook delivery lanes and their dead-letter
 * queues) lives on it, as they live in one account and region in AWS. fauxqs honours visibility
 * timeouts, ChangeMessageVisibility, DelaySeconds, ApproximateReceiveCount and a RedrivePolicy to a
 * dead-letter queue (docs/webhooks-design.md "Locally"; test/integration/queue-poller.test.ts
 * checks the two the delivery engine relies on). Where fauxqs differs from SQS, this module makes
 * it behave as SQS does: DelaySeconds' limit, fair queues, and long polls that end only with a
 * message or at their wait time. Started by start-local-stores.ts.
 */
export interface LocalSqs {
  /** The server's URL: the SQS_ENDPOINT every local client is given. */
  endpoint: string;
  /** The address it listens on: loopback only (127.0.0.1), never every interface. */
  address: string;
  /**
   * Creates a queue (attributes as CreateQueue takes them). Its URL is as fauxqs names it
   * (`http://sqs.<region>.127.0.0.1:<port>/…`): requests go to `endpoint`, and fauxqs finds the
   * queue by this whole URL.
   */
  createQueue(name: string, attributes?: Record<string, string>): { queueUrl: string; queueArn: string };
  /** Messages on the queue: waiting, delayed and in flight (0 for a queue that does not exist). */
  depth(name: string): number;
  stop(): Promise<void>;
}

/** fauxqs's stores and app builder: the parts of it this module assembles (see startLocalSqs). */
interface FauxqsSqsStore {
  host?: string;
  buildQueueUrl(name: string, port: string, requestHost: string, region: string): string;
  createQueue(name: string, url: string, arn: string, attributes?: Record<string, string>): unknown;
  inspectQueue(name: string): { messages: { ready: unknown[]; delayed: unknown[]; inflight: unknown[] } } | undefined;
}
interface FauxqsApp {
  listen(options: { port: number; host: string }): Promise<string>;
  close(): Promise<void>;
  server: { address(): AddressInfo | string | null };
}
interface Fauxqs {
  buildApp(options: {
    logger: boolean;
    host?: string;
    defaultRegion?: string;
    stores: Record<'sqsStore' | 'snsStore' | 's3Store', unknown>;
  }): FauxqsApp;
}

// fauxqs is an ES module exporting only an `import` condition: load its files directly (Node 20.19+
// loads ES modules through require), which also works in jest's global setup.
const require = createRequire(resolve('package.json'));
const fauxqsFile = <T>(path: string): T => require(resolve('node_modules/fauxqs/dist', path)) as T;

/** SQS's limit on a message's DelaySeconds (SendMessage, SendMessageBatch): 15 minutes. */
export const SQS_MAX_MESSAGE_DELAY_SECONDS = 900;

/**
 * fauxqs accepts any DelaySeconds; SQS refuses more than 900 (InvalidParameterValue). The delivery
 * engine's retries lean on that limit (a longer wait hops), so the twin enforces it: a message
 * delayed longer is refused before it is stored (the whole request, where SQS fails the one entry
 * of a batch; either way the sender sees it refused, never a delay silently honoured).
 */
function enforceDelayLimit(): void {
  const { SqsStore } = fauxqsFile<{
    SqsStore: { createMessage: (...args: unknown[]) => unknown; delayLimitEnforced?: boolean };
  }>('sqs/sqsStore.js');
  const { SqsError } = fauxqsFile<{ SqsError: new (code: string, message: string) => Error }>('common/errors.js');
  if (SqsStore.delayLimitEnforced) return;
  const createMessage = SqsStore.createMessage.bind(SqsStore);
  SqsStore.createMessage = (body: unknown, attributes: unknown, delaySeconds: unknown, ...rest: unknown[]) => {
    if (typeof delaySeconds === 'number' && (delaySeconds > SQS_MAX_MESSAGE_DELAY_SECONDS || delaySeconds < 0))
      throw new SqsError(
        'InvalidParameterValue',
        `Value ${delaySeconds} for parameter DelaySeconds is invalid. Reason: must be between 0 and ${SQS_MAX_MESSAGE_DELAY_SECONDS}, if provided.`,
      );
    return createMessage(body, attributes, delaySeconds, ...rest);
  };
  SqsStore.delayLimitEnforced = true;
}

/**
 * SQS fair queues (2025): on a standard queue, a message may carry a MessageGroupId naming its tenant.
 * SQS marks a tenant noisy when it holds more than 10 % of the queue's messages in flight and at
 * least 30 of them (or more than 10 % of the consumers' recent processing time), and while one is,
 * a receive returns quiet tenants' messages first, then noisy tenants' (fewest in flight first). A
 * message without a group is a tenant of its own. Nothing is dropped or throttled; with no quiet
 * message waiting, a noisy tenant's are received as usual (SQS developer guide, "How Amazon SQS fair
 * queues work").
 *
 * fauxqs 1.9 drops MessageGroupId on a standard queue and receives in arrival order. The twin keeps
 * the group (SendMessage, SendMessageBatch) and orders each receive as above, by the concurrency
 * share only: the processing-time share is not modelled, nor the 5 minutes a tenant stays marked,
 * so it marks a tenant noisy less often than SQS may (less kind to a quiet tenant). But it marks one
 * at once and exactly at the thresholds, where SQS calls its thresholds approximate: in a burst's
 * first moments the twin may be kinder to a quiet tenant than SQS. Nothing here leans on that: a
 * company's burst is one planning message per stream batch, far below 30 in flight. Within a tenant
 * the order stays arrival order; no group is ever locked (that is FIFO's, not a fair queue's).
 */
export const FAIR_QUEUE_NOISY = { minInFlight: 30, share: 0.1 } as const;

interface FauxqsMessage {
  messageId: string;
  messageGroupId?: string;
}
interface FauxqsQueue {
  isFifo(): boolean;
  messages: FauxqsMessage[];
  delayedMessages: FauxqsMessage[];
  inflightMessages: Map<string, { message: FauxqsMessage }>;
  processTimers(): void;
  dequeue(...args: unknown[]): unknown;
}

/** The tenants the queue's messages in flight mark noisy (FAIR_QUEUE_NOISY), with how many each holds. */
export function noisyTenants(inFlightGroups: readonly (string | undefined)[]): Map<string, number> {
  const perGroup = new Map<string, number>();
  for (const group of inFlightGroups) if (group !== undefined) perGroup.set(group, (perGroup.get(group) ?? 0) + 1);
  const total = inFlightGroups.length;
  return new Map([...perGroup].filter(([, n]) => n >= FAIR_QUEUE_NOISY.minInFlight && n > FAIR_QUEUE_NOISY.share * total));
}

function enforceFairQueues(): void {
  const { SqsQueue } = fauxqsFile<{ SqsQueue: { prototype: FauxqsQueue & { fairQueuesEnforced?: boolean } } }>('sqs/sqsStore.js');
  const { SqsRouter } = fauxqsFile<{
    SqsRouter: { prototype: { register(action: string, handler: unknown): void; fairQueuesEnforced?: boolean } };
  }>('sqs/sqsRouter.js');
  if (SqsQueue.prototype.fairQueuesEnforced) return;
  // Receives: quiet tenants' messages first (stable, so arrival order within each), then noisy ones, fewest in flight first.
  const dequeue = SqsQueue.prototype.dequeue;
  SqsQueue.prototype.dequeue = function (this: FauxqsQueue, ...args: unknown[]) {
    if (!this.isFifo()) {
      this.processTimers();
      const noisy = noisyTenants([...this.inflightMessages.values()].map((entry) => entry.message.messageGroupId));
      if (noisy.size > 0) {
        const rank = (m: FauxqsMessage) => (m.messageGroupId !== undefined ? (noisy.get(m.messageGroupId) ?? 0) : 0);
        this.messages = this.messages
          .map((message, i) => ({ message, i, rank: rank(message) }))
          .sort((a, b) => a.rank - b.rank || a.i - b.i)
          .map((m) => m.message);
      }
    }
    return dequeue.apply(this, args);
  };
  SqsQueue.prototype.fairQueuesEnforced = true;
  // Sends: the group kept on a standard queue's messages (fauxqs keeps it on FIFO queues only).
  const register = SqsRouter.prototype.register;
  SqsRouter.prototype.register = function (this: { store: { getQueue(url: string): FauxqsQueue | undefined } }, action, handler) {
    if (action !== 'SendMessage' && action !== 'SendMessageBatch') return register.call(this, action, handler);
    type Handler = (body: Record<string, unknown>, store: unknown, request: unknown) => unknown;
    const tagged: Handler = (body, store, request) => {
      const result = (handler as Handler)(body, store, request) as Record<string, unknown>;
      const queue = this.store.getQueue(String(body.QueueUrl));
      if (queue && !queue.isFifo()) {
        const groups = new Map<string, string>();
        if (action === 'SendMessage') {
          if (typeof body.MessageGroupId === 'string') groups.set(String(result.MessageId), body.MessageGroupId);
        } else {
          const entries = (body.Entries as { Id: string; MessageGroupId?: string }[] | undefined) ?? [];
          const groupOf = new Map(entries.map((e) => [e.Id, e.MessageGroupId]));
          for (const ok of (result.Successful as { Id: string; MessageId: string }[] | undefined) ?? []) {
            const group = groupOf.get(ok.Id);
            if (group !== undefined) groups.set(ok.MessageId, group);
          }
        }
        if (groups.size > 0)
          for (const message of [...queue.messages, ...queue.delayedMessages]) {
            const group = groups.get(message.messageId);
            if (group !== undefined) message.messageGroupId = group;
          }
      }
      return result;
    };
    return register.call(this, action, tagged);
  } as typeof register;
  SqsRouter.prototype.fairQueuesEnforced = true;
}

/**
 * A long poll on SQS returns when a message is there for it, or at its WaitTimeSeconds with none
 * (SQS developer guide, "Amazon SQS short and long polling"): a message sent to a queue with ten
 * receives waiting answers one of them, and the other nine go on waiting. fauxqs 1.9 wakes every
 * waiting receive on each message, and all but the one that takes it answer empty at once and are
 * sent again: with the live fast lane's twenty receive loops, each webhook message cost about twenty
 * receives, all in the one Node process that also runs the functions (bench section 7c counted
 * 1,109 receives for 67 messages in 7 s). The twin makes two changes:
 *
 * - a receive woken with nothing to take (another took the message, or took a whole batch's ten)
 *   waits again for the rest of its WaitTimeSeconds instead of answering empty: this is SQS's rule;
 * - a message wakes as many waiting receives as there are messages not yet promised to a woken one,
 *   oldest waiter first (fauxqs's own 20 ms timer wakes more while messages remain), so most woken
 *   receives find a message: this only saves the twin's work. A woken receive takes its message in a
 *   microtask (fauxqs's receive awaits its wait directly), so the promise count ends with the
 *   microtasks queued when they were woken.
 *
 * FIFO queues keep fauxqs's waking: no delivery lane is one.
 */
interface FauxqsWaitingQueue extends FauxqsQueue {
  attributes: Record<string, string>;
  pollWaiters: { resolve(): void; timer: NodeJS.Timeout }[];
  /** Messages promised to receives woken for them, which have not taken them yet. */
  promisedToWoken?: number;
}

function endLongPollsAsSqsDoes(): void {
  const { SqsQueue } = fauxqsFile<{
    SqsQueue: { prototype: FauxqsWaitingQueue & { notifyWaiters(): void; longPollsEnforced?: boolean } };
  }>('sqs/sqsStore.js');
  const { SqsRouter } = fauxqsFile<{
    SqsRouter: { prototype: { register(action: string, handler: unknown): void; longPollsEnforced?: boolean } };
  }>('sqs/sqsRouter.js');
  if (SqsQueue.prototype.longPollsEnforced) return;
  const notifyWaiters = SqsQueue.prototype.notifyWaiters;
  SqsQueue.prototype.notifyWaiters = function (this: FauxqsWaitingQueue) {
    if (this.isFifo()) return notifyWaiters.call(this);
    const promised = this.promisedToWoken ?? 0;
    let wake = Math.min(this.pollWaiters.length, this.messages.length - promised);
    if (wake <= 0) return;
    this.promisedToWoken = promised + wake;
    while (wake-- > 0) {
      const waiter = this.pollWaiters.shift()!;
      clearTimeout(waiter.timer);
      waiter.resolve();
    }
    // Queued after the woken receives' own continuations: by then each has taken what it could.
    if (promised === 0) queueMicrotask(() => (this.promisedToWoken = 0));
  };
  SqsQueue.prototype.longPollsEnforced = true;

  type Handler = (body: Record<string, unknown>, store: unknown, request: unknown) => Promise<{ Messages?: unknown[] }>;
  const register = SqsRouter.prototype.register;
  SqsRouter.prototype.register = function (this: { store: { getQueue(url: string): FauxqsWaitingQueue | undefined } }, action, handler) {
    if (action !== 'ReceiveMessage') return register.call(this, action, handler);
    const receive: Handler = async (body, store, request) => {
      const queue = this.store.getQueue(String(body.QueueUrl));
      const seconds = Number(body.WaitTimeSeconds ?? queue?.attributes.ReceiveMessageWaitTimeSeconds ?? 0);
      const deadline = Date.now() + seconds * 1000;
      let answer = await (handler as Handler)(body, store, request);
      // Woken with nothing to take: wait on for the rest of the poll (a few ms left is not worth a wait).
      while (seconds > 0 && (answer.Messages?.length ?? 0) === 0 && deadline - Date.now() > 10)
        answer = await (handler as Handler)({ ...body, WaitTimeSeconds: (deadline - Date.now()) / 1000 }, store, request);
      return answer;
    };
    return register.call(this, action, receive);
  } as typeof register;
  SqsRouter.prototype.longPollsEnforced = true;
}

/**
 * fauxqs's own `startFauxqs` always listens on 0.0.0.0 (every interface: anyone on the network
 * could read and send the local queues' messages), whatever host it is given. So the server is
 * assembled here from its parts, as `startFauxqs` does, and listens on loopback only.
 */
export async function startLocalSqs(port = 0): Promise<LocalSqs> {
  const region = LOCAL_DEFAULTS.region;
  enforceDelayLimit();
  enforceFairQueues();
  endLongPollsAsSqsDoes();
  const { buildApp } = fauxqsFile<Fauxqs>('app.js');
  const { SqsStore } = fauxqsFile<{ SqsStore: new () => FauxqsSqsStore }>('sqs/sqsStore.js');
  const { SnsStore } = fauxqsFile<{ SnsStore: new () => unknown }>('sns/snsStore.js');
  const { S3Store } = fauxqsFile<{ S3Store: new () => unknown }>('s3/s3Store.js');
  const { sqsQueueArn } = fauxqsFile<{ sqsQueueArn(name: string, region: string): string }>('common/arnHelper.js');
  const sqsStore = new SqsStore();
  const app = buildApp({
    logger: false,
    host: LOOPBACK,
    defaultRegion: region,
    stores: { sqsStore, snsStore: new SnsStore(), s3Store: new S3Store() },
  });
  await app.listen({ port, host: LOOPBACK });
  const bound = app.server.address() as AddressInfo;
  return {
    endpoint: `http://${LOOPBACK}:${bound.port}`,
    address: bound.address,
    createQueue: (name, attributes) => {
      const queueUrl = sqsStore.buildQueueUrl(name, String(bound.port), `${LOOPBACK}:${bound.port}`, region);
      const queueArn = sqsQueueArn(name, region);
      sqsStore.createQueue(name, queueUrl, queueArn, attributes);
      return { queueUrl, queueArn };
    },
    depth: (name) => {
      const messages = sqsStore.inspectQueue(name)?.messages;
      return messages ? messages.ready.length + messages.delayed.length + messages.inflight.length : 0;
    },
    stop: () => app.close(),
  };
}
