import type { StoredEvent } from '../cases/ports.js';
import type { Deadline } from '../deadline.js';
import type { Mode } from '../mode.js';
import type { EndpointSecret } from './signature.js';
import type { EndpointHealth } from './endpoint-health.js';
import type { PlanningSlice } from './planning-slice.js';
import type { DeliveryAttempt, DeliveryJob, DeliveryKey, DeliveryStatus, WebhookDelivery } from './webhook-delivery.js';
import type { WebhookEndpoint } from './webhook-endpoint.js';

/**
 * What the webhook endpoint use cases need from outside, implemented in lib/adapters (DynamoDB
 * with sealed secrets; the system resolver). Every storage call takes the request's Deadline and
 * reads strongly consistent: an endpoint reported created is found by the very next read. Only
 * the endpoints of `mode` and `companyId` exist for a call: another mode's or company's endpoint
 * is not found.
 */
export interface WebhookEndpointStore {
  /**
   * Stores a new endpoint with its secrets, unless the company already has `maxPerMode` endpoints
   * in its mode: then nothing is stored and WebhookEndpointLimitError is thrown. The limit holds
   * under concurrent creates.
   */
  create(endpoint: WebhookEndpoint, secrets: readonly EndpointSecret[], maxPerMode: number, deadline?: Deadline): Promise<void>;
  /** Every endpoint of the company in the mode, in no particular order. */
  list(mode: Mode, companyId: string, deadline?: Deadline): Promise<WebhookEndpoint[]>;
  get(mode: Mode, companyId: string, endpointId: string, deadline?: Deadline): Promise<WebhookEndpoint | undefined>;
  /** The endpoint with its secrets in the clear (rotation and delivery only). */
  getWithSecrets(
    mode: Mode,
    companyId: string,
    endpointId: string,
    deadline?: Deadline,
  ): Promise<{ endpoint: WebhookEndpoint; secrets: EndpointSecret[] } | undefined>;
  /**
   * Writes the endpoint's settings as `endpoint` has them (url, events, description, status,
   * disabledReason, updatedAt, version; and its secrets, when given) if its stored version is still
   * `expectedVersion`: `stale` when another change came first, `gone` when it no longer exists.
   * Never writes the delivery health (`failingSince`) `endpoint` was read with: a health write made
   * between the caller's read and this update stands (health writes leave the version alone).
   * `resetHealth` (a PATCH enabling a disabled endpoint) removes the health, only while the
   * endpoint is still stored `disabled` (else `stale`).
   */
  update(
    endpoint: WebhookEndpoint,
    expectedVersion: number,
    secrets: readonly EndpointSecret[] | undefined,
    deadline?: Deadline,
    options?: { resetHealth?: boolean },
  ): Promise<'updated' | 'stale' | 'gone'>;
  /** Removes the endpoint and its secrets; false when it did not exist. */
  delete(mode: Mode, companyId: string, endpointId: string, deadline?: Deadline): Promise<boolean>;
  /**
   * Records a scheduled delivery's effect on the endpoint's health (endpoint-health.ts): a failure
   * (`failingSince` given, `lastFailureAt` its time, or `failingSince` when absent) recorded by the
   * run stored, whatever the caller read (`failureRecord`): a run still going at that failure keeps
   * its start, which may be earlier than the one given, and its last failure only moves forward; no
   * run, or one whose last failure is more than the quiet gap before, is replaced by the one given.
   * A success (`failingSince` absent) clears both. When `disable` is given, status `disabled` with
   * the reason.
   * Not conditional on `version`: a delivery's outcome never waits for a partner's PATCH. A change of
   * `failingSince` alone leaves `version` as it is (a PATCH in flight never writes health, so it
   * stands); disabling increments it, so a PATCH in flight is stale and reads the disabled endpoint
   * again. Conditional on the endpoint still existing (`gone`) and,
   * to disable, on it still being enabled (`unchanged`).
   */
  recordHealth(
    mode: Mode,
    companyId: string,
    endpointId: string,
    health: EndpointHealth,
    disable?: { disabledReason: string },
  ): Promise<'recorded' | 'unchanged' | 'gone'>;
}

/**
 * The delivery log (webhook-delivery.ts): one record per delivery in its endpoint's partition,
 * newest first by createdAt, expiring 30 days after it. Reads are strongly consistent.
 */
