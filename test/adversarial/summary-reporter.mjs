import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Prints the adversarial suite's summary after a jest run: the counts each test file recorded
 * (test/adversarial/summary.ts), added up, each with ✓ when every file that contributed to it
 * passed and ✗ otherwise. Silent when the adversarial project did not run.
 */
const LABELS = [
  ['fuzzRuns', 'fuzz runs'],
  ['faultsInjected', 'faults injected'],
  ['invariantsChecked', 'invariants checked'],
  ['tenancyCells', 'tenancy cells'],
  ['authCases', 'auth cases'],
  ['leakChecks', 'leak checks'],
  ['limitChecks', 'limit checks'],
];

export default class AdversarialSummaryReporter {
  onRunComplete(_contexts, results) {
    const dir = process.env.ADVERSARIAL_SUMMARY_DIR;
    if (!dir) return;
    let names;
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    const passed = new Map(results.testResults.map((r) => [r.testFilePath, r.numFailingTests === 0 && !r.testExecError]));
    const totals = new Map();
    for (const name of names) {
      const { testPath, counts } = JSON.parse(readFileSync(join(dir, name), 'utf8'));
      for (const [key, value] of Object.entries(counts)) {
        const total = totals.get(key) ?? { value: 0, green: true };
        total.value += value;
        total.green &&= passed.get(testPath) === true;
        totals.set(key, total);
      }
    }
    if (totals.size === 0) return;
    const lines = LABELS.filter(([key]) => totals.has(key)).map(([key, label]) => {
      const { value, green } = totals.get(key);
      return `  ${green ? '✓' : '✗'} ${label.padEnd(20)} ${String(value).padStart(7)}`;
    });
    console.log(`\nAdversarial suite summary (${process.env.DEEP ? 'deep' : 'default'} run)\n${lines.join('\n')}\n`);
  }
}
