import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_STACK_NAME, STAGES, type StageTarget } from '../contract/stack-config.js';

/**
 * `npm run lint:cfn` (and .ci/run): cfn-lint, the CloudFormation validator devops use, over the
 * synthesised template of every stage (STAGES), with zero errors and zero warnings. Each stage is
 * synthesised by running the CDK app the way `cdk synth` runs it (cdk.json's context in
 * CDK_CONTEXT_JSON, the output directory in CDK_OUTDIR), so cdk-nag and CDK's own validation run
 * too, but without bundling the functions (`aws:cdk:bundling-stacks` empty: the template is the
 * same, the code assets are placeholders), offline. A stage without an entry in cdk.json (prod,
 * until its account is filled in) is synthesised with a placeholder account in the dev stage's
 * region, and prod with a placeholder alarm address: neither reaches the template's structure.
 *
 * cfn-lint reads `.cfnlintrc.yaml` at the project root, which says which warnings are ignored and why.
 */
const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const PLACEHOLDER_ACCOUNT = '000000000000';
const PLACEHOLDER_ALARM_EMAIL = 'oncall@example.com';

function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): void {
  const result = spawnSync(command, args, { cwd: projectRoot, env, stdio: 'inherit' });
  if (result.error) throw result.error;
  if (result.status !== 0) {
    console.error(`${command} ${args.join(' ')} failed (exit ${result.status ?? result.signal})`);
    process.exit(1);
  }
}

const context = (JSON.parse(readFileSync(path.join(projectRoot, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> }).context;
const stages = (context.stages ?? {}) as Record<string, StageTarget & Record<string, unknown>>;
const outdir = mkdtempSync(path.join(tmpdir(), 'cfn-lint-'));
try {
  for (const stage of STAGES) {
    const entry = stages[stage] ?? { account: PLACEHOLDER_ACCOUNT, region: stages.dev?.region ?? 'eu-west-2' };
    const stageContext = {
      ...context,
      stage,
      stages: { ...stages, [stage]: entry },
      ...(stage === 'prod' && !context.alarmEmail && !entry.alarmEmail ? { alarmEmail: PLACEHOLDER_ALARM_EMAIL } : {}),
      'aws:cdk:bundling-stacks': [],
    };
    const stageOut = path.join(outdir, stage);
    console.log(`\n${stage}: synthesising (no bundling) and running cfn-lint`);
    run(process.execPath, ['--import', 'tsx', 'infra/stack/app.ts'], {
      ...process.env,
      CDK_CONTEXT_JSON: JSON.stringify(stageContext),
      CDK_OUTDIR: stageOut,
    });
    const stackName = `${typeof context.stackName === 'string' ? context.stackName : DEFAULT_STACK_NAME}-${stage}`;
    const template = path.join(stageOut, `${stackName}.template.json`);
    run('cfn-lint', ['--regions', entry.region, '--non-zero-exit-code', 'warning', '--', template]);
    console.log(`${stage}: cfn-lint found nothing`);
  }
} finally {
  rmSync(outdir, { recursive: true, force: true });
}
