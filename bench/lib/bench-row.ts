/** One figure a bench section measures, against its target (`npm run bench` tables them; bench/lib/report.ts). */
export interface BenchRow {
  figure: string;
  value: number;
  target: string;
  pass: boolean;
  note: string;
}

/** The rows as a section run alone prints them, one a line. */
export function printBenchRows(rows: readonly BenchRow[]): void {
  for (const r of rows) console.log(`${r.pass ? 'PASS' : 'FAIL'}  ${r.figure}: ${r.value} (target ${r.target}; ${r.note})`);
}
