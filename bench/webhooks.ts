/**
 * Bench section 7: webhook delivery on the local engines (issue 24), the same ones `npm start` and
 * the tests run (infra/local/webhook-engines.ts, started by startLocalStores): events written as the
 * create path writes them (case + `case.created` event in one transaction), read from DynamoDB
 * Local's stream by the fan-out, delivered from the local SQS by the delivery function to receivers
 * on loopback that verify every signature with standardwebhooks (infra/local/signed-webhook-receiver.ts).
 * Every time is measured at the receiver: its clock when the request's body arrived, minus the
 * event's createdAt (set before the write, so the write is counted too). One process, one clock.
 *
 *   a. event written → first delivery attempt received, p50 (target ≤ 1 s) and p95 (≤ 3 s): 40
 *      events, 125 ms apart on average (8 a second for 5 s, at seeded random gaps of 66–191 ms:
 *      bench/lib/trickle-schedule.ts), to one endpoint
 *   b. isolation: the same with a second endpoint of the same company hanging past the sender's
 *      10 s timeout on every attempt → the healthy endpoint's p95 ≤ 1.2 × its p95 in (a)
 *   c. throughput: a burst of events to three endpoints → signed deliveries per second received,
 *      from the first write to the last delivery (target ≥ 100)
 *
 * Run alone: `npx tsx bench/webhooks.ts` (starts its own local stores); `npm run bench` runs it as
 * section 7. Neither writes results here: the caller records the rows.
 */
// First: it sets the local process's environment before the imports below load the adapters.
import { runAloneOnLocalStack } from './lib/run-alone-on-local-stack.js';
import { createDocumentClient } from '../lib/adapters/dynamodb/dynamo-client.js';
import { DynamoCaseWriter } from '../lib/adapters/dynamodb/case-writer.js';
import { DynamoWebhookEndpointStore } from '../lib/adapters/dynamodb/webhook-endpoint-store.js';
import { secretBoxOnce } from '../lib/adapters/secrets/webhook-secret-key.js';
import { systemResolver } from '../lib/adapters/webhooks/webhook-sender.js';
import type { NewCase } from '../lib/cases/ports.js';
import type { Mode } from '../lib/mode.js';
import { randomBase62 } from '../lib/random-id.js';
import type { AppConfig } from '../lib/runtime/config.js';
import { createEndpoint } from '../lib/webhooks/manage-endpoints.js';
import { startSignedWebhookReceiver, type SignedWebhookReceiver } from '../infra/local/signed-webhook-receiver.js';
import { benchCase } from './lib/bench-case.js';
import { startHangingReceiver } from './lib/hanging-receiver.js';
import { firstAttempts } from './lib/first-attempts.js';
import { trickleLatencies } from './lib/trickle-latencies.js';
import type { BenchRow } from './lib/bench-row.js';

export type WebhookRow = BenchRow;

/**
 * The trickle of (a) and (b): events written one at a time, at spread gaps (trickleSchedule).
 * Written in clumps (8 in one transaction each second, as this bench did before) they reached the
 * stream, the queue and the receiver together, so the 40 latencies were 5 samples of 8 nearly equal
 * values, and "p95" was the slowest of 5 clumps: its spread from run to run was larger than the
 * isolation row's 20 %. Evenly spaced, they sampled a run of the stream poller's phases, not all.
 */
export const TRICKLE_EVENTS = 40;
export const TRICKLE_MEAN_SPACING_MS = 125;
const BURST_CASES = Math.max(100, Number(process.env.BENCH_WEBHOOK_BURST ?? 200));
const BURST_ENDPOINTS = 3;

/** A case without a debtor company number (no verification, so no case.updated), as the create path stores it. */
export function plainCase(companyId: string, mode: Mode = 'live'): NewCase {
  return benchCase(companyId, { invoicePrefix: 'WHB', mode });
}

