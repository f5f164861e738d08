import { TransactWriteItemsCommand } from '@aws-sdk/client-dynamodb';
import { handler as listHandler } from '../../functions/list-cases.js';
import { handler as getEventHandler } from '../../functions/get-event.js';
import { handler as listEventsHandler } from '../../functions/list-events.js';
import { eventItem } from '../../lib/adapters/dynamodb/event-items.js';
import { buildCaseEvent } from '../../lib/cases/case-lifecycle.js';
import { handler as withdrawHandler } from '../../functions/withdraw-case.js';
import { handler as recoveryHelper } from '../../functions/test-apply-recovery-update.js';
import { caseChangeAdapters } from '../../lib/adapters/production-adapters.js';
import { settleCaseStatus } from '../../lib/cases/change-case.js';
import { buildCreateWebhookEndpointHandler } from '../../functions/create-webhook-endpoint.js';
import { buildDeleteWebhookEndpointHandler } from '../../functions/delete-webhook-endpoint.js';
import { buildGetWebhookEndpointHandler } from '../../functions/get-webhook-endpoint.js';
import { buildListWebhookEndpointsHandler } from '../../functions/list-webhook-endpoints.js';
import { buildRotateWebhookEndpointSecretHandler } from '../../functions/rotate-webhook-endpoint-secret.js';
import { buildUpdateWebhookEndpointHandler } from '../../functions/update-webhook-endpoint.js';
import { DynamoWebhookEndpointStore } from '../../lib/adapters/dynamodb/webhook-endpoint-store.js';
import { secretBoxOnce } from '../../lib/adapters/secrets/webhook-secret-key.js';
import { itemReads } from '../../infra/stack/grants.js';
import type { TableAccess } from '../../infra/contract/routes/index.js';
import { documentClient } from '../../lib/adapters/dynamodb/dynamo-client.js';
import { config } from '../../lib/runtime/config.js';
import type { Mode } from '../../lib/mode.js';
import { checkedInvoke } from '../support/contract.js';
import { outcome, postCases, readCase, uploadInvoice, validCase } from '../support/cases.js';
import { apiEvent, bearer, ddb, lambdaContext, newPartner, parse, stores } from '../support/fixtures.js';
import { decide, itemRequestsOf, type ItemRequest } from '../unit/infra/dynamodb-iam.js';
import { statementsOfFunction, synth, type WebhookFunctionId } from '../unit/infra/synth.js';

/**
 * The real handlers against the local table, every request they send recorded on its way out (the
 * process's one DocumentClient, which every handler shares, passes each command on unchanged), and
 * each recorded item request evaluated against the synthesised policy of the function that sent
 * it: each function may send what it really sends, and every GetItem partition it is granted is
 * one it really reads (test/unit/infra/iam.test.ts shows it may read nothing else).
 */
const recorded: ItemRequest[] = [];
const client = documentClient(config());
const send = client.send.bind(client) as (...args: unknown[]) => Promise<unknown>;
const recordingSend = (...args: unknown[]): Promise<unknown> => {
  recorded.push(...itemRequestsOf(args[0] as Parameters<typeof itemRequestsOf>[0]));
  return send(...args);
};
// The stores call send(command, options) and await it; the client's overloads also type a callback form.
Reflect.set(client, 'send', recordingSend);

/** The item requests one step sends, recorded from an empty list. */
async function requestsOf(step: () => Promise<unknown>): Promise<ItemRequest[]> {
  recorded.length = 0;
  await step();
  return [...recorded];
}

const synthesised = synth();
/** The six endpoint-management functions (ping, redeliver and the delivery log are not driven here yet). */
type EndpointFunctionId = Exclude<WebhookFunctionId, 'PingWebhookEndpoint' | 'RedeliverWebhookEvent' | 'ListWebhookDeliveries'>;
type FunctionId =
  'GetCase' | 'ListCases' | 'CreateUpload' | 'CreateCases' | 'GetEvent' | 'ListEvents' | 'WithdrawCase' | EndpointFunctionId;
