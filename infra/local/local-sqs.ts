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
 * checks the two the delivery engine relies on). Started by start-local-stores.ts.
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
 * fauxqs's own `startFauxqs` always listens on 0.0.0.0 (every interface: anyone on the network
 * could read and send the local queues' messages), whatever host it is given. So the server is
 * assembled here from its parts, as `startFauxqs` does, and listens on loopback only.
 */
export async function startLocalSqs(port = 0): Promise<LocalSqs> {
  const region = LOCAL_DEFAULTS.region;
  enforceDelayLimit();
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
