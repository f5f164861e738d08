import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from '../../lib/adapters/dynamodb/table-keys.js';
import { caseChangeAdapters } from '../../lib/adapters/production-adapters.js';
import { confirmCases } from '../../lib/cases/change-case.js';
import { config } from '../../lib/runtime/config.js';
import { outcome, postCases, readCase, uploadInvoice, validCase } from '../support/cases.js';
import { ddb, newPartner, type Partner } from '../support/fixtures.js';

/**
 * `npm run admin -- case recovery` (infra/ops/admin.ts) as a child process against the test
 * DynamoDB Local, as admin-case-confirm.test.ts runs case confirm: one update as the recovery back
 * office sends it, recorded with source "operator"; its answer printed, refusals on stderr with
 * exit 1, bad arguments exit 2 before storage.
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

async function updateRecord(companyId: string, updateId: string) {
  const out = await ddb().send(
    new GetCommand({ TableName: config().tableName, Key: keys.recoveryUpdate('live', companyId, updateId), ConsistentRead: true }),
  );
  return out.Item;
}

describe('npm run admin -- case recovery', () => {
  let partner: Partner;
  let caseId: string;
  const by = ['--by', 'Olive Operator', '--email', 'olive@ops.example'];
  const recovery = (...args: string[]) => admin(['case', 'recovery', '--company', partner.companyId, '--case', caseId, ...args]);

  beforeAll(async () => {
    partner = await newPartner();
    const created = outcome(
      await postCases(partner.apiKey, {
        cases: [validCase(await uploadInvoice(partner.apiKey), { invoiceRef: 'ADMIN-RCV-1', claimStatutoryInterest: false })],
      }),
    );
    caseId = created.created[0]!.id;
    await confirmCases(caseChangeAdapters().changes, {
      mode: 'live',
      companyId: partner.companyId,
      caseIds: [caseId],
      confirmedBy: { name: 'Jane Smith', email: 'jane@partner.example' },
      requestId: 'req-confirm',
      source: 'operator',
      principal: 'operator:test',
    });
  }, 30_000);

  it('starts recovery with a generated update id, prints it, and records the operator as the source', async () => {
    const run = await recovery('--type', 'recovery_started', ...by);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    const match =
      /^Applied recovery_started to live case (\S+) of (\S+) \(update (operator-[0-9a-f-]{36}) \(generated; pass --update-id with it to repeat the command safely\)\): status IN_RECOVERY; paid 0\.00, outstanding 1250\.50$/.exec(
        run.stdout.trim(),
      );
    expect(match?.slice(1, 3)).toEqual([caseId, partner.companyId]);
    expect((await readCase(partner.apiKey, caseId)).body).toMatchObject({ status: 'IN_RECOVERY' });
    expect(await updateRecord(partner.companyId, match![3]!)).toMatchObject({
      caseId,
      source: 'operator',
      by: { name: 'Olive Operator', email: 'olive@ops.example' },
      update: { type: 'recovery_started' },
      requestId: expect.stringMatching(/^admin-/),
    });
  }, 60_000);

  it('records a collected payment under the given update id; the same id again says already applied (exit 0, --json) and changes nothing', async () => {
    const args = [
      '--type',
      'payment_collected',
      '--amount',
      '250.50',
      '--paid-at',
      '2025-03-01',
      '--reference',
      'BO-7',
      '--update-id',
      'bo-pay-7',
      ...by,
    ];
    const run = await recovery(...args);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    expect(run.stdout.trim()).toBe(
      `Applied payment_collected to live case ${caseId} of ${partner.companyId} (update bo-pay-7): status IN_RECOVERY; paid 250.50, outstanding 1000.00`,
    );
    const again = await recovery(...args, '--json');
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout.trim())).toEqual({
      companyId: partner.companyId,
      caseId,
      mode: 'live',
      updateId: 'bo-pay-7',
      result: 'already_applied',
    });
    expect((await readCase(partner.apiKey, caseId)).body).toMatchObject({ amounts: { paid: '250.50', outstanding: '1000.00' } });
  }, 60_000);

  it('refuses what the rules refuse with exit 1 on stderr (too large a payment, PAID_IN_FULL with money outstanding, an unknown case), then closes it with a reason', async () => {
    const tooMuch = await recovery('--type', 'payment_collected', '--amount', '1000.01', '--paid-at', '2025-03-01', ...by);
    expect(tooMuch.code).toBe(1);
    expect(tooMuch.stdout).toBe('');
    expect(tooMuch.stderr.trim()).toMatch(new RegExp(`^Case ${caseId}: payment_collected not applied \\(invalid_state\\): .*1000\\.00`));
    const paidInFull = await recovery('--type', 'closed', '--reason', 'PAID_IN_FULL', ...by);
    expect(paidInFull.code).toBe(1);
    expect(paidInFull.stderr.trim()).toBe(
      `Case ${caseId}: closed not applied (invalid_state): PAID_IN_FULL needs outstanding 0.00; the case has 1000.00 outstanding.`,
    );
    const unknown = await admin([
      'case',
      'recovery',
      '--company',
      partner.companyId,
      '--case',
      'case_0000000000000000000000',
      '--type',
      'recovery_started',
      ...by,
    ]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.trim()).toBe(`No live case case_0000000000000000000000 exists for company ${partner.companyId}; nothing applied`);

    const closed = await recovery('--type', 'closed', '--reason', 'SETTLED', '--note', 'Agreed 800.00', '--json', ...by);
    expect(closed.code).toBe(0);
    expect(JSON.parse(closed.stdout.trim())).toMatchObject({
      result: 'applied',
      status: 'CLOSED',
      closure: { reason: 'SETTLED', note: 'Agreed 800.00' },
      amounts: { outstanding: '1000.00' },
    });
    expect((await readCase(partner.apiKey, caseId)).body).toMatchObject({ status: 'CLOSED', closure: { reason: 'SETTLED' } });
  }, 60_000);

  it('refuses bad arguments with one line and exit 2, before touching storage', async () => {
    const runs = await Promise.all([
      recovery('--type', 'recovery_started', '--by', 'X'),
      recovery('--type', 'paid', ...by),
      recovery('--type', 'payment_collected', '--amount', '1.005', '--paid-at', '2025-03-01', ...by),
      recovery('--type', 'payment_collected', '--amount', '10', ...by),
      recovery('--type', 'closed', '--reason', 'BORED', ...by),
      recovery('--type', 'recovery_started', '--amount', '10', ...by),
      recovery('--type', 'recovery_started', '--by', 'X', '--email', 'nope'),
      admin(['case', 'confirm', '--company', partner.companyId, '--case', caseId, '--by', 'X', '--reason', 'SETTLED']),
    ]);
    for (const run of runs) {
      expect(run.code).toBe(2);
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
    }
    expect(runs.map((r) => r.stderr.trim())).toEqual([
      'admin: missing --email',
      'admin: --type must be one of recovery_started, payment_collected, closed',
      'admin: --amount must be a sum in pounds with at most 2 decimals, such as 250.50',
      'admin: --paid-at: paidAt is required for payment_collected',
      expect.stringMatching(/^admin: --reason: reason must be one of PAID_IN_FULL/),
      'admin: --amount: amount is not taken by recovery_started',
      'admin: --email: by.email must be a valid e-mail address',
      'admin: --reason is only for case recovery',
    ]);
    expect((await readCase(partner.apiKey, caseId)).body).toMatchObject({ status: 'CLOSED' });
  }, 60_000);
});
