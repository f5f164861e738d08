import { handler as createWebhookEndpointHandler } from '../../functions/create-webhook-endpoint.js';
import { handler as deleteWebhookEndpointHandler } from '../../functions/delete-webhook-endpoint.js';
import { handler as getWebhookEndpointHandler } from '../../functions/get-webhook-endpoint.js';
import { handler as listWebhookEndpointsHandler } from '../../functions/list-webhook-endpoints.js';
import { handler as rotateWebhookEndpointSecretHandler } from '../../functions/rotate-webhook-endpoint-secret.js';
import { handler as pingWebhookEndpointHandler } from '../../functions/ping-webhook-endpoint.js';
import { handler as redeliverWebhookEventHandler } from '../../functions/redeliver-webhook-event.js';
import { handler as listWebhookDeliveriesHandler } from '../../functions/list-webhook-deliveries.js';
import { handler as updateWebhookEndpointHandler } from '../../functions/update-webhook-endpoint.js';
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { buildPingEvent } from '../../lib/webhooks/ping-event.js';
import { handler as createCasesHandler } from '../../functions/create-cases.js';
import { handler as createUploadHandler } from '../../functions/create-upload.js';
import { handler as getCaseHandler } from '../../functions/get-case.js';
import { handler as listCasesHandler } from '../../functions/list-cases.js';
import { handler as getEventHandler } from '../../functions/get-event.js';
import { handler as listEventsHandler } from '../../functions/list-events.js';
import { handler as withdrawCaseHandler } from '../../functions/withdraw-case.js';
import { handler as recordPaymentHandler } from '../../functions/record-payment.js';
import { handler as listCasePaymentsHandler } from '../../functions/list-case-payments.js';
import { withdrawRequestSchema } from '../../lib/cases/case-lifecycle.js';
import { handler as testConfirmCaseHandler } from '../../functions/test-confirm-case.js';
import { handler as testApplyRecoveryUpdateHandler } from '../../functions/test-apply-recovery-update.js';
import { PROBLEM_CODES } from '../../lib/http/response-schemas.js';
import { caseInputSchema, checkCase } from '../../lib/cases/case-input.js';
import { uploadRequestSchema } from '../../lib/uploads/upload-request.js';
import { OPENAPI_FILE, renderOpenApiDocument } from '../../infra/contract/openapi/document.js';
import { PROBLEM_GATEWAY_RESPONSES } from '../../infra/contract/problem-responses.js';
import { checkedInvoke, contract, type Invocable } from '../support/contract.js';
import { apiEvent, bearer, lambdaContext, newPartner, parse } from '../support/fixtures.js';

type Json = Record<string, unknown>;

/** ajv-formats is CommonJS; its default export arrives either way depending on the loader. */
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as unknown as (
  ajv: Ajv2020,
) => Ajv2020;

const committed = () => readFileSync(OPENAPI_FILE, 'utf8');