const ACCESS: Record<FunctionId, TableAccess> = {
  GetCase: 'read',
  ListCases: 'list-cases',
  CreateUpload: 'authenticate',
  CreateCases: 'write-cases',
  GetEvent: 'read-events',
  ListEvents: 'list-events',
  WithdrawCase: 'withdraw-case',
  CreateWebhookEndpoint: 'webhook-endpoints-create',
  ListWebhookEndpoints: 'webhook-endpoints-list',
  GetWebhookEndpoint: 'webhook-endpoints-read',
  UpdateWebhookEndpoint: 'webhook-endpoints-change',
  DeleteWebhookEndpoint: 'webhook-endpoints-delete',
  RotateWebhookEndpointSecret: 'webhook-endpoints-change',
};

/**
 * The six endpoint handlers as their modules wire them (a store without the key for list, get,
 * update and delete; with it for create and rotate), on the process's one DocumentClient, with
 * names resolving to a public address (the URL rules resolve a name at creation and change).
 */
function webhookHandlers() {
  const cfg = config();
  const plain = new DynamoWebhookEndpointStore(ddb(), cfg.tableName);
  const sealing = new DynamoWebhookEndpointStore(ddb(), cfg.tableName, secretBoxOnce(cfg));
  const keys = stores().keys;
  const manage = { keys, resolver: async () => ['93.184.216.34'], now: () => new Date() };
  return {
    CreateWebhookEndpoint: buildCreateWebhookEndpointHandler({ ...manage, store: sealing }),
    ListWebhookEndpoints: buildListWebhookEndpointsHandler({ keys, store: plain }),
    GetWebhookEndpoint: buildGetWebhookEndpointHandler({ keys, store: plain }),
    UpdateWebhookEndpoint: buildUpdateWebhookEndpointHandler({ ...manage, store: plain }),
    DeleteWebhookEndpoint: buildDeleteWebhookEndpointHandler({ keys, store: plain }),
    RotateWebhookEndpointSecret: buildRotateWebhookEndpointSecretHandler({ keys, store: sealing, now: () => new Date() }),
  };
}
const FUNCTION_IDS = Object.keys(ACCESS) as FunctionId[];

