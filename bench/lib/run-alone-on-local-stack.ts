import type { AppConfig } from '../../lib/runtime/config.js';
import { printBenchRows, type BenchRow } from './bench-row.js';
import type { LocalStack } from './local-stack.js';

// Set as this module is evaluated, not when the section starts: each section imports it first, so
// these hold before its other imports load the adapters, and the X-Ray SDK reads
// AWS_XRAY_MANUAL_MODE as it loads (set later, a section run alone had the SDK's per-promise hook,
// which `npm run bench` never has: bench/run.ts sets the same before its imports).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
process.env.POWERTOOLS_METRICS_DISABLED = 'true';
process.env.AWS_XRAY_MANUAL_MODE = 'true';

/**
 * A webhook section run on its own (`npx tsx bench/<section>.ts`): its own local stores, engines
 * and DNS server, the rows printed. The SDK's warning, the functions' logs and metrics are silenced
 * before the local stack and the configuration load (both are imported here, not above, for that).
 */
export async function runAloneOnLocalStack(section: (cfg: AppConfig, stack: LocalStack) => Promise<readonly BenchRow[]>): Promise<void> {
  const { startLocalStack } = await import('./local-stack.js');
  const stack = await startLocalStack();
  try {
    Object.assign(process.env, stack.env);
    const { loadConfig } = await import('../../lib/runtime/config.js');
    printBenchRows(await section(loadConfig(stack.env), stack));
  } finally {
    await stack.stop();
  }
}
