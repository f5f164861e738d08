/**
 * Bench section 7b: webhook delivery beside endpoints whose host names never resolve (issue 31,
 * "DNS on its own clock"). The local engines (infra/local/webhook-engines.ts) resolve endpoint
 * host names at the bench's loopback DNS server (test/support/dns-server.ts, given to the engines
 * as WEBHOOK_DNS_SERVERS by bench/lib/local-stack.ts). Two endpoints of one company are created on
 * names that server answers (a public address, as their partner's host once had), then the names
 * become black holes: every query is read and never answered, as a name server that is down. Every
 * attempt to them waits out the resolution's own timeout (3 s) and fails.
 *
 * The healthy endpoint, of the same company, is `http://localhost:<port>` (a name, not an address:
 * under dns.lookup it went through libuv's pool like every other name; now localhost is answered
 * without DNS). Its event → first attempt latency is measured alone, then with the two black-hole
 * endpoints beside it, with the same trickle as section 7 (40 events, 125 ms apart on average): the p95
 * beside them must stay ≤ 1.2 × the p95 alone.
 *
 * Run alone: `npx tsx bench/webhook-dns.ts` (its own local stores, engines and DNS server);
 * `npm run bench` runs it after section 7.
 */
// First: it sets the local process's environment before the imports below load the adapters.
import { runAloneOnLocalStack } from './lib/run-alone-on-local-stack.js';
import { createDocumentClient } from '../lib/adapters/dynamodb/dynamo-client.js';
import { DynamoCaseWriter } from '../lib/adapters/dynamodb/case-writer.js';
import { DynamoWebhookEndpointStore } from '../lib/adapters/dynamodb/webhook-endpoint-store.js';
import { secretBoxOnce } from '../lib/adapters/secrets/webhook-secret-key.js';
import { dnsResolver, RESOLUTION_TIMEOUT_MS } from '../lib/adapters/webhooks/dns-resolver.js';
import { randomBase62 } from '../lib/random-id.js';
import type { AppConfig } from '../lib/runtime/config.js';
import { createEndpoint } from '../lib/webhooks/manage-endpoints.js';
import { startSignedWebhookReceiver, type SignedWebhookReceiver } from '../infra/local/signed-webhook-receiver.js';
import type { DnsServer } from '../test/support/dns-server.js';
import { plainCase, TRICKLE_EVENTS, TRICKLE_MEAN_SPACING_MS, type WebhookRow } from './webhooks.js';
import { firstAttempts } from './lib/first-attempts.js';
import { trickleLatencies } from './lib/trickle-latencies.js';

/** The names that answer at creation and never again. */
const BLACK_HOLE_NAMES = ['hooks-1.unresolvable.bench.test', 'hooks-2.unresolvable.bench.test'];
/** What they answered at creation: a public address (creation refuses any other), never connected to. */
const ONCE_ANSWERED = '93.184.215.14';

export async function webhookDnsBench(cfg: AppConfig, dns: DnsServer, log: (line: string) => void = console.log): Promise<WebhookRow[]> {
  const client = createDocumentClient(cfg);
  const writer = new DynamoCaseWriter(client, cfg.tableName);
  const endpoints = new DynamoWebhookEndpointStore(client, cfg.tableName, secretBoxOnce(cfg));
  const receivers: SignedWebhookReceiver[] = [];
  // Creation resolves at the same DNS server the engines ask.
  const deps = {
    store: endpoints,
    resolver: dnsResolver({ servers: [dns.address] }),
    now: () => new Date(),
    urlOptions: { allowLocalDevelopment: true },
  };

  /** A company of its own with one healthy endpoint on localhost, and `blackHoles` endpoints on names that stop answering. */
  async function world(blackHoles: number) {
    const companyId = `cmp_${randomBase62(16)}`;
    const caller = { companyId, keyId: 'KeyBenchBenchBen', scopes: ['webhooks:manage' as const], mode: 'live' as const };
    const secrets: string[] = [];
    const receiver = await startSignedWebhookReceiver({ secrets });
    receivers.push(receiver);
    const created = await createEndpoint(deps, caller, { url: `http://localhost:${receiver.port}/hooks`, events: ['case.created'] });
    secrets.push(created.secret);
    for (const name of BLACK_HOLE_NAMES.slice(0, blackHoles)) {
      dns.blackHoles.delete(name);
      dns.answers.set(name, [ONCE_ANSWERED]);
      await createEndpoint(deps, caller, { url: `https://${name}/hooks`, events: ['case.created'] });
      dns.answers.delete(name);
      dns.blackHoles.add(name);
    }
    return { companyId, receiver };
  }

  /** Section 7's trickle: TRICKLE_EVENTS events TRICKLE_MEAN_SPACING_MS apart on average, latencies at the healthy receiver. */
  const trickle = (companyId: string, receiver: SignedWebhookReceiver) =>
    trickleLatencies(writer, companyId, receiver, { events: TRICKLE_EVENTS, meanSpacingMs: TRICKLE_MEAN_SPACING_MS });

  const rows: WebhookRow[] = [];
  try {
    // A warm-up event, as section 7 does.
    {
      const w = await world(0);
      const warm = plainCase(w.companyId);
      await writer.writeAll([warm]);
      await firstAttempts(w.receiver, new Set([warm.event.id]), 15_000);
    }
    const quiet = await world(0);
    const alone = await trickle(quiet.companyId, quiet.receiver);
    log(
      `7b. healthy endpoint alone: p50 ${alone.p50} ms, p95 ${alone.p95} ms over ${alone.latencies.length} events (${alone.missing} missing)`,
    );
    const queriesBefore = BLACK_HOLE_NAMES.reduce((n, name) => n + (dns.queries.get(name) ?? 0), 0);
    const crowded = await world(BLACK_HOLE_NAMES.length);
    const beside = await trickle(crowded.companyId, crowded.receiver);
    const unanswered = BLACK_HOLE_NAMES.reduce((n, name) => n + (dns.queries.get(name) ?? 0), 0) - queriesBefore;
    const bound = Math.round(1.2 * alone.p95);
    log(
      `7b. beside two endpoints whose names never resolve: p50 ${beside.p50} ms, p95 ${beside.p95} ms over ${beside.latencies.length} events (bound 1.2 × ${alone.p95} = ${bound} ms; ${beside.missing} missing; ${unanswered} DNS queries left unanswered)`,
    );
    rows.push({
      figure: "DNS isolation: healthy endpoint's p95 event → delivery beside two whose names never resolve (ms)",
      value: beside.p95,
      target: `≤ 1.2 × ${alone.p95} = ${bound}`,
      pass: beside.p95 <= bound && beside.missing === 0 && beside.unverified === 0 && alone.missing === 0 && unanswered > 0,
      note: `alone p50 ${alone.p50} / p95 ${alone.p95} ms, beside p50 ${beside.p50} ms; ${TRICKLE_EVENTS} events ${TRICKLE_MEAN_SPACING_MS} ms apart on average to three endpoints of one company, two on names the bench's DNS server never answers (${unanswered} queries unanswered, each attempt failing after ${RESOLUTION_TIMEOUT_MS} ms); ${beside.missing} missing`,
    });
  } finally {
    await Promise.all(receivers.map((r) => r.close()));
    client.destroy();
  }
  return rows;
}

// Run alone: its own local stores, engines and DNS server; the rows printed.
if (import.meta.url === `file://${process.argv[1]}`) await runAloneOnLocalStack((cfg, stack) => webhookDnsBench(cfg, stack.dns));
