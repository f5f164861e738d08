import { resolve } from 'node:path';
import { createRequire } from 'node:module';
import { LOCAL_DEFAULTS } from './local-ports.js';

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

interface FauxqsServer {
  readonly port: number;
  createQueue(name: string, options?: { region?: string; attributes?: Record<string, string> }): { queueUrl: string; queueArn: string };
  inspectQueue(
    name: string,
    options?: { region?: string },
  ): { messages: { ready: unknown[]; delayed: unknown[]; inflight: unknown[] } } | undefined;
  stop(): Promise<void>;
}

// fauxqs is an ES module exporting only an `import` condition: load its file directly (Node 20.19+
// loads ES modules through require), which also works in jest's global setup.
const require = createRequire(resolve('package.json'));
function loadFauxqs(): {
  startFauxqs(options: { port: number; logger: boolean; host?: string; defaultRegion?: string }): Promise<FauxqsServer>;
} {
  return require(resolve('node_modules/fauxqs/dist/app.js')) as ReturnType<typeof loadFauxqs>;
}

/** SQS's limit on a message's DelaySeconds (SendMessage, SendMessageBatch): 15 minutes. */
export const SQS_MAX_MESSAGE_DELAY_SECONDS = 900;

/**
 * fauxqs accepts any DelaySeconds; SQS refuses more than 900 (InvalidParameterValue). The delivery
 * engine's retries lean on that limit (a longer wait hops), so the twin enforces it: a message
 * delayed longer is refused before it is stored (the whole request, where SQS fails the one entry
 * of a batch; either way the sender sees it refused, never a delay silently honoured).
 */
function enforceDelayLimit(): void {
  const { SqsStore } = require(resolve('node_modules/fauxqs/dist/sqs/sqsStore.js')) as {
    SqsStore: { createMessage: (...args: unknown[]) => unknown; delayLimitEnforced?: boolean };
  };
  const { SqsError } = require(resolve('node_modules/fauxqs/dist/common/errors.js')) as {
    SqsError: new (code: string, message: string) => Error;
  };
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

export async function startLocalSqs(): Promise<LocalSqs> {
  const region = LOCAL_DEFAULTS.region;
  enforceDelayLimit();
  const sqs = await loadFauxqs().startFauxqs({ port: 0, logger: false, host: '127.0.0.1', defaultRegion: region });
  return {
    endpoint: `http://127.0.0.1:${sqs.port}`,
    createQueue: (name, attributes) => sqs.createQueue(name, { region, ...(attributes ? { attributes } : {}) }),
    depth: (name) => {
      const messages = sqs.inspectQueue(name, { region })?.messages;
      return messages ? messages.ready.length + messages.delayed.length + messages.inflight.length : 0;
    },
    stop: () => sqs.stop(),
  };
}
