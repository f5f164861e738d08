import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { API_ROUTES } from '../../infra/local/api-routes.js';
import { createLocalServer } from '../../infra/local/http-adapter.js';
import { freePort } from '../../infra/local/stores.js';
import { validCase } from '../support/cases.js';
import { newPartner, type Partner } from '../support/fixtures.js';

/**
 * docs/openapi.json as a validating proxy in front of the local API, as a partner's gateway or a
 * contract-testing setup would use it: Stoplight Prism in proxy mode with `--errors` refuses a
 * request the document forbids (422, without forwarding it) and turns a response the document
 * does not allow into a 500 (and names every violation in `sl-violations`). So the document must
 * let through everything the service accepts, per-case rejections included, and should refuse
 * what the service refuses. Each refused request is also sent to the service directly, to show
 * the two agree.
 */
const PRISM = createRequire(__filename).resolve('@stoplight/prism-cli/dist/index.js');
const READY = /Prism is listening/;

let server: Server;
let service: string;
let proxy: string;
let prism: ChildProcess;
let forwarded = 0;
let partner: Partner;

beforeAll(async () => {
  server = createLocalServer({ routes: API_ROUTES });
  server.on('request', () => (forwarded += 1));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  service = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const port = await freePort();
  proxy = `http://127.0.0.1:${port}`;
  prism = spawn(
    process.execPath,
    [PRISM, 'proxy', 'docs/openapi.json', service, '--errors', '--host', '127.0.0.1', '--port', String(port)],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (READY.test(output)) resolve();
    };
    prism.stdout?.on('data', onData);
    prism.stderr?.on('data', onData);
    prism.once('exit', (code) => reject(new Error(`prism exited with ${code}:\n${output}`)));
  });
  partner = await newPartner(['cases:read', 'cases:write', 'webhooks:manage']);
}, 60_000);

