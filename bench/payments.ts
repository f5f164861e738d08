/**
 * Bench section: the payments rows of sections 1 and 2 (issue 33), run alone. `npm run bench` measures
 * the same scenarios among all the others (they are rows of SCENARIOS, test/support/storage-rig/scenarios.ts);
 * this runs only them, for a quick look on a shared machine:
 *
 *   - depth, median over the runs on DynamoDB Local + s3rver: "POST payment" ≤ 2, "POST payment +
 *     Idempotency-Key" ≤ 3 (2 after the key), "GET case with amounts" (a case holding 100 payments) 1;
 *   - latency against the floor, BENCH_DELAY_MS (10) per storage call on the store stand-in on its own
 *     thread: p50 / (depth target × delay) ≤ 1.5, as every latency row of section 2.
 *
 * Run alone: `npx tsx bench/payments.ts` (knobs BENCH_RUNS, BENCH_DELAY_MS as for `npm run bench`).
 */
import type { BenchRow } from './lib/bench-row.js';
import { runAloneOnLocalStack } from './lib/run-alone-on-local-stack.js';
import { median } from './lib/stats.js';

const RUNS = Math.max(10, Number(process.env.BENCH_RUNS ?? 30));
const DELAY_MS = Number(process.env.BENCH_DELAY_MS ?? 10);
const IDS = ['payment', 'payment-key', 'get-100-payments'] as const;

await runAloneOnLocalStack(async (cfg) => {
  const { closeRig, makeRig, measure, SCENARIOS } = await import('../test/support/storage-rig/scenarios.js');
  const { RemoteBackend } = await import('./lib/remote-backend.js');
  const scenarios = SCENARIOS.filter((s) => (IDS as readonly string[]).includes(s.id));
  const rows: BenchRow[] = [];

  const local = await makeRig('payments-local', cfg);
  try {
    for (const s of scenarios) await measure(local, s);
    for (const s of scenarios) {
      const depths: number[] = [];
      for (let r = 0; r < RUNS; r++) depths.push((await measure(local, s)).depth);
      const depth = median(depths);
      rows.push({
        figure: `${s.label}: depth`,
        value: depth,
        target: `≤ ${s.depthTarget}`,
        pass: depth <= s.depthTarget,
        note: `median of ${RUNS} on DynamoDB Local, max ${Math.max(...depths)}`,
      });
    }
  } finally {
    closeRig(local);
  }

  const backend = new RemoteBackend();
  const standIn = await makeRig('payments-standin', cfg, backend);
  try {
    for (let i = 0; i < 5; i++) for (const s of scenarios) await measure(standIn, s, { delayMs: DELAY_MS });
    for (const s of scenarios) {
      const times: number[] = [];
      for (let r = 0; r < RUNS; r++) times.push((await measure(standIn, s, { delayMs: DELAY_MS })).ms);
      const floor = s.depthTarget * DELAY_MS;
      const ratio = Math.round((median(times) / floor) * 100) / 100;
      rows.push({
        figure: `${s.label}: p50 / floor`,
        value: ratio,
        target: '≤ 1.5',
        pass: ratio <= 1.5,
        note: `p50 ${median(times).toFixed(1)} ms, floor ${s.depthTarget}×${DELAY_MS} = ${floor} ms, store stand-in on its own thread, ${RUNS} runs`,
      });
    }
  } finally {
    closeRig(standIn);
    await backend.close();
  }
  return rows;
});
