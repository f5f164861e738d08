import { execFileSync } from 'node:child_process';
import { constants, closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import {
  DELIVERY_TIMEOUT_MS,
  USER_AGENT,
  WebhookSender,
  type HostResolver,
  type WebhookSenderOptions,
} from '../../../lib/adapters/webhooks/webhook-sender.js';
import { isLoopbackAddress } from '../../../lib/webhooks/address-class.js';
import { generateEndpointSecret } from '../../../lib/webhooks/signature.js';
import { startDnsServer, type DnsServer } from '../../support/dns-server.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js';
import { REFUSED_ADDRESSES } from '../webhooks/refused-addresses.js';

/**
 * The sender over real HTTP to receivers on loopback addresses. Loopback is reachable only through
 * the local-development option (npm start's); the refusals are tested without it, with names a
 * test resolver makes point wherever the case needs.
 */
const secret = generateEndpointSecret();
const payload = JSON.stringify({ id: 'evt_test_1', type: 'case.created', createdAt: '2025-03-01T10:00:00.000Z' });
const local: WebhookSenderOptions = { allowLocalDevelopment: true, timeoutMs: 5_000 };

const receivers: WebhookReceiver[] = [];
async function receiver(...args: Parameters<typeof startWebhookReceiver>): Promise<WebhookReceiver> {
  const started = await startWebhookReceiver(...args);
  receivers.push(started);
  return started;
}
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

/** A resolver answering from a table, counting its calls. */
function resolverOf(table: Record<string, string[] | (() => string[])>): HostResolver & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (hostname: string) => {
    calls.push(hostname);
    const answer = table[hostname];
    if (answer === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return typeof answer === 'function' ? answer() : answer;
  };
  return Object.assign(resolve, { calls });
}

const attempt = (url: string, secrets: string[] = [secret]) => ({ url, eventId: 'evt_test_1', payload, secrets });

/** A self-signed certificate for one name, made once per run (openssl, as on the CI machine). */
const certificates = new Map<string, { key: string; cert: string }>();
function selfSigned(name: string): { key: string; cert: string } {
  let made = certificates.get(name);
  if (!made) {
    const dir = mkdtempSync(join(tmpdir(), 'webhook-tls-'));
    try {
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:prime256v1',
          '-nodes',
          '-days',
          '1',
          '-subj',
          `/CN=${name}`,
        ].concat(['-addext', `subjectAltName=DNS:${name}`, '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')]),
        { stdio: 'ignore' },
      );
      made = { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
      certificates.set(name, made);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return made;
}

describe('the webhook sender', () => {
  it('posts the event signed, and the Standard Webhooks library verifies what arrived', async () => {
    const r = await receiver();
    const outcome = await new WebhookSender(local).send(attempt(`${r.url}/hooks?src=pca`));
    expect(outcome).toMatchObject({ delivered: true, statusCode: 200, address: '127.0.0.1' });
    expect(outcome.durationMs).toBeGreaterThanOrEqual(0);
    expect(outcome.error).toBeUndefined();
    const [got] = r.received;
    expect(got).toMatchObject({ method: 'POST', path: '/hooks?src=pca', body: payload });
    expect(new Webhook(secret).verify(got!.body, got!.headers)).toEqual(JSON.parse(payload));
  });

  it('sends no header but Content-Type, User-Agent and the three webhook-* ones (and what HTTP needs)', async () => {
    const r = await receiver();
    await new WebhookSender(local).send(attempt(r.url));
    const names = r.received[0]!.rawHeaderNames.map((n) => n.toLowerCase()).sort();
    expect(names).toEqual(
      ['connection', 'content-length', 'content-type', 'host', 'user-agent', 'webhook-id', 'webhook-signature', 'webhook-timestamp'].sort(),
    );
    expect(r.received[0]!.headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      host: `127.0.0.1:${r.port}`,
      'webhook-id': 'evt_test_1',
    });
  });

  it('signs once per current secret, and each verifies alone', async () => {
    const r = await receiver();
    const older = generateEndpointSecret();
    await new WebhookSender(local).send(attempt(r.url, [secret, older]));
    const got = r.received[0]!;
    expect(got.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(new Webhook(secret).verify(got.body, got.headers)).toBeDefined();
    expect(new Webhook(older).verify(got.body, got.headers)).toBeDefined();
  });

  it('keeps the same webhook-id when a receiver fails and then succeeds, with a fresh timestamp and signature', async () => {
    let calls = 0;
    const r = await receiver({ handler: (_req, res) => res.writeHead(++calls === 1 ? 500 : 204).end() });
    let clock = Date.now() - 60_000;
    const sender = new WebhookSender({ ...local, now: () => new Date((clock += 30_000)) });
    const first = await sender.send(attempt(r.url));
    const second = await sender.send(attempt(r.url));
    expect(first).toMatchObject({ delivered: false, statusCode: 500 });
    expect(first.error).toBeUndefined();
    expect(second).toMatchObject({ delivered: true, statusCode: 204 });
    const [a, b] = r.received;
    expect(a!.headers['webhook-id']).toBe('evt_test_1');
    expect(b!.headers['webhook-id']).toBe('evt_test_1');
    expect(Number(b!.headers['webhook-timestamp'])).toBe(Number(a!.headers['webhook-timestamp']) + 30);
    expect(b!.headers['webhook-signature']).not.toBe(a!.headers['webhook-signature']);
    for (const got of [a!, b!]) expect(new Webhook(secret).verify(got.body, got.headers)).toBeDefined();
  });

  it('gives up on a receiver that never answers at its timeout, without throwing', async () => {
    const r = await receiver({ handler: () => undefined });
    const outcome = await new WebhookSender({ ...local, timeoutMs: 400 }).send(attempt(r.url));
    expect(outcome).toMatchObject({ delivered: false, error: 'no answer within 400 ms' });
    expect(outcome.statusCode).toBeUndefined();
    expect(outcome.durationMs).toBeGreaterThanOrEqual(390);
    expect(outcome.durationMs).toBeLessThan(3_000);
    expect(r.received).toHaveLength(1);
  });

  it('counts the name’s resolution inside the timeout: a resolver that hangs is a timed-out attempt', async () => {
    const resolver: HostResolver = () => new Promise(() => undefined);
    const outcome = await new WebhookSender({ resolver, timeoutMs: 300 }).send(attempt('https://hooks.partner.example/in'));
    expect(outcome).toMatchObject({ delivered: false, error: 'no answer within 300 ms' });
  });

  it('waits 10 seconds for an answer unless told otherwise', () => {
    expect(DELIVERY_TIMEOUT_MS).toBe(10_000);
  });

  it('does not read a huge response body whole: it takes the status and closes the connection', async () => {
    let closedAfterBytes = -1;
    const r = await receiver({
      handler: (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        const chunk = Buffer.alloc(64 * 1024, 120);
        let written = 0;
        const pump = () => {
          // An endless body, written as fast as the connection takes it.
          while (!res.destroyed && res.write(chunk)) written += chunk.length;
          if (!res.destroyed) res.once('drain', pump);
        };
        res.on('close', () => (closedAfterBytes = written));
        pump();
      },
    });
    const outcome = await new WebhookSender({ ...local, timeoutMs: 5_000 }).send(attempt(r.url));
    expect(outcome).toMatchObject({ delivered: true, statusCode: 200 });
    expect(outcome.error).toBeUndefined();
    expect(outcome.durationMs).toBeLessThan(2_000);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(closedAfterBytes).toBeGreaterThanOrEqual(0);
    expect(closedAfterBytes).toBeLessThan(64 * 1024 * 1024);
  });

  it('answers a refused connection as a failed attempt, never an exception', async () => {
    const r = await receiver();
    const url = r.url;
    await r.close();
    const outcome = await new WebhookSender(local).send(attempt(url));
    expect(outcome).toMatchObject({ delivered: false, error: expect.stringContaining('ECONNREFUSED') });
  });

  it('answers a name that does not resolve as a failed attempt', async () => {
    const outcome = await new WebhookSender({ resolver: resolverOf({}) }).send(attempt('https://nowhere.partner.example/'));
    expect(outcome).toMatchObject({ delivered: false, error: expect.stringContaining('could not resolve nowhere.partner.example') });
  });

  describe('refuses internal addresses', () => {
    it('does not reach a loopback receiver without the local-development option', async () => {
      const r = await receiver();
      const outcome = await new WebhookSender().send(attempt(r.url));
      expect(outcome).toMatchObject({ delivered: false, error: expect.stringContaining('https://') });
      const named = await new WebhookSender({ resolver: resolverOf({ 'hooks.partner.example': ['127.0.0.1'] }) }).send(
        attempt(`https://hooks.partner.example:${r.port}/`),
      );
      expect(named).toMatchObject({ delivered: false, error: expect.stringContaining('resolves to 127.0.0.1 is a loopback address') });
      expect(r.connections).toBe(0);
    });

    it.each(REFUSED_ADDRESSES)('refuses a name that resolves to %s (%s) before connecting', async (address) => {
      const resolver = resolverOf({ 'hooks.partner.example': [address] });
      const outcome = await new WebhookSender({ resolver, timeoutMs: 2_000 }).send(attempt('https://hooks.partner.example/in'));
      expect(outcome).toEqual({
        at: expect.any(String),
        delivered: false,
        durationMs: expect.any(Number),
        error: expect.stringContaining(`hooks.partner.example resolves to ${address} is`),
      });
    });

    it.each(REFUSED_ADDRESSES.filter(([a]) => !isLoopbackAddress(a)))(
      'refuses a name that resolves to %s (%s) under the local-development option too',
      async (address) => {
        const resolver = resolverOf({ 'hooks.partner.example': [address] });
        const outcome = await new WebhookSender({ ...local, resolver }).send(attempt('https://hooks.partner.example/in'));
        expect(outcome).toMatchObject({ delivered: false, error: expect.stringContaining(`resolves to ${address} is`) });
      },
    );

    it.each(REFUSED_ADDRESSES.filter(([a]) => !a.includes('%')))('refuses an IP-literal URL of %s (%s)', async (address) => {
      const host = address.includes(':') ? `[${address}]` : address;
      const outcome = await new WebhookSender({ timeoutMs: 2_000 }).send(attempt(`https://${host}/in`));
      expect(outcome).toMatchObject({ delivered: false, error: expect.stringContaining('public address') });
    });

    it('refuses a name with a private address among public ones, whichever comes first', async () => {
      const r = await receiver();
      for (const answer of [
        ['127.0.0.1', '10.0.0.1'],
        ['10.0.0.1', '127.0.0.1'],
        ['8.8.8.8', '169.254.169.254'],
        ['2606:4700:4700::1111', 'fd00::1'],
      ]) {
        const resolver = resolverOf({ 'mixed.partner.example': answer });
        const outcomeHttps = await new WebhookSender({ ...local, resolver }).send(attempt(`https://mixed.partner.example:${r.port}/`));
        expect(outcomeHttps).toMatchObject({ delivered: false, error: expect.stringMatching(/resolves to (10\.0\.0\.1|169\.254|fd00)/) });
      }
      expect(r.connections).toBe(0);
    });

    it.each([301, 302, 303, 307, 308])('does not follow a %i redirect to an internal address', async (status) => {
      const internal = await receiver();
      const r = await receiver({
        handler: (_req, res) => res.writeHead(status, { location: `${internal.url}/latest/meta-data/` }).end('moved'),
      });
      const outcome = await new WebhookSender(local).send(attempt(r.url));
      expect(outcome).toMatchObject({ delivered: false, statusCode: status, error: `redirect (${status}) not followed` });
      expect(internal.connections).toBe(0);
    });

    it('ignores proxy settings in the environment', async () => {
      const proxy = await receiver();
      const r = await receiver();
      const names = ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy', 'ALL_PROXY', 'NODE_USE_ENV_PROXY'];
      const saved = names.map((n) => [n, process.env[n]] as const);
      try {
        for (const n of names) process.env[n] = n === 'NODE_USE_ENV_PROXY' ? '1' : proxy.url;
        const outcome = await new WebhookSender(local).send(attempt(`${r.url}/direct`));
        expect(outcome).toMatchObject({ delivered: true });
      } finally {
        for (const [n, v] of saved) {
          if (v === undefined) delete process.env[n];
          else process.env[n] = v;
        }
      }
      expect(r.received.map((x) => x.path)).toEqual(['/direct']);
      expect(proxy.connections).toBe(0);
    });
  });

  describe('resolving on its own clock (c-ares, never a thread of libuv’s pool)', () => {
    // Names the test's DNS server answers with loopback, and names it never answers.
    let dns: DnsServer;
    beforeAll(async () => {
      dns = await startDnsServer({
        answers: { 'hooks.partner.test': ['127.0.0.1'] },
        blackHoles: ['hole-1.partner.test', 'hole-2.partner.test'],
      });
    });
    afterAll(() => dns.close());

    /**
     * The sender as deployed, pointed at the test's DNS server; loopback receivers allowed. A
     * resolution timeout long enough that a black-hole name is still unresolved when a healthy
     * attempt beside it ends, however loaded the machine.
     */
    const named = (options: WebhookSenderOptions = {}) =>
      new WebhookSender({ ...local, dns: { servers: [dns.address], timeoutMs: 4_000 }, ...options });

    /**
     * Holds every thread of libuv's pool (UV_THREADPOOL_SIZE, 4 by default) in a blocking open of a
     * FIFO, as getaddrinfo calls for names that never answer hold them under dns.lookup; `release`
     * opens the FIFO's other end and lets them all go.
     */
    async function holdThreadPool(): Promise<{ release(): Promise<void> }> {
      const dir = mkdtempSync(join(tmpdir(), 'webhook-pool-'));
      const fifo = join(dir, 'hold');
      execFileSync('mkfifo', [fifo]);
      const threads = Number(process.env.UV_THREADPOOL_SIZE ?? 4);
      const held = Array.from({ length: threads }, () => open(fifo, 'r'));
      // Every blocked open is in a thread once the FIFO has as many readers waiting (no portable count: a short settle).
      await new Promise((resolve) => setTimeout(resolve, 50));
      return {
        release: async () => {
          const writer = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
          for (const handle of await Promise.all(held)) await handle.close();
          closeSync(writer);
          rmSync(dir, { recursive: true, force: true });
        },
      };
    }

    it('two endpoints whose names never resolve do not delay a healthy endpoint’s delivery', async () => {
      const tls = selfSigned('hooks.partner.test');
      const r = await receiver({ tls });
      const sender = named({ ca: tls.cert });
      const pending = new Set<string>(['hole-1', 'hole-2']);
      const holes = [...pending].map((name) =>
        sender.send(attempt(`https://${name}.partner.test/in`)).then((outcome) => (pending.delete(name), outcome)),
      );
      const healthy = await sender.send(attempt(`https://hooks.partner.test:${r.port}/in`));
      expect(healthy).toMatchObject({ delivered: true, statusCode: 200, address: '127.0.0.1' });
      // Delivered while both names were still unresolved: their questions asked and never answered.
      expect([...pending].sort()).toEqual(['hole-1', 'hole-2']);
      expect(dns.queries.get('hole-1.partner.test')).toBeGreaterThan(0);
      expect(dns.queries.get('hole-2.partner.test')).toBeGreaterThan(0);
      for (const outcome of await Promise.all(holes)) {
        expect(outcome).toMatchObject({ delivered: false, error: expect.stringContaining('no DNS answer within 4000 ms') });
      }
    }, 15_000);

    it('resolves and delivers while every thread of libuv’s pool is held (as hanging dns.lookup calls hold them)', async () => {
      const tls = selfSigned('hooks.partner.test');
      const r = await receiver({ tls });
      const pool = await holdThreadPool();
      let outcome;
      try {
        outcome = await named({ ca: tls.cert, timeoutMs: 3_000 }).send(attempt(`https://hooks.partner.test:${r.port}/in`));
      } finally {
        await pool.release();
      }
      expect(outcome).toMatchObject({ delivered: true, statusCode: 200 });
    });

    it('a name that never answers fails the attempt with a resolution timeout error within the attempt', async () => {
      const r = await receiver();
      const outcome = await new WebhookSender({ ...local, timeoutMs: 5_000, dns: { servers: [dns.address], timeoutMs: 300 } }).send(
        attempt(`https://hole-1.partner.test:${r.port}/in`),
      );
      // The resolution's own error, not the attempt's "no answer within 5000 ms".
      expect(outcome).toMatchObject({
        delivered: false,
        error: 'could not resolve hole-1.partner.test: ETIMEOUT: no DNS answer within 300 ms',
      });
      expect(outcome.statusCode).toBeUndefined();
      expect(r.connections).toBe(0);
    });

    it('connects to the address DNS answered when checked, though DNS answers another the moment after (rebinding)', async () => {
      const tls = selfSigned('rebind.partner.test');
      const checked = await receiver({ tls, host: '127.0.0.1' });
      const rebound = await receiver({ tls, host: '127.0.0.2', port: checked.port });
      dns.answers.set('rebind.partner.test', ['127.0.0.1']);
      const outcome = await named({ ca: tls.cert }).send({
        ...attempt(`https://rebind.partner.test:${checked.port}/`),
        // The attacker's name server switches to an address it wants reached as soon as the check is done.
        onResolved: () => dns.answers.set('rebind.partner.test', ['127.0.0.2']),
      });
      expect(outcome).toMatchObject({ delivered: true, address: '127.0.0.1' });
      expect(checked.received).toHaveLength(1);
      expect(rebound.connections).toBe(0);
      // One question per family, once: nothing resolved the name again to connect.
      expect(dns.queries.get('rebind.partner.test')).toBe(2);
    });

    it('says when the name is resolved and checked, before connecting, and never for a name refused', async () => {
      const r = await receiver({ handler: (_req, res) => res.writeHead(204).end() });
      const seen: string[] = [];
      const resolver = resolverOf({ 'hooks.partner.example': ['127.0.0.1'], 'inside.partner.example': ['10.0.0.1'] });
      const sender = new WebhookSender({ ...local, resolver });
      // (TLS to a plain receiver fails the attempt; what counts is that the call came before any connection.)
      await sender.send({
        ...attempt(`https://hooks.partner.example:${r.port}/`),
        onResolved: () => seen.push(`resolved, ${r.connections} connections`),
      });
      expect(seen).toEqual(['resolved, 0 connections']);
      expect(r.connections).toBe(1);
      const refused = await sender.send({ ...attempt('https://inside.partner.example/'), onResolved: () => seen.push('refused') });
      expect(refused).toMatchObject({ delivered: false, error: expect.stringContaining('10.0.0.1 is a private address') });
      expect(seen).toEqual(['resolved, 0 connections']);
    });
  });

  describe('over TLS', () => {
    let dir: string;
    let tls: { key: string; cert: string };
    beforeAll(() => {
      // A self-signed certificate for one name, made for this run (openssl, as on the CI machine).
      dir = mkdtempSync(join(tmpdir(), 'webhook-tls-'));
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:prime256v1',
          '-nodes',
          '-days',
          '1',
          '-subj',
          '/CN=hooks.partner.test',
          '-addext',
          'subjectAltName=DNS:hooks.partner.test',
          '-keyout',
          join(dir, 'key.pem'),
          '-out',
          join(dir, 'cert.pem'),
        ],
        { stdio: 'ignore' },
      );
      tls = { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    const resolver = () => resolverOf({ 'hooks.partner.test': ['127.0.0.1'], 'other.partner.test': ['127.0.0.1'] });

    it('connects to the checked address with the host name as SNI, Host and certificate name', async () => {
      const r = await receiver({ tls });
      const outcome = await new WebhookSender({ ...local, resolver: resolver(), ca: tls.cert }).send(
        attempt(`https://hooks.partner.test:${r.port}/in`),
      );
      expect(outcome).toMatchObject({ delivered: true, statusCode: 200, address: '127.0.0.1' });
      expect(r.received[0]).toMatchObject({ servername: 'hooks.partner.test', headers: { host: `hooks.partner.test:${r.port}` } });
    });

    it('connects to the address it checked, not to what the name resolves to a moment later (DNS rebinding)', async () => {
      const checked = await receiver({ tls, host: '127.0.0.1' });
      // The same certificate on another loopback address and the same port: a second resolution would succeed there.
      const rebound = await receiver({ tls, host: '127.0.0.2', port: checked.port });
      let answers = 0;
      const rebinding = resolverOf({ 'hooks.partner.test': () => (++answers === 1 ? ['127.0.0.1'] : ['127.0.0.2']) });
      const sender = new WebhookSender({ ...local, resolver: rebinding, ca: tls.cert });
      const outcome = await sender.send(attempt(`https://hooks.partner.test:${checked.port}/`));
      expect(outcome).toMatchObject({ delivered: true, statusCode: 200, address: '127.0.0.1' });
      expect(rebinding.calls).toEqual(['hooks.partner.test']);
      expect(checked.received).toHaveLength(1);
      expect(rebound.connections).toBe(0);
    });

    it('refuses a certificate that does not name the host, though the address is the same', async () => {
      const r = await receiver({ tls });
      const outcome = await new WebhookSender({ ...local, resolver: resolver(), ca: tls.cert }).send(
        attempt(`https://other.partner.test:${r.port}/in`),
      );
      expect(outcome).toMatchObject({ delivered: false, error: expect.stringContaining('ERR_TLS_CERT_ALTNAME_INVALID') });
      expect(r.received).toHaveLength(0);
    });

    it('refuses a certificate nothing trusted signed', async () => {
      const r = await receiver({ tls });
      const outcome = await new WebhookSender({ ...local, resolver: resolver() }).send(attempt(`https://hooks.partner.test:${r.port}/in`));
      expect(outcome).toMatchObject({ delivered: false, error: expect.stringContaining('self-signed') });
      expect(r.received).toHaveLength(0);
    });
  });
});