/** IAM's StringLike over one partition pattern. */
const matches = (pattern: string, pk: string) =>
  new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`).test(pk);

function expectAllowed(id: FunctionId, requests: ItemRequest[]): void {
  const policy = statementsOfFunction(synthesised, id);
  for (const request of requests) expect({ id, request, decision: decide(policy, request) }).toEqual({ id, request, decision: 'allow' });
}

describe.each<Mode>(['live', 'test'])('each function sends only item requests its role allows, %s mode', (mode) => {
  const sent: Record<FunctionId, ItemRequest[]> = {
    GetCase: [],
    ListCases: [],
    CreateUpload: [],
    CreateCases: [],
    GetEvent: [],
    ListEvents: [],
    WithdrawCase: [],
    CreateWebhookEndpoint: [],
    ListWebhookEndpoints: [],
    GetWebhookEndpoint: [],
    UpdateWebhookEndpoint: [],
    DeleteWebhookEndpoint: [],
    RotateWebhookEndpointSecret: [],
  };

  beforeAll(async () => {
    const partner = await newPartner(['cases:read', 'cases:write'], { mode });
    let fileKey = '';
    sent.CreateUpload = await requestsOf(async () => {
      fileKey = await uploadInvoice(partner.apiKey);
    });
    const input = validCase(fileKey);
    const idempotency = { 'Idempotency-Key': `reads-${mode}-${Date.now()}` };
    let caseId = '';
    sent.CreateCases = await requestsOf(async () => {
      const created = await postCases(partner.apiKey, { cases: [input] }, idempotency);
      expect(created.statusCode).toBe(201);
      caseId = outcome(created).created[0]!.id;
      // The replay answers from the stored claim.
      expect((await postCases(partner.apiKey, { cases: [input] }, idempotency)).statusCode).toBe(409);
    });
    sent.GetCase = await requestsOf(async () => {
      expect((await readCase(partner.apiKey, caseId)).statusCode).toBe(200);
    });
    sent.ListCases = await requestsOf(async () => {
      const event = apiEvent({
        method: 'GET',
        path: '/api/v1/cases',
        resource: '/api/v1/cases',
        headers: bearer(partner.apiKey),
        query: { invoiceRef: input.invoiceRef as string },
      });
      const listed = parse(await checkedInvoke(listHandler, event, lambdaContext()));
      expect({ status: listed.statusCode, ids: (listed.body.data as { id: string }[]).map((c) => c.id) }).toEqual({
        status: 200,
        ids: [caseId],
      });
    });
    // The case's event, written as the outbox writes it (the create path may not write it yet).
    const read = await readCase(partner.apiKey, caseId);
    const event = buildCaseEvent(read.body as unknown as Parameters<typeof buildCaseEvent>[0], new Date().toISOString());
    await client.send(
      new TransactWriteItemsCommand({
        TransactItems: [{ Put: { TableName: config().tableName, Item: eventItem(event, partner.companyId, mode) } }],
      }),
    );
    sent.GetEvent = await requestsOf(async () => {
      const got = apiEvent({
        method: 'GET',
        path: `/api/v1/events/${event.id}`,
        resource: '/api/v1/events/{id}',
        pathParameters: { id: event.id },
        headers: bearer(partner.apiKey),
      });
      const answered = parse(await checkedInvoke(getEventHandler, got, lambdaContext()));
      expect([answered.statusCode, answered.body.id]).toEqual([200, event.id]);
    });
    sent.ListEvents = await requestsOf(async () => {
      const listed = apiEvent({ method: 'GET', path: '/api/v1/events', resource: '/api/v1/events', headers: bearer(partner.apiKey) });
      expect(parse(await checkedInvoke(listEventsHandler, listed, lambdaContext())).statusCode).toBe(200);
    });
    sent.WithdrawCase = await requestsOf(async () => {
      const event = apiEvent({
        method: 'POST',
        path: `/api/v1/cases/${caseId}/withdraw`,
        resource: '/api/v1/cases/{id}/withdraw',
        pathParameters: { id: caseId },
        headers: { ...bearer(partner.apiKey), 'Content-Type': 'application/json' },
        body: JSON.stringify({ reason: 'sent in error' }),
      });
      const withdrawn = parse(await checkedInvoke(withdrawHandler, event, lambdaContext()));
      expect({ status: withdrawn.statusCode, caseStatus: withdrawn.body.status }).toEqual({ status: 200, caseStatus: 'WITHDRAWN' });
    });

    // The six webhook endpoint routes, each through its handler as wired: create, list, get, change, rotate, delete.
    const manager = await newPartner(['webhooks:manage'], { mode });
    const h = webhookHandlers();
    const collection = '/api/v1/webhook-endpoints';
    const call = async (id: EndpointFunctionId, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown) => {
      const endpointId = path.split('/')[4];
      const resource = path.replace(/\/we_[0-9A-Za-z]+/, '/{id}');
      const event = apiEvent({
        method,
        path,
        resource,
        ...(endpointId ? { pathParameters: { id: endpointId } } : {}),
        headers: { ...bearer(manager.apiKey), ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      let status = 0;
      let answer: Record<string, unknown> = {};
      sent[id] = await requestsOf(async () => {
        const result = await checkedInvoke(h[id], event, lambdaContext());
        status = result.statusCode;
        answer = result.body ? (JSON.parse(result.body) as Record<string, unknown>) : {};
      });
      return { status, answer };
    };
    const created = await call('CreateWebhookEndpoint', 'POST', collection, { url: 'https://hooks.partner.example/in', events: ['*'] });
    expect(created.status).toBe(201);
    const one = `${collection}/${created.answer.id as string}`;
    expect((await call('ListWebhookEndpoints', 'GET', collection)).status).toBe(200);
    expect((await call('GetWebhookEndpoint', 'GET', one)).status).toBe(200);
    expect((await call('UpdateWebhookEndpoint', 'PATCH', one, { description: 'changed' })).status).toBe(200);
    expect((await call('RotateWebhookEndpointSecret', 'POST', `${one}/rotate-secret`)).status).toBe(200);
    expect((await call('DeleteWebhookEndpoint', 'DELETE', one)).status).toBe(204);
    // Seventeen round trips through the handlers; the machine may be busy.
  }, 60_000);

  it.each<FunctionId>(FUNCTION_IDS)('%s: every item request it sent is allowed', (id) => {
    expect(sent[id].length).toBeGreaterThan(0);
    expectAllowed(id, sent[id]);
  });

  it.each<FunctionId>(FUNCTION_IDS)('%s: each partition it may GetItem is one it really read', (id) => {
    const read = sent[id].filter((r) => r.action === 'dynamodb:GetItem').map((r) => r.leadingKeys[0] as string);
    for (const pattern of itemReads(ACCESS[id])) {
      expect({ pattern, read: read.some((pk) => matches(pattern, pk)) }).toEqual({ pattern, read: true });
    }
  });
});

/**
 * The test-mode recovery helper exists for test keys only: driven through every transition and a
 * closing payment (a guard released, a payment item written), each item request it sends is one
 * its synthesised role allows, and each partition it may GetItem is one it really read.
 */
describe('the test-mode recovery helper sends only item requests its role allows', () => {
  it('starts recovery, records a payment, closes, and closes another case by paying it in full', async () => {
    const partner = await newPartner(['cases:read', 'cases:write'], { mode: 'test', autoAttestation: true });
    const fileKey = await uploadInvoice(partner.apiKey);
    const caseIds: string[] = [];
    for (const input of [validCase(fileKey, { claimStatutoryInterest: false }), validCase(fileKey, { claimStatutoryInterest: false })]) {
      const created = await postCases(partner.apiKey, { cases: [input] });
      const id = outcome(created).created[0]!.id;
      await settleCaseStatus(caseChangeAdapters().changes, 'test', id);
      caseIds.push(id);
    }
    const help = (id: string, body: unknown) =>
      checkedInvoke(
        recoveryHelper,
        apiEvent({
          method: 'POST',
          path: `/api/v1/test-helpers/cases/${id}/recovery`,
          resource: '/api/v1/test-helpers/cases/{id}/recovery',
          pathParameters: { id },
          headers: { ...bearer(partner.apiKey), 'Content-Type': 'application/json' },
          body: JSON.stringify(body),
        }),
        lambdaContext(),
      ).then((r) => r.statusCode);
    const [first, second] = caseIds as [string, string];
    const sentByHelper = await requestsOf(async () => {
      expect(await help(first, { type: 'recovery_started' })).toBe(200);
      expect(await help(first, { type: 'payment_collected', amount: 10, paidAt: '2025-03-01' })).toBe(200);
      expect(await help(first, { type: 'closed', reason: 'SETTLED' })).toBe(200);
      expect(await help(second, { type: 'payment_collected', amount: 1250.5, paidAt: '2025-03-01' })).toBe(200);
      // Refused: the case is final; the read is all it sends.
      expect(await help(second, { type: 'recovery_started' })).toBe(409);
    });
    const policy = statementsOfFunction(synthesised, 'TestApplyRecoveryUpdate');
    for (const request of sentByHelper) expect({ request, decision: decide(policy, request) }).toEqual({ request, decision: 'allow' });
    expect(sentByHelper.some((r) => r.enclosingOperation === 'TransactWriteItems')).toBe(true);
    const read = sentByHelper.filter((r) => r.action === 'dynamodb:GetItem').map((r) => r.leadingKeys[0] as string);
    for (const pattern of itemReads('apply-test-recovery-updates'))
      expect({ pattern, read: read.some((pk) => matches(pattern, pk)) }).toEqual({ pattern, read: true });
  }, 60_000);
});
