import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { webhookDeliveryAdapters } from '../lib/adapters/production-webhook-adapters.js';
import type { Mode } from '../lib/mode.js';
import { logger } from '../lib/runtime/logger.js';
import { metrics, MetricUnit } from '../lib/runtime/metrics.js';
import { builtOnFirstEvent, workerHandler } from '../lib/runtime/worker-handler.js';
import { waitAtMost } from '../lib/wait-at-most.js';
import { deliverWebhook, type DeliverDeps, type DeliveryResult } from '../lib/webhooks/deliver-webhook.js';
import { MAX_SEND_DELAY_SECONDS } from '../lib/webhooks/retry-schedule.js';
import type { EndpointHealth } from '../lib/webhooks/endpoint-health.js';
import { batchFinisher, letGo } from '../lib/webhooks/delivery-slots.js';
import type { DeliveryBatchReader, DeliveryBatchReading, DeliveryLane, DeliveryQueue, DeliverySlots } from '../lib/webhooks/ports.js';
import { deliveryJobSchema, type DeliveryJob, type DeliveryKey } from '../lib/webhooks/webhook-delivery.js';
import type { WebhookEndpoint } from '../lib/webhooks/webhook-endpoint.js';

/**
 * The webhook delivery function (docs/webhooks-design.md), on every delivery lane (fast and slow,
 * of each mode): each message is one delivery job, attempted at most once per receipt
 * (lib/webhooks/deliver-webhook.ts). The records of a batch run concurrently, each bounded by the
 * sender's 10 s timeout, so one hanging receiver never holds up another endpoint's message in the
 * same batch.
 *
 * What becomes of a message, by the use case's result:
 * - done (delivered, settled before, endpoint disabled): succeeds, and SQS deletes it; the job's
 *   slot is given back and the endpoint's next waiting job queued (delivery-slots.ts `finish`). A
 *   copy that found another copy's attempt (`duplicate`) leaves the slot to it; a job whose endpoint
 *   was deleted gives its slot back and queues nothing (`letGo`: the waiting jobs expire);
 * - retry: a new message with the job, delayed (DelaySeconds, ≤ 900 s), on the lane the result
 *   names (slow only after sustained failure), then the message succeeds: send-then-succeed, so a
 *   crash in between leaves a copy, never a loss (the record's attempt count makes the copy
 *   harmless). A delay past 900 s is sent with the job's `dueAt`, and each receipt before then is
 *   a hop: the job sent again with ≤ 900 s, nothing read or attempted. No message is ever held in
 *   flight for a retry, so retries never count against SQS's in-flight quota;
 * - give up: the record says `failed` and the give-up is counted (WebhookDeliveryGivenUp, alarmed
 *   on its share, apart from processing failures); nothing is sent to the dead-letter queue, so it
 *   holds processing failures only and a give-up has no send to lose; then it is finished as above;
 * - a throw (storage unavailable…): reported in `batchItemFailures`, back after the queue's
 *   visibility timeout; the queue's redrive policy moves a message that never succeeds to the DLQ;
 * - not finished ANSWER_BEFORE_TIMEOUT_MS before the function's timeout (storage slow): reported in
 *   `batchItemFailures` too, so the batch answers and its finished messages are deleted, where a
 *   timed-out invocation would bring them all back.
 *
 * Metrics: WebhookDelivered, WebhookAttemptFailed, WebhookDeliveryGivenUp,
 * WebhookEndpointDisabled for live deliveries, which the operators' alarms read; the same with
 * `WebhookTest` for test mode's, on the dashboard only: a free test key's sixteen endpoints
 * answering 500 would otherwise hold the failure-rate and give-up alarms in ALARM at will (and an
 * alarm in ALARM sends no new notification when live deliveries really fail).
 */
export const METRICS = {
  delivered: 'WebhookDelivered',
  attemptFailed: 'WebhookAttemptFailed',
  givenUp: 'WebhookDeliveryGivenUp',
  endpointDisabled: 'WebhookEndpointDisabled',
} as const;

export const TEST_METRICS: Record<keyof typeof METRICS, string> = {
  delivered: 'WebhookTestDelivered',
  attemptFailed: 'WebhookTestAttemptFailed',
  givenUp: 'WebhookTestDeliveryGivenUp',
  endpointDisabled: 'WebhookTestEndpointDisabled',
};

/** The queue actions of the delivery function (lib/adapters/sqs/webhook-delivery-queue.ts): sends only, never a message held in flight. */
export type DeliveryMessages = DeliveryQueue;

