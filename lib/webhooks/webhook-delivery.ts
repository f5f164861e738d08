import { createHash } from 'node:crypto';
import * as z from 'zod';
import { BASE62, randomBase62 } from '../random-id.js';
import { MODES, type Mode } from '../mode.js';

/**
 * A delivery: one event on its way to one endpoint (product rules "Webhooks"), and its log entry
 * (`GET /api/v1/webhook-endpoints/{id}/deliveries`, kept 30 days).
 *
 * - A **scheduled** delivery is made by the fan-out of an event from the table's stream. Its id is
 *   derived from the endpoint and the event (`scheduledDeliveryId`), and its `createdAt` is the
 *   event's: a stream record read twice names the same delivery, whose record is created once
 *   (conditionally), so the log shows one delivery per event and endpoint however often the
 *   record or its queue message arrives.
 * - A **redelivery** is what a partner asks for (`POST …/{id}/redeliver`): a new delivery of a
 *   stored event with a random id, retried like any other, but its outcome leaves the endpoint's
 *   health (the 5-day disable rule) alone.
 *
 * The queue message of a delivery is a `DeliveryJob`: it names the delivery, never carries the
 * event or a secret; the delivery function reads the event's stored bytes and the endpoint's
 * secrets when it sends.
 */
export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
export const DELIVERY_KINDS = ['scheduled', 'redelivery'] as const;
export type DeliveryKind = (typeof DELIVERY_KINDS)[number];

/** How long a delivery's log entry is kept after its createdAt (a `ttl` on the record). */
export const DELIVERY_RETENTION_SECONDS = 30 * 24 * 60 * 60;

const DELIVERY_ID_RANDOM_LENGTH = 22;
export const DELIVERY_ID_PATTERN = new RegExp(`^wd_[0-9A-Za-z]{${DELIVERY_ID_RANDOM_LENGTH}}$`);

/** The id of the scheduled delivery of an event to an endpoint: the same for every copy of the stream record. */
export function scheduledDeliveryId(endpointId: string, eventId: string): string {
  const digest = createHash('sha256').update(`${endpointId}\n${eventId}`).digest();
  let id = '';
  // 22 base62 characters from 22 bytes: byte % 62 is slightly biased, which is harmless for an id
  // that only has to be unique (the 32-byte digest is), not uniform.
  for (let i = 0; i < DELIVERY_ID_RANDOM_LENGTH; i++) id += BASE62[digest[i]! % 62];
  return `wd_${id}`;
}

/** A redelivery's id: random, so every redelivery a partner asks for is a delivery of its own. */
export function newRedeliveryId(): string {
  return `wd_${randomBase62(DELIVERY_ID_RANDOM_LENGTH)}`;
}

/** One attempt as partners see it: when, the receiver's status code (absent when none came), how long, and why it failed. */
export interface DeliveryAttempt {
  at: string;
  statusCode?: number;
  durationMs: number;
  /** At most MAX_ATTEMPT_ERROR_CHARS characters (clipAttemptError). */
  error?: string;
}

/**
 * The most characters an attempt's `error` keeps. The text comes from the receiver's side (a TLS
 * certificate's names, a socket error's message), so its length is the receiver's to choose; a
 * delivery keeps up to 19 attempts in its one item, which DynamoDB caps at 400 KB. 500 characters
 * hold every error the sender writes itself with room to spare.
 */
export const MAX_ATTEMPT_ERROR_CHARS = 500;

/** The error as the delivery log keeps it: whole when short, else its first characters and "…" (never half a character). */
export function clipAttemptError(error: string): string {
  const chars = Array.from(error);
  return chars.length <= MAX_ATTEMPT_ERROR_CHARS ? error : `${chars.slice(0, MAX_ATTEMPT_ERROR_CHARS - 1).join('')}…`;
}

/** What identifies a delivery's record: the endpoint's partition, ordered by createdAt, then the id. */
export interface DeliveryKey {
  mode: Mode;
  endpointId: string;
  /** The event's createdAt for a scheduled delivery; the request's time for a redelivery. */
  createdAt: string;
  deliveryId: string;
}

export interface WebhookDelivery extends DeliveryKey {
  kind: DeliveryKind;
  companyId: string;
  eventId: string;
  eventType: string;
  status: DeliveryStatus;
  /** Oldest first. */
  attempts: DeliveryAttempt[];
  /** When the next attempt is due, while `pending` after a failed attempt. */
  nextAttemptAt?: string;
  updatedAt: string;
}

/**
 * The SQS message of a delivery (fan-out → delivery queue; redeliver route → delivery queue; the
 * delivery function moves it to the slow lane or the dead-letter queue unchanged). Versioned so a
 * message written by an older function is still read or clearly refused.
 */