export interface WebhookDeliveryStore {
  /**
   * Creates the delivery's record as `pending` with no attempts, unless a record with its key
   * exists: then nothing is written. Answers the record as stored either way (a stream record
   * delivered twice finds the first copy's record).
   */
  start(delivery: WebhookDelivery, deadline?: Deadline): Promise<WebhookDelivery>;
  /**
   * `start` for many deliveries (a slice's step of planning), in as few storage requests as the store
   * allows; answers each record as stored, in the order given. The deliveries name distinct records.
   */
  startAll(deliveries: readonly WebhookDelivery[], deadline?: Deadline): Promise<WebhookDelivery[]>;
  get(key: DeliveryKey, deadline?: Deadline): Promise<WebhookDelivery | undefined>;
  /**
   * Appends one attempt and sets the status (and nextAttemptAt while pending), if the record still
   * has `attemptsBefore` attempts and is `pending`: `stale` when another receiver of the same
   * message recorded first (the caller then reads the record again), `gone` when it expired.
   */
  recordAttempt(
    key: DeliveryKey,
    attemptsBefore: number,
    attempt: DeliveryAttempt,
    next: { status: DeliveryStatus; nextAttemptAt?: string },
    deadline?: Deadline,
  ): Promise<'recorded' | 'stale' | 'gone'>;
  /** An endpoint's deliveries, newest first; `after` is the last key of the previous page. */
  listPage(
    mode: Mode,
    endpointId: string,
    page: { limit: number; after?: DeliveryKey },
    deadline?: Deadline,
  ): Promise<{ deliveries: WebhookDelivery[]; last?: DeliveryKey }>;
}

/**
 * The delivery lanes (SQS), one set per mode (a job goes to its own mode's queue, so test-mode
 * deliveries never wait behind live ones nor take their consumers): `fast` for first attempts and
 * early retries, `slow` for retries of a delivery in sustained failure (sustained-failure.ts), whose
 * consumers are capped apart from the fast lane's (docs/webhooks-design.md, "Fair share per
 * endpoint"). `delaySeconds` at most 900 (SQS's limit); a longer wait hops (the job's `dueAt`).
 */
export type DeliveryLane = 'fast' | 'slow';

export interface DeliveryQueue {
  enqueue(lane: DeliveryLane, jobs: readonly DeliveryJob[], delaySeconds?: number): Promise<void>;
}

/**
 * The planning queues (docs/webhooks-design.md, "Planning: at once or on the fair queue"), one per mode,
 * as the lanes are (a test slice never waits on, nor takes, the live queue's worker invocations): each
 * an SQS fair queue (a standard queue whose messages carry a MessageGroupId, here the slice's tenant:
 * mode and company), so that SQS hands a quiet company's slice to the planning worker before a noisy
 * company's backlog. `forward` sends each slice as one message and answers, per slice, whether SQS took it;
 * it never throws for a slice refused (the caller retries that slice's stream records).
 */
export interface PlanningQueue {
  forward(slices: readonly PlanningSlice[]): Promise<boolean[]>;
}

/** What `DeliverySlots.startClaimed` wrote: jobs listed, started and holding their slots, and jobs listed and started that wait for a fill. */
export interface StartedClaimed {
  claimed: DeliveryJob[];
  listed: DeliveryJob[];
}

/**
 * Each endpoint's share of the shared lanes (lib/webhooks/delivery-slots.ts): at most `cap` of its
 * jobs are queued, in flight or waiting for a retry in the lanes at once, each holding one of its
 * slots; the others wait on the endpoint's waiting list, outside the lanes, oldest first.
 */