export async function webhooksBench(cfg: AppConfig, log: (line: string) => void = console.log): Promise<WebhookRow[]> {
  const client = createDocumentClient(cfg);
  const writer = new DynamoCaseWriter(client, cfg.tableName);
  const endpoints = new DynamoWebhookEndpointStore(client, cfg.tableName, secretBoxOnce(cfg));
  const receivers: { close(): Promise<void> }[] = [];
  const rows: WebhookRow[] = [];

  /** A company of its own, with a receiver per endpoint; `hanging` endpoints get a receiver that never answers. */
  async function world(healthy: number, hanging = 0) {
    const companyId = `cmp_${randomBase62(16)}`;
    const caller = { companyId, keyId: 'KeyBenchBenchBen', scopes: ['webhooks:manage' as const], mode: 'live' as const };
    const deps = { store: endpoints, resolver: systemResolver, now: () => new Date(), urlOptions: { allowLocalDevelopment: true } };
    const healthyReceivers: SignedWebhookReceiver[] = [];
    for (let i = 0; i < healthy + hanging; i++) {
      // The secret is known only once the endpoint exists: the receiver starts first on a port of
      // its own, then learns the secret (verification happens after the body arrives).
      const secrets: string[] = [];
      const isHanging = i >= healthy;
      const receiver = isHanging ? await startHangingReceiver() : await startSignedWebhookReceiver({ secrets });
      const created = await createEndpoint(deps, caller, { url: `${receiver.url}/hooks`, events: ['case.created'] });
      secrets.push(created.secret);
      receivers.push(receiver);
      if ('received' in receiver) healthyReceivers.push(receiver);
    }
    return { companyId, healthyReceivers };
  }

  async function write(cases: NewCase[]): Promise<void> {
    const outcomes = await writer.writeAll(cases);
    if (outcomes.some((o) => o.kind !== 'created')) throw new Error(`bench cases not created: ${JSON.stringify(outcomes)}`);
  }

  /** The trickle of (a) and (b): TRICKLE_EVENTS events, TRICKLE_MEAN_SPACING_MS apart on average; latencies at the first healthy receiver. */
  const trickle = (companyId: string, receiver: SignedWebhookReceiver) =>
    trickleLatencies(writer, companyId, receiver, { events: TRICKLE_EVENTS, meanSpacingMs: TRICKLE_MEAN_SPACING_MS });

  try {
    // A warm-up event: the first delivery pays for the functions' first storage calls.
    {
      const w = await world(1);
      const warm = plainCase(w.companyId);
      await write([warm]);
      await firstAttempts(w.healthyReceivers[0]!, new Set([warm.event.id]), 15_000);
    }

    // a. Event written → first attempt received.
    const a = await (async () => {
      const w = await world(1);
      return trickle(w.companyId, w.healthyReceivers[0]!);
    })();
    log(
      `a. event → first attempt: p50 ${a.p50} ms, p95 ${a.p95} ms over ${a.latencies.length} events (${a.missing} missing, ${a.unverified} unverified)`,
    );
    const aNote = `${a.latencies.length} events, ${TRICKLE_MEAN_SPACING_MS} ms apart on average, one endpoint; at the receiver, its clock minus the event's createdAt; ${a.missing} missing, ${a.unverified} signatures unverified`;
    rows.push({
      figure: 'event written → first delivery attempt received, p50 (ms)',
      value: a.p50,
      target: '≤ 1000',
      pass: a.p50 <= 1000 && a.missing === 0 && a.unverified === 0,
      note: aNote,
    });
    rows.push({
      figure: 'event written → first delivery attempt received, p95 (ms)',
      value: a.p95,
      target: '≤ 3000',
      pass: a.p95 <= 3000 && a.missing === 0 && a.unverified === 0,
      note: aNote,
    });

    // b. The same beside an endpoint that hangs on every attempt.
    const b = await (async () => {
      const w = await world(1, 1);
      return trickle(w.companyId, w.healthyReceivers[0]!);
    })();
    const bound = Math.round(1.2 * a.p95);
    log(
      `b. beside a hanging endpoint: healthy p50 ${b.p50} ms, p95 ${b.p95} ms over ${b.latencies.length} events (bound 1.2 × ${a.p95} = ${bound} ms; ${b.missing} missing)`,
    );
    rows.push({
      figure: "isolation: healthy endpoint's p95 event → delivery beside one hanging on every attempt (ms)",
      value: b.p95,
      target: `≤ 1.2 × ${a.p95} = ${bound}`,
      pass: b.p95 <= bound && b.missing === 0 && b.unverified === 0,
      note: `p50 ${b.p50} ms; the same trickle as (a) to two endpoints of one company, the other never answering (10 s timeout, then retries delayed on the fast lane, on the slow lane only after sustained failure); ${b.missing} missing`,
    });

    // c. Throughput: a burst to three endpoints.
    {
      const w = await world(BURST_ENDPOINTS);
      const cases = Array.from({ length: BURST_CASES }, () => plainCase(w.companyId));
      const eventIds = new Set(cases.map((c) => c.event.id));
      const started = Date.now();
      // The create route writes at most 100 cases per request: the burst arrives as such requests, at once.
      await Promise.all(Array.from({ length: Math.ceil(cases.length / 100) }, (_, i) => write(cases.slice(i * 100, i * 100 + 100))));
      const got = await Promise.all(w.healthyReceivers.map((r) => firstAttempts(r, eventIds, 60_000)));
      const all = got.flat();
      const last = Math.max(...all.map((d) => d.receivedAt));
      const seconds = (last - started) / 1000;
      const expected = BURST_CASES * BURST_ENDPOINTS;
      const verified = all.filter((d) => d.verified).length;
      const perSecond = Math.round(verified / seconds);
      log(
        `c. burst: ${verified} signed deliveries verified of ${expected} in ${seconds.toFixed(2)} s from the first write to the last delivery: ${perSecond}/s`,
      );
      rows.push({
        figure: 'throughput: signed deliveries received per second',
        value: perSecond,
        target: '≥ 100',
        pass: perSecond >= 100 && verified === expected,
        note: `${BURST_CASES} events × ${BURST_ENDPOINTS} endpoints = ${expected} deliveries, ${verified} verified by the receiver, ${seconds.toFixed(2)} s from the first write to the last delivery`,
      });
    }
  } finally {
    await Promise.all(receivers.map((r) => r.close()));
    client.destroy();
  }
  return rows;
}

// Run alone: its own local stores and engines, the rows printed.
if (import.meta.url === `file://${process.argv[1]}`) await runAloneOnLocalStack((cfg) => webhooksBench(cfg));