describe('docs/openapi.json', () => {
  it('is what `npm run openapi` generates from the zod schemas (run it and commit the result)', () => {
    // Compared as text, so that order and formatting drift fail too; the message names the first
    // differing line rather than printing a diff of the whole document.
    const [want, got] = [renderOpenApiDocument().split('\n'), committed().split('\n')];
    const line = want.findIndex((text, i) => text !== got[i]);
    const stale = line >= 0 || got.length !== want.length;
    expect(
      stale
        ? `${OPENAPI_FILE} is stale from line ${line + 1} (${JSON.stringify(got[line])} should be ${JSON.stringify(want[line])}): run \`npm run openapi\` and commit it`
        : 'fresh',
    ).toBe('fresh');
  });

  const doc = JSON.parse(renderOpenApiDocument()) as {
    paths: Record<string, Record<string, Json>>;
    components: { schemas: Record<string, Json> };
  };
  const schemas = doc.components.schemas;

  it('lists every problem code the gateway sends', () => {
    const codes = (schemas.ProblemCode as { enum: string[] }).enum;
    expect(codes).toEqual([...PROBLEM_CODES]);
    for (const response of PROBLEM_GATEWAY_RESPONSES) expect(codes).toContain(response.code);
  });

  /** A valid case for the pure rules (the file key check is stubbed out). */
  const baseCase = (): Json => ({
    debtorName: 'Acme Widgets Ltd',
    debtorEmail: 'accounts@acme.example',
    invoiceRef: 'INV-1',
    invoiceDate: '2025-01-10',
    dueDate: '2025-02-10',
    principalAmount: 1250.5,
    invoiceFileKey: 'invoices/cmp_4fZ0qR8sT2uV6wXy/7Gk2mP9qR4sT8vW1xY3zA5bC7dE9fG1h.pdf',
    attestation: { b2b: true, under10k: true, within6years: true, undisputed: true, attestedBy: 'Jane Smith' },
  });
  const baseUpload = (): Json => ({ fileName: 'a.pdf', contentType: 'application/pdf', contentLength: 1 });

  function stringOfLength(property: Json, length: number): string {
    if (property.format === 'email') return `${'a'.repeat(Math.max(1, length - '@acme.example'.length))}@acme.example`;
    return 'x'.repeat(length);
  }

  /** [schema name, path to the object in the request, the handler's zod schema, a valid request] */
  const objects: [
    string,
    string[],
    { safeParse(v: unknown): { success: boolean; error?: { issues: { path: PropertyKey[] }[] } } },
    () => Json,
  ][] = [
    ['CaseInput', [], caseInputSchema, baseCase],
    ['Attestation', ['attestation'], caseInputSchema, baseCase],
    ['WithdrawRequest', [], withdrawRequestSchema, () => ({ reason: 'Paid directly by the debtor' })],
    ['UploadRequest', [], uploadRequestSchema, baseUpload],
  ];

  describe.each(objects)('%s: the documented lengths are the ones the handlers enforce', (name, at, schema, valid) => {
    // A field with a pattern is held to the service by test/unit/openapi-request-patterns.test.ts (its length is part of it).
    const properties = Object.entries((schemas[name] as { properties: Record<string, Json> }).properties).filter(
      ([, p]) => (typeof p.maxLength === 'number' || typeof p.minLength === 'number') && typeof p.pattern !== 'string',
    );

    it('documents some lengths', () => expect(properties.length).toBeGreaterThan(0));

    it.each(properties)('%s', (field, property) => {
      const problemAt = (value: string) => {
        const input = valid();
        let target = input;
        for (const key of at) target = target[key] as Json;
        target[field] = value;
        const result = schema.safeParse(input);
        return (result.error?.issues ?? []).some((issue) => issue.path.join('.') === [...at, field].join('.'));
      };
      if (typeof property.maxLength === 'number') {
        expect({ field, length: property.maxLength, refused: problemAt(stringOfLength(property, property.maxLength)) }).toEqual({
          field,
          length: property.maxLength,
          refused: false,
        });
        expect({ field, length: property.maxLength + 1, refused: problemAt(stringOfLength(property, property.maxLength + 1)) }).toEqual({
          field,
          length: property.maxLength + 1,
          refused: true,
        });
      }
      if (property.minLength === 1 && property.format !== 'email') {
        expect({ field, empty: problemAt('') }).toEqual({ field, empty: true });
      }
    });
  });

  it('documents the amount range the case rules enforce', () => {
    const amount = (schemas.CaseInput as { properties: Record<string, Json> }).properties.principalAmount as {
      exclusiveMinimum: number;
      maximum: number;
    };
    const outOfRange = (value: number) =>
      checkCase(
        { ...baseCase(), principalAmount: value },
        { now: new Date('2026-01-01T00:00:00Z'), fileKeyProblem: () => undefined },
      ).findings.some((f) => f.code === 'AMOUNT_OUT_OF_RANGE');
    expect([
      outOfRange(amount.exclusiveMinimum),
      outOfRange(amount.exclusiveMinimum + 0.01),
      outOfRange(amount.maximum),
      outOfRange(amount.maximum + 0.01),
    ]).toEqual([true, false, false, true]);
  });
});

