import { startLocalStores } from '../../infra/local/start-local-stores.js';
import { localEnvironment } from '../../infra/local/stores.js';

/**
 * The local stack the benchmark runs against: DynamoDB Local in memory and s3rver, each on a free
 * port, with the table and bucket provisioned. `env` is what lib/runtime/config.ts reads; the bench puts it
 * into its own environment before loading any handler, and hands it to the child processes.
 */
export interface LocalStack {
  env: Record<string, string>;
  dynamoEndpoint: string;
  s3Endpoint: string;
  /**
   * Resolves when the local world's asynchronous consumers have handled everything written so far
   * (the verification worker behind DynamoDB Local's stream). Timed sections wait for it first: in
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
  const stores = await startLocalStores({ registryDelayMs: REGISTRY_DELAY_MS });
  const env = localEnvironment({ apiPort: 0, dynamoPort: stores.dynamoPort, s3Port: stores.s3Port });
  return {
    env,
    dynamoEndpoint: stores.dynamoEndpoint,
    s3Endpoint: stores.s3Endpoint,
    quiet: () => stores.verification.streamDrained(),
    stop: () => stores.stop(),
  };
}
