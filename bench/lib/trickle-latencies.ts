import type { SignedWebhookReceiver } from '../../infra/local/signed-webhook-receiver.js';
import type { DynamoCaseWriter } from '../../lib/adapters/dynamodb/case-writer.js';
import { benchCase } from './bench-case.js';
import { firstAttempts } from './first-attempts.js';
import { percentile } from './stats.js';
import { trickleSchedule } from './trickle-schedule.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A trickle of `events` live events to one company, `meanSpacingMs` apart on average (at the
 * seeded gaps of trickleSchedule), each written as the create path writes it; then each event's
 * written → first attempt latency at `receiver` (its clock when the body arrived minus the event's
 * createdAt), waiting up to 30 s for all of them.
 */
export async function trickleLatencies(
  writer: DynamoCaseWriter,
  companyId: string,
  receiver: SignedWebhookReceiver,
  { events, meanSpacingMs }: { events: number; meanSpacingMs: number },
) {
  const eventIds = new Set<string>();
  const started = Date.now();
  for (const offset of trickleSchedule(events, meanSpacingMs)) {
    // On a schedule from the start (not a sleep after each write), so a slow write does not slow the trickle.
    await sleep(Math.max(0, started + offset - Date.now()));
    const one = benchCase(companyId, { invoicePrefix: 'WHB' });
    eventIds.add(one.event.id);
    const outcomes = await writer.writeAll([one]);
    if (outcomes.some((o) => o.kind !== 'created')) throw new Error(`bench case not created: ${JSON.stringify(outcomes)}`);
  }
  const got = await firstAttempts(receiver, eventIds, 30_000);
  const latencies = got.map((d) => d.receivedAt - Date.parse(d.eventCreatedAt!)).sort((a, b) => a - b);
  return {
    latencies,
    missing: eventIds.size - got.length,
    unverified: got.filter((d) => !d.verified).length,
    p50: latencies.length ? percentile(latencies, 0.5) : NaN,
    p95: latencies.length ? percentile(latencies, 0.95) : NaN,
  };
}