export interface DeliverWebhooksDeps {
  delivery: DeliverDeps;
  messages: DeliveryMessages;
  /** Each endpoint's slots in the lanes and its waiting list (lib/webhooks/delivery-slots.ts). */
  slots: DeliverySlots;
  /** Which lane a record came from, by its queue's ARN. */
  laneOf: (eventSourceArn: string) => DeliveryLane;
  /**
   * The batch's endpoints, records and events read together before its attempts (one BatchGetItem for a
   * batch of ten jobs, where each was a GetItem); without it, or when it fails, each job reads its own.
   */
  reads?: DeliveryBatchReader;
}

/**
 * What a batch keeps back from the function's timeout: it answers this long before Lambda would end it,
 * its jobs not finished by then reported in `batchItemFailures` (back after the visibility timeout) and
 * the others deleted. An invocation that times out is an error, after which Lambda reads no
 * `batchItemFailures` and brings the whole batch back: its delivered jobs too, three minutes later, and
 * its other endpoints' first attempts with them. Ten concurrent jobs each wait for at most a 10 s send
 * and a few table requests, so only a storage slowdown comes near the 30 s; then the slow ones alone
 * are retried.
 */
export const ANSWER_BEFORE_TIMEOUT_MS = 2_000;

/** The most SQS delays a message it is sent (DelaySeconds); a longer wait hops. */
export { MAX_SEND_DELAY_SECONDS };
/** A job this close to its dueAt (or past it) is attempted now. */
const DUE_TOLERANCE_MS = 1_000;

function countAttempt(result: DeliveryResult, mode: Mode): void {
  const names = mode === 'live' ? METRICS : TEST_METRICS;
  if (result.attempt) metrics.addMetric(result.attempt.delivered ? names.delivered : names.attemptFailed, MetricUnit.Count, 1);
  if (result.kind === 'give-up') metrics.addMetric(names.givenUp, MetricUnit.Count, 1);
  if (result.endpointDisabled) metrics.addMetric(names.endpointDisabled, MetricUnit.Count, 1);
}

export function buildDeliverWebhooksCore(deps: DeliverWebhooksDeps) {
  /** Resolves true when the message is to stay in its queue (reported in batchItemFailures). */
  async function handle(
    record: SQSRecord,
    job: DeliveryJob | undefined,
    delivery: DeliverDeps,
    finish: (job: DeliveryJob) => Promise<void>,
  ): Promise<boolean> {
    if (job === undefined) {
      // Not silently dropped: it stays, and the queue's redrive policy moves it to the DLQ, which an alarm watches.
      logger.error('webhook delivery message unreadable: left for the dead-letter queue', { messageId: record.messageId });
      return true;
    }
    const lane = deps.laneOf(record.eventSourceARN);
    const early = earlyBy(job, delivery.now());
    if (early > DUE_TOLERANCE_MS) {
      // A hop of a long retry: sent again until due, nothing read (it keeps its endpoint's slot).
      await deps.messages.enqueue(lane, [job], Math.min(MAX_SEND_DELAY_SECONDS, Math.ceil(early / 1000)));
      return false;
    }
    const { dueAt: _due, ...attempted } = job;
    const result = await deliverWebhook(delivery, attempted, lane);
    countAttempt(result, job.mode);
    log(job, lane, result);
    if (result.kind === 'retry') {
      const hops = result.delaySeconds > MAX_SEND_DELAY_SECONDS;
      await deps.messages.enqueue(
        result.lane,
        [hops ? { ...attempted, dueAt: result.nextAttemptAt } : attempted],
        Math.min(MAX_SEND_DELAY_SECONDS, result.delaySeconds),
      );
      return false;
    }
    // Another copy of this job recorded first and carries the delivery (and its slot) on.
    if (result.kind === 'done' && result.reason === 'duplicate') return false;
    // A deleted endpoint's slot is given back with nothing queued after it: its waiting jobs expire.
    if (result.kind === 'done' && result.reason === 'endpoint-gone') {
      await letGo({ slots: deps.slots }, attempted);
      return false;
    }
    await finish(attempted);
    return false;
  }

  /** The batch's reads together, for the jobs due now (a hop reads nothing); undefined when there is no reader or it failed. */
  async function readTogether(jobs: readonly DeliveryJob[]): Promise<DeliveryBatchReading | undefined> {
    if (!deps.reads || jobs.length === 0) return undefined;
    try {
      return await deps.reads.read(jobs);
    } catch (error) {
      // Each job then reads its own (and fails on its own if storage is down).
      logger.warn('webhook delivery batch read failed: each job reads its own', { error: String((error as Error)?.message ?? error) });
      return undefined;
    }
  }

  return async (event: SQSEvent, context?: Pick<Context, 'getRemainingTimeInMillis'>): Promise<SQSBatchResponse> => {
    const jobs = event.Records.map((record) => {
      const parsed = deliveryJobSchema.safeParse(parseJson(record.body));
      return parsed.success ? parsed.data : undefined;
    });
    // Each record's outcome as it settles; one still undefined when the batch must answer did not finish in time.
    const settled: (PromiseSettledResult<boolean> | undefined)[] = event.Records.map(() => undefined);
    const work = (async () => {
      const now = deps.delivery.now();
      const due = jobs.filter((job): job is DeliveryJob => job !== undefined && earlyBy(job, now) <= DUE_TOLERANCE_MS);
      // One set of shared reads and health writes for the whole batch (not one per record).
      const batchDeps = batchDeliveryDeps(deps.delivery, due, await readTogether(due));
      // The batch's ended jobs hand their slots on, and each endpoint is filled by one fill at a time.
      const finish = batchFinisher({ slots: deps.slots, queue: deps.messages });
      await Promise.all(
        event.Records.map((record, i) =>
          handle(record, jobs[i], batchDeps, finish).then(
            (value) => void (settled[i] = { status: 'fulfilled', value }),
            (reason: unknown) => void (settled[i] = { status: 'rejected', reason }),
          ),
        ),
      );
    })();
    const remainingMs = context?.getRemainingTimeInMillis();
    // `work` never rejects: each record's outcome is caught into `settled`.
    await waitAtMost(work, remainingMs === undefined ? undefined : remainingMs - ANSWER_BEFORE_TIMEOUT_MS);
    const batchItemFailures: { itemIdentifier: string }[] = [];
    settled.forEach((outcome, i) => {
      const record = event.Records[i]!;
      if (outcome === undefined) {
        logger.error('webhook delivery not finished before the function times out: the message is retried', {
          messageId: record.messageId,
        });
        batchItemFailures.push({ itemIdentifier: record.messageId });
        return;
      }
      if (outcome.status === 'fulfilled') {
        if (outcome.value) batchItemFailures.push({ itemIdentifier: record.messageId });
        return;
      }
      logger.error('webhook delivery failed: the message is retried', {
        messageId: record.messageId,
        error: String((outcome.reason as Error)?.message ?? outcome.reason),
      });
      batchItemFailures.push({ itemIdentifier: record.messageId });
    });
    return { batchItemFailures };
  };
}