afterAll(async () => {
  if (prism && prism.exitCode === null) {
    const exited = new Promise((resolve) => prism.once('exit', resolve));
    prism.kill('SIGTERM');
    await exited;
  }
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

interface Answer {
  status: number;
  body: Record<string, unknown>;
  violations: string | null;
}

async function call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${partner.apiKey}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return {
    status: res.status,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
    violations: res.headers.get('sl-violations'),
  };
}

/** Through the proxy: the service's own answer, with no violation of the document either way. */
async function passes(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Answer> {
  const before = forwarded;
  const answer = await call(proxy, method, path, body, headers);
  expect({ violations: answer.violations, reachedService: forwarded > before }).toEqual({ violations: null, reachedService: true });
  return answer;
}

/** Refused by the proxy (422 naming the field, never forwarded), and by the service when sent directly. */
async function refused(where: string, method: string, path: string, body?: unknown, headers?: Record<string, string>) {
  const before = forwarded;
  const byProxy = await call(proxy, method, path, body, headers);
  expect({ status: byProxy.status, forwarded: forwarded - before }).toEqual({ status: 422, forwarded: 0 });
  expect(JSON.stringify(byProxy.body.validation).toLowerCase()).toContain(where.toLowerCase());
  return call(service, method, path, body, headers);
}

async function uploadedFileKey(): Promise<string> {
  const bytes = Buffer.from('%PDF-1.4\n% test invoice\n');
  const ticket = await passes('POST', '/api/v1/uploads', {
    fileName: 'invoice.pdf',
    contentType: 'application/pdf',
    contentLength: bytes.length,
  });
  expect(ticket.status).toBe(201);
  const put = await fetch(ticket.body.uploadUrl as string, {
    method: 'PUT',
    headers: ticket.body.headers as Record<string, string>,
    body: bytes,
  });
  expect(put.ok).toBe(true);
  return ticket.body.fileKey as string;
}

describe('docs/openapi.json in front of the local API (Prism validating proxy)', () => {
  let fileKey: string;
  let created: Record<string, unknown>;

  beforeAll(async () => {
    fileKey = await uploadedFileKey();
  });

  it('lets a valid batch through, with a quoted Idempotency-Key, and its 201', async () => {
    created = validCase(fileKey, { debtorCompanyNo: ' 1234567 ', invoiceDate: '2025-01-10T09:30Z' });
    const answer = await passes('POST', '/api/v1/cases', { cases: [created] }, { 'Idempotency-Key': `"batch-${randomUUID()}"` });
    expect([answer.status, (answer.body.created as unknown[]).length]).toEqual([201, 1]);
  });

  it('lets a batch with per-case rejections through, and their errors in the 201 and the 200', async () => {
    const mixed = [
      validCase(fileKey),
      validCase(fileKey, { dueDate: '2099-12-31' }),
      validCase(fileKey, { invoiceRef: created.invoiceRef }),
      validCase(fileKey, { attestation: { b2b: false, under10k: true, within6years: true, undisputed: true, attestedBy: 'Jane Smith' } }),
      validCase(fileKey, { invoiceDate: '2025-03-01', dueDate: '2025-02-01' }),
      validCase(fileKey, { debtorCompanyNo: 'SC123456' }),
    ];
    const some = await passes('POST', '/api/v1/cases', { cases: mixed }, { 'Idempotency-Key': `batch-${randomUUID()}` });
    expect(some.status).toBe(201);
    expect((some.body.rejected as { code: string }[]).map((r) => r.code)).toEqual([
      'DUE_DATE_NOT_PAST',
      'DUPLICATE',
      'ATTESTATION_FAILED',
      'INVOICE_DATE_AFTER_DUE_DATE',
      'OUT_OF_JURISDICTION',
    ]);
    const none = await passes('POST', '/api/v1/cases', { cases: [validCase(fileKey, { invoiceRef: created.invoiceRef })] });
    expect([none.status, (none.body.rejected as { code: string }[])[0]?.code]).toEqual([200, 'DUPLICATE']);
  });

  it('lets list filters and look-ups through, and their pages', async () => {
    const filtered = await passes(
      'GET',
      '/api/v1/cases?status=DRAFT&recoveryGate=AWAITING_CONFIRMATION&createdFrom=2025-03-01T00:00Z&limit=10',
    );
    expect(filtered.status).toBe(200);
    const lookUp = await passes('GET', `/api/v1/cases?invoiceRef=${encodeURIComponent(created.invoiceRef as string)}`);
    expect([lookUp.status, (lookUp.body.data as unknown[]).length]).toEqual([200, 1]);
    const events = await passes('GET', '/api/v1/events?type=case.created&limit=2');
    expect(events.status).toBe(200);
  });

  it('lets webhook endpoint creation and listing through', async () => {
    const endpoint = { url: 'https://93.184.216.34/pca', events: ['case.created', 'case.updated'], description: 'Proxy test' };
    const answer = await passes('POST', '/api/v1/webhook-endpoints', endpoint);
    expect([answer.status, answer.body.events]).toEqual([201, endpoint.events]);
    expect((await passes('GET', '/api/v1/webhook-endpoints')).status).toBe(200);
  });

  it('passes the service refusals the document cannot foresee through, as it describes them', async () => {
    const unknownCase = await passes('GET', '/api/v1/cases/case_0000000000000000000000');
    expect([unknownCase.status, unknownCase.body.code]).toEqual([404, 'NOT_FOUND']);
    const notOurs = await passes('GET', '/api/v1/cases?cursor=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
    expect([notOurs.status, notOurs.body.code]).toEqual([400, 'INVALID_CURSOR']);
  });

  it('refuses a batch with an unknown member, as the service does', async () => {
    const direct = await refused('colour', 'POST', '/api/v1/cases', { cases: [validCase(fileKey)], colour: 'red' });
    expect([direct.status, direct.body.code]).toEqual([400, 'INVALID_REQUEST']);
  });

  it('refuses an Idempotency-Key with a space, as the service does', async () => {
    const direct = await refused(
      'Idempotency-Key',
      'POST',
      '/api/v1/cases',
      { cases: [validCase(fileKey)] },
      { 'Idempotency-Key': 'has space' },
    );
    expect([direct.status, direct.body.code]).toEqual([400, 'INVALID_REQUEST']);
  });

  it('refuses an invoiceDate that is not a date and a debtorCompanyNo that is not a company number, as the case rules do', async () => {
    for (const [field, value] of [
      ['invoiceDate', '10/01/2025'],
      ['debtorCompanyNo', 'not a number'],
    ] as const) {
      const direct = await refused(field, 'POST', '/api/v1/cases', { cases: [validCase(fileKey, { [field]: value })] });
      expect([direct.status, (direct.body.rejected as { code: string; errors: { field: string }[] }[])[0]]).toEqual([
        200,
        expect.objectContaining({ code: 'INVALID_FIELD', errors: [expect.objectContaining({ field })] }),
      ]);
    }
  });

  it('refuses a webhook endpoint naming an event type twice, as the service does', async () => {
    const direct = await refused('events', 'POST', '/api/v1/webhook-endpoints', {
      url: 'https://93.184.216.34/pca',
      events: ['case.created', 'case.created'],
    });
    expect([direct.status, direct.body.code]).toEqual([400, 'INVALID_REQUEST']);
  });

  it('refuses an over-long cursor, as the service does', async () => {
    const direct = await refused('cursor', 'GET', `/api/v1/cases?cursor=${'A'.repeat(1025)}`);
    expect([direct.status, direct.body.code]).toEqual([400, 'INVALID_CURSOR']);
  });
});
