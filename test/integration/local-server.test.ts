import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { API_FUNCTIONS, ROUTE_TABLE } from '../../infra/contract/route-table.js';
import { commandLine, processAlive, readDynamoLocalRecord, reclaimStaleDynamoLocal } from '../../infra/local/local-processes.js';
import { freePort, portInUse } from '../../infra/local/stores.js';

/**
 * `npm start` end to end, as a developer meets it: the entry script (infra/local/main.ts) runs as
 * its own process on free ports with its data in a temporary directory, starts its own DynamoDB
 * Local and s3rver, creates the demo company and prints its key once; the key works over HTTP;
 * SIGINT stops everything (the ports are free again: no Java left behind) with exit code 0; a
 * restart over the same data creates and prints nothing new, and the first key still works; a
 * start after one that died hard (SIGKILL, Java left running) stops the leftover and starts.
 */
const READY = 'Ctrl-C stops everything.';

let dataDir: string;
let ports: { api: number; dynamo: number; s3: number };
let child: ChildProcessWithoutNullStreams | undefined;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'pca-start-'));
  ports = { api: await freePort(), dynamo: await freePort(), s3: await freePort() };
});

afterAll(async () => {
  // After a failure: stop the stack the polite way first, so its Java process goes with it.
  const running = child;
  if (running && running.exitCode === null && running.signalCode === null) {
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGTERM');
    const timer = setTimeout(() => running.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
  // A DynamoDB Local orphaned by the hard-death step must not outlive a failed run either.
  await reclaimStaleDynamoLocal(join(dataDir, 'dynamodb'));
  rmSync(dataDir, { recursive: true, force: true });
}, 15_000);

interface Started {
  stdout: string;
  stop(signal: NodeJS.Signals): Promise<{ code: number | null; stderr: string }>;
}

/** This process's environment without the test tier's Powertools settings: npm start's own defaults apply. */
function developerEnvironment(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('POWERTOOLS_') && name !== 'LOG_LEVEL'));
}

async function start(env: NodeJS.ProcessEnv = { POWERTOOLS_LOG_LEVEL: 'SILENT' }): Promise<Started> {
  // As the npm start script runs it: node with the tsx loader, so signals reach main.ts directly.
  const proc = spawn(process.execPath, ['--import', 'tsx', 'infra/local/main.ts'], {
    env: {
      ...developerEnvironment(),
      PORT: String(ports.api),
      DYNAMODB_LOCAL_PORT: String(ports.dynamo),
      S3_LOCAL_PORT: String(ports.s3),
      LOCAL_DATA_DIR: dataDir,
      ...env,
    },
  });
  child = proc;
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const onData = () => {
      if (stdout.includes(READY)) {
        proc.stdout.off('data', onData);
        resolve();
      }
    };
    proc.stdout.on('data', onData);
    void exited.then((code) => reject(new Error(`npm start exited with ${code} before it was ready:\n${stdout}\n${stderr}`)));
  });
  return {
    get stdout() {
      return stdout;
    },
    stop: async (signal) => {
      proc.kill(signal);
      return { code: await exited, stderr };
    },
  };
}

const api = (path: string, apiKey?: string) =>
  fetch(`http://127.0.0.1:${ports.api}${path}`, { headers: apiKey ? { Authorization: `Bearer ${apiKey}` } : {} });

/** Whether a TCP connection to host:port is accepted. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** An address of this machine that is not loopback (undefined on a machine without a network). */
const externalAddress = Object.values(networkInterfaces())
  .flat()
  .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;

async function expectAllPortsFree(): Promise<void> {
  expect([await portInUse(ports.api), await portInUse(ports.dynamo), await portInUse(ports.s3)]).toEqual([false, false, false]);
}