/**
 * The delivery's reads of endpoints and events shared by the jobs of one batch: a burst brings
 * several deliveries to one endpoint and several endpoints' deliveries of one event in the same
 * batch, and each is read (and the endpoint's secrets opened) once for all of them, when the batch
 * starts. The endpoint is still read before every batch, so a deleted or disabled endpoint gets
 * nothing from any batch received after the change. A failed read is not shared beyond its batch.
 *
 * The endpoint's health is written once per change within the batch: the jobs of a batch start
 * from the same reading of the endpoint, so without this, ten deliveries to a receiver that
 * answers slowly would each start its failing run (ten writes) and each success would clear it
 * again (ten more), for one fact. A write in the same direction as the batch's last one for that
 * endpoint (failing again, or cleared again) shares that write's outcome; a disable is always
 * written (it is conditional on the endpoint still being enabled); a failed write is forgotten, so
 * the next job tries it again. An endpoint's writes are sent one after another, so they are
 * applied in the order the jobs asked for them. Each write asked for also changes the batch's
 * reading of the endpoint, which the use case reads again after its attempt: a success after
 * another job's failure in the same batch sees the failing run and ends it.
 */
function batchDeliveryDeps(deps: DeliverDeps, jobs: readonly DeliveryJob[] = [], reading?: DeliveryBatchReading): DeliverDeps {
  const endpoints = new Map<string, ReturnType<DeliverDeps['endpoints']['getWithSecrets']>>();
  const events = new Map<string, ReturnType<DeliverDeps['events']['get']>>();
  // Each job's record as the batch read found it, for that job's one read (a second read goes to the store).
  const records = new Map<string, ReturnType<DeliverDeps['deliveries']['get']>>();
  const recordKey = (key: DeliveryKey) => `${key.mode}\u0000${key.endpointId}\u0000${key.createdAt}\u0000${key.deliveryId}`;
  if (reading)
    for (const job of jobs) {
      const endpointKey = endpointKeyOf(job.mode, job.companyId, job.endpointId);
      if (!endpoints.has(endpointKey))
        endpoints.set(endpointKey, Promise.resolve(reading.endpoint(job.mode, job.companyId, job.endpointId)));
      const eventKey = eventKeyOf(job.mode, job.eventId);
      if (!events.has(eventKey)) events.set(eventKey, Promise.resolve(reading.event(job.mode, job.eventId)));
      records.set(recordKey(job), Promise.resolve(reading.delivery(job)));
    }
  const health = new Map<string, { failing: boolean; outcome: ReturnType<DeliverDeps['endpoints']['recordHealth']> }>();
  const once = <T>(cache: Map<string, T>, key: string, read: () => T): T => {
    let value = cache.get(key);
    if (value === undefined) cache.set(key, (value = read()));
    return value;
  };
  return {
    ...deps,
    endpoints: {
      getWithSecrets: (mode, companyId, endpointId, deadline) =>
        once(endpoints, endpointKeyOf(mode, companyId, endpointId), () =>
          deps.endpoints.getWithSecrets(mode, companyId, endpointId, deadline),
        ),
      recordHealth: (mode, companyId, endpointId, endpointHealth, disable) => {
        const key = endpointKeyOf(mode, companyId, endpointId);
        const failing = endpointHealth.failingSince !== undefined;
        const last = health.get(key);
        if (!disable && last?.failing === failing) return last.outcome;
        // After the batch's previous write for this endpoint has settled: applied in the order they were asked
        // for, so the last one asked for is what is stored, and what the next skipped write relies on.
        const after = last ? last.outcome.then(noop, noop) : Promise.resolve();
        const outcome = after.then(() => deps.endpoints.recordHealth(mode, companyId, endpointId, endpointHealth, disable));
        const entry = { failing, outcome };
        health.set(key, entry);
        const reading = endpoints.get(key);
        const overlaid = reading?.then((found) => found && withHealth(found, endpointHealth, disable));
        if (overlaid) endpoints.set(key, overlaid);
        outcome.catch(() => {
          if (health.get(key) === entry) health.delete(key);
          if (reading && endpoints.get(key) === overlaid) endpoints.set(key, reading);
        });
        return outcome;
      },
    },
    events: { get: (mode, eventId, deadline) => once(events, eventKeyOf(mode, eventId), () => deps.events.get(mode, eventId, deadline)) },
    deliveries: {
      get: (key, deadline) => {
        const read = records.get(recordKey(key));
        if (read === undefined) return deps.deliveries.get(key, deadline);
        records.delete(recordKey(key));
        return read;
      },
      start: (record, deadline) => deps.deliveries.start(record, deadline),
      recordAttempt: (...args) => deps.deliveries.recordAttempt(...args),
    },
  };
}