const WEBHOOK_ENDPOINT_ID = 'we_0000000000000000000000';

describe('scopes in docs/openapi.json', () => {
  const operations: [string, string, Invocable, () => Partial<Parameters<typeof apiEvent>[0]>][] = [
    [
      'post',
      '/api/v1/uploads',
      createUploadHandler,
      () => ({ body: JSON.stringify({ fileName: 'a.pdf', contentType: 'application/pdf', contentLength: 1 }) }),
    ],
    ['post', '/api/v1/cases', createCasesHandler, () => ({ body: JSON.stringify({ cases: [] }) })],
    ['get', '/api/v1/cases/{id}', getCaseHandler, () => ({ pathParameters: { id: 'case_0000000000000000000000' } })],
    ['get', '/api/v1/cases', listCasesHandler, () => ({ query: { limit: '1' } })],
    ['get', '/api/v1/events/{id}', getEventHandler, () => ({ pathParameters: { id: 'evt_0000000000000000000000' } })],
    ['get', '/api/v1/events', listEventsHandler, () => ({ query: { limit: '1' } })],
    ['post', '/api/v1/cases/{id}/withdraw', withdrawCaseHandler, () => ({ pathParameters: { id: 'case_0000000000000000000000' } })],
    [
      'post',
      '/api/v1/cases/{id}/payments',
      recordPaymentHandler,
      () => ({ pathParameters: { id: 'case_0000000000000000000000' }, body: JSON.stringify({ amount: 1, paidAt: '2025-03-10' }) }),
    ],
    ['get', '/api/v1/cases/{id}/payments', listCasePaymentsHandler, () => ({ pathParameters: { id: 'case_0000000000000000000000' } })],
    [
      'post',
      '/api/v1/test-helpers/cases/{id}/confirm',
      testConfirmCaseHandler,
      () => ({ pathParameters: { id: 'case_0000000000000000000000' } }),
    ],
    [
      'post',
      '/api/v1/test-helpers/cases/{id}/recovery',
      testApplyRecoveryUpdateHandler,
      () => ({ pathParameters: { id: 'case_0000000000000000000000' }, body: JSON.stringify({ type: 'recovery_started' }) }),
    ],
    // A private IP literal is refused without a name to resolve; the other ids are answered 404.
    [
      'post',
      '/api/v1/webhook-endpoints',
      createWebhookEndpointHandler,
      () => ({ body: JSON.stringify({ url: 'https://10.0.0.1/', events: ['*'] }) }),
    ],
    ['get', '/api/v1/webhook-endpoints', listWebhookEndpointsHandler, () => ({})],
    ['get', '/api/v1/webhook-endpoints/{id}', getWebhookEndpointHandler, () => ({ pathParameters: { id: WEBHOOK_ENDPOINT_ID } })],
    [
      'patch',
      '/api/v1/webhook-endpoints/{id}',
      updateWebhookEndpointHandler,
      () => ({ pathParameters: { id: WEBHOOK_ENDPOINT_ID }, body: JSON.stringify({ status: 'disabled' }) }),
    ],
    ['delete', '/api/v1/webhook-endpoints/{id}', deleteWebhookEndpointHandler, () => ({ pathParameters: { id: WEBHOOK_ENDPOINT_ID } })],
    [
      'post',
      '/api/v1/webhook-endpoints/{id}/rotate-secret',
      rotateWebhookEndpointSecretHandler,
      () => ({ pathParameters: { id: WEBHOOK_ENDPOINT_ID } }),
    ],
    ['post', '/api/v1/webhook-endpoints/{id}/ping', pingWebhookEndpointHandler, () => ({ pathParameters: { id: WEBHOOK_ENDPOINT_ID } })],
    [
      'post',
      '/api/v1/webhook-endpoints/{id}/redeliver',
      redeliverWebhookEventHandler,
      () => ({ pathParameters: { id: WEBHOOK_ENDPOINT_ID }, body: JSON.stringify({ eventId: 'evt_0000000000000000000000' }) }),
    ],
    [
      'get',
      '/api/v1/webhook-endpoints/{id}/deliveries',
      listWebhookDeliveriesHandler,
      () => ({ pathParameters: { id: WEBHOOK_ENDPOINT_ID }, query: { limit: '1' } }),
    ],
  ];

  it('cover exactly the partner routes (the internal confirmations route is not in the partner document)', () => {
    const paths = contract().document.paths as Record<string, Record<string, unknown>>;
    const documented = Object.entries(paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method} ${path}`));
    expect(documented.sort()).toEqual(operations.map(([method, path]) => `${method} ${path}`).sort());
    expect(JSON.stringify(contract().document)).not.toContain('/internal/');
  });

  it.each(operations)('%s %s: x-required-scope is the scope the handler demands', async (method, resource, handler, extra) => {
    const operation = (contract().document.paths as Record<string, Record<string, Json>>)[resource]![method]!;
    const scope = operation['x-required-scope'] as string;
    expect(operation.security).toEqual([{ bearerAuth: [scope] }, { apiKeyHeader: [scope] }]);
    expect(operation.description).toContain(`\`${scope}\``);
    const responses = operation.responses as Json;
    expect(Object.keys(responses)).toEqual(expect.arrayContaining(['401', '403']));

    // A key with every scope but this one gets 403 naming it; one with only this scope passes the check.
    const others = (['cases:read', 'cases:write', 'webhooks:manage'] as const).filter((s) => s !== scope);
    const lacking = await newPartner([...others]);
    const path = resource.replace('{id}', extra().pathParameters?.id ?? 'case_0000000000000000000000');
    const event = (apiKey: string) =>
      apiEvent({
        method: method.toUpperCase() as 'GET' | 'POST' | 'PATCH' | 'DELETE',
        path,
        resource,
        headers: { ...bearer(apiKey), 'Content-Type': 'application/json' },
        ...extra(),
      });
    const refused = parse(await checkedInvoke(handler, event(lacking.apiKey), lambdaContext()));
    expect({ status: refused.statusCode, requiredScope: refused.body.requiredScope }).toEqual({ status: 403, requiredScope: scope });

    const holding = await newPartner([scope as 'cases:read' | 'cases:write' | 'webhooks:manage']);
    const passed = parse(await checkedInvoke(handler, event(holding.apiKey), lambdaContext()));
    expect(passed.statusCode).not.toBe(403);
  });
});