export const deliveryJobSchema = z
  .object({
    v: z.literal(1),
    kind: z.enum(DELIVERY_KINDS),
    deliveryId: z.string().regex(DELIVERY_ID_PATTERN),
    endpointId: z.string().min(1),
    eventId: z.string().min(1),
    eventType: z.string().min(1),
    companyId: z.string().min(1),
    mode: z.enum(MODES),
    createdAt: z.iso.datetime(),
    /**
     * When a retry is due, on a job re-sent with a delay: SQS delays a message 15 minutes at most,
     * so a longer wait is made of hops (the job re-sent with ≤ 900 s until this time), never a
     * message held in flight (docs/webhooks-design.md, "Fair share per endpoint, test apart from live, retries outside the in-flight quota").
     */
    dueAt: z.iso.datetime().optional(),
  })
  .strict();
export type DeliveryJob = z.infer<typeof deliveryJobSchema>;

export function deliveryKeyOf(job: Pick<DeliveryJob, 'mode' | 'endpointId' | 'createdAt' | 'deliveryId'>): DeliveryKey {
  return { mode: job.mode, endpointId: job.endpointId, createdAt: job.createdAt, deliveryId: job.deliveryId };
}

/** One delivery's identity as a string (mode, endpoint, createdAt, id), for sets and maps of jobs or keys. */
export function deliveryKeyString(key: Pick<DeliveryKey, 'mode' | 'endpointId' | 'createdAt' | 'deliveryId'>): string {
  return `${key.mode}\u0000${key.endpointId}\u0000${key.createdAt}#${key.deliveryId}`;
}

/** Each delivery once, first seen kept (a stream batch read twice names a job twice; a write naming an item twice is refused). */
export function distinctDeliveries<T extends Pick<DeliveryKey, 'mode' | 'endpointId' | 'createdAt' | 'deliveryId'>>(
  list: readonly T[],
): T[] {
  return [...new Map(list.map((key) => [deliveryKeyString(key), key])).values()];
}

/** Jobs grouped by their endpoint (and mode), in first-seen order: each group is one endpoint's slots and waiting list. */
export function jobsByEndpoint<T extends Pick<DeliveryJob, 'mode' | 'endpointId'>>(jobs: readonly T[]): T[][] {
  const groups = new Map<string, T[]>();
  for (const job of jobs) {
    const endpoint = `${job.mode}\u0000${job.endpointId}`;
    const group = groups.get(endpoint);
    if (group) group.push(job);
    else groups.set(endpoint, [job]);
  }
  return [...groups.values()];
}

/** The record a job's delivery starts as: pending, no attempt yet. */
export function newDeliveryRecord(job: DeliveryJob, at: string): WebhookDelivery {
  const { v: _version, dueAt: _dueAt, ...named } = job;
  return { ...named, status: 'pending', attempts: [], updatedAt: at };
}

const EXAMPLE_AT = '2025-03-01T09:30:00.000Z';

export const deliveryAttemptSchema = /* @__PURE__ */ z
  .object({
    at: z.string().meta({ format: 'date-time', example: EXAMPLE_AT }),
    statusCode: z.number().int().optional().meta({ description: "Your receiver's HTTP status; absent when none came.", example: 503 }),
    durationMs: z.number().int().meta({ description: 'From the start of the attempt to its answer or failure.', example: 84 }),
    error: z
      .string()
      .optional()
      .meta({
        description: `Why the attempt failed (timeout, refused address, non-2xx status…), in at most ${MAX_ATTEMPT_ERROR_CHARS} characters; absent when it succeeded.`,
      }),
  })
  .meta({ id: 'WebhookDeliveryAttempt' });

/** A delivery as partners see it in the delivery log. Documentation metadata; handlers build it with deliveryView. */
export const webhookDeliveryViewSchema = /* @__PURE__ */ z
  .object({
    id: z.string().meta({ pattern: DELIVERY_ID_PATTERN.source, example: 'wd_3Hq8LmN2pR7sT1vW5xY9zA' }),
    eventId: z.string().meta({ example: 'evt_5Fg7Hj9Kl2Mn4Pq6Rs8Tu0' }),
    eventType: z.string().meta({ example: 'case.updated' }),
    status: z.enum(DELIVERY_STATUSES).meta({
      description: '`pending` while attempts go on, `delivered` after a 2xx, `failed` when retries ended (3 days) without one.',
    }),
    attempts: z.array(deliveryAttemptSchema).meta({ description: 'Oldest first.' }),
    nextAttemptAt: z.string().optional().meta({ format: 'date-time', description: 'When the next attempt is due; only while pending.' }),
  })
  .meta({ id: 'WebhookDelivery' });
export type WebhookDeliveryView = z.infer<typeof webhookDeliveryViewSchema>;

export function deliveryView(delivery: WebhookDelivery): WebhookDeliveryView {
  return {
    id: delivery.deliveryId,
    eventId: delivery.eventId,
    eventType: delivery.eventType,
    status: delivery.status,
    attempts: delivery.attempts,
    ...(delivery.status === 'pending' && delivery.nextAttemptAt !== undefined ? { nextAttemptAt: delivery.nextAttemptAt } : {}),
  };
}
