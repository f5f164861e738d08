import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LOCAL_DEFAULTS } from './local-ports.js';
import { ensureTable, freePort, localUploadRecorder, startDynamoLocal, startLocalS3 } from './stores.js';
import { startLocalSqs, type LocalSqs } from './local-sqs.js';
import { startVerificationEngines, type VerificationEngines } from './verification-engines.js';
import { startWebhookEngines, type WebhookEngines } from './webhook-engines.js';

/**
 * The one "start the local stores" sequence, used by `npm start` (infra/local/main.ts), the jest
 * global setup and the benchmark: DynamoDB Local and the local S3 started side by side, the S3's
 * object events recording uploads as S3's notification does in AWS (functions/record-upload.ts),
 * the table created or brought up to date, and the debtor verifier's engines (the table's stream
 * and the retry queue feeding functions/verify-debtors.ts, the Companies House stand-in as the live
 * registry: verification-engines.ts) and webhook delivery's (the same stream feeding the fan-out,
 * the two delivery lanes feeding the delivery function: webhook-engines.ts), all on one local SQS
 * (local-sqs.ts). If any step fails,
 * whatever had started is stopped before the error is passed on.
 */
export interface LocalStoresOptions {
  /** Ports to listen on; a free port each when left out. */
  dynamoPort?: number;
  s3Port?: number;
  /**
   * Keep the data here (`dynamodb/` and `s3/` under it), across restarts. Without it DynamoDB Local
   * runs in memory and the objects go to a temporary directory that `stop()` removes.
   */
  dataDir?: string;
  /** The local SQS's port (a free one when left out). */
  sqsPort?: number;
  /** The Companies House stand-in's port (a free one when left out) and a delay before each answer (the bench). */
  registryPort?: number;
  registryDelayMs?: number;
  /** The key that seals webhook endpoint secrets (WEBHOOK_SECRET_KEY); a fresh one when left out. */
  webhookSecretKey?: string;
  /** The name servers webhook delivery resolves host names with (WEBHOOK_DNS_SERVERS: the bench's loopback DNS server); the system's when left out. */
  webhookDnsServers?: readonly string[];
}

export interface LocalStores {
  dynamoPort: number;
  s3Port: number;
  dynamoEndpoint: string;
  s3Endpoint: string;
  /** False only when Java cannot run the loopback launcher (see startDynamoLocal). */
  loopbackOnly: boolean;
  /** The local SQS (fauxqs) every engine's queues live on. */
  sqs: LocalSqs;
  /** The verifier's engines: the retry queue, the registry stand-in. */
  verification: VerificationEngines;
  /** Webhook delivery's engines: the delivery lanes and their dead-letter queue, the sealing key. */
  webhooks: WebhookEngines;
  /** Stops both stores (and removes a temporary object directory). */
  stop(): Promise<void>;
}

export async function startLocalStores(options: LocalStoresOptions = {}): Promise<LocalStores> {
  const dynamoPort = options.dynamoPort ?? (await freePort());
  const s3Port = options.s3Port ?? (await freePort());
  const s3Dir = options.dataDir ? join(options.dataDir, 's3') : mkdtempSync(join(tmpdir(), 'pca-s3-'));
  const removeTemporary = () => {
    if (!options.dataDir) rmSync(s3Dir, { recursive: true, force: true });
  };
  const dynamoStarting = startDynamoLocal(dynamoPort, options.dataDir ? join(options.dataDir, 'dynamodb') : undefined);
  const recorder = localUploadRecorder(
    dynamoStarting.then((d) => d.endpoint),
    LOCAL_DEFAULTS.tableName,
  );
  const s3Starting = startLocalS3(s3Port, s3Dir, LOCAL_DEFAULTS.bucketName, recorder);
  const [dynamo, s3] = await Promise.allSettled([dynamoStarting, s3Starting]);
  const stop = async () => {
    await Promise.allSettled([
      s3.status === 'fulfilled' ? s3.value.stop() : undefined,
      dynamo.status === 'fulfilled' ? dynamo.value.stop() : undefined,
    ]);
    removeTemporary();
  };
  if (dynamo.status === 'rejected' || s3.status === 'rejected') {
    await stop();
    throw dynamo.status === 'rejected' ? dynamo.reason : (s3 as PromiseRejectedResult).reason;
  }
  let sqs: LocalSqs | undefined;
  let verification: VerificationEngines | undefined;
  let webhooks: WebhookEngines | undefined;
  const stopEngines = async () => {
    // The engines first: they write to the table and read the queues.
    await Promise.all([verification?.stop(), webhooks?.stop()]);
    await sqs?.stop();
  };
  try {
    await ensureTable(dynamo.value.endpoint, LOCAL_DEFAULTS.tableName);
    sqs = await startLocalSqs(options.sqsPort);
    verification = await startVerificationEngines({
      dynamoEndpoint: dynamo.value.endpoint,
      sqs,
      registryPort: options.registryPort,
      registryDelayMs: options.registryDelayMs,
    });
    webhooks = await startWebhookEngines({
      dynamoEndpoint: dynamo.value.endpoint,
      sqs,
      secretKey: options.webhookSecretKey,
      ...(options.webhookDnsServers ? { dnsServers: options.webhookDnsServers } : {}),
    });
  } catch (error) {
    await stopEngines();
    await stop();
    throw error;
  }
  const endpoints = { dynamoEndpoint: dynamo.value.endpoint, s3Endpoint: s3.value.endpoint };
  const stopAll = async () => {
    await stopEngines();
    await stop();
  };
  return { dynamoPort, s3Port, ...endpoints, loopbackOnly: dynamo.value.loopbackOnly, sqs, verification, webhooks, stop: stopAll };
}
