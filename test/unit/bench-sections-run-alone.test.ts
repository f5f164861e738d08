import { spawnSync } from 'node:child_process';

/**
 * A bench section run on its own (`npx tsx bench/<section>.ts`) measures the same process as
 * `npm run bench`: bench/run.ts sets the local process's environment before it imports anything,
 * and each section's first import (bench/lib/run-alone-on-local-stack.ts) does the same. Set any
 * later, the adapters the section imports would have loaded the X-Ray SDK in its automatic mode,
 * whose async hook on every promise cost about a tenth of Node's CPU in the webhook sections
 * (docs/performance.md), so a section timed alone was slower than in the bench.
 */
/** The sections that import adapters themselves (bench/payments.ts runs as it is imported, and imports them after). */
const SECTIONS = ['bench/webhooks.ts', 'bench/webhook-dns.ts', 'bench/webhook-isolation.ts'];

test.each(SECTIONS)('%s loaded alone, with nothing set beforehand, tracks no promise and logs nothing', (section) => {
  const probe = `
    await import(new URL(${JSON.stringify(section)}, 'file://' + process.cwd() + '/').href);
    console.log(JSON.stringify({ xray: process.namespaces?.AWSXRay !== undefined, level: process.env.POWERTOOLS_LOG_LEVEL }));
  `;
  const env = { ...process.env };
  for (const name of ['AWS_XRAY_MANUAL_MODE', 'POWERTOOLS_LOG_LEVEL', 'POWERTOOLS_METRICS_DISABLED']) delete env[name];
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', probe], {
    encoding: 'utf8',
    env: { ...env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    timeout: 60_000,
  });
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  expect(JSON.parse(run.stdout.trim().split('\n').pop() ?? 'null')).toEqual({ xray: false, level: 'SILENT' });
});
