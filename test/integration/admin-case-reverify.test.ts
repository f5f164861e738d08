import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from '../../lib/adapters/dynamodb/table-keys.js';
import { config } from '../../lib/runtime/config.js';
import { REQUEST_LOG_PATH, STAND_IN_API_KEY } from '../../infra/local/companies-house-stand-in.js';
import { outcome, postCases, uploadInvoice, validCase } from '../support/cases.js';
import { ddb, newPartner, type Partner } from '../support/fixtures.js';

/**
 * `npm run admin -- case reverify` (infra/ops/admin.ts) as a child process against the test
 * DynamoDB Local, the global setup's verification worker, its retry queue and its Companies House
 * stand-in (as admin-case-confirm.test.ts runs its command). A case whose registry answers 503
 * stays PENDING, as after the worker's retries: the command verifies it afresh through the worker's
 * own use cases, and finds every case left DRAFT of a company without being told their ids.
 * (Settling and verifying once the registry answers: test/unit/cases/reverify-case.test.ts.)
 */
jest.setTimeout(120_000);

const TSX_CLI = join('node_modules', 'tsx', 'dist', 'cli.mjs');
const UNAVAILABLE = '01000500';

function admin(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [TSX_CLI, 'infra/ops/admin.ts', ...args], {
      // The registry key the stand-in accepts (in AWS: COMPANIES_HOUSE_API_KEY_SECRET names the secret).
      env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', COMPANIES_HOUSE_API_KEY: STAND_IN_API_KEY },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function until<T>(probe: () => Promise<T | undefined>, ms: number): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`not reached within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** How often the global worker's registry stand-in has been asked about a number. */
async function registryRequests(companyNumber: string): Promise<number> {
  const res = await fetch(`${process.env.COMPANIES_HOUSE_BASE_URL}${REQUEST_LOG_PATH}`);
  return ((await res.json()) as { requests: string[] }).requests.filter((p) => p.endsWith(companyNumber)).length;
}

async function caseItem(caseId: string): Promise<Record<string, unknown>> {
  const out = await ddb().send(new GetCommand({ TableName: config().tableName, Key: keys.case('live', caseId), ConsistentRead: true }));
  return out.Item!;
}

async function createCase(partner: Partner, overrides: Record<string, unknown>): Promise<string> {
  const res = await postCases(partner.apiKey, { cases: [validCase(await uploadInvoice(partner.apiKey), overrides)] });
  return outcome(res).created[0]!.id;
}

/** A case the worker has tried once and left PENDING (the registry answered 503). */
async function pendingCase(partner: Partner): Promise<string> {
  const before = await registryRequests(UNAVAILABLE);
  const caseId = await createCase(partner, { debtorCompanyNo: UNAVAILABLE });
  await until(async () => ((await registryRequests(UNAVAILABLE)) > before ? true : undefined), 20_000);
  expect(await caseItem(caseId)).toMatchObject({ status: 'DRAFT', debtorVerification: { status: 'PENDING' } });
  return caseId;
}

describe('npm run admin -- case reverify', () => {
  it('verifies one PENDING case afresh through the worker’s use case: the registry is asked again and, still failing, a new retry series starts', async () => {
    const partner = await newPartner(['cases:read', 'cases:write'], { autoAttestation: true });
    const caseId = await pendingCase(partner);
    const asked = await registryRequests(UNAVAILABLE);

    const run = await admin(['case', 'reverify', '--company', partner.companyId, '--case', caseId, '--json']);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    const printed = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
    expect(printed).toEqual({
      companyId: partner.companyId,
      caseId,
      mode: 'live',
      result: 'retry_scheduled',
      detail: 'registry-unavailable',
      nextAttemptAt: expect.any(String),
      status: 'DRAFT',
      recoveryGate: 'AUTO_ATTESTED',
      debtorVerification: 'PENDING',
    });
    expect(new Date(printed.nextAttemptAt as string).getTime()).toBeGreaterThan(Date.now());
    expect(await registryRequests(UNAVAILABLE)).toBeGreaterThan(asked);
  });

  it('refuses a case of another company with exit 1, and bad arguments with exit 2 before touching storage', async () => {
    const [partner, other] = await Promise.all([newPartner(), newPartner()]);
    const caseId = await createCase(partner, {});
    const foreign = await admin(['case', 'reverify', '--company', other.companyId, '--case', caseId]);
    expect(foreign.code).toBe(1);
    expect(foreign.stderr.trim()).toBe(`No live case ${caseId} exists for company ${other.companyId}`);

    const [neither, both, badDuration] = await Promise.all([
      admin(['case', 'reverify', '--company', partner.companyId]),
      admin(['case', 'reverify', '--company', partner.companyId, '--case', caseId, '--pending-longer-than', '24h']),
      admin(['case', 'reverify', '--pending-longer-than', 'a day']),
    ]);
    for (const run of [neither, both, badDuration]) {
      expect(run.code).toBe(2);
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
    }
    expect(badDuration.stderr).toContain('--pending-longer-than must be');
  });

  it('acts on a case named by its id alone (a dead-lettered retry message names no company), and names its company', async () => {
    const partner = await newPartner();
    const caseId = await createCase(partner, {});
    const run = await admin(['case', 'reverify', '--case', caseId]);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    expect(run.stdout.trim()).toBe(
      `${caseId} (live, ${partner.companyId}): nothing to do (awaiting_confirmation); status DRAFT, recoveryGate AWAITING_CONFIRMATION, debtorVerification NOT_REQUESTED`,
    );
  });

  it('finds every case of a company left DRAFT longer than the given time, reverifies each and prints one line per case', async () => {
    const partner = await newPartner(['cases:read', 'cases:write'], { autoAttestation: false });
    // Left DRAFT: one whose registry fails, one awaiting the partner's confirmation. Not DRAFT: one on hold.
    const pending = await pendingCase(partner);
    const awaiting = await createCase(partner, {});
    const onHold = await createCase(partner, { debtorCompanyNo: '01000404' });
    await until(async () => ((await caseItem(onHold)).status === 'ON_HOLD' ? true : undefined), 20_000);
    await new Promise((r) => setTimeout(r, 1_100));

    const run = await admin(['case', 'reverify', '--pending-longer-than', '1s', '--company', partner.companyId, '--json']);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    const printed = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as {
      counts: Record<string, number>;
      cases: { caseId: string; result: string; reason?: string }[];
    };
    expect(printed.counts).toEqual({ settled: 0, verified: 0, retry_scheduled: 1, unchanged: 1, failed: 0 });
    expect(
      printed.cases.map(({ caseId, result, reason }) => ({ caseId, result, reason })).sort((a, b) => (a.caseId < b.caseId ? -1 : 1)),
    ).toEqual(
      [
        { caseId: pending, result: 'retry_scheduled', reason: undefined },
        { caseId: awaiting, result: 'unchanged', reason: 'awaiting_confirmation' },
      ].sort((a, b) => (a.caseId < b.caseId ? -1 : 1)),
    );

    // Without --json: a line per case, then the count.
    const human = await admin(['case', 'reverify', '--pending-longer-than', '1s', '--company', partner.companyId, '--mode', 'live']);
    const lines = human.stdout.trim().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines.find((l) => l.startsWith(awaiting))).toBe(
      `${awaiting} (live, ${partner.companyId}): nothing to do (awaiting_confirmation); status DRAFT, recoveryGate AWAITING_CONFIRMATION, debtorVerification NOT_REQUESTED`,
    );
    expect(lines.at(-1)).toMatch(
      /^Cases left DRAFT since before .+: 2 \(0 settled, 0 verified, 1 retry scheduled, 1 unchanged, 0 failed\)$/,
    );
  });
});
