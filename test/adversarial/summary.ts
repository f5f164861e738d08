import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Counts from the adversarial suite (fuzz runs, faults injected, invariants checked, tenancy
 * cells, auth cases, ...). Jest runs the test files in parallel workers, so each file writes its
 * own small JSON file, named after its worker and the moment, into a directory the global setup
 * creates for this run. The reporter (summary-reporter.mjs) adds them up after the run and prints
 * each count next to whether every file that contributed to it passed; the global teardown then
 * removes the directory.
 */
export type Counts = Partial<
  Record<'fuzzRuns' | 'faultsInjected' | 'invariantsChecked' | 'tenancyCells' | 'authCases' | 'leakChecks' | 'limitChecks', number>
>;

export function recordCounts(name: string, counts: Counts): void {
  const dir = process.env.ADVERSARIAL_SUMMARY_DIR;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  const testPath = expect.getState().testPath ?? name;
  writeFileSync(join(dir, `${name}-${process.pid}-${Date.now()}.json`), JSON.stringify({ testPath, counts }));
}
