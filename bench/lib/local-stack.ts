import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureTable, freePort, LOCAL_DEFAULTS, localEnvironment, localUploadRecorder, startDynamoLocal, startLocalS3 } from '../../infra/local/stores.js';

/**
 * The local stack the benchmark runs against: DynamoDB Local in memory and s3rver, each on a free
 * port, with the table and bucket provisioned. `env` is what lib/config.ts reads; the bench puts it
 * into its own environment before loading any handler, and hands it to the child processes.
 */
export interface LocalStack {
  env: Record<string, string>;
  dynamoEndpoint: string;
  s3Endpoint: string;
  stop(): Promise<void>;
}

export async function startLocalStack(): Promise<LocalStack> {
  const [dynamoPort, s3Port] = [await freePort(), await freePort()];
  const s3Dir = mkdtempSync(join(tmpdir(), 'pca-bench-s3-'));
  const dynamoStarting = startDynamoLocal(dynamoPort);
  const recorder = localUploadRecorder(
    dynamoStarting.then((d) => d.endpoint),
    LOCAL_DEFAULTS.tableName,
  );
  const [dynamo, s3] = await Promise.all([dynamoStarting, startLocalS3(s3Port, s3Dir, LOCAL_DEFAULTS.bucketName, recorder)]);
  await ensureTable(dynamo.endpoint, LOCAL_DEFAULTS.tableName);
  const env = localEnvironment({ apiPort: 0, dynamoPort, s3Port });
  return {
    env,
    dynamoEndpoint: dynamo.endpoint,
    s3Endpoint: s3.endpoint,
    stop: async () => {
      await Promise.all([dynamo.stop(), s3.stop()]);
      rmSync(s3Dir, { recursive: true, force: true });
    },
  };
}
