/**
 * `npm run webhook-receiver -- --secret whsec_… [--secret whsec_…] [--port 4010] [--status 503] [--body]`:
 * the developers' webhook receiver (signed-webhook-receiver.ts) on http://127.0.0.1:<port>/, one
 * line per delivery. The secret is the one the endpoint's creation (or rotation) showed; give the
 * old and the new one during a rotation. README.md's walk-through uses it with `npm start`.
 */
import { parseArgs } from 'node:util';
import { describeDelivery, startSignedWebhookReceiver } from './signed-webhook-receiver.js';

const USAGE = 'usage: npm run webhook-receiver -- --secret whsec_… [--secret whsec_…] [--port 4010] [--status 503] [--body]';

async function main(): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({
      options: {
        secret: { type: 'string', multiple: true },
        port: { type: 'string', default: '4010' },
        status: { type: 'string' },
        body: { type: 'boolean', default: false },
      },
    });
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    process.exit(2);
  }
  const { secret, port, status, body } = parsed.values;
  if (!secret?.length || secret.some((s) => !s.startsWith('whsec_'))) {
    console.error(`--secret whsec_… is required: the secret shown when the endpoint was created (or rotated).\n${USAGE}`);
    process.exit(2);
  }
  const receiver = await startSignedWebhookReceiver({
    secrets: secret,
    port: Number(port),
    ...(status ? { status: Number(status) } : {}),
    onDelivery: (d) => {
      console.log(describeDelivery(d));
      if (body) console.log(`  ${d.body}`);
    },
  });
  console.log(`Webhook receiver on ${receiver.url}/ (signatures checked with standardwebhooks); Ctrl-C stops it.`);
  const stop = () => void receiver.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

void main();
