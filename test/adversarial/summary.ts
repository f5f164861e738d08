import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Counts from the adversarial suite (fuzz runs, faults injected, invariants checked, tenancy
 * cells, auth cases). Each test file records its counts in a directory created by the global
 * setup; the global teardown adds them up and prints one summary after the run.
 */
export type Counts = Partial<Record<'fuzzRuns' | 'faultsInjected' | 'invariantsChecked' | 'tenancyCells' | 'authCases' | 'leakChecks' | 'limitChecks', number>>;

export function recordCounts(name: string, counts: Counts): void {
  const dir = process.env.ADVERSARIAL_SUMMARY_DIR;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name}-${process.pid}-${Date.now()}.json`), JSON.stringify(counts));
}

export function printSummary(dir: string): void {
  const totals: Record<string, number> = {};
  let files = 0;
  for (const file of readdirSync(dir)) {
    const counts = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Record<string, number>;
    files++;
    for (const [k, v] of Object.entries(counts)) totals[k] = (totals[k] ?? 0) + v;
  }
  rmSync(dir, { recursive: true, force: true });
  if (files === 0) return;
  const labels: [string, string][] = [
    ['fuzzRuns', 'fuzz runs'],
    ['faultsInjected', 'faults injected'],
    ['invariantsChecked', 'invariants checked'],
    ['tenancyCells', 'tenancy cells'],
    ['authCases', 'auth cases'],
    ['leakChecks', 'leak checks'],
    ['limitChecks', 'limit checks'],
  ];
  const lines = labels.filter(([k]) => totals[k] !== undefined).map(([k, label]) => `  ${label.padEnd(20)} ${totals[k]}`);
  console.log(`\nAdversarial suite summary (${process.env.DEEP ? 'deep' : 'default'} run)\n${lines.join('\n')}\n`);
}
