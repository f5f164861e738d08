import type { AppConfig } from '../../lib/runtime/config.js';
import { printBenchRows, type BenchRow } from './bench-row.js';
import type { LocalStack } from './local-stack.js';

/**
 * A webhook section run on its own (`npx tsx bench/<section>.ts`): its own local stores, engines
 * and DNS server, the rows printed. The SDK's warning, the functions' logs and metrics are silenced
 * before the local stack and the configuration load (both are imported here, not above, for that).
 */
export async function runAloneOnLocalStack(section: (cfg: AppConfig, stack: LocalStack) => Promise<readonly BenchRow[]>): Promise<void> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  process.env.AWS_XRAY_MANUAL_MODE = 'true';
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
