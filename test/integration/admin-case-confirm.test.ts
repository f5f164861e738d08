import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from '../../lib/adapters/dynamodb/table-keys.js';
import { config } from '../../lib/runtime/config.js';
import { outcome, postCases, readCase, uploadInvoice, validCase } from '../support/cases.js';
import { ddb, newPartner, type Partner } from '../support/fixtures.js';

/**
 * `npm run admin -- case confirm` (infra/ops/admin.ts) as a child process against the test
 * DynamoDB Local, as admin-cli.test.ts runs the other commands: the confirmation the dashboard
 * makes, recorded with source "operator"; its answer printed, refusals on stderr with exit 1.
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

describe('npm run admin -- case confirm', () => {
  let partner: Partner;
  let caseId: string;

  beforeAll(async () => {
    partner = await newPartner();
    const created = outcome(
      await postCases(partner.apiKey, { cases: [validCase(await uploadInvoice(partner.apiKey), { invoiceRef: 'ADMIN-CONF-1' })] }),
    );
    caseId = created.created[0]!.id;
  }, 30_000);

  it('confirms a case, prints the outcome, and records the operator as the confirmation source', async () => {
    const run = await admin([
      'case',
      'confirm',
      '--company',
      partner.companyId,
      '--case',
      caseId,
      '--by',
      'Olive Operator',
      '--email',
      'olive@ops.example',
    ]);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    expect(run.stdout.trim()).toBe(`Confirmed live case ${caseId} of ${partner.companyId}: status READY, recoveryGate CONFIRMED`);
    expect((await readCase(partner.apiKey, caseId)).body).toMatchObject({ status: 'READY', recoveryGate: 'CONFIRMED' });
    const record = await ddb().send(
      new GetCommand({ TableName: config().tableName, Key: keys.confirmation('live', caseId), ConsistentRead: true }),
    );
    expect(record.Item).toMatchObject({
      source: 'operator',
      confirmedBy: { name: 'Olive Operator', email: 'olive@ops.example' },
      principal: expect.stringMatching(/^operator:/),
      requestId: expect.stringMatching(/^admin-/),
    });
  }, 60_000);

  it('says so when the case is already confirmed (exit 0, --json), and refuses an unknown case with exit 1', async () => {
    const again = await admin(['case', 'confirm', '--company', partner.companyId, '--case', caseId, '--by', 'Olive Operator', '--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout.trim())).toEqual({
      companyId: partner.companyId,
      caseId,
      mode: 'live',
      result: 'already_confirmed',
      status: 'READY',
      recoveryGate: 'CONFIRMED',
    });
    const unknown = await admin([
      'case',
      'confirm',
      '--company',
      partner.companyId,
      '--case',
      'case_0000000000000000000000',
      '--by',
      'Olive',
    ]);
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr.trim()).toBe(`No live case case_0000000000000000000000 exists for company ${partner.companyId}`);
  }, 60_000);

  it('refuses bad arguments with one line and exit 2, before touching storage', async () => {
    const [noBy, badCase, badEmail] = await Promise.all([
      admin(['case', 'confirm', '--company', partner.companyId, '--case', caseId]),
      admin(['case', 'confirm', '--company', partner.companyId, '--case', 'nope', '--by', 'X']),
      admin(['case', 'confirm', '--company', partner.companyId, '--case', caseId, '--by', 'X', '--email', 'nope']),
    ]);
    for (const run of [noBy, badCase, badEmail]) {
      expect(run.code).toBe(2);
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
    }
    expect(badCase.stderr).toContain('--case must be a case id');
    expect(badEmail.stderr).toContain('--email must be a valid e-mail address');
  }, 60_000);
});
