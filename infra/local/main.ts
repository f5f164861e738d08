/**
 * `npm start`: DynamoDB Local and s3rver with their data under `.local/`, the table and bucket
 * created if absent, and the real Lambda handlers served on http://localhost:$PORT through a thin
 * adapter that builds the API Gateway event Lambda would receive.
 *
 * Ctrl-C (SIGINT) or SIGTERM, also while starting, stops the HTTP server, s3rver and DynamoDB
 * Local (no Java process is left behind) and exits 0. `LOCAL_DATA_DIR` moves `.local/` elsewhere.
 * If an earlier start died hard and left its DynamoDB Local running, this start stops it first.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import type { StaticRoute } from './http-adapter.js';
import { describePortHolder, reclaimStaleDynamoLocal } from './local-processes.js';
import { forgetLocalStack, LOCAL_DEFAULTS, localPorts, recordLocalStack } from './local-ports.js';
import type { LocalStores } from './start-local-stores.js';

/** Where the first start leaves the demo keys (mode 0600) for scripts such as CI's smoke test. */
export const DEMO_KEY_FILE = 'demo-api-key';
export const DEMO_TEST_KEY_FILE = 'demo-test-api-key';
/**
 * This start's IAM credentials for the internal routes (mode 0600), as shell assignments of their
 * own names: sourcing the file never replaces the developer's AWS_* credentials.
 */
export const INTERNAL_CREDENTIALS_FILE = 'internal-iam-credentials';

/**
 * The documented defaults of the handlers' Powertools utilities (docs/local-development.md):
 * WARN logs, no metrics, no tracing. Set before any module that builds them is loaded (the
 * logger, metrics and tracer read their environment once, when constructed), so every static
 * import of this file stays clear of lib/runtime; what starts the stack is imported after.
 */
async function applyQuietDefaults(): Promise<void> {
  process.env.POWERTOOLS_LOG_LEVEL ||= 'WARN';
  process.env.POWERTOOLS_METRICS_DISABLED ||= 'true';
  // Outside Lambda the tracer switches itself off; said here too so no X-Ray daemon is ever looked for.
  process.env.POWERTOOLS_TRACE_ENABLED = 'false';
  // And the X-Ray SDK's context tracking off with it (docs/local-development.md): in automatic mode it hooks every
  // promise of the one process that runs every local function.
  process.env.AWS_XRAY_MANUAL_MODE ??= 'true';
  // Each line labelled with its own function: every local invocation in its own scope.
  const { enableInvocationScopes } = await import('./run-in-invocation-scope.js');
  await enableInvocationScopes();
}

/**
 * The served OpenAPI document names this server, on its actual port, instead of the default
 * local address the committed document lists.
 */
function withLocalServer(serve: StaticRoute, openApiRoute: string, base: string): StaticRoute {
  return (method, pathname) => {
    const answer = serve(method, pathname);
    if (!answer || answer.statusCode !== 200 || pathname.replace(/\/+$/, '') !== openApiRoute) return answer;
    const document = JSON.parse(answer.body.toString()) as { servers?: { url: string; description?: string }[] };
    document.servers = (document.servers ?? []).map((server) =>
      server.url.startsWith('http://localhost') ? { ...server, url: base } : server,
    );
    return { ...answer, body: `${JSON.stringify(document, null, 2)}\n` };
  };
}

