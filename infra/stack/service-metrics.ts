import { Duration } from 'aws-cdk-lib';
import { Metric, type MetricOptions } from 'aws-cdk-lib/aws-cloudwatch';
import { SERVICE_METRICS } from '../contract/stack-config.js';

/**
 * The service's own CloudWatch metrics, as create-cases publishes them through Powertools EMF
 * (namespace `PartnerCaseApi`, dimension `service=partner-case-api`, unit Count, one datapoint per
 * batch). `CaseWriteOutcomeUnknown` counts the TEMPORARY_FAILURE rejections whose write outcome
 * storage could not confirm (the case may exist although the partner was told TEMPORARY_FAILURE;
 * an in-request twin of such a case counts too). `ReferenceRateMissing` counts the cases a request
 * created or read whose half-year has no reference rate (interest null, never guessed): create-cases,
 * get-case and list-cases publish it, once per request and only when there are some, with the same
 * namespace and dimension. Every function also publishes Powertools'
 * `ColdStart` (dimensions `service` and `function_name`), which no alarm reads.
 */
export const CASE_METRIC_NAMES = {
  submitted: 'CasesSubmitted',
  created: 'CasesCreated',
  rejected: 'CasesRejected',
  temporaryFailure: 'CasesTemporaryFailure',
  outcomeUnknown: 'CaseWriteOutcomeUnknown',
  referenceRateMissing: 'ReferenceRateMissing',
} as const;

export type CaseMetric = keyof typeof CASE_METRIC_NAMES;

export const METRIC_PERIOD = Duration.minutes(5);

/** One of the service's metrics, summed per period. */
export function caseMetric(metric: CaseMetric, options: MetricOptions = {}): Metric {
  return new Metric({
    namespace: SERVICE_METRICS.namespace,
    metricName: CASE_METRIC_NAMES[metric],
    dimensionsMap: { service: SERVICE_METRICS.service },
    statistic: 'Sum',
    period: METRIC_PERIOD,
    ...options,
  });
}

/** WAF's metrics for one regional web ACL; `rule` is a rule's metric name, or `ALL`. */
export function wafMetric(
  metricName: 'BlockedRequests' | 'AllowedRequests' | 'CountedRequests',
  webAcl: { metricName: string; region: string },
  rule = 'ALL',
  options: MetricOptions = {},
): Metric {
  return new Metric({
    namespace: 'AWS/WAFV2',
    metricName,
    dimensionsMap: { WebACL: webAcl.metricName, Region: webAcl.region, Rule: rule },
    statistic: 'Sum',
    period: METRIC_PERIOD,
    ...options,
  });
}

/**
 * What the delivery function (functions/deliver-webhooks.ts) publishes, per attempt or outcome, with
 * the service dimension only: `WebhookDelivered` (an attempt answered 2xx), `WebhookAttemptFailed`
 * (any other attempt), `WebhookDeliveryGivenUp` (a delivery gave up after 3 days: status `failed`;
 * routine, counted apart from processing failures), `WebhookEndpointDisabled` (the 5-day rule
 * disabled an endpoint), all four for live deliveries only (the alarms read them); the same four
 * named `WebhookTest…` for test mode's (the dashboard only); and what the delivery sweeper (functions/sweep-webhook-deliveries.ts) publishes
 * once per run, zeros included: `WebhookSlotsReleased`, `WebhookJobsRequeued`, `WebhookSweepFailures`.
 */
export const WEBHOOK_METRIC_NAMES = {
  delivered: 'WebhookDelivered',
  attemptFailed: 'WebhookAttemptFailed',
  givenUp: 'WebhookDeliveryGivenUp',
  endpointDisabled: 'WebhookEndpointDisabled',
  testDelivered: 'WebhookTestDelivered',
  testAttemptFailed: 'WebhookTestAttemptFailed',
  testGivenUp: 'WebhookTestDeliveryGivenUp',
  testEndpointDisabled: 'WebhookTestEndpointDisabled',
  slotsReleased: 'WebhookSlotsReleased',
  jobsRequeued: 'WebhookJobsRequeued',
  sweepFailures: 'WebhookSweepFailures',
} as const;

export type WebhookMetric = keyof typeof WEBHOOK_METRIC_NAMES;

/** One of the delivery function's metrics, summed per period. */
export function webhookMetric(metric: WebhookMetric, options: MetricOptions = {}): Metric {
  return new Metric({
    namespace: SERVICE_METRICS.namespace,
    metricName: WEBHOOK_METRIC_NAMES[metric],
    dimensionsMap: { service: SERVICE_METRICS.service },
    statistic: 'Sum',
    period: METRIC_PERIOD,
    ...options,
  });
}
