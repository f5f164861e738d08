/**
 * `npm run invoke -- <function> events/<file>.json`: runs one handler on a sample API Gateway
 * event against the local stack (start it with `npm start`) and prints the response, as
 * `sam local invoke` would. Placeholders in the event ({{API_KEY}}, {{CASE_ID}}, ...) are filled
 * from environment variables of the same name when set, else from a throw-away company, keys,
 * invoice and case created in the local stores for this run.
 */
import { basename } from 'node:path';
import { ListTablesCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { localEnvironment, localPorts } from './local/stores.js';

const USAGE = 'usage: npm run invoke -- <get-case|create-cases|create-upload> events/<file>.json';

async function main(): Promise<number> {
  const [fn, eventPath] = process.argv.slice(2);
  if (!fn || !eventPath) {
    console.error(USAGE);
    return 2;
  }
  const ports = localPorts();
  Object.assign(process.env, { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...localEnvironment(ports) });

  const probe = new DynamoDBClient({ endpoint: process.env.DYNAMODB_ENDPOINT, region: process.env.AWS_REGION, maxAttempts: 1 });
  try {
    await probe.send(new ListTablesCommand({ Limit: 1 }));
  } catch {
    console.error(`DynamoDB Local is not running on port ${ports.dynamoPort}: start the local stack with npm start`);
    return 1;
  } finally {
    probe.destroy();
  }

  const { SAMPLE_EVENTS, invokeSample, provisionEventValues } = await import('./local/sample-events.js');
  const file = basename(eventPath);
  const sample = SAMPLE_EVENTS[file];
  if (!sample) {
    console.error(`events/${file} is not a known sample event; see infra/local/sample-events.ts`);
    return 2;
  }
  if (sample.function !== fn) {
    console.error(`events/${file} is an event for ${sample.function}, not ${fn}`);
    return 2;
  }
  const values = await provisionEventValues();
  for (const name of Object.keys(values)) {
    const override = process.env[name];
    if (override) values[name] = override;
  }
  const res = await invokeSample(file, values);
  let body: unknown = res.body;
  try {
    body = JSON.parse(res.body);
  } catch {
    // not JSON: print as is
  }
  console.log(JSON.stringify({ statusCode: res.statusCode, headers: res.headers, body }, null, 2));
  console.error(`(documented status for ${file}: ${sample.status} — ${sample.description})`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`invoke failed: ${(error as Error).message}`);
    process.exit(1);
  },
);
