import { spawnSync } from 'node:child_process';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { startCompaniesHouseStandIn } from '../../infra/local/companies-house-stand-in.js';
import { startSignedWebhookReceiver } from '../../infra/local/signed-webhook-receiver.js';
import { startWebhookReceiver } from '../support/webhook-receiver.js';

/**
 * The local world's servers hold a developer's data and accept unsigned requests (the SQS twin
 * takes any credentials): each listens on loopback only, never on every interface, so nothing on
 * the developer's network can read or send their queues' messages. The integration project's
 * global setup runs the same start sequence as `npm start` (start-local-stores.ts); this checks
 * the servers it started, and the ones the developer starts by hand.
 */

/** An address of this machine that is not loopback (undefined on a machine without a network). */
const externalAddress = Object.values(networkInterfaces())
  .flat()
  .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;

function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

const portOf = (url: string) => Number(new URL(url).port);

async function reachability(port: number): Promise<{ loopback: boolean; external: boolean | 'no external interface' }> {
  return {
    loopback: await accepts('127.0.0.1', port),
    external: externalAddress === undefined ? 'no external interface' : await accepts(externalAddress, port),
  };
}
const loopbackOnly = { loopback: true, external: externalAddress === undefined ? 'no external interface' : false };

describe('the local servers listen on loopback only', () => {
  it('the SQS twin, DynamoDB Local, the local S3 and the registry stand-in of the running local world', async () => {
    const servers = {
      sqs: process.env.SQS_ENDPOINT!,
      dynamodb: process.env.DYNAMODB_ENDPOINT!,
      s3: process.env.S3_ENDPOINT!,
      registry: process.env.COMPANIES_HOUSE_BASE_URL!,
    };
    const seen: Record<string, unknown> = {};
    for (const [name, url] of Object.entries(servers)) seen[name] = await reachability(portOf(url));
    expect(seen).toEqual({ sqs: loopbackOnly, dynamodb: loopbackOnly, s3: loopbackOnly, registry: loopbackOnly });
  });

  it('a local SQS started on its own is bound to 127.0.0.1', () => {
    // In a process of its own: fauxqs is an ES module, which jest's CommonJS sandbox cannot load.
    const probe = `
      const { startLocalSqs } = await import('./infra/local/local-sqs.ts');
      const sqs = await startLocalSqs();
      console.log(JSON.stringify({ address: sqs.address, port: Number(new URL(sqs.endpoint).port) }));
      await sqs.stop();
    `;
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', probe], {
      encoding: 'utf8',
      env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
      timeout: 30_000,
    });
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual({ address: '127.0.0.1', port: expect.any(Number) });
  });

  it('the registry stand-in and the webhook receivers developers and tests start, with their default host', async () => {
    const registry = await startCompaniesHouseStandIn();
    const signed = await startSignedWebhookReceiver({ secrets: [] });
    const plain = await startWebhookReceiver();
    try {
      expect({
        registry: await reachability(portOf(registry.url)),
        signed: await reachability(portOf(signed.url)),
        plain: await reachability(plain.port),
      }).toEqual({ registry: loopbackOnly, signed: loopbackOnly, plain: loopbackOnly });
    } finally {
      await Promise.all([registry.close(), signed.close(), plain.close()]);
    }
  });
});
