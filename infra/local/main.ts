/**
 * `npm start`: DynamoDB Local and s3rver with their data under `.local/`, the table and bucket
 * created if absent, and the real Lambda handlers served on http://localhost:$PORT through a thin
 * adapter that builds the API Gateway event Lambda would receive.
 */
import type { Server } from 'node:http';
import { javaAvailable, LOCAL_DEFAULTS, localEnvironment, localPorts, portInUse, ensureTable, startDynamoLocal, startLocalS3, type RunningDynamo, type RunningS3 } from './stores.js';

async function main(): Promise<void> {
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
  ];
  for (const [name, port] of named) {
    if (await portInUse(port)) {
      console.error(`Port ${port} (${name}) is already in use: is another npm start running? Stop it, or choose free ports with PORT, DYNAMODB_LOCAL_PORT and S3_LOCAL_PORT.`);
      process.exit(1);
    }
  }

  Object.assign(process.env, localEnvironment(ports), {
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    POWERTOOLS_METRICS_DISABLED: process.env.POWERTOOLS_METRICS_DISABLED ?? 'true',
    POWERTOOLS_LOG_LEVEL: process.env.POWERTOOLS_LOG_LEVEL ?? 'WARN',
  });

  let dynamo: RunningDynamo | undefined;
  let s3: RunningS3 | undefined;
  let server: Server | undefined;
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server?.closeAllConnections();
    await Promise.allSettled([s3?.stop(), dynamo?.stop()]);
    process.exit(code);
  };
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));

  try {
    [dynamo, s3] = await Promise.all([startDynamoLocal(ports.dynamoPort, '.local/dynamodb'), startLocalS3(ports.s3Port, '.local/s3', LOCAL_DEFAULTS.bucketName)]);
    await ensureTable(dynamo.endpoint, LOCAL_DEFAULTS.tableName);

    // Handlers read their configuration when loaded: import them only now.
    const { ensureDemoAccount } = await import('./demo-account.js');
    const { createLocalServer } = await import('./http-adapter.js');
    const { API_ROUTES } = await import('./api-routes.js');
    const { docsResponse } = await import('./docs-routes.js');
    const demo = await ensureDemoAccount();

    server = createLocalServer({ routes: API_ROUTES, staticRoutes: [docsResponse], log: (line) => console.log(line) });
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(ports.apiPort, '127.0.0.1', () => resolve());
    });

    const base = `http://localhost:${ports.apiPort}`;
    console.log(`Partner Case API (local) on ${base}`);
    console.log(`  DynamoDB Local  http://127.0.0.1:${ports.dynamoPort}  table ${LOCAL_DEFAULTS.tableName}   (data in .local/dynamodb)`);
    console.log(`  S3 (s3rver)     http://127.0.0.1:${ports.s3Port}  bucket ${LOCAL_DEFAULTS.bucketName}   (files in .local/s3)`);
    console.log(`  API reference   ${base}/docs`);
    if (demo.created && demo.apiKey) {
      console.log('');
      console.log(`Demo company ${demo.companyId} was created with an API key (cases:read, cases:write).`);
      console.log('This key is shown once and cannot be read back:');
      console.log('');
      console.log(`  export API_KEY=${demo.apiKey}`);
      console.log('');
      console.log('Try it (answers 404 until a case with that id exists):');
      console.log(`  curl -s ${base}/api/v1/cases/case_0000000000000000000000 -H "Authorization: Bearer $API_KEY"`);
    } else {
      console.log('');
      console.log(`A demo key for company ${demo.companyId} was printed on the first start. For a new one:`);
      console.log(`  npm run admin -- key create --company ${demo.companyId} --scopes cases:read,cases:write`);
    }
    console.log('');
    console.log('Ctrl-C stops everything.');
  } catch (error) {
    console.error(`npm start failed: ${(error as Error).message}`);
    await stop(1);
  }
}

void main();
