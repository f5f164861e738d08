import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { buildCreateWebhookEndpointHandler } from '../../functions/create-webhook-endpoint.js';
import { DynamoWebhookEndpointStore } from '../../lib/adapters/dynamodb/webhook-endpoint-store.js';
import { secretBoxOnce } from '../../lib/adapters/secrets/webhook-secret-key.js';
import { systemResolver } from '../../lib/adapters/webhooks/webhook-sender.js';
import type { CaseEvent } from '../../lib/cases/case-lifecycle.js';
import { config } from '../../lib/runtime/config.js';
import { STACK_RECORD_FILE } from '../../infra/local/local-ports.js';
import { outcome, postCases, storedEvents, uploadInvoice, validCase } from '../support/cases.js';
import { checkedInvoke } from '../support/contract.js';
import { apiEvent, bearer, ddb, lambdaContext, newPartner, parse, stores } from '../support/fixtures.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * `npm run admin -- webhook redeliver` (infra/ops/admin.ts) as a child process: the redelivery a
 * partner asks for with POST …/redeliver, made by an operator without the partner's key, through
 * the same use case and the delivery lanes the global setup's engines run, to a real receiver on
 * loopback that checks the signature as a partner would.
 */
jest.setTimeout(120_000);

const TSX_CLI = join('node_modules', 'tsx', 'dist', 'cli.mjs');

