/**
 * `tsx infra/local/check-webhook-walkthrough.ts --base-url URL --company ID --dynamo-port N`: the
 * README's webhook step, run by CI (.ci/run) against the `npm start` its smoke step started, so
 * the path a developer follows by hand is checked on every change: a test key that may manage
 * webhooks (the admin command, as `npm start` prints it), a test endpoint pointing at a receiver
 * on loopback, a test case (the smoke test creates it, with that key), and then a `case.created`
 * delivery that the receiver verifies with `standardwebhooks`, and the endpoint's delivery log
 * showing it `delivered`. Last session's bug (the engines sealing with another key than the API,
 * so nothing could be delivered under `npm start`) fails here.
 *
 * Neither the key nor the endpoint's secret is printed or put on a command line: the key goes to
 * the smoke test in its environment, the secret stays in this process. One PASS/FAIL line per
 * step; exit 0 when all pass, 1 when one fails, 2 for bad arguments.
 */
import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { startSignedWebhookReceiver, type ReceivedDelivery } from './signed-webhook-receiver.js';

const USAGE = 'usage: tsx infra/local/check-webhook-walkthrough.ts --base-url URL --company cmp_… --dynamo-port N [--wait-seconds 60]';

class StepFailed extends Error {}

function pass(step: string, detail = ''): void {
  console.log(`PASS  ${step}${detail ? `: ${detail}` : ''}`);
}

async function main(): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        'base-url': { type: 'string' },
        company: { type: 'string' },
        'dynamo-port': { type: 'string' },
        'wait-seconds': { type: 'string', default: '60' },
      },
    }));
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const base = values['base-url'];
  const company = values.company;
  const dynamoPort = values['dynamo-port'];
  if (!base || !company || !dynamoPort) {
    console.error(USAGE);
    return 2;
  }

  const secrets: string[] = [];
  const receiver = await startSignedWebhookReceiver({ secrets });
  try {
    // 1. The key, as npm start's output tells a developer to make it.
    const made = execFileSync(
      'npm',
      [
        'run',
        '-s',
        'admin',
        '--',
        'key',
        'create',
        '--company',
        company,
        '--scopes',
        'cases:read,cases:write,webhooks:manage',
        '--mode',
        'test',
        '--json',
      ],
      { env: { ...process.env, DYNAMODB_LOCAL_PORT: dynamoPort }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const apiKey = (JSON.parse(made) as { apiKey?: string }).apiKey;
    if (!apiKey?.startsWith('pca_test_')) throw new StepFailed('admin key create did not answer a test-mode key');
    pass('a test key with webhooks:manage made by the admin command');
    const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };

    // 2. The endpoint, pointing at the receiver (npm start accepts http://127.0.0.1:<port>).
    const created = await fetch(`${base}/api/v1/webhook-endpoints`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ url: `${receiver.url}/`, events: ['case.created'], description: 'CI walk-through' }),
    });
    const endpoint = (await created.json()) as { id?: string; secret?: string; livemode?: boolean };
    if (created.status !== 201 || !endpoint.id || !endpoint.secret?.startsWith('whsec_') || endpoint.livemode !== false)
      throw new StepFailed(`creating the endpoint answered ${created.status}`);
    secrets.push(endpoint.secret);
    pass('a test endpoint created at a loopback receiver', endpoint.id);

    // 3. A test case: the smoke test's, made with this key (in its environment, not on the command line).
    execFileSync('npm', ['run', '-s', 'smoke', '--', '--base-url', base], { env: { ...process.env, API_KEY: apiKey }, stdio: 'inherit' });
    pass('a test case created (the smoke test, with that key)');

    // 4. Its case.created, signed, at the receiver.
    const waitUntil = Date.now() + Number(values['wait-seconds']) * 1000;
    let delivery: ReceivedDelivery | undefined;
    while (!delivery && Date.now() < waitUntil) {
      delivery = receiver.received.find((d) => d.eventType === 'case.created');
      if (!delivery) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    if (!delivery) throw new StepFailed(`no case.created delivery within ${values['wait-seconds']} s`);
    if (!delivery.verified) throw new StepFailed(`the delivery's signature did not verify: ${delivery.error ?? '?'}`);
    pass('a case.created delivery arrived, its signature verified by standardwebhooks', delivery.webhookId);

    // 5. The delivery log says so.
    let logged: { status?: string; eventId?: string; attempts?: { statusCode?: number }[] } | undefined;
    while (Date.now() < waitUntil) {
      const log = await fetch(`${base}/api/v1/webhook-endpoints/${endpoint.id}/deliveries`, { headers });
      const page = (await log.json()) as { data?: (typeof logged)[] };
      logged = page.data?.find((d) => d?.eventId === delivery.webhookId);
      if (logged?.status === 'delivered') break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    if (logged?.status !== 'delivered' || logged.attempts?.[0]?.statusCode !== 204)
      throw new StepFailed(`the delivery log shows ${JSON.stringify(logged ?? 'nothing')} for ${delivery.webhookId}`);
    pass('the delivery log shows it delivered (204)');
    return 0;
  } catch (error) {
    console.log(`FAIL  ${error instanceof StepFailed ? error.message : String((error as Error).message ?? error)}`);
    return 1;
  } finally {
    await receiver.close();
  }
}

process.exitCode = await main();
