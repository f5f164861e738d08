import { maxAttempts } from '../../lib/webhooks/retry-schedule.js';

/**
 * The webhook delivery lanes' settings, which the stack (infra/stack/webhook-delivery.ts) deploys
 * and the local world (infra/local/webhook-engines.ts) runs on fauxqs: one source, so the two
 * cannot drift. docs/webhooks-design.md says why each value is what it is.
 */

/** One attempt is bounded by the sender's 10 s; a batch's ten sends run concurrently, plus the reads and writes around them. */
export const DELIVERY_FUNCTION_TIMEOUT_SECONDS = 30;

export const DELIVERY_LANES = {
  batchSize: 10,
  /**
   * AWS's advice for an SQS event source: the queue's visibility timeout at least six times the
   * function's timeout, so a batch throttled and retried by Lambda does not reappear while in
   * flight (Lambda developer guide, "Creating and configuring an Amazon SQS event source mapping").
   * A retry is a new message with DelaySeconds (hops past 15 minutes), never a message kept in flight.
   */
  visibilityTimeoutSeconds: 6 * DELIVERY_FUNCTION_TIMEOUT_SECONDS,
  /** Retries run 3 to 3½ days (retry-schedule.ts); SQS's default 4 days is too close, 14 is its maximum. */
  retentionDays: 14,
  /**
   * Receives before SQS moves a message to the dead-letter queue: above the most attempts a
   * delivery can make, with a margin for receives that made no attempt (a crash, a throttle).
   */
  maxReceiveCount: maxAttempts() + 10,
} as const;

/**
 * The live fast lane's event source mapping runs in provisioned mode: its minimum event pollers stay
 * ready, each with up to 10 concurrent invocations, so 20 batches can be in flight at once from the
 * first message, and it scales at up to 1,000 invocations a minute. In the default mode it would
 * start with 5 and add 5 a second: an endpoint that starts hanging holds every batch it is in for
 * its 10 s timeout, and at 8 events a second that alone took the 5 invocations healthy endpoints'
 * deliveries were waiting for. Each endpoint holds at most MAX_JOBS_PER_ENDPOINT of the lane's
 * messages (lib/webhooks/delivery-slots.ts), so its ready capacity is shared per endpoint. Provisioned
 * pollers are billed by the hour (event poller units); two are the minimum AWS allows.
 */
export const FAST_LANE = {
  minimumPollers: 2,
  maximumPollers: 20,
} as const;

/** The live slow lane: retries of deliveries in sustained failure (lib/webhooks/sustained-failure.ts). */
export const SLOW_LANE = {
  /** Concurrent invocations the slow lane's event source mapping may use (2 at least, AWS's minimum). */
  maxConcurrency: 5,
} as const;

/**
 * Test mode's lanes (product rules "Webhook isolation and operators": test-mode deliveries never
 * delay live ones): queues and event source mappings of their own, in the default mode, each
 * capped (maxConcurrency) so that whatever a free test key sends, it takes at most this many of
 * the delivery function's concurrent invocations, never the live lanes' pollers or their queue.
 * The fast one has room for a company with 16 hanging endpoints (16 × MAX_JOBS_PER_ENDPOINT =
 * 128 jobs, 13 batches at first) beside other test companies' first attempts.
 */
export const TEST_FAST_LANE = { maxConcurrency: 20 } as const;
export const TEST_SLOW_LANE = { maxConcurrency: 2 } as const;

/**
 * The delivery sweeper (functions/sweep-webhook-deliveries.ts): run by an EventBridge Scheduler
 * schedule at this rate in AWS, and on the same interval by the local engines.
 */
export const DELIVERY_SWEEP = {
  everyMinutes: 5,
  /** One run visits every endpoint: a few requests each, eight at a time. */
  timeoutSeconds: 300,
} as const;

/**
 * The planning queues and their worker (functions/plan-webhook-deliveries.ts; docs/webhooks-design.md,
 * "Planning: at once or on the fair queue"): per mode an SQS fair queue (standard, MessageGroupId = mode and company) fed by
 * the fan-out, one message per large company-and-mode slice of a stream batch (the small ones the
 * fan-out plans itself: lib/webhooks/fan-out-event.ts INLINE_DELIVERIES_PER_SLICE). These settings are
 * both queues'; the live mapping's concurrency is `maxConcurrency` here, the test one's
 * TEST_PLANNING_QUEUE's.
 */
export const PLANNING_QUEUE = {
  /** One slice is at most 100 events × 16 endpoints (1,600 records started and listed, in 17 steps): well inside half a minute. */
  functionTimeoutSeconds: 30,
  /** Slices per invocation: planned concurrently, each filling its endpoints as soon as it is planned. */
  batchSize: 10,
  /** AWS's advice for an SQS event source: at least six times the function's timeout. A slice that failed comes back after it. */
  visibilityTimeoutSeconds: 6 * 30,
  /** Receives before a slice goes to the planning dead-letter queue (which pages): planning again is harmless, so a few. */
  maxReceiveCount: 5,
  /** A slice is planned within seconds; 4 days (SQS's default) leaves time to mend a failing worker before it is lost, and the DLQ keeps 14. */
  retentionDays: 4,
  /**
   * The mapping's maximum concurrency (AWS): fair queues sort out a noisy tenant by its share of
   * the messages in flight (more than 10 % and at least 30 of them), so the worker must hold more
   * than 30 in flight to let SQS see one: 20 invocations × 10 = 200.
   */
  maxConcurrency: 20,
} as const;

/**
 * Test mode's planning queue (product rules "Webhook isolation and operators": test-mode
 * deliveries never delay live ones): the same settings and worker as the live one above, but a
 * queue and an event source mapping of its own, capped, so that test-mode bursts never take a
 * planning invocation a live burst needs. The fair queue shares a queue among its tenants by their
 * share of the messages in flight, which any number of companies with free test keys, each
 * bursting once, would pass unseen (none holds 30), so live and test are kept apart as the lanes
 * are. Ten invocations × 10 = 100 slices in flight: SQS marks a test tenant noisy once it holds 30
 * of them (under a third; at 5 invocations it would have been 30 of 50, most of them), so test
 * tenants still share their queue fairly among themselves.
 */
export const TEST_PLANNING_QUEUE = { maxConcurrency: 10 } as const;
