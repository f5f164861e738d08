import {
  webhookDeliveryAdapters,
  webhookEndpointAdapters,
  webhookPingAdapters,
  webhookResolver,
} from '../../../lib/adapters/production-webhook-adapters.js';
import { dnsResolver, RESOLUTION_TIMEOUT_MS } from '../../../lib/adapters/webhooks/dns-resolver.js';
import { DELIVERY_TIMEOUT_MS } from '../../../lib/adapters/webhooks/webhook-sender.js';
import { InvalidRequestError } from '../../../lib/errors.js';
import { loadConfig } from '../../../lib/runtime/config.js';
import { acceptableEndpointUrl } from '../../../lib/webhooks/manage-endpoints.js';
import { startDnsServer, type DnsServer } from '../../support/dns-server.js';

/**
 * The webhook resolver (c-ares, its own timeout) against a DNS server of the test's own on a
 * loopback port: names it answers, names it never answers (a black hole), names it does not know.
 */
let dns: DnsServer;
beforeAll(async () => {
  dns = await startDnsServer({
    answers: {
      'both.partner.test': ['2606:4700:4700::1111', '93.184.215.14'],
      'v4.partner.test': ['93.184.215.14'],
      'v6.partner.test': ['2606:4700:4700::1111'],
      'mixed.partner.test': ['93.184.215.14', '10.0.0.1'],
    },
    blackHoles: ['hole.partner.test'],
  });
});
afterAll(() => dns.close());

const resolver = (timeoutMs?: number) => dnsResolver({ servers: [dns.address], ...(timeoutMs !== undefined ? { timeoutMs } : {}) });

describe('the webhook resolver', () => {
  it('answers every address of both families, IPv4 first', async () => {
    expect(await resolver()('both.partner.test')).toEqual(['93.184.215.14', '2606:4700:4700::1111']);
    expect(await resolver()('v4.partner.test')).toEqual(['93.184.215.14']);
    expect(await resolver()('v6.partner.test')).toEqual(['2606:4700:4700::1111']);
    // Every address, private ones too: judging them is the caller's (refusedResolution).
    expect(await resolver()('mixed.partner.test')).toEqual(['93.184.215.14', '10.0.0.1']);
  });

  it('answers a name the server does not know with ENOTFOUND', async () => {
    await expect(resolver()('nowhere.partner.test')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });

  it('fails a name that never answers with a resolution timeout of its own', async () => {
    const before = dns.queries.get('hole.partner.test') ?? 0;
    await expect(resolver(200)('hole.partner.test')).rejects.toMatchObject({ code: 'ETIMEOUT', message: 'no DNS answer within 200 ms' });
    // It did ask: the server read the questions and kept silent.
    expect(dns.queries.get('hole.partner.test')).toBeGreaterThan(before);
  });

  it('resolves within the attempt: its whole timeout leaves most of the 10 s to the receiver', () => {
    expect(RESOLUTION_TIMEOUT_MS).toBeLessThanOrEqual(DELIVERY_TIMEOUT_MS / 3);
  });

  it('answers localhost with loopback without asking DNS (c-ares reads no hosts file)', async () => {
    const before = new Map(dns.queries);
    expect(await resolver()('localhost')).toEqual(['127.0.0.1', '::1']);
    expect(await resolver()('api.localhost')).toEqual(['127.0.0.1', '::1']);
    expect(dns.queries).toEqual(before);
  });
});

describe('the wiring: one resolver for creation, ping and delivery', () => {
  const local = (extra: Record<string, string> = {}) =>
    loadConfig({ TABLE_NAME: 't', BUCKET_NAME: 'b', DYNAMODB_ENDPOINT: 'http://127.0.0.1:1', WEBHOOK_DNS_SERVERS: dns.address, ...extra });

  it('gives endpoint creation the resolver of WEBHOOK_DNS_SERVERS, once per process', () => {
    const cfg = local();
    expect(webhookEndpointAdapters(cfg).resolver).toBe(webhookResolver(cfg));
    expect(webhookResolver(local())).toBe(webhookResolver(cfg));
    // Built without error beside it: the ping's and the delivery's senders take the same one.
    expect(webhookPingAdapters(cfg).sender).toBeDefined();
    expect(
      webhookDeliveryAdapters(
        local({
          WEBHOOK_DELIVERY_QUEUE_URL: 'http://q/1',
          WEBHOOK_SLOW_QUEUE_URL: 'http://q/2',
          WEBHOOK_TEST_DELIVERY_QUEUE_URL: 'http://q/3',
          WEBHOOK_TEST_SLOW_QUEUE_URL: 'http://q/4',
        }),
      ).delivery.sender,
    ).toBeDefined();
  });

  it('accepts at creation a name only that server knows, and refuses one it never answers, naming it', async () => {
    const { resolver: wired, urlOptions } = webhookEndpointAdapters(local());
    await expect(acceptableEndpointUrl('https://v4.partner.test/in', { resolver: wired, urlOptions })).resolves.toBe(
      'https://v4.partner.test/in',
    );
    // The black hole takes the whole resolution timeout (3 s), then is refused like a name that does not exist.
    const refused = await acceptableEndpointUrl('https://hole.partner.test/in', { resolver: wired, urlOptions }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(InvalidRequestError);
    expect((refused as InvalidRequestError).extensions.errors).toEqual([
      { field: 'url', message: 'url: hole.partner.test does not resolve' },
    ]);
  }, 15_000);
});
