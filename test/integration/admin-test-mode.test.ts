import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { createS3Client } from '../../lib/adapters/s3/s3-client.js';
import { config } from '../../lib/runtime/config.js';
import { outcome, postCases, readCase, scanTable, uploadInvoice, validCase } from '../support/cases.js';
import { extraKey, newPartner, type Partner } from '../support/fixtures.js';

/**
 * The operator's side of test mode (infra/ops/admin.ts as a child process): `key create --mode`,
 * `key list` and `key rotate` with modes, and `company clear-test-data` run beside live data: a
 * company with live and test cases for the same invoiceRefs, claims and uploads in both modes,
 * and another company with test data of its own. Only the first company's test data goes.
 */
const TSX_CLI = join('node_modules', 'tsx', 'dist', 'cli.mjs');

function admin(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [TSX_CLI, 'infra/ops/admin.ts', ...args], {
      env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function uploaded(fileKey: string): Promise<boolean> {
  const s3 = createS3Client(config());
  try {
    await s3.send(new HeadObjectCommand({ Bucket: config().bucketName, Key: fileKey }));
    return true;
  } catch (error) {
    if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return false;
    throw error;
  } finally {
    s3.destroy();
  }
}

interface World {
  partner: Partner;
  testKey: string;
  liveFile: string;
  testFile: string;
  liveCaseId: string;
  testCaseId: string;
}

async function worldWithBothModes(): Promise<World> {
  const partner = await newPartner();
  const testKey = await extraKey(partner.companyId, ['cases:read', 'cases:write'], 'test');
  const [liveFile, testFile] = await Promise.all([uploadInvoice(partner.apiKey), uploadInvoice(testKey)]);
  const live = await postCases(
    partner.apiKey,
    { cases: [validCase(liveFile, { invoiceRef: 'INV-BOTH-1' })] },
    { 'Idempotency-Key': 'same-key' },
  );
  const test = await postCases(testKey, { cases: [validCase(testFile, { invoiceRef: 'INV-BOTH-1' })] }, { 'Idempotency-Key': 'same-key' });
  expect([live.statusCode, test.statusCode]).toEqual([201, 201]);
  return { partner, testKey, liveFile, testFile, liveCaseId: outcome(live).created[0]!.id, testCaseId: outcome(test).created[0]!.id };
}

describe('company clear-test-data', () => {
  it('deletes the company\u2019s test cases, audit records, guards, events, claims and uploads, and never live data or another company\u2019s', async () => {
    const mine = await worldWithBothModes();
    const theirs = await worldWithBothModes();
    const before = await scanTable();
    const liveItemsBefore = before.filter((i) => i.companyId === mine.partner.companyId && !String(i.pk).includes('#TEST#'));

    const run = await admin(['company', 'clear-test-data', '--company', mine.partner.companyId, '--json']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    // One case: its case item, audit record, guard and case.created event, plus the one claim.
    expect(JSON.parse(run.stdout.trim().split('\n').pop()!)).toEqual({ companyId: mine.partner.companyId, items: 5, uploads: 1 });

    const after = await scanTable();
    const mineAfter = after.filter((i) => i.companyId === mine.partner.companyId);
    expect(mineAfter.filter((i) => String(i.pk).includes('#TEST#'))).toEqual([]);
    // Every live item of the company is still there, unchanged.
    for (const item of liveItemsBefore) expect(mineAfter).toContainEqual(item);

    // The test world is empty again: the case is gone, the invoiceRef and the Idempotency-Key are free.
    expect((await readCase(mine.testKey, mine.testCaseId)).statusCode).toBe(404);
    expect(await uploaded(mine.testFile)).toBe(false);
    const testFile = await uploadInvoice(mine.testKey);
    const again = await postCases(
      mine.testKey,
      { cases: [validCase(testFile, { invoiceRef: 'INV-BOTH-1' })] },
      { 'Idempotency-Key': 'same-key' },
    );
    expect(again.statusCode).toBe(201);

    // Live data: the case, its upload and its claim (a replay is still refused with the original answer).
    expect((await readCase(mine.partner.apiKey, mine.liveCaseId)).body).toMatchObject({ id: mine.liveCaseId, livemode: true });
    expect(await uploaded(mine.liveFile)).toBe(true);
    const replay = await postCases(
      mine.partner.apiKey,
      { cases: [validCase(mine.liveFile, { invoiceRef: 'INV-BOTH-1' })] },
      { 'Idempotency-Key': 'same-key' },
    );
    expect(replay.statusCode).toBe(409);

    // Another company's test data is untouched.
    expect((await readCase(theirs.testKey, theirs.testCaseId)).body).toMatchObject({ id: theirs.testCaseId, livemode: false });
    expect(await uploaded(theirs.testFile)).toBe(true);
  }, 60_000);

  it('refuses an unknown company, and --mode outside key create', async () => {
    const unknown = await admin(['company', 'clear-test-data', '--company', 'cmp_AAAAAAAAAAAAAAAA']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.trim()).toBe('No company with id cmp_AAAAAAAAAAAAAAAA.');
    const misplaced = await admin(['company', 'list', '--mode', 'test']);
    expect(misplaced.code).toBe(2);
    const badMode = await admin(['key', 'create', '--company', 'cmp_AAAAAAAAAAAAAAAA', '--scopes', 'cases:read', '--mode', 'sandbox']);
    expect(badMode).toMatchObject({ code: 2, stderr: 'admin: --mode must be one of live, test\n' });
  }, 60_000);

  it('creates a test key with --mode test, key list shows each key\u2019s mode, and a rotation keeps it', async () => {
    const partner = await newPartner();
    const created = await admin(['key', 'create', '--company', partner.companyId, '--scopes', 'cases:read', '--mode', 'test', '--json']);
    expect(created.code).toBe(0);
    const issued = JSON.parse(created.stdout.trim().split('\n').pop()!) as { apiKey: string; mode: string; keyId: string };
    expect(issued.mode).toBe('test');
    expect(issued.apiKey).toMatch(/^pca_test_/);
    const listed = await admin(['key', 'list', '--company', partner.companyId, '--json']);
    const keys = (JSON.parse(listed.stdout.trim().split('\n').pop()!) as { keys: { keyId: string; mode: string }[] }).keys;
    expect(keys.map((k) => [k.keyId, k.mode]).sort()).toEqual(
      [
        [partner.keyId, 'live'],
        [issued.keyId, 'test'],
      ].sort(),
    );
    const table = await admin(['key', 'list', '--company', partner.companyId]);
    expect(table.stdout.split('\n')[0]).toMatch(/^keyId\s+mode\s+scopes/);
    // A rotation keeps the mode.
    const rotated = await admin(['key', 'rotate', '--key', issued.keyId, '--json']);
    expect(JSON.parse(rotated.stdout.trim().split('\n').pop()!)).toMatchObject({
      mode: 'test',
      apiKey: expect.stringMatching(/^pca_test_/),
    });
  }, 60_000);
});
