import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';

/**
 * CloudWatch metrics through Embedded Metric Format: written to the log stream, so no extra
 * API call and no latency. Disabled in tests (POWERTOOLS_METRICS_DISABLED).
 */
export const metrics = new Metrics({
  namespace: process.env.POWERTOOLS_METRICS_NAMESPACE ?? 'PartnerCaseApi',
  serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'partner-case-api',
});

export { MetricUnit };
