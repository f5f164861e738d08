import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { logger } from './logger.js';
import { metrics } from './metrics.js';
import { tracer } from './tracer.js';

/** A stream, queue or state-machine worker's core: one event (a batch or a task) in, its answer out. */
export type WorkerCore<TEvent, TResult> = (event: TEvent, context: Context) => Promise<TResult>;

/**
 * The Powertools chain the stream and queue workers run their core in: an X-Ray segment (the
 * response is not captured: a batch's answer adds nothing to a trace), the Lambda context on log
 * lines, and metrics flushed once per invocation with the cold-start metric.
 */
export function workerHandler<TEvent, TResult>(core: WorkerCore<TEvent, TResult>) {
  return middy<TEvent, TResult, Error, Context>()
    .use(captureLambdaHandler(tracer, { captureResponse: false }))
    .use(injectLambdaContext(logger))
    .use(logMetrics(metrics, { captureColdStartMetric: true }))
    .handler(core);
}

/**
 * The production handler, built on the first event rather than at import, so the local stack can
 * load a worker's module before its configuration exists.
 */
export function builtOnFirstEvent<TEvent, TResult>(build: () => WorkerCore<TEvent, TResult>): WorkerCore<TEvent, TResult> {
  let built: WorkerCore<TEvent, TResult> | undefined;
  return (event, context) => (built ??= build())(event, context);
}
