import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { API_ROUTES } from '../../infra/local/api-routes.js';
import { createLocalServer } from '../../infra/local/http-adapter.js';
import { newPartner } from '../support/fixtures.js';

/**
 * `npm run smoke` (infra/ops/smoke.ts) as devops run it after a deploy: its own process, plain HTTP,
 * here against the local server over the integration tests' DynamoDB Local and s3rver.
 */
let server: Server;
let base: string;
let dir: string;

beforeAll(async () => {
  server = createLocalServer({ routes: API_ROUTES });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  dir = mkdtempSync(join(tmpdir(), 'pca-smoke-'));
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

function smoke(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'infra/ops/smoke.ts', ...args], {
      env: { ...process.env, API_KEY: '', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const stepLines = (stdout: string) => stdout.split('\n').filter((l) => /^(PASS|FAIL) /.test(l));

function keyFile(name: string, apiKey: string): string {
  const path = join(dir, name);
  writeFileSync(path, `${apiKey}\n`, { mode: 0o600 });
  return path;
}

describe('npm run smoke', () => {
  it('passes every step against a working stack, one line each, and prints neither the key nor the upload URL', async () => {
    const partner = await newPartner();
    const run = await smoke(['--base-url', `${base}/`, '--api-key-file', keyFile('good', partner.apiKey)]);
    const lines = stepLines(run.stdout);
    expect({ code: run.code, failed: lines.filter((l) => l.startsWith('FAIL')) }).toEqual({ code: 0, failed: [] });
    const expected = [
      '401',
      'uploads',
      'PUT',
      'creates the case',
      'reads it back',
      '409',
      ...[
        'INVALID_FIELD',
        'ATTESTATION_FAILED',
        'AMOUNT_OUT_OF_RANGE',
        'INVOICE_DATE_AFTER_DUE_DATE',
        'DUE_DATE_NOT_PAST',
        'INVALID_FILE_KEY',
        'FILE_NOT_UPLOADED',
        'OUT_OF_JURISDICTION',
        'DUPLICATE',
      ].map((code) => `rejected ${code}:`),
      '404',
    ];
    expect(lines).toHaveLength(expected.length);
    expected.forEach((fragment, i) => expect(lines[i]).toContain(fragment));
    expect(run.stdout + run.stderr).not.toContain(partner.apiKey);
    expect(run.stdout + run.stderr).not.toMatch(/X-Amz-Signature|X-Amz-Credential/i);
    expect(run.stdout).toMatch(/invoiceRefs start with SMOKE-\d{8}T\d{6}Z-/);
    expect(lines[4]).toContain('(live mode)');
  }, 60_000);

  it('passes every step with a test-mode key, as CI runs it, its case a sandbox case', async () => {
    const partner = await newPartner(['cases:read', 'cases:write'], { mode: 'test' });
    const run = await smoke(['--base-url', base, '--api-key-file', keyFile('test-mode', partner.apiKey)]);
    const lines = stepLines(run.stdout);
    expect({ code: run.code, failed: lines.filter((l) => l.startsWith('FAIL')) }).toEqual({ code: 0, failed: [] });
    expect(lines.find((l) => l.includes('reads it back'))).toContain('(test mode)');
    expect(run.stdout + run.stderr).not.toContain(partner.apiKey);
  }, 60_000);

  it('takes the key from --api-key or API_KEY as well', async () => {
    const partner = await newPartner();
    const [flag, env] = await Promise.all([
      smoke(['--base-url', base, '--api-key', partner.apiKey]),
      smoke(['--base-url', base], { API_KEY: partner.apiKey }),
    ]);
    expect([flag.code, env.code]).toEqual([0, 0]);
  }, 60_000);

  it('fails with exit code 1, naming each failed step, when the key cannot create cases', async () => {
    const readOnly = await newPartner(['cases:read']);
    const run = await smoke(['--base-url', base, '--api-key-file', keyFile('read-only', readOnly.apiKey)]);
    expect(run.code).toBe(1);
    const lines = stepLines(run.stdout);
    expect(lines.find((l) => l.includes('uploads'))).toMatch(/^FAIL .*HTTP 403 INSUFFICIENT_SCOPE/);
    expect(lines.filter((l) => l.startsWith('PASS'))).toEqual([expect.stringContaining('401'), expect.stringContaining('404')]);
    expect(run.stdout).toContain('Smoke test FAILED');
    expect(run.stdout + run.stderr).not.toContain(readOnly.apiKey);
  }, 60_000);

  it('refuses missing or bad arguments with one line and exit code 2', async () => {
    const [noBase, badBase, noKey] = await Promise.all([
      smoke(['--api-key', 'x']),
      smoke(['--base-url', 'ftp://example.com', '--api-key', 'x']),
      smoke(['--base-url', base]),
    ]);
    for (const run of [noBase, badBase, noKey]) {
      expect([run.code, run.stdout, run.stderr.trim().split('\n').length]).toEqual([2, '', 1]);
    }
    expect(noBase.stderr).toContain('--base-url');
    expect(noKey.stderr).toContain('no API key');
  }, 60_000);
});