describe('npm start', () => {
  it('prints a working demo key once, stops cleanly on SIGINT and SIGTERM, and keeps its data across restarts', async () => {
    const first = await start();
    expect(first.stdout).toContain(`Partner Case API (local) on http://localhost:${ports.api}`);
    const apiKey = /export API_KEY=(\S+)/.exec(first.stdout)?.[1];
    const companyId = /Demo company (cmp_\w+) was created/.exec(first.stdout)?.[1];
    expect(apiKey).toMatch(/^pca_/);
    expect(companyId).toBeDefined();
    expect(first.stdout).toContain(`curl -s http://localhost:${ports.api}/api/v1/cases/`);

    // The key is also left for scripts, readable by its owner only.
    const keyFile = join(dataDir, 'demo-api-key');
    expect(readFileSync(keyFile, 'utf8')).toBe(`${apiKey}\n`);
    expect((statSync(keyFile).mode & 0o777).toString(8)).toBe('600');
    // And a test-mode key beside it: printed once, left for scripts, and working in its own world.
    const testKey = /export TEST_API_KEY=(\S+)/.exec(first.stdout)?.[1];
    expect(testKey).toMatch(/^pca_test_/);
    const testKeyFile = join(dataDir, 'demo-test-api-key');
    expect(readFileSync(testKeyFile, 'utf8')).toBe(`${testKey}\n`);
    expect((statSync(testKeyFile).mode & 0o777).toString(8)).toBe('600');
    expect((await api('/api/v1/cases/case_x', testKey)).status).toBe(404);

    // Everything listens on loopback only, and DynamoDB Local sends no telemetry.
    for (const port of [ports.api, ports.dynamo, ports.s3]) expect(await accepts('127.0.0.1', port)).toBe(true);
    if (externalAddress) {
      expect({
        api: await accepts(externalAddress, ports.api),
        dynamo: await accepts(externalAddress, ports.dynamo),
        s3: await accepts(externalAddress, ports.s3),
      }).toEqual({ api: false, dynamo: false, s3: false });
    }
    const java = readDynamoLocalRecord(join(dataDir, 'dynamodb'));
    expect(java?.port).toBe(ports.dynamo);
    expect(commandLine(java!.javaPid)).toContain('-disableTelemetry');

    // The served contract names this server, not the default port.
    const openapi = (await (await api('/api/v1/openapi.json')).json()) as { servers: { url: string }[] };
    expect(openapi.servers.map((server) => server.url)).toContain(`http://localhost:${ports.api}`);
    expect(JSON.stringify(openapi.servers)).not.toContain('localhost:3000');

    expect((await api('/health')).status).toBe(200);
    const anonymous = await api('/api/v1/cases/case_x');
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('content-type')).toBe('application/problem+json');
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const withKey = await api('/api/v1/cases/case_x', apiKey);
    expect(withKey.status).toBe(404);
    expect(await withKey.json()).toMatchObject({ code: 'NOT_FOUND' });

    const firstStop = await first.stop('SIGINT');
    expect(firstStop.code).toBe(0);
    await expectAllPortsFree();

    const second = await start();
    expect(second.stdout).not.toContain('export API_KEY=');
    expect(second.stdout).toContain(
      `The demo keys for company ${companyId} were printed on the first start and kept in ${keyFile} and ${join(dataDir, 'demo-test-api-key')}`,
    );
    expect(second.stdout).toContain(`DYNAMODB_LOCAL_PORT=${ports.dynamo} npm run admin -- key create --company ${companyId}`);
    expect((await api('/api/v1/cases/case_x', apiKey)).status).toBe(404);

    // Node dies hard: nothing stops DynamoDB Local, which keeps its port.
    const leftover = readDynamoLocalRecord(join(dataDir, 'dynamodb'))!.javaPid;
    await second.stop('SIGKILL');
    expect(processAlive(leftover)).toBe(true);
    expect(await portInUse(ports.dynamo)).toBe(true);

    const third = await start();
    expect(third.stdout).toContain(`Stopped DynamoDB Local (pid ${leftover}, port ${ports.dynamo})`);
    expect(processAlive(leftover)).toBe(false);
    expect((await api('/api/v1/cases/case_x', apiKey)).status).toBe(404);

    const thirdStop = await third.stop('SIGTERM');
    expect(thirdStop.code).toBe(0);
    expect(thirdStop.stderr).toBe('');
    await expectAllPortsFree();
  }, 120_000);

  it('is quiet and safe: no log or metric lines for a walk-through at its defaults, each line labelled with its own function at INFO, the internal credentials only in a 0600 file, every port set by its variable, printed and on loopback only', async () => {
    const more = { sqs: await freePort(), registry: await freePort() };
    const portVariables = { SQS_LOCAL_PORT: String(more.sqs), REGISTRY_LOCAL_PORT: String(more.registry) };
    /** The partner's path through the running stack: an upload, cases created and read back (the workers run on their events). */
    const walkThrough = () => {
      const run = spawnSync(
        process.execPath,
        [
          '--import',
          'tsx',
          'infra/ops/smoke.ts',
          '--base-url',
          `http://127.0.0.1:${ports.api}`,
          '--api-key-file',
          join(dataDir, 'demo-test-api-key'),
        ],
        { encoding: 'utf8', env: developerEnvironment(), timeout: 60_000 },
      );
      expect(run.status).toBe(0);
    };
    // The workers log after the request that caused them: give them a moment before reading.
    const settle = () => new Promise((resolve) => setTimeout(resolve, 2_000));

    const quiet = await start(portVariables);
    walkThrough();
    await settle();
    const printed = quiet.stdout.split('\n');
    expect(printed.filter((line) => line.startsWith('{'))).toEqual([]);
    expect(quiet.stdout).not.toContain('"_aws"');
    expect(quiet.stdout).toContain('Logs            WARN and above, metrics off');
    // Every port printed, the two engines' on the ports their variables set, each on loopback only.
    expect(quiet.stdout).toContain(`SQS (fauxqs)    http://127.0.0.1:${more.sqs}`);
    expect(quiet.stdout).toContain(`Registry        http://127.0.0.1:${more.registry}`);
    for (const port of [ports.api, ports.dynamo, ports.s3, more.sqs, more.registry]) {
      expect(quiet.stdout).toContain(`:${port}`);
      expect(await accepts('127.0.0.1', port)).toBe(true);
      if (externalAddress) expect(await accepts(externalAddress, port)).toBe(false);
    }
    // The internal routes' credentials: a file only its owner reads, under names that cannot replace the developer's own.
    const credentialsFile = join(dataDir, 'internal-iam-credentials');
    expect((statSync(credentialsFile).mode & 0o777).toString(8)).toBe('600');
    const credentials = readFileSync(credentialsFile, 'utf8');
    expect(credentials).toMatch(/^LOCAL_INTERNAL_ACCESS_KEY_ID=\S+\nLOCAL_INTERNAL_SECRET_ACCESS_KEY=\S+\nLOCAL_INTERNAL_REGION=\S+\n$/);
    const secret = /LOCAL_INTERNAL_SECRET_ACCESS_KEY=(\S+)/.exec(credentials)![1]!;
    expect(quiet.stdout).not.toContain(secret);
    expect(quiet.stdout).not.toMatch(/AWS_(ACCESS_KEY_ID|SECRET_ACCESS_KEY)=/);
    expect(quiet.stdout).toContain(`this start's credentials, in ${credentialsFile} (mode 0600`);
    expect((await quiet.stop('SIGINT')).code).toBe(0);

    const verbose = await start({ ...portVariables, POWERTOOLS_LOG_LEVEL: 'INFO' });
    walkThrough();
    await settle();
    const lines = verbose.stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { function_name?: string; method?: string; resource?: string });
    const requests = lines.filter((line) => line.resource !== undefined);
    expect(requests.length).toBeGreaterThan(5);
    const functionOf = (method?: string, resource?: string) => {
      const route = ROUTE_TABLE.find((r) => r.method === method && r.resource === resource);
      return route && API_FUNCTIONS[route.function].name;
    };
    expect(requests.map((line) => [line.resource, line.function_name])).toEqual(
      requests.map((line) => [line.resource, functionOf(line.method, line.resource)]),
    );
    expect((await verbose.stop('SIGTERM')).code).toBe(0);
    await expectAllPortsFree();
  }, 180_000);
});
