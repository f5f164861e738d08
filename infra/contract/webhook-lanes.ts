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
   * A retry sets its own visibility (ChangeMessageVisibility), so this applies to a receive only.
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
 * The fast lane's event source mapping runs in provisioned mode: its minimum event pollers stay
 * ready, each with up to 10 concurrent invocations, so 20 batches can be in flight at once from the
 * first message, and it scales at up to 1,000 invocations a minute. In the default mode it would
 * start with 5 and add 5 a second: an endpoint that starts hanging holds every batch it is in for
 * its 10 s timeout until its failing run is marked (SLOW_ATTEMPT_MS, 1 s), and at 8 events a second
 * that alone took the 5 invocations healthy endpoints' deliveries were waiting for. Provisioned
 * pollers are billed by the hour (event poller units); two are the minimum AWS allows.
 */
export const FAST_LANE = {
  minimumPollers: 2,
  maximumPollers: 20,
} as const;

export const SLOW_LANE = {
  /** Concurrent invocations the slow lane's event source mapping may use (2 at least, AWS's minimum). */
  maxConcurrency: 5,
} as const;
