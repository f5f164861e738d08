import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { logger } from './logger.js';

/**
 * Powertools' own warnings, as structured log lines. Its notice that an invocation published no
 * application metrics is expected on every get-case and create-upload request (they publish only
 * the cold-start metric), so it goes to DEBUG; any other warning (an invalid metric or
 * dimension) stays a WARN.
 */
const metricsWarnings = {
  debug: (message: string) => logger.debug(message),
  info: (message: string) => logger.info(message),
  warn: (message: string) => (message.startsWith('No application metrics to publish') ? logger.debug(message) : logger.warn(message)),
  error: (message: string) => logger.error(message),
};

/**
 * CloudWatch metrics through Embedded Metric Format: written to stdout (the log stream), so no
 * extra API call and no latency. One instance per process; the shared middy chain
 * (`lib/http/api-handler.ts`) publishes the cold-start metric on the first invocation and flushes
 * whatever a handler added exactly once per invocation, whether it succeeded or failed.
 * Disabled in tests and locally (`POWERTOOLS_DEV` / `POWERTOOLS_METRICS_DISABLED`).
 */
export const metrics = new Metrics({
  namespace: process.env.POWERTOOLS_METRICS_NAMESPACE ?? 'PartnerCaseApi',
  serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'partner-case-api',
  logger: metricsWarnings,
});

export { MetricUnit };
