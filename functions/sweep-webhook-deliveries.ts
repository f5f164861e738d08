import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { webhookSweepAdapters } from '../lib/adapters/production-webhook-adapters.js';
import { logger } from '../lib/runtime/logger.js';
import { metrics, MetricUnit } from '../lib/runtime/metrics.js';
import { tracer } from '../lib/runtime/tracer.js';
import { sweepDeliveries, type SweepDeps, type SweepTotals } from '../lib/webhooks/sweep-deliveries.js';

/**
 * The webhook delivery sweeper (lib/webhooks/sweep-deliveries.ts), invoked by an EventBridge
 * Scheduler schedule (infra/stack/webhook-delivery.ts; locally by infra/local/webhook-engines.ts on
 * the same interval): gives back slots held by ended deliveries, queues deliveries promoted but
 * never queued, and fills free slots from the waiting lists. An endpoint it could not sweep is
 * counted (WebhookSweepFailures) and swept again on the next run; the run itself fails (and the
 * schedule's retry policy runs it again) only when the companies or endpoints cannot be listed.
 */
export const SWEEP_METRICS = {
  released: 'WebhookSlotsReleased',
  requeued: 'WebhookJobsRequeued',
  failures: 'WebhookSweepFailures',
} as const;

export function buildSweepWebhookDeliveriesCore(deps: SweepDeps) {
  const onEndpointFailed: SweepDeps['onEndpointFailed'] = ({ mode, endpointId, error }) => {
    logger.error('webhook delivery sweep: an endpoint could not be swept (swept again next run)', {
      mode,
      endpointId,
      error: String((error as Error)?.message ?? error),
    });
    deps.onEndpointFailed?.({ mode, endpointId, error });
  };
  return async (): Promise<SweepTotals> => {
    const totals = await sweepDeliveries({ ...deps, onEndpointFailed });
    metrics.addMetric(SWEEP_METRICS.released, MetricUnit.Count, totals.released);
    metrics.addMetric(SWEEP_METRICS.requeued, MetricUnit.Count, totals.requeued);
    metrics.addMetric(SWEEP_METRICS.failures, MetricUnit.Count, totals.failed);
    const log = totals.failed > 0 || totals.released > 0 || totals.requeued > 0 ? logger.warn.bind(logger) : logger.debug.bind(logger);
    log('webhook delivery sweep', { ...totals });
    return totals;
  };
}

/** The core inside the Powertools chain: X-Ray segment, the Lambda context on log lines, metrics flushed once per invocation. */
export function buildSweepWebhookDeliveriesHandler(deps: SweepDeps) {
  return middy<unknown, SweepTotals, Error, Context>()
    .use(captureLambdaHandler(tracer, { captureResponse: false }))
    .use(injectLambdaContext(logger))
    .use(logMetrics(metrics))
    .handler(buildSweepWebhookDeliveriesCore(deps));
}

let production: ReturnType<typeof buildSweepWebhookDeliveriesHandler> | undefined;
/** Built on the first event, so the local stack can load this module before its configuration exists. */
export const handler = (event: unknown, context: Context): Promise<SweepTotals> =>
  (production ??= buildSweepWebhookDeliveriesHandler(webhookSweepAdapters()))(event, context);