function admin(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [TSX_CLI, 'infra/ops/admin.ts', ...args], {
      env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function until<T>(probe: () => T | undefined, ms: number): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`not reached within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const createEndpointHandler = buildCreateWebhookEndpointHandler({
  keys: stores().keys,
  store: new DynamoWebhookEndpointStore(ddb(), config().tableName, secretBoxOnce(config())),
  resolver: systemResolver,
  now: () => new Date(),
  urlOptions: { allowLocalDevelopment: true },
});

let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver.close();
});

/** A company whose case.created event its endpoint never received (it subscribes to case.updated only). */
async function companyWithMissedEvent() {
  const partner = await newPartner(['cases:read', 'cases:write', 'webhooks:manage'], { autoAttestation: false });
  const res = parse(
    await checkedInvoke(
      createEndpointHandler,
      apiEvent({
        method: 'POST',
        path: '/api/v1/webhook-endpoints',
        resource: '/api/v1/webhook-endpoints',
        headers: { ...bearer(partner.apiKey), 'Content-Type': 'application/json' },
        body: JSON.stringify({ url: `${receiver.url}/hooks`, events: ['case.updated'] }),
      }),
      lambdaContext(),
    ),
  );
  expect(res.statusCode).toBe(201);
  const created = outcome(await postCases(partner.apiKey, { cases: [validCase(await uploadInvoice(partner.apiKey))] }));
  const caseId = created.created[0]!.id;
  const event = (await storedEvents(partner.companyId)).find((s) => s.event.type === 'case.created' && s.event.data.object.id === caseId)!;
  return { companyId: partner.companyId, endpointId: res.body.id as string, secret: res.body.secret as string, eventId: event.event.id };
}

const deliveriesOf = (eventId: string) => receiver.received.filter((r) => r.headers['webhook-id'] === eventId);

describe('npm run admin -- webhook redeliver', () => {
  it('queues a new delivery of the event to the endpoint, which the receiver gets signed with the endpoint’s secret', async () => {
    const c = await companyWithMissedEvent();
    const run = await admin(['webhook', 'redeliver', '--company', c.companyId, '--endpoint', c.endpointId, '--event', c.eventId, '--json']);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(run.stdout.trim().split('\n').at(-1)!)).toEqual({
      companyId: c.companyId,
      endpointId: c.endpointId,
      mode: 'live',
      delivery: expect.objectContaining({ eventId: c.eventId, eventType: 'case.created', status: 'pending', attempts: [] }),
    });
    const [request] = await until(() => (deliveriesOf(c.eventId).length > 0 ? deliveriesOf(c.eventId) : undefined), 30_000);
    expect(new Webhook(c.secret).verify(request!.body, request!.headers)).toMatchObject({ id: c.eventId, type: 'case.created' });
    expect((JSON.parse(request!.body) as CaseEvent).livemode).toBe(true);
  });

  it('finds the running npm start’s delivery queue through its data directory, and says how to start one when none runs', async () => {
    const c = await companyWithMissedEvent();
    const dataDir = mkdtempSync(join(tmpdir(), 'pca-admin-redeliver-'));
    try {
      const local = {
        TABLE_NAME: undefined,
        DYNAMODB_ENDPOINT: undefined,
        DYNAMODB_LOCAL_PORT: undefined,
        SQS_ENDPOINT: undefined,
        WEBHOOK_DELIVERY_QUEUE_URL: undefined,
        WEBHOOK_TEST_DELIVERY_QUEUE_URL: undefined,
        LOCAL_DATA_DIR: dataDir,
      };
      const args = ['webhook', 'redeliver', '--company', c.companyId, '--endpoint', c.endpointId, '--event', c.eventId];
      // A record without its engines (as an npm start from before they were recorded writes it).
      const ports = {
        pid: process.pid,
        apiPort: 1,
        dynamoPort: Number(new URL(process.env.DYNAMODB_ENDPOINT!).port),
        s3Port: Number(new URL(process.env.S3_ENDPOINT!).port),
      };
      writeFileSync(join(dataDir, STACK_RECORD_FILE), JSON.stringify(ports));
      const unknownQueue = await admin(args, local);
      expect(unknownQueue.code).toBe(2);
      expect(unknownQueue.stderr.trim()).toBe(
        'admin: webhook redeliver needs WEBHOOK_DELIVERY_QUEUE_URL and WEBHOOK_TEST_DELIVERY_QUEUE_URL: start npm start (its queues are found through LOCAL_DATA_DIR), or set them',
      );

      // The record npm start writes; this test process stands in for it (it is alive, and node).
      const engines = {
        sqsEndpoint: process.env.SQS_ENDPOINT,
        verificationRetryQueueUrl: process.env.VERIFICATION_RETRY_QUEUE_URL,
        webhookDeliveryQueueUrl: process.env.WEBHOOK_DELIVERY_QUEUE_URL,
        webhookTestDeliveryQueueUrl: process.env.WEBHOOK_TEST_DELIVERY_QUEUE_URL,
        registryUrl: process.env.COMPANIES_HOUSE_BASE_URL,
        registryApiKey: 'local-companies-house-key',
      };
      writeFileSync(join(dataDir, STACK_RECORD_FILE), JSON.stringify({ ...ports, engines }));
      const run = await admin(args, local);
      expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
      expect(run.stdout.trim()).toMatch(
        new RegExp(
          `^Made delivery \\S+ of ${c.eventId} \\(case.created\\) to live endpoint ${c.endpointId} of ${c.companyId}: status pending`,
        ),
      );
      await until(() => (deliveriesOf(c.eventId).length > 0 ? true : undefined), 30_000);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('refuses an event the company does not have, or of the other mode, with the route’s own words and exit 1', async () => {
    const c = await companyWithMissedEvent();
    const [unknown, testMode] = await Promise.all([
      admin(['webhook', 'redeliver', '--company', c.companyId, '--endpoint', c.endpointId, '--event', 'evt_0000000000000000000000']),
      admin(['webhook', 'redeliver', '--company', c.companyId, '--endpoint', c.endpointId, '--event', c.eventId, '--mode', 'test']),
    ]);
    expect([unknown.code, unknown.stdout, unknown.stderr.trim()]).toEqual([
      1,
      '',
      'No event evt_0000000000000000000000 exists for your company in this mode (events are kept 30 days).',
    ]);
    expect([testMode.code, testMode.stderr.trim()]).toEqual([1, 'No webhook endpoint with this id exists.']);
    const badEndpoint = await admin(['webhook', 'redeliver', '--company', c.companyId, '--endpoint', 'we_nope', '--event', c.eventId]);
    expect([badEndpoint.code, badEndpoint.stderr.trim()]).toEqual([
      2,
      'admin: --endpoint must be a webhook endpoint id (we_ and 22 letters or digits)',
    ]);
  });
});