export interface DeliverySlots {
  /** Puts the jobs on their endpoints' waiting lists (a job already there stays as it is); no retry past `deadline`. */
  wait(jobs: readonly DeliveryJob[], deadline?: Deadline): Promise<void>;
  /** Takes jobs off the waiting lists without queueing them (deliveries found already attempted or settled). */
  forget(jobs: readonly DeliveryJob[]): Promise<void>;
  /**
   * Claims the endpoint's free slots (up to `cap` held) for its oldest waiting jobs, in one atomic
   * write, and answers them: the caller queues them, then calls `promoted`. A claimed job stays on
   * the list, promoted (its delivery holds a slot), until then; one never removed (a crash before
   * queueing) is answered again by `stalePromotions`. `fresh` are jobs the caller has just listed:
   * the store may claim them without reading the list first when the slots are free (then they may
   * pass an older waiting job that a concurrent release has not filled yet; deliveries keep no
   * order). `releasing`: deliveries that ended, whose slots are given back in the same write (the
   * store may hand them to waiting jobs it read before without reading the list again; its write's
   * conditions still decide); they are given back whether or not anything is claimed.
   */
  claimWaiting(
    mode: Mode,
    endpointId: string,
    cap: number,
    fresh?: readonly DeliveryJob[],
    releasing?: readonly DeliveryKey[],
  ): Promise<DeliveryJob[]>;
  /**
   * New jobs listed, their deliveries' records started (`pending`, as `startAll` starts them, at
   * `startedAt`) and their slots claimed, in one write per endpoint or per several endpoints
   * together: what `wait`, `startAll` and a `claimWaiting` of `fresh` jobs do one after another.
   * Each endpoint's jobs all or none:
   * - `claimed` when the endpoint has that many slots free (up to `cap` held) and none of its
   *   records or claims exists already; the caller queues them, then calls `promoted`, as after
   *   `claimWaiting`;
   * - else `listed` (on the waiting list, records started, no slot: a fill's to claim) when the
   *   endpoint has too few slots free, was asked for more than `cap`, or the store takes it for
   *   full (a hint: the fill that follows claims a slot free after all), and none of its records
   *   exists, written in the same write as another endpoint's claimed jobs (never alone: with
   *   nothing to claim, nothing is written);
   * - else left untouched (neither listed nor started), for the caller's usual road: a replayed
   *   stream record's, or any the store chose not to write at once.
   * So a company's event to a healthy endpoint and to one whose slots are all held is one write,
   * not a cancelled claim followed by the other's listing and start.
   */
  startClaimed(jobs: readonly DeliveryJob[], startedAt: string, cap: number): Promise<StartedClaimed>;
  /** Undoes a claim whose jobs could not be queued: their slots given back, so the jobs are waiting again. */
  abandon(jobs: readonly DeliveryJob[]): Promise<void>;
  /** Removes promoted jobs from the waiting list once they are queued. */
  promoted(jobs: readonly DeliveryJob[]): Promise<void>;
  /** Gives the delivery's slot back (one that held none changes nothing). */
  release(key: DeliveryKey): Promise<void>;
  /** The deliveries holding the endpoint's slots. */
  holders(mode: Mode, endpointId: string): Promise<DeliveryKey[]>;
  /** Jobs promoted at least `olderThanMs` ago and still on the waiting list (their queueing may have been lost). */
  stalePromotions(mode: Mode, endpointId: string, olderThanMs: number): Promise<DeliveryJob[]>;
}

/** An endpoint as the delivery function reads it: with its signing secrets in the clear. */
export type EndpointWithSecrets = NonNullable<Awaited<ReturnType<WebhookEndpointStore['getWithSecrets']>>>;

/**
 * What one batch of delivery jobs reads before its attempts (functions/deliver-webhooks.ts): each job's
 * endpoint with its secrets, its delivery record and its event, read together (a few requests for the
 * batch where it was a read each). Each answer is as the store's own read gives it: `undefined` when
 * the item does not exist. Throws when any of it could not be read.
 */
export interface DeliveryBatchReader {
  read(jobs: readonly DeliveryJob[], deadline?: Deadline): Promise<DeliveryBatchReading>;
}

export interface DeliveryBatchReading {
  endpoint(mode: Mode, companyId: string, endpointId: string): EndpointWithSecrets | undefined;
  delivery(key: DeliveryKey): WebhookDelivery | undefined;
  event(mode: Mode, eventId: string): StoredEvent | undefined;
}

/**
 * Resolves a host name to every address it has (IPv4 and IPv6), as the sender will (c-ares under its
 * own timeout: lib/adapters/webhooks/dns-resolver.ts). A name that does not resolve, or not in
 * time, throws.
 */
export type HostResolver = (hostname: string) => Promise<string[]>;

/** One signed attempt to send (the sender signs `payload` as it is, with every secret given). */
export interface OutgoingWebhook {
  url: string;
  /** The event id: the webhook-id of every attempt of this delivery. */
  eventId: string;
  /** The event JSON, sent byte for byte. */
  payload: string;
  /** The endpoint's signing secrets at this moment (signature.ts `signingSecrets`). */
  secrets: readonly string[];
  /** Called once the host name has resolved and its addresses passed the checks, before connecting (not when the attempt ends earlier). */
  onResolved?: () => void;
}

/** How one attempt went: any 2xx within the timeout is `delivered`; everything else has `error`. */
export interface SentWebhook {
  /** When the attempt started (ISO 8601). */
  at: string;
  delivered: boolean;
  statusCode?: number;
  durationMs: number;
  error?: string;
  /** The address connected to, for operators' logs (not for partners). */
  address?: string;
}

/**
 * Sends one attempt (lib/adapters/webhooks/webhook-sender.ts `WebhookSender`: SSRF-safe, signed,
 * 10 s). Never throws for what a receiver or the network does: that is an outcome with `error`.
 */
export interface WebhookAttemptSender {
  send(attempt: OutgoingWebhook): Promise<SentWebhook>;
}
