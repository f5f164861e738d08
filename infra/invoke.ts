/**
 * `npm run invoke -- <function> events/<file>.json`: runs one handler on a sample API Gateway
 * event against the local stack (start it with `npm start`) and prints the response, as
 * `sam local invoke` would, with the function's timeout from the stack: a function that overruns
 * it (or throws) is reported, with API Gateway's answer, and exits 1. Placeholders in the event ({{API_KEY}}, {{CASE_ID}}, ...) are filled
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

  const { SAMPLE_EVENTS, invokeSample, provisionEventValues, reportInvocation } = await import('./local/sample-events.js');
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
  const report = reportInvocation(file, await invokeSample(file, values));
  console.log(report.stdout);
  for (const line of report.stderr) console.error(line);
  return report.exitCode;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`invoke failed: ${(error as Error).message}`);
    process.exit(1);
  },
);
