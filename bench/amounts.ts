/**
 * Bench section: computing a case's `amounts` (issue 33; lib/cases/compute-amounts.ts), pure CPU.
 *
 *   a. `amounts` of a 10,000.00 case due three years before asOf with 100 payments, reported out
 *      of order (the computation sorts them), median and p99 of single calls (target: well under a
 *      millisecond; the row asks ≤ 100 µs at the median)
 *
 * Run alone: `npx tsx bench/amounts.ts`. In `npm run bench`, a section that awaits
 * `amountsBench()` and tables its rows like the others. It writes no results itself: the caller records the rows.
 */
import { computeAmounts, type AmountFacts } from '../lib/cases/compute-amounts.js';
import { median, quantile, round } from './lib/stats.js';
import { printBenchRows, type BenchRow } from './lib/bench-row.js';

export type AmountsRow = BenchRow;

const PAYMENTS = 100;
const WARM_UP = 2_000;
const SAMPLES = 20_000;
const TARGET_MICROSECONDS = 100;

function caseWithPayments(count: number): AmountFacts {
  const due = Date.UTC(2023, 2, 31);
  const day = 86_400_000;
  // Paid in 100 instalments of 95.00 every 10 days, listed newest first: 9,500.00 of 10,000.00.
  const payments = Array.from({ length: count }, (_, i) => ({
    amountPence: 9_500,
    paidAt: new Date(due + (count - i) * 10 * day).toISOString().slice(0, 10),
  }));
  return { principalPence: 1_000_000, dueDate: '2023-03-31', claimStatutoryInterest: true, payments, asOf: '2026-03-31' };
}

export function amountsBench(): AmountsRow[] {
  const facts = caseWithPayments(PAYMENTS);
  let sink = '';
  for (let i = 0; i < WARM_UP; i++) sink = computeAmounts(facts).outstanding;
  const micros: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const start = process.hrtime.bigint();
    sink = computeAmounts(facts).outstanding;
    micros.push(Number(process.hrtime.bigint() - start) / 1_000);
  }
  const p50 = round(median(micros), 2);
  return [
    {
      figure: `amounts of a case with ${PAYMENTS} payments, p50 (µs)`,
      value: p50,
      target: `≤ ${TARGET_MICROSECONDS}`,
      pass: p50 <= TARGET_MICROSECONDS,
      note: `p99 ${round(quantile(micros, 0.99), 2)} µs over ${SAMPLES} calls after ${WARM_UP} warm-up calls; outstanding ${sink}`,
    },
  ];
}

// Run alone: the rows printed.
if (import.meta.url === `file://${process.argv[1]}`) {
  printBenchRows(amountsBench());
}
