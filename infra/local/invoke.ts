/**
 * `npm run invoke -- <function> <event file>`: runs one handler on an API Gateway event against
 * the local stack (start it with `npm start`) and prints the response, as `sam local invoke`
 * would, with the function's timeout from the stack: a function that overruns it (or throws) is
 * reported, with API Gateway's answer, and exits 1. The event file may live anywhere; for the
 * samples in `events/` the status they document is checked, and a different status exits 1.
 *
 * Placeholders in the event ({{API_KEY}}, {{CASE_ID}}, ...) are filled consistently from one
 * company: with `API_KEY` exported (as the README has you do), that key's company; otherwise a
 * sample company reused on every run. The one-scope keys made for the run are revoked at its end.
 * Any other placeholder exported by name (e.g. CASE_ID) overrides the provisioned value.
 */
import { readFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { ListTablesCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { localPorts, withRunningStackPorts } from './local-ports.js';
import { localEnvironment } from './stores.js';

const USAGE = 'usage: npm run invoke -- <get-case|create-cases|create-upload> <event file, e.g. events/get-case.json>';

async function main(): Promise<number> {
  const [fn, eventPath, ...extra] = process.argv.slice(2);
  if (!fn || !eventPath || extra.length > 0) {
    console.error(USAGE);
    return 2;
  }
  const { FUNCTION_NAMES, SAMPLE_EVENTS } = await import('./sample-events.js');
  const name = FUNCTION_NAMES.find((f) => f === fn);
  if (!name) {
    console.error(`unknown function "${fn}"; ${USAGE}`);
    return 2;
  }
  let template: unknown;
  try {
    template = JSON.parse(readFileSync(eventPath, 'utf8')) as unknown;
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    console.error(`cannot read the event ${eventPath}: ${reason}`);
    return 2;
  }
  // A documented status belongs to the sample file itself, not to a copy elsewhere.
  const file = basename(eventPath);
  const sample = resolve(eventPath) === resolve('events', file) ? SAMPLE_EVENTS[file] : undefined;
  if (sample && sample.function !== name) {
    console.error(`events/${file} is an event for ${sample.function}, not ${name}`);
    return 2;
  }

  let ports;
  try {
    ports = localPorts(withRunningStackPorts(process.env));
  } catch (error) {
    console.error((error as Error).message);
    return 2;
  }
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

  const { invokeEvent, provisionEventValues, reportInvocation } = await import('./sample-events.js');
  const exportedKey = process.env.API_KEY || undefined;
  // Seeding runs the create-cases handler, whose log and metric lines are not this run's result.
  const values = await divertStdout(
    () => undefined,
    () => provisionEventValues({ apiKey: exportedKey }),
  );
  const runKeys = [values.API_KEY, values.READ_ONLY_API_KEY, values.WRITE_ONLY_API_KEY, values.WEBHOOKS_API_KEY].filter(
    (key): key is string => Boolean(key) && key !== exportedKey,
  );
  const overridden: string[] = [];
  for (const placeholder of Object.keys(values)) {
    const override = process.env[placeholder];
    if (placeholder !== 'API_KEY' && override) {
      values[placeholder] = override;
      overridden.push(placeholder);
    }
  }
  try {
    // The function's own log lines (and metrics) go to stderr, as sam local invoke shows them.
    const invocation = await divertStdout(
      (chunk) => process.stderr.write(chunk),
      () => invokeEvent(name, template, values),
    );
    const report = reportInvocation(sample ? file : eventPath, invocation);
    console.log(report.stdout);
    for (const line of report.stderr) console.error(line);
    console.error(
      `(placeholders filled from ${exportedKey ? 'the company of the exported API_KEY' : 'the sample company'}${overridden.length ? `; ${overridden.join(', ')} from the environment` : ''})`,
    );
    if (report.exitCode !== 0) return report.exitCode;
    const res = invocation.result;
    if (!sample) return 0;
    if (res.statusCode !== sample.status) {
      console.error(`status ${res.statusCode} differs from the documented status ${sample.status} for ${file} (${sample.description})`);
      return 1;
    }
    return 0;
  } finally {
    await revokeRunKeys(runKeys);
  }
}

/**
 * Runs `work` with whatever it writes to stdout (the handlers' Powertools log and metric lines, which
 * Lambda sends to its log stream) handed to `sink` instead, so that stdout carries the response
 * alone and can be piped (`npm run -s invoke -- ... | jq .body`).
 */
async function divertStdout<T>(sink: (chunk: string | Uint8Array) => void, work: () => Promise<T>): Promise<T> {
  const write = process.stdout.write;
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    sink(chunk);
    const callback = rest.find((arg): arg is () => void => typeof arg === 'function');
    callback?.();
    return true;
  }) as typeof process.stdout.write;
  try {
    return await work();
  } finally {
    process.stdout.write = write;
  }
}

/** Revokes the keys made for this run (never an exported one), so none stays usable. */
async function revokeRunKeys(keys: string[]): Promise<void> {
  const { parseApiKey } = await import('../../lib/auth/api-key.js');
  const { AccountsService } = await import('../../lib/accounts/accounts-service.js');
  const { tableAdapters } = await import('../../lib/adapters/production-adapters.js');
  const stores = tableAdapters();
  const accounts = new AccountsService(stores.companies, stores.keys);
  await Promise.all(keys.map((key) => parseApiKey(key)).map((parsed) => (parsed ? accounts.revokeKey(parsed.keyId) : undefined)));
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`invoke failed: ${(error as Error).message}`);
    process.exit(1);
  },
);
