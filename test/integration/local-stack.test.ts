import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import { API_ROUTES } from '../../infra/local/api-routes.js';
import { createLocalServer } from '../../infra/local/http-adapter.js';
import { LAMBDA_REQUEST_PAYLOAD_BYTES } from '../../infra/contract/route-table.js';
import { SCOPES } from '../../lib/auth/scopes.js';
import { ROUTE_TABLE } from '../../infra/contract/route-table.js';
import { extraKey, newPartner, type Partner } from '../support/fixtures.js';
import { validCase } from '../support/cases.js';

/** The local stack as a partner meets it: real HTTP against the real handlers and stores. */
let server: Server;
let base: string;
let partner: Partner;

beforeAll(async () => {
  server = createLocalServer({ routes: API_ROUTES });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  partner = await newPartner();
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const auth = () => ({ Authorization: `Bearer ${partner.apiKey}` });

describe('the local server', () => {
  it('answers a request without a key with 401 problem details', async () => {
    const res = await fetch(`${base}/api/v1/cases/x`);
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(await res.json()).toMatchObject({ code: 'UNAUTHENTICATED', status: 401 });
  });

  it('answers an unknown case with 404 problem details when the key is valid', async () => {
    const res = await fetch(`${base}/api/v1/cases/x`, { headers: auth() });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('answers an unknown route with 404 and a wrong method with 405 naming the allowed ones', async () => {
    const unknown = await fetch(`${base}/api/v2/things`);
    expect([unknown.status, ((await unknown.json()) as { code: string }).code]).toEqual([404, 'NOT_FOUND']);
    const wrong = await fetch(`${base}/api/v1/cases`, { method: 'DELETE' });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('POST, GET');
    expect(((await wrong.json()) as { code: string }).code).toBe('METHOD_NOT_ALLOWED');
  });

  it.each(ROUTE_TABLE.filter((r) => r.scope))('$method $resource requires the scope the route table names ($scope)', async (route) => {
    const other = SCOPES.filter((scope) => scope !== route.scope);
    const apiKey = await extraKey(partner.companyId, other);
    const path = route.resource.replace(/\{\w+\}/g, 'case_0000000000000000000000');
    const res = await fetch(`${base}${path}`, {
      method: route.method,
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
      body: route.method === 'GET' ? undefined : '{}',
    });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ code: 'INSUFFICIENT_SCOPE', requiredScope: route.scope });
  });

  it('refuses a body larger than Lambda accepts with 413 without reading it all', async () => {
    const res = await fetch(`${base}/api/v1/cases`, {
      method: 'POST',
      headers: { ...auth(), 'Content-Type': 'application/json' },
      body: 'x'.repeat(LAMBDA_REQUEST_PAYLOAD_BYTES + 1),
    });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { code: string }).code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('answers a body over 1 MiB with the handler’s own 413', async () => {
    const res = await fetch(`${base}/api/v1/cases`, {
      method: 'POST',
      headers: { ...auth(), 'Content-Type': 'application/json' },
      body: `{"cases":[],"pad":"${'x'.repeat(1024 * 1024)}"}`,
    });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { code: string }).code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('serves the README walk-through: upload, create a batch of 3, read back, replay the Idempotency-Key', async () => {
    const bytes = Buffer.from('%PDF-1.4\n% walk-through\n');
    const upload = (await (
      await fetch(`${base}/api/v1/uploads`, {
        method: 'POST',
        headers: { ...auth(), 'Content-Type': 'application/json' },
        body: JSON.stringify({ fileName: 'invoice.pdf', contentType: 'application/pdf', contentLength: bytes.length }),
      })
    ).json()) as { fileKey: string; uploadUrl: string; headers: Record<string, string> };
    expect((await fetch(upload.uploadUrl, { method: 'PUT', headers: upload.headers, body: bytes })).status).toBe(200);

    const post = (body: unknown, key?: string) =>
      fetch(`${base}/api/v1/cases`, {
        method: 'POST',
        headers: { ...auth(), 'Content-Type': 'application/json', ...(key ? { 'Idempotency-Key': key } : {}) },
        body: JSON.stringify(body),
      });
    expect((await post({ cases: [validCase(upload.fileKey, { invoiceRef: 'WALK-1000' })] })).status).toBe(201);

    const batch = {
      cases: [
        validCase(upload.fileKey, { invoiceRef: 'WALK-1001' }),
        validCase(upload.fileKey, { invoiceRef: 'WALK-1002', dueDate: '2099-01-01' }),
        validCase(upload.fileKey, { invoiceRef: 'WALK-1000' }),
      ],
    };
    const first = await post(batch, 'walk-through-1');
    expect(first.status).toBe(201);
    const result = (await first.json()) as { created: { id: string }[]; rejected: { code: string }[] };
    expect(result.rejected.map((r) => r.code)).toEqual(['DUE_DATE_NOT_PAST', 'DUPLICATE']);

    const read = await fetch(`${base}/api/v1/cases/${result.created[0]!.id}`, { headers: auth() });
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({ id: result.created[0]!.id, status: 'DRAFT', principalAmount: '1250.50' });

    const replay = await post(batch, 'walk-through-1');
    expect(replay.status).toBe(409);
    expect(await replay.json()).toMatchObject({
      code: 'IDEMPOTENCY_KEY_REUSED',
      state: 'COMPLETED',
      created: result.created,
      rejected: result.rejected,
    });
  });
});

/** The README's shell block under `heading`, as written. */
function readmeBlock(heading: string): string {
  const readme = readFileSync('README.md', 'utf8');
  const at = readme.indexOf(`\n${heading}\n`);
  expect(at).toBeGreaterThan(-1);
  const block = /```sh\n([\s\S]*?)\n```/.exec(readme.slice(at))?.[1];
  expect(block).toContain('BASE=http://localhost:3000');
  return block!;
}

/** What the block says its commands print: its `#> ` lines, in order. */
const shownOutput = (block: string) =>
  block
    .split('\n')
    .filter((line) => line.startsWith('#>'))
    .map((line) => line.slice(3));

/** A shown line as a pattern: exact text, except that `...` stands for any text. */
const linePattern = (shown: string) =>
  new RegExp(
    `^${shown
      .split('...')
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );

/** Runs a README block with bash in an empty directory, the keys and the server's address put in place of its placeholders. */
async function executeReadmeBlock(
  heading: string,
  keys: { API_KEY: string; TEST_API_KEY?: string },
): Promise<{ block: string; code: number | null; stdout: string; stderr: string; leftBehind: string[] }> {
  const block = readmeBlock(heading);
  let script = block.replace(/^BASE=\S+$/m, `BASE=${base}`);
  for (const [name, value] of Object.entries(keys))
    script = script.replace(new RegExp(`^export ${name}=\\S+.*$`, 'm'), `export ${name}=${value}`);
  const cwd = mkdtempSync(join(tmpdir(), 'pca-readme-'));
  try {
    const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn('bash', ['-c', script], { cwd });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
    return { block, ...run, leftBehind: readdirSync(cwd) };
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}

/** Runs a README block and compares every line it prints with the block's `#>` lines. */
async function runReadmeBlock(heading: string, keys: { API_KEY: string; TEST_API_KEY?: string }): Promise<void> {
  const run = await executeReadmeBlock(heading, keys);
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
  const printed = run.stdout.replace(/\n$/, '').split('\n');
  const shown = shownOutput(run.block);
  const differences = Array.from({ length: Math.max(printed.length, shown.length) }, (_, i) => ({
    line: i + 1,
    shown: shown[i],
    printed: printed[i],
  })).filter(({ shown: s, printed: p }) => s === undefined || p === undefined || !linePattern(s).test(p));
  expect(differences).toEqual([]);
  expect(run.leftBehind).toEqual([]);
}

describe('the README', () => {
  it('walk-through prints, command by command, exactly what it shows, and leaves no file in the directory it runs in', async () => {
    // A company of its own: the lists it shows hold its cases alone.
    const reader = await newPartner();
    await runReadmeBlock('### Walk-through with curl', { API_KEY: reader.apiKey });
  }, 90_000);

  it('walk-through run a second time on the same data creates nothing: its first case is a DUPLICATE, its batch a 409 with sameRequest false', async () => {
    const reader = await newPartner();
    await runReadmeBlock('### Walk-through with curl', { API_KEY: reader.apiKey });
    const caseIds = async () => {
      const res = await fetch(`${base}/api/v1/cases?limit=100`, { headers: { Authorization: `Bearer ${reader.apiKey}` } });
      return ((await res.json()) as { data: { id: string }[] }).data.map((c) => c.id).sort();
    };
    const before = await caseIds();
    const second = await executeReadmeBlock('### Walk-through with curl', { API_KEY: reader.apiKey });
    expect(second.stdout).toMatch(/"rejected":\[\{"index":0,"invoiceRef":"INV-1000","code":"DUPLICATE"[\s\S]*\nHTTP 200\n/);
    // The batch reuses walkthrough-1 with the second run's new fileKey: not the same request.
    expect(second.stdout).toMatch(/\nHTTP 409\n[\s\S]*"code": "IDEMPOTENCY_KEY_REUSED"[\s\S]*"sameRequest": false/);
    expect(await caseIds()).toEqual(before);
    expect(second.leftBehind).toEqual([]);
  }, 120_000);

  it('test-mode block prints exactly what it shows: a test upload and case, invisible to the live key', async () => {
    const reader = await newPartner();
    const testKey = await extraKey(reader.companyId, ['cases:read', 'cases:write'], 'test');
    await runReadmeBlock('### Test mode', { API_KEY: reader.apiKey, TEST_API_KEY: testKey });
  }, 90_000);

  it('shows a wildcard only where the output varies, so a wrong shown line is caught', () => {
    expect(linePattern('{"a":"case_...","b":1}').test('{"a":"case_X1","b":1}')).toBe(true);
    expect(linePattern('{"a":"case_...","b":1}').test('{"a":"case_X1","b":2}')).toBe(false);
    expect(linePattern('HTTP 201').test('HTTP 200')).toBe(false);
  });
});

describe('npm start', () => {
  it('says the port is taken and by which process, in one line, instead of crashing', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', () => resolve()));
    const port = (blocker.address() as AddressInfo).port;
    try {
      // Its own data directory: a developer's npm start on .local must not change the answer.
      const dataDir = mkdtempSync(join(tmpdir(), 'pca-port-taken-'));
      const run = spawnSync('npx', ['tsx', 'infra/local/main.ts'], {
        env: { ...process.env, PORT: String(port), LOCAL_DATA_DIR: dataDir },
        encoding: 'utf8',
        timeout: 60_000,
      });
      rmSync(dataDir, { recursive: true, force: true });
      expect(run.status).not.toBe(0);
      const lines = run.stderr.split('\n').filter((l) => l.trim() && !l.includes('npm warn'));
      expect(lines).toEqual([expect.stringContaining(`Port ${port} (PORT) is already in use by pid ${process.pid}`)]);
    } finally {
      blocker.close();
    }
  }, 60_000);
});

describe('the admin command', () => {
  const admin = (args: string[]) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn('npx', ['tsx', 'infra/ops/admin.ts', ...args], {
        env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
  const lastJson = (stdout: string) => JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, unknown>;
  const status = async (apiKey: string) =>
    (await fetch(`${base}/api/v1/cases/x`, { headers: { Authorization: `Bearer ${apiKey}` } })).status;

  it('onboards a company whose key authenticates until it is revoked; a rotated key works on', async () => {
    const company = await admin(['company', 'create', '--name', 'Admin Test Ltd', '--json']);
    expect(company.code).toBe(0);
    const companyId = lastJson(company.stdout).companyId as string;
    expect(companyId).toMatch(/^cmp_/);

    const key = await admin(['key', 'create', '--company', companyId, '--scopes', 'cases:read,cases:write', '--json']);
    expect(key.code).toBe(0);
    const issued = lastJson(key.stdout);
    expect(issued.scopes).toEqual(['cases:read', 'cases:write']);
    expect(await status(issued.apiKey as string)).toBe(404);

    const rotated = lastJson((await admin(['key', 'rotate', '--key', issued.keyId as string, '--json'])).stdout);
    expect(rotated.scopes).toEqual(['cases:read', 'cases:write']);
    expect(await status(issued.apiKey as string)).toBe(404);

    const listed = await admin(['key', 'list', '--company', companyId, '--json']);
    expect(listed.stdout).not.toContain(issued.apiKey as string);
    expect(listed.stdout).not.toContain('secretHash');
    expect((lastJson(listed.stdout).keys as unknown[]).length).toBe(2);

    expect((await admin(['key', 'revoke', '--key', issued.keyId as string, '--json'])).code).toBe(0);
    expect(await status(issued.apiKey as string)).toBe(401);
    expect(await status(rotated.apiKey as string)).toBe(404);
  }, 60_000);

  it('answers bad arguments with one line and exit code 2, refused operations with exit code 1', async () => {
    const unknownScope = await admin(['key', 'create', '--company', 'cmp_x', '--scopes', 'cases:delete']);
    expect(unknownScope.code).toBe(2);
    expect(
      unknownScope.stderr
        .trim()
        .split('\n')
        .filter((l) => !l.includes('npm warn')),
    ).toHaveLength(1);
    expect((await admin(['frobnicate'])).code).toBe(2);
    const noCompany = await admin(['key', 'create', '--company', 'cmp_AAAAAAAAAAAAAAAA', '--scopes', 'cases:read']);
    const lines = noCompany.stderr.split('\n').filter((l) => l.trim() && !l.includes('npm warn'));
    expect([noCompany.code, lines]).toEqual([1, ['No company with id cmp_AAAAAAAAAAAAAAAA.']]);
  }, 60_000);
});
