import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { STACK_RECORD_FILE } from '../../infra/local/local-ports.js';
import { freePort } from '../../infra/local/stores.js';

/**
 * The operator command (infra/ops/admin.ts) as a child process against the test DynamoDB Local
 * (TABLE_NAME + AWS_REGION + DYNAMODB_ENDPOINT from the global setup). The onboarding flow
 * (create, key authenticates, rotate, revoke → 401) is in local-stack.test.ts; this file covers
 * the readable output, auto-attestation, help, and how every kind of mistake is reported: one
 * line on stderr, exit 2 for bad arguments, exit 1 for refusals and unreachable storage.
 */
const TSX_CLI = join('node_modules', 'tsx', 'dist', 'cli.mjs');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function admin(args: string[], envChanges: Record<string, string | undefined> = {}): Promise<Run> {
  const env: NodeJS.ProcessEnv = { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
  for (const [name, value] of Object.entries(envChanges)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [TSX_CLI, 'infra/ops/admin.ts', ...args], { env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const lines = (text: string) => text.split('\n').filter((l) => l.trim() !== '');
const lastJson = (stdout: string) => JSON.parse(lines(stdout).pop()!) as Record<string, unknown>;

describe('the admin command', () => {
  it('reports every kind of mistake in one line: exit 2 for arguments, exit 1 when storage is not there', async () => {
    const deadPort = await freePort();
    const [help, none, unknownOption, missingName, badEnabled, noRegion, notRunning] = await Promise.all([
      admin(['--help']),
      admin([]),
      admin(['company', 'list', '--bogus']),
      admin(['company', 'create', '--json']),
      admin(['company', 'set-auto-attestation', '--company', 'cmp_x', '--enabled', 'maybe']),
      admin(['company', 'list'], { AWS_REGION: undefined, AWS_DEFAULT_REGION: undefined }),
      admin(['company', 'list'], { TABLE_NAME: undefined, DYNAMODB_ENDPOINT: undefined, DYNAMODB_LOCAL_PORT: String(deadPort) }),
    ]);

    expect(help.code).toBe(0);
    for (const command of [
      'company create',
      'company list',
      'company set-auto-attestation',
      'key create',
      'key list',
      'key revoke',
      'key rotate',
    ]) {
      expect(help.stdout).toContain(command);
    }

    const usage = { none, unknownOption, missingName, badEnabled, noRegion };
    for (const run of Object.values(usage)) {
      expect([run.code, lines(run.stderr).length, run.stdout]).toEqual([2, 1, '']);
      expect(run.stderr).not.toMatch(/\bat .*:\d+:\d+/); // no stack trace
    }
    expect(none.stderr).toContain('--help');
    expect(unknownOption.stderr).toContain('--bogus');
    expect(missingName.stderr).toContain('--name');
    expect(badEnabled.stderr).toContain('--enabled must be true or false');
    expect(noRegion.stderr).toContain('AWS_REGION');

    expect(notRunning.code).toBe(1);
    expect(lines(notRunning.stderr)).toEqual([expect.stringContaining(`DynamoDB Local is not running on port ${deadPort}`)]);
    expect(notRunning.stderr).toContain('npm start');
  }, 60_000);

  it('prints readable output without --json, warns on stderr that a new key is shown once, and switches auto-attestation', async () => {
    const created = await admin(['company', 'create', '--name', 'Readable Output Ltd']);
    expect(created.code).toBe(0);
    const companyId = /Created company (cmp_\w+) "Readable Output Ltd" \(auto-attestation off\)/.exec(created.stdout)?.[1];
    expect(companyId).toBeDefined();

    const enabled = await admin(['company', 'set-auto-attestation', '--company', companyId!, '--enabled', 'true', '--json']);
    expect([enabled.code, lastJson(enabled.stdout)]).toEqual([0, { companyId, autoAttestation: true }]);

    const listed = await admin(['company', 'list', '--json']);
    const companies = lastJson(listed.stdout).companies as { companyId: string; name: string; autoAttestation: boolean }[];
    expect(companies.find((c) => c.companyId === companyId)).toMatchObject({ name: 'Readable Output Ltd', autoAttestation: true });

    const table = await admin(['company', 'list']);
    expect(lines(table.stdout)[0]).toMatch(/^companyId\s+name\s+autoAttestation\s+createdAt$/);
    expect(table.stdout).toMatch(new RegExp(`${companyId}\\s+Readable Output Ltd\\s+true`));

    const key = await admin(['key', 'create', '--company', companyId!, '--scopes', 'cases:read']);
    expect(key.code).toBe(0);
    expect(lines(key.stderr)).toEqual([expect.stringContaining('shown once and cannot be read back')]);
    const apiKey = /^apiKey\s+(\S+)$/m.exec(key.stdout)?.[1];
    expect(apiKey).toMatch(/^pca_/);

    const keys = await admin(['key', 'list', '--company', companyId!]);
    expect(keys.code).toBe(0);
    expect(keys.stdout).toContain('cases:read');
    expect(keys.stdout).not.toContain(apiKey!);
    expect(keys.stdout).not.toMatch(/secretHash/i);

    const unknownCompany = await admin(['company', 'set-auto-attestation', '--company', 'cmp_AAAAAAAAAAAAAAAA', '--enabled', 'false']);
    expect([unknownCompany.code, lines(unknownCompany.stderr)]).toEqual([1, ['No company with id cmp_AAAAAAAAAAAAAAAA.']]);
  }, 60_000);

  it('revokes and rotates a key given in full, printing only its key id, and never repeats a mistyped key', async () => {
    const companyId = lastJson((await admin(['company', 'create', '--name', 'Full Key Ltd', '--json'])).stdout).companyId as string;
    const issued = lastJson((await admin(['key', 'create', '--company', companyId, '--scopes', 'cases:read', '--json'])).stdout);
    const apiKey = issued.apiKey as string;
    const secret = apiKey.slice(`pca_${issued.keyId as string}_`.length);

    const rotated = await admin(['key', 'rotate', '--key', apiKey]);
    expect(rotated.code).toBe(0);
    const rotatedKeyId = /^keyId\s+(\S+)$/m.exec(rotated.stdout)?.[1];
    expect(rotated.stderr).toContain(`The old key ${issued.keyId as string} keeps working`);
    const revoked = await admin(['key', 'revoke', '--key', apiKey]);
    expect([revoked.code, revoked.stdout.trim()]).toEqual([
      0,
      `Revoked key ${issued.keyId as string}: it is refused from the next request on`,
    ]);
    const revokedJson = await admin(['key', 'revoke', '--key', rotatedKeyId!, '--json']);
    expect([revokedJson.code, lastJson(revokedJson.stdout)]).toEqual([0, { keyId: rotatedKeyId, revoked: true }]);

    // Again: refused (exit 1, as for any revoked key), saying when it really was revoked.
    const again = await admin(['key', 'revoke', '--key', apiKey, '--json']);
    const listed = lastJson((await admin(['key', 'list', '--company', companyId, '--json'])).stdout).keys as {
      keyId: string;
      revokedAt?: string;
    }[];
    const revokedAt = listed.find((k) => k.keyId === issued.keyId)?.revokedAt;
    expect(revokedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect([again.code, again.stdout, lines(again.stderr)]).toEqual([
      1,
      '',
      [`Key ${issued.keyId as string} was already revoked at ${revokedAt}; nothing changed.`],
    ]);

    // One character changed (a key that happens to end in x gets a y: the same key again would be no typo).
    const mistyped = await admin(['key', 'revoke', '--key', `${apiKey.slice(0, -1)}${apiKey.endsWith('x') ? 'y' : 'x'}`]);
    expect([mistyped.code, lines(mistyped.stderr).length]).toEqual([2, 1]);
    expect(mistyped.stderr).toContain('not a valid one');
    for (const run of [rotated, revoked, revokedJson, again, mistyped]) expect(run.stdout + run.stderr).not.toContain(secret.slice(0, 20));
  }, 60_000);

  it('finds a running npm start through its data directory, whatever ports it uses', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'pca-admin-stack-'));
    try {
      // The record npm start writes; this test process stands in for it (it is alive, and node).
      const dynamoPort = Number(new URL(process.env.DYNAMODB_ENDPOINT!).port);
      writeFileSync(
        join(dataDir, STACK_RECORD_FILE),
        JSON.stringify({ pid: process.pid, apiPort: await freePort(), dynamoPort, s3Port: await freePort() }),
      );
      const local = { TABLE_NAME: undefined, DYNAMODB_ENDPOINT: undefined, DYNAMODB_LOCAL_PORT: undefined, LOCAL_DATA_DIR: dataDir };
      const listed = await admin(['company', 'list', '--json'], local);
      expect([listed.code, listed.stderr]).toEqual([0, '']);
      expect(Array.isArray(lastJson(listed.stdout).companies)).toBe(true);

      // An explicit DYNAMODB_LOCAL_PORT still wins, and the error names the port it tried.
      const deadPort = await freePort();
      const explicit = await admin(['company', 'list'], { ...local, DYNAMODB_LOCAL_PORT: String(deadPort) });
      expect([explicit.code, lines(explicit.stderr)]).toEqual([
        1,
        [expect.stringContaining(`DynamoDB Local is not running on port ${deadPort}`)],
      ]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
