import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installTsResolution } from './resolve-ts.ts';

/**
 * Starts DynamoDB Local (in memory) and s3rver once for the integration project, on free ports,
 * and hands their addresses to the test workers through the environment.
 */
export default async function globalSetup(): Promise<void> {
  // Several jest projects share one set of stores (global setups run in one process, before
  // any worker starts): start them once and count the users.
  const shared = globalThis as { __LOCAL_STORES__?: unknown; __LOCAL_STORES_USERS__?: number };
  if (shared.__LOCAL_STORES__) {
    shared.__LOCAL_STORES_USERS__ = (shared.__LOCAL_STORES_USERS__ ?? 1) + 1;
    return;
  }
  shared.__LOCAL_STORES_USERS__ = 1;
  installTsResolution();
  const { ensureTable, freePort, LOCAL_DEFAULTS, localUploadRecorder, startDynamoLocal, startLocalS3 } = await import('../../infra/local/stores.js');
  const [dynamoPort, s3Port] = [await freePort(), await freePort()];
  const s3Dir = mkdtempSync(join(tmpdir(), 'pca-s3-'));
  const dynamoStarting = startDynamoLocal(dynamoPort);
  // Uploads are recorded as S3's notification records them in AWS (functions/record-upload.ts).
  const recorder = localUploadRecorder(
    dynamoStarting.then((d) => d.endpoint),
    LOCAL_DEFAULTS.tableName,
  );
  const [dynamo, s3] = await Promise.all([dynamoStarting, startLocalS3(s3Port, s3Dir, LOCAL_DEFAULTS.bucketName, recorder)]);
  await ensureTable(dynamo.endpoint, LOCAL_DEFAULTS.tableName);
  Object.assign(process.env, {
    TABLE_NAME: LOCAL_DEFAULTS.tableName,
    BUCKET_NAME: LOCAL_DEFAULTS.bucketName,
    AWS_REGION: LOCAL_DEFAULTS.region,
    DYNAMODB_ENDPOINT: dynamo.endpoint,
    S3_ENDPOINT: s3.endpoint,
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
  });
  (globalThis as { __LOCAL_STORES__?: unknown }).__LOCAL_STORES__ = { dynamo, s3, s3Dir };
}
