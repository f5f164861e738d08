import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { accounts, newPartner } from '../support/fixtures.js';

/**
 * `npm run invoke` (infra/local/invoke.ts) as a developer runs it, in its own process, against the
 * integration tests' DynamoDB Local and s3rver (found through DYNAMODB_LOCAL_PORT and
 * S3_LOCAL_PORT, as for an npm start on other ports).
 */
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'pca-invoke-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  response?: { statusCode: number; body: Record<string, unknown> };
}

function invoke(args: string[], env: Record<string, string | undefined> = {}): Promise<Run> {
  const merged: NodeJS.ProcessEnv = {
    ...process.env,
    DYNAMODB_LOCAL_PORT: new URL(process.env.DYNAMODB_ENDPOINT!).port,
    S3_LOCAL_PORT: new URL(process.env.S3_ENDPOINT!).port,
    // No npm start is recorded here, so nothing but the variables above decides the ports.
    LOCAL_DATA_DIR: dir,
    API_KEY: undefined,
    CASE_ID: undefined,
  };
  for (const [name, value] of Object.entries(env)) merged[name] = value;
  for (const name of Object.keys(merged)) if (merged[name] === undefined) delete merged[name];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'infra/local/invoke.ts', ...args], { env: merged });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => {
      let response: Run['response'];
      try {
        response = JSON.parse(stdout) as Run['response'];
      } catch {
        response = undefined;
      }
      resolve({ code, stdout, stderr, response });
    });
  });
}

const companyOfFileKey = (run: Run) => /^invoices\/(cmp_\w+)\//.exec(String(run.response?.body.fileKey))?.[1];

describe('npm run invoke', () => {
  it('with API_KEY exported, fills every placeholder from that key’s company: get-case reads its case (200)', async () => {
    const partner = await newPartner();
    const run = await invoke(['get-case', 'events/get-case.json'], { API_KEY: partner.apiKey });
    expect({ code: run.code, status: run.response?.statusCode }).toEqual({ code: 0, status: 200 });
    expect(run.stderr).toContain('the company of the exported API_KEY');

    const upload = await invoke(['create-upload', 'events/create-upload.json'], { API_KEY: partner.apiKey });
    expect(companyOfFileKey(upload)).toBe(partner.companyId);

    // The one-scope keys made for the runs no longer work; the exported key does.
    const keys = await accounts().listKeys(partner.companyId);
    expect(keys.filter((k) => k.keyId !== partner.keyId).every((k) => k.revoked)).toBe(true);
    expect(keys.find((k) => k.keyId === partner.keyId)?.revoked).toBe(false);
  }, 60_000);

  it('without API_KEY, reuses one sample company across runs', async () => {
    const first = await invoke(['create-upload', 'events/create-upload.json']);
    const second = await invoke(['create-upload', 'events/create-upload.json']);
    expect([first.code, second.code]).toEqual([0, 0]);
    expect(companyOfFileKey(first)).toMatch(/^cmp_/);
    expect(companyOfFileKey(second)).toBe(companyOfFileKey(first));
  }, 60_000);

  it('exits 1 when a sample event answers other than its documented status', async () => {
    const run = await invoke(['get-case', 'events/get-case.json'], { CASE_ID: 'case_0000000000000000000000' });
    expect({ code: run.code, status: run.response?.statusCode }).toEqual({ code: 1, status: 404 });
    expect(run.stderr).toContain('status 404 differs from the documented status 200');
  }, 60_000);

  it('prints the response alone on stdout: the function\u2019s own log lines go to stderr, the setup\u2019s nowhere', async () => {
    // Logs and metrics on, as outside the tests (npm run invoke sets neither off).
    const run = await invoke(['get-case', 'events/get-case.json'], {
      POWERTOOLS_LOG_LEVEL: 'INFO',
      POWERTOOLS_DEV: undefined,
      POWERTOOLS_METRICS_DISABLED: undefined,
    });
    expect(run.code).toBe(0);
    // The sample case cites a debtorCompanyNo: the verification worker (run by the global setup) may have moved it on already.
    expect(JSON.parse(run.stdout)).toMatchObject({
      statusCode: 200,
      body: { id: expect.any(String), status: expect.stringMatching(/^(DRAFT|ON_HOLD|READY)$/) },
    });
    const logged = run.stderr
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { message?: string; resource?: string });
    // The invoked GET's own line, as sam local invoke shows a function's logs; not the seeding POST's.
    expect(logged.filter((l) => l.message === 'request completed').map((l) => l.resource)).toEqual(['/api/v1/cases/{id}']);
  }, 60_000);

  it('runs an event file from any directory', async () => {
    const copy = join(dir, 'my-get-case.json');
    copyFileSync('events/get-case.json', copy);
    const run = await invoke(['get-case', copy]);
    expect({ code: run.code, status: run.response?.statusCode }).toEqual({ code: 0, status: 200 });
    expect(run.stderr).toContain('no documented status');
  }, 60_000);

  it('refuses an API_KEY it cannot use in one line, without repeating it', async () => {
    const partner = await newPartner();
    const mistyped = `${partner.apiKey.slice(0, -1)}${partner.apiKey.endsWith('x') ? 'y' : 'x'}`;
    const run = await invoke(['get-case', 'events/get-case.json'], { API_KEY: mistyped });
    expect(run.code).toBe(1);
    expect(
      run.stderr
        .trim()
        .split('\n')
        .filter((l) => !l.includes('npm warn')),
    ).toEqual([expect.stringContaining('API_KEY is not a usable key')]);
    expect(run.stdout + run.stderr).not.toContain(partner.apiKey.slice(0, 30));
  }, 60_000);
});
