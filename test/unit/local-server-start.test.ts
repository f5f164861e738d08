import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';

/**
 * `npm start` serves the handlers without the CDK: the route table, the gateway's problem
 * responses and the stack settings it shares with the stack are plain data (infra/contract), so
 * starting the local server does not load aws-cdk-lib (about 70 modules, most of a second).
 * Every module of the local world is loaded in a fresh process, as npm start and npm run invoke
 * load them; the entry scripts themselves are left out because importing them starts them.
 */
const ENTRY_SCRIPTS = new Set(['main.ts', 'invoke.ts', 'webhook-receiver-cli.ts', 'check-webhook-walkthrough.ts']);

it('the local server and its tools load without the CDK (no aws-cdk-lib or constructs module)', () => {
  const modules = readdirSync('infra/local')
    .filter((file) => file.endsWith('.ts') && !ENTRY_SCRIPTS.has(file))
    .map((file) => `./infra/local/${file}`);
  const served = ['./infra/local/http-adapter.ts', './infra/local/api-routes.ts', './infra/local/stores.ts'];
  expect(modules).toEqual(expect.arrayContaining(served));
  const probe = `
    import Module from 'node:module';
    for (const m of ${JSON.stringify(modules)}) await import(new URL(m, 'file://' + process.cwd() + '/').href);
    const loaded = Object.keys(Module._cache).filter((k) => /node_modules\\/(aws-cdk-lib|constructs)\\//.test(k));
    console.log(JSON.stringify(loaded.slice(0, 5).map((k) => k.slice(k.indexOf('node_modules/')))));
  `;
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', probe], {
    encoding: 'utf8',
    env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    timeout: 60_000,
  });
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  expect(JSON.parse(run.stdout.trim().split('\n').pop() ?? 'null')).toEqual([]);
});
