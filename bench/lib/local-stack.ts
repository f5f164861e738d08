import { startLocalStores, type LocalStores } from '../../infra/local/start-local-stores.js';
import { localEnvironment } from '../../infra/local/stores.js';
import { startDnsServer, type DnsServer } from '../../test/support/dns-server.js';

/**
 * The local stack the benchmark runs against: DynamoDB Local in memory and s3rver, each on a free
 * port, with the table and bucket provisioned. `env` is what lib/runtime/config.ts reads; the bench puts it
 * into its own environment before loading any handler, and hands it to the child processes.
 */
export interface LocalStack {
  env: Record<string, string>;
  /** The local stores and engines themselves (queue depths, stream drained). */
  stores: LocalStores;
  /**
   * The DNS server on loopback the webhook engines resolve endpoint host names at (WEBHOOK_DNS_SERVERS):
   * it knows no name until a section gives it one (bench/webhook-dns.ts: names that stop answering).
   */
  dns: DnsServer;
  dynamoEndpoint: string;
  s3Endpoint: string;
  /**
   * Resolves when the local world's asynchronous consumers have handled everything written so far
   * (the verification worker and the webhook fan-out behind DynamoDB Local's stream). Timed sections wait for it first: in
   * AWS those consumers run on other machines, here they share the bench's two cores, and thousands
   * of stream records left by section 1 would otherwise be served during section 2's measurements.
   */
  quiet(): Promise<void>;
  stop(): Promise<void>;
}

/** How long the local registry stand-in takes to answer (bench section 6c). */
export const REGISTRY_DELAY_MS = 50;

export async function startLocalStack(): Promise<LocalStack> {
  // The verifier's registry (the Companies House stand-in) answers in 50 ms, as issue 23's latency row asks.
  const dns = await startDnsServer();
  const stores = await startLocalStores({ registryDelayMs: REGISTRY_DELAY_MS, webhookDnsServers: [dns.address] }).catch(
    async (error: unknown) => {
      await dns.close();
      throw error;
    },
  );
  const env = {
    ...localEnvironment({ apiPort: 0, dynamoPort: stores.dynamoPort, s3Port: stores.s3Port }),
    // The webhook engines' queues and sealing key (bench/webhooks.ts creates endpoints the engines deliver to).
    SQS_ENDPOINT: stores.sqs.endpoint,
    WEBHOOK_DELIVERY_QUEUE_URL: stores.webhooks.deliveryQueueUrl,
    WEBHOOK_TEST_DELIVERY_QUEUE_URL: stores.webhooks.testDeliveryQueueUrl,
    WEBHOOK_SECRET_KEY: stores.webhooks.secretKey,
    WEBHOOK_ALLOW_LOCAL_URLS: 'true',
  };
  return {
    env,
    stores,
    dns,
    dynamoEndpoint: stores.dynamoEndpoint,
    s3Endpoint: stores.s3Endpoint,
    // Both stream readers: the verification worker and the webhook fan-out.
    quiet: async () => {
      await Promise.all([stores.verification.streamDrained(), stores.webhooks.streamDrained()]);
    },
    stop: async () => {
      await stores.stop();
      await dns.close();
    },
  };
}