async function main(): Promise<void> {
  await applyQuietDefaults();
  const { javaAvailable, localEnvironment, portInUse } = await import('./stores.js');
  const { startLocalStores } = await import('./start-local-stores.js');
  const { STAND_IN_API_KEY } = await import('./companies-house-stand-in.js');
  let ports;
  try {
    ports = localPorts();
  } catch (error) {
    console.error((error as Error).message);
    process.exit(2);
  }
  if (!javaAvailable()) {
    console.error('Java was not found: DynamoDB Local needs Java 17 or newer (Debian/Ubuntu: apt-get install openjdk-17-jre-headless).');
    process.exit(1);
  }
  const named: [string, number][] = [
    ['PORT', ports.apiPort],
    ['DYNAMODB_LOCAL_PORT', ports.dynamoPort],
    ['S3_LOCAL_PORT', ports.s3Port],
    ...(ports.sqsPort === undefined ? [] : [['SQS_LOCAL_PORT', ports.sqsPort] as [string, number]]),
    ...(ports.registryPort === undefined ? [] : [['REGISTRY_LOCAL_PORT', ports.registryPort] as [string, number]]),
  ];
  const dataDir = process.env.LOCAL_DATA_DIR || '.local';
  const dynamoDir = join(dataDir, 'dynamodb');
  const stale = await reclaimStaleDynamoLocal(dynamoDir);
  if (stale.kind === 'in-use') {
    console.error(
      `Another npm start (pid ${stale.ownerPid}) is running on the data in ${dataDir} (its DynamoDB Local is pid ${stale.javaPid} on port ${stale.port}): stop it, or give this one its own LOCAL_DATA_DIR.`,
    );
    process.exit(1);
  }
  if (stale.kind === 'stopped') {
    console.log(
      `Stopped DynamoDB Local (pid ${stale.javaPid}, port ${stale.port}), left running on ${dynamoDir} by an earlier npm start that did not shut down.`,
    );
    // The process is gone, but the system frees its listening socket a moment later: wait for it
    // (bounded) rather than blaming the port on someone else.
    for (const until = Date.now() + 10_000; Date.now() < until && (await portInUse(stale.port));)
      await new Promise((r) => setTimeout(r, 100));
  }
  for (const [name, port] of named) {
    if (await portInUse(port)) {
      const holder = describePortHolder(port);
      const who = holder ? ` by ${holder}` : ': is another npm start running?';
      console.error(
        `Port ${port} (${name}) is already in use${who}. Stop it, or choose free ports with PORT, DYNAMODB_LOCAL_PORT, S3_LOCAL_PORT, SQS_LOCAL_PORT and REGISTRY_LOCAL_PORT.`,
      );
      process.exit(1);
    }
  }

  Object.assign(process.env, localEnvironment(ports), {
    // npm start alone accepts webhook URLs on localhost / 127.0.0.1 (product rules "Webhooks"); said in its output below.
    WEBHOOK_ALLOW_LOCAL_URLS: 'true',
    WEBHOOK_SECRET_KEY: process.env.WEBHOOK_SECRET_KEY ?? localWebhookSecretKey(dataDir),
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  });

  let server: Server | undefined;
  let stopping = false;
  // Kept as a promise so that a signal during start-up still stops whatever has started.
  let starting: Promise<LocalStores> | undefined;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    if (server) {
      const closed = new Promise<void>((resolve) => server!.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    }
    forgetLocalStack(dataDir);
    // A start that failed has already stopped whatever it had started.
    const stores = await starting?.catch(() => undefined);
    await stores?.stop();
    process.exit(code);
  };
  // Registered before anything starts: a signal in any later moment must not leave Java running.
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));

  try {
    // Their data under dataDir: dynamoDir (above) and the objects in its s3/.
    starting = startLocalStores({
      dynamoPort: ports.dynamoPort,
      s3Port: ports.s3Port,
      sqsPort: ports.sqsPort,
      registryPort: ports.registryPort,
      dataDir,
      webhookSecretKey: process.env.WEBHOOK_SECRET_KEY,
      // The API's routes read WEBHOOK_DNS_SERVERS from this environment themselves; the delivery engines are told.
      ...(process.env.WEBHOOK_DNS_SERVERS ? { webhookDnsServers: process.env.WEBHOOK_DNS_SERVERS.split(',') } : {}),
    });
    const stores = await starting;
    // The API's handlers (the redeliver route) enqueue on the webhook engines' fast lanes (live and test).
    Object.assign(process.env, {
      SQS_ENDPOINT: stores.sqs.endpoint,
      WEBHOOK_DELIVERY_QUEUE_URL: stores.webhooks.deliveryQueueUrl,
      WEBHOOK_TEST_DELIVERY_QUEUE_URL: stores.webhooks.testDeliveryQueueUrl,
    });

    // Handlers read their configuration when loaded: import them only now.
    const { ensureDemoAccount } = await import('./demo-account.js');
    const { createLocalServer } = await import('./http-adapter.js');
    const { API_ROUTES } = await import('./api-routes.js');
    const { docsResponse, OPENAPI_ROUTE } = await import('./docs-routes.js');
    const { newLocalIamCredential } = await import('./execute-api-signature.js');
    // New for every start (never in the repository, never valid against another start); printed below.
    const internalCredential = newLocalIamCredential();
    const internalCredentialsFile = join(dataDir, INTERNAL_CREDENTIALS_FILE);
    const demo = await ensureDemoAccount();
    const keyFile = join(dataDir, DEMO_KEY_FILE);
    const testKeyFile = join(dataDir, DEMO_TEST_KEY_FILE);
    if (demo.created && demo.apiKey && demo.testApiKey) {
      mkdirSync(dataDir, { recursive: true });
      for (const [file, key] of [
        [keyFile, demo.apiKey],
        [testKeyFile, demo.testApiKey],
      ] as const) {
        writeFileSync(file, `${key}\n`, { mode: 0o600 });
        chmodSync(file, 0o600); // a file left from an earlier table keeps its old mode otherwise
      }
    }

    mkdirSync(dataDir, { recursive: true });
    writeFileSync(
      internalCredentialsFile,
      `LOCAL_INTERNAL_ACCESS_KEY_ID=${internalCredential.accessKeyId}\nLOCAL_INTERNAL_SECRET_ACCESS_KEY=${internalCredential.secretAccessKey}\nLOCAL_INTERNAL_REGION=${LOCAL_DEFAULTS.region}\n`,
      { mode: 0o600 },
    );
    chmodSync(internalCredentialsFile, 0o600);

    const base = `http://localhost:${ports.apiPort}`;
    server = createLocalServer({
      routes: API_ROUTES,
      staticRoutes: [withLocalServer(docsResponse, OPENAPI_ROUTE, base)],
      log: (line) => console.log(line),
      iam: { credentials: [internalCredential], region: LOCAL_DEFAULTS.region },
    });
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(ports.apiPort, '127.0.0.1', () => resolve());
    });
    recordLocalStack(dataDir, {
      pid: process.pid,
      apiPort: ports.apiPort,
      dynamoPort: ports.dynamoPort,
      s3Port: ports.s3Port,
      engines: {
        sqsEndpoint: stores.sqs.endpoint,
        verificationRetryQueueUrl: stores.verification.retryQueueUrl,
        webhookDeliveryQueueUrl: stores.webhooks.deliveryQueueUrl,
        webhookTestDeliveryQueueUrl: stores.webhooks.testDeliveryQueueUrl,
        registryUrl: stores.verification.registry.url,
        registryApiKey: STAND_IN_API_KEY,
      },
    });

    console.log(`Partner Case API (local) on ${base}`);
    console.log(
      `  DynamoDB Local  http://127.0.0.1:${ports.dynamoPort}  table ${LOCAL_DEFAULTS.tableName}   (data in ${join(dataDir, 'dynamodb')})`,
    );
    console.log(
      `  S3 (s3rver)     http://127.0.0.1:${ports.s3Port}  bucket ${LOCAL_DEFAULTS.bucketName}   (files in ${join(dataDir, 's3')})`,
    );
    console.log(`  SQS (fauxqs)    ${stores.sqs.endpoint}  (SQS_LOCAL_PORT)`);
    console.log(`  Registry        ${stores.verification.registry.url}  Companies House stand-in (REGISTRY_LOCAL_PORT)`);
    console.log(`  API reference   ${base}/docs`);
    console.log(
      `  Verifier        table stream + retry queue (SQS) -> functions/verify-debtors.ts; live registry: the stand-in (key local-companies-house-key; fixtures in docs/lifecycle-design.md)`,
    );
    console.log(
      `  Webhooks        table stream -> fan-out -> planning (SQS fair queue) -> delivery lanes (SQS) -> functions/deliver-webhooks.ts; endpoints may use http://localhost:<port> and http://127.0.0.1:<port> here (npm start only)`,
    );
    console.log(
      `  Logs            ${process.env.POWERTOOLS_LOG_LEVEL} and above, metrics ${process.env.POWERTOOLS_METRICS_DISABLED === 'false' ? 'on' : 'off'} (POWERTOOLS_LOG_LEVEL, POWERTOOLS_METRICS_DISABLED)`,
    );
    if (!stores.loopbackOnly) {
      console.log(
        '  Note: this Java cannot run the loopback launcher (no jdk.compiler module), so DynamoDB Local listens on every interface.',
      );
    }
    // A command for another terminal names a non-default port, so it reaches this stack.
    const adminPrefix = ports.dynamoPort !== LOCAL_DEFAULTS.dynamoPort ? `DYNAMODB_LOCAL_PORT=${ports.dynamoPort} ` : '';
    if (demo.created && demo.apiKey && demo.testApiKey) {
      console.log('');
      console.log(`Demo company ${demo.companyId} was created with a live and a test-mode API key (cases:read, cases:write).`);
      console.log(`They are shown once here, and kept only in ${keyFile} and ${testKeyFile} (mode 0600):`);
      console.log('');
      console.log(`  export API_KEY=${demo.apiKey}`);
      console.log(`  export TEST_API_KEY=${demo.testApiKey}`);
      console.log('');
      console.log('Test mode (TEST_API_KEY) is a sandbox in the same company: its cases carry livemode false, never meet');
      console.log('live ones and never enter recovery; an invoiceRef starting SIMULATE-TEMPORARY-FAILURE is rejected TEMPORARY_FAILURE.');
      console.log('');
      console.log('Try it (answers 404 until a case with that id exists):');
      console.log(`  curl -s ${base}/api/v1/cases/case_0000000000000000000000 -H "Authorization: Bearer $API_KEY"`);
    } else {
      console.log('');
      const kept = existsSync(keyFile) ? ` and kept in ${keyFile}${existsSync(testKeyFile) ? ` and ${testKeyFile}` : ''}` : '';
      console.log(`The demo keys for company ${demo.companyId} were printed on the first start${kept}. For a new one:`);
      console.log(`  ${adminPrefix}npm run admin -- key create --company ${demo.companyId} --scopes cases:read,cases:write`);
      console.log(`  ${adminPrefix}npm run admin -- key create --company ${demo.companyId} --scopes cases:read,cases:write --mode test`);
    }
    console.log('');
    console.log('Watch webhook deliveries on a local receiver: a test key that may manage webhooks, a test endpoint pointing at');
    console.log('the receiver (the answer shows its secret once), then the receiver with that secret in another terminal:');
    console.log('');
    console.log(
      `  export HOOKS_KEY=$(${adminPrefix}npm run -s admin -- key create --company ${demo.companyId} --scopes cases:read,cases:write,webhooks:manage --mode test --json | node -p 'JSON.parse(require("fs").readFileSync(0)).apiKey')`,
    );
    console.log(
      `  curl -s ${base}/api/v1/webhook-endpoints -H "Authorization: Bearer $HOOKS_KEY" -H 'Content-Type: application/json' -d '{"url":"http://127.0.0.1:4010/","events":["*"]}'`,
    );
    console.log('  npm run webhook-receiver -- --secret whsec_... --port 4010');
    console.log('');
    console.log(
      `Internal routes (/internal/v1/) take SigV4 signatures made with this start's credentials, in ${internalCredentialsFile} (mode 0600; docs/internal-api.md).`,
    );
    console.log('');
    console.log('Ctrl-C stops everything.');
  } catch (error) {
    if (stopping) return;
    console.error(`npm start failed: ${(error as Error).message}`);
    await stop(1);
  }
}

void main();

/**
 * The key that seals webhook endpoint secrets locally: generated once and kept beside the data it
 * seals (mode 0600), so endpoints created in an earlier run can still be rotated after a restart.
 */
function localWebhookSecretKey(dataDir: string): string {
  const file = join(dataDir, 'webhook-secret-key');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32).toString('base64url');
  writeFileSync(file, key + '\n', { mode: 0o600 });
  return key;
}