const noop = () => undefined;

/** An endpoint as read, with the health a write of this batch gave it. */
function withHealth<T extends { endpoint: WebhookEndpoint }>(found: T, health: EndpointHealth, disable?: { disabledReason: string }): T {
  const { failingSince: _, lastFailureAt: __, ...endpoint } = found.endpoint;
  return {
    ...found,
    endpoint: {
      ...endpoint,
      ...(health.failingSince !== undefined ? { failingSince: health.failingSince } : {}),
      ...(health.failingSince !== undefined ? { lastFailureAt: health.lastFailureAt ?? health.failingSince } : {}),
      ...(disable ? { status: 'disabled' as const, disabledReason: disable.disabledReason } : {}),
    },
  };
}

/** The batch's memo keys: one spelling for the batch read's seeding and the jobs' own reads alike. */
const endpointKeyOf = (mode: string, companyId: string, endpointId: string) => `${mode}\u0000${companyId}\u0000${endpointId}`;
const eventKeyOf = (mode: string, eventId: string) => `${mode}\u0000${eventId}`;

/** How long before its due time a job arrived (0 when it has none): past DUE_TOLERANCE_MS it hops. */
function earlyBy(job: DeliveryJob, now: Date): number {
  return job.dueAt === undefined ? 0 : Date.parse(job.dueAt) - now.getTime();
}

function parseJson(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

function log(job: DeliveryJob, lane: DeliveryLane, result: DeliveryResult): void {
  const fields = {
    deliveryId: job.deliveryId,
    endpointId: job.endpointId,
    eventId: job.eventId,
    lane,
    result: result.kind,
    ...('reason' in result ? { reason: result.reason } : {}),
    ...(result.attempt
      ? {
          statusCode: result.attempt.statusCode,
          error: result.attempt.error,
          durationMs: result.attempt.durationMs,
          address: result.attempt.address,
        }
      : {}),
  };
  if (result.kind === 'give-up') logger.warn('webhook delivery failed: retries ended, given up', fields);
  else logger.debug('webhook delivery', fields);
}

export function buildDeliverWebhooksHandler(deps: DeliverWebhooksDeps) {
  return workerHandler(buildDeliverWebhooksCore(deps));
}

export const handler = builtOnFirstEvent(() => buildDeliverWebhooksHandler(webhookDeliveryAdapters()));