describe('the webhooks section of docs/openapi.json', () => {
  const webhooks = (contract().document as { webhooks?: Record<string, { post: Json }> }).webhooks ?? {};

  it('describes case.created, case.updated and webhook.ping, each with the three required webhook-* headers', () => {
    expect(Object.keys(webhooks).sort()).toEqual(['case.created', 'case.updated', 'webhook.ping']);
    for (const { post } of Object.values(webhooks)) {
      const headers = (post.parameters as { name: string; in: string; required: boolean }[]).filter((p) => p.in === 'header');
      expect(headers.map((h) => [h.name, h.required])).toEqual([
        ['webhook-id', true],
        ['webhook-timestamp', true],
        ['webhook-signature', true],
      ]);
    }
  });

  it('has payload schemas that accept what the service sends and refuse the other types', () => {
    const ping = buildPingEvent({ endpointId: 'we_7Gk2mP9qR4sT8vW1xY3zA5', mode: 'test' }, new Date('2025-03-01T09:30:00.000Z'));
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    addFormats(ajv);
    ajv.addSchema({ ...contract().document, $id: 'https://webhooks.test/openapi.json' });
    const payload = (type: string) => {
      const validate = ajv.getSchema(
        `https://webhooks.test/openapi.json#/webhooks/${type}/post/requestBody/content/application~1json/schema`,
      );
      if (!validate) throw new Error(`no payload schema for ${type}`);
      return validate;
    };
    expect(payload('webhook.ping')(ping)).toBe(true);
    expect(payload('case.created')(ping)).toBe(false);
    expect(payload('webhook.ping')({ ...ping, type: 'case.created' })).toBe(false);
  });
});
