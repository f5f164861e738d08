import type { Mode } from '../../lib/mode.js';
import { failureRecord, type EndpointHealth } from '../../lib/webhooks/endpoint-health.js';
import type {
  DeliveryLane,
  DeliveryQueue,
  DeliverySlots,
  StartedClaimed,
  WebhookDeliveryStore,
  WebhookEndpointStore,
} from '../../lib/webhooks/ports.js';
import type { EndpointSecret } from '../../lib/webhooks/signature.js';
import {
  DELIVERY_RETENTION_SECONDS,
  deliveryKeyString,
  distinctDeliveries,
  jobsByEndpoint,
  newDeliveryRecord,
  type DeliveryAttempt,
  type DeliveryJob,
  type DeliveryKey,
  type DeliveryStatus,
  type WebhookDelivery,
} from '../../lib/webhooks/webhook-delivery.js';
import type { WebhookEndpoint } from '../../lib/webhooks/webhook-endpoint.js';

/**
 * In-memory webhook ports for the fast use-case tier. The delivery store runs the same port
 * contract suite as the DynamoDB adapter (test/integration/webhook-delivery-port-contracts.test.ts).
 */
const keyString = deliveryKeyString;
/** The actions one DynamoDB TransactWriteItems takes, at most: the most one `startClaimed` write holds. */
const ONE_WRITE_ACTIONS = 100;
const copy = <T>(value: T): T => structuredClone(value);

export class MemoryWebhookDeliveryStore implements WebhookDeliveryStore {
  readonly records = new Map<string, WebhookDelivery>();

  constructor(private readonly now: () => Date = () => new Date()) {}

  private live(key: DeliveryKey): WebhookDelivery | undefined {
    const found = this.records.get(keyString(key));
    if (!found) return undefined;
    const expiresAt = Date.parse(found.createdAt) + DELIVERY_RETENTION_SECONDS * 1000;
    return expiresAt <= this.now().getTime() ? undefined : found;
  }

  async start(delivery: WebhookDelivery): Promise<WebhookDelivery> {
    const existing = this.records.get(keyString(delivery));
    if (existing) {
      const current = this.live(delivery);
      if (!current) throw new Error(`delivery ${delivery.deliveryId} exists but has expired`);
      return copy(current);
    }
    const record: WebhookDelivery = { ...copy(delivery), status: 'pending', attempts: [] };
    delete record.nextAttemptAt;
    this.records.set(keyString(delivery), record);
    return copy(record);
  }

  async startAll(deliveries: readonly WebhookDelivery[]): Promise<WebhookDelivery[]> {
    const started: WebhookDelivery[] = [];
    for (const delivery of deliveries) started.push(await this.start(delivery));
    return started;
  }

  async get(key: DeliveryKey): Promise<WebhookDelivery | undefined> {
    const found = this.live(key);
    return found && copy(found);
  }

  async recordAttempt(
    key: DeliveryKey,
    attemptsBefore: number,
    attempt: DeliveryAttempt,
    next: { status: DeliveryStatus; nextAttemptAt?: string },
  ): Promise<'recorded' | 'stale' | 'gone'> {
    // Yield first, as a storage call would: two concurrent callers both get here before either writes.
    await Promise.resolve();
    const found = this.live(key);
    if (!found) return 'gone';
    if (found.status !== 'pending' || found.attempts.length !== attemptsBefore) return 'stale';
    found.attempts.push(copy(attempt));
    found.status = next.status;
    found.updatedAt = this.now().toISOString();
    if (next.status === 'pending' && next.nextAttemptAt !== undefined) found.nextAttemptAt = next.nextAttemptAt;
    else delete found.nextAttemptAt;
    return 'recorded';
  }

  async listPage(
    mode: Mode,
    endpointId: string,
    page: { limit: number; after?: DeliveryKey },
  ): Promise<{ deliveries: WebhookDelivery[]; last?: DeliveryKey }> {
    const sortKey = (d: Pick<DeliveryKey, 'createdAt' | 'deliveryId'>) => `${d.createdAt}#${d.deliveryId}`;
    const after = page.after ? sortKey(page.after) : undefined;
    const all = [...this.records.values()]
      .filter((d) => d.mode === mode && d.endpointId === endpointId && this.live(d) !== undefined)
      .filter((d) => after === undefined || sortKey(d) < after)
      .sort((a, b) => (sortKey(a) < sortKey(b) ? 1 : -1));
    const deliveries = all.slice(0, page.limit).map(copy);
    const last = deliveries.at(-1);
    return all.length > page.limit && last
      ? { deliveries, last: { mode: last.mode, endpointId: last.endpointId, createdAt: last.createdAt, deliveryId: last.deliveryId } }
      : { deliveries };
  }
}

/** The delivery queues as lists: what was enqueued to each lane, with its delay. */
export class MemoryDeliveryQueue implements DeliveryQueue {
  readonly sent: { lane: DeliveryLane; job: DeliveryJob; delaySeconds: number }[] = [];

  async enqueue(lane: DeliveryLane, jobs: readonly DeliveryJob[], delaySeconds = 0): Promise<void> {
    for (const job of jobs) this.sent.push({ lane, job: copy(job), delaySeconds });
  }
}

/**
 * Each endpoint's slots and waiting list, as the DynamoDB adapter keeps them (lib/adapters/dynamodb/webhook-delivery-slots.ts).
 * `records`: the delivery log that `startClaimed` starts records in, as the adapter's transaction does in the table.
 */
export class MemoryDeliverySlots implements DeliverySlots {
  /** Per `<mode>\0<endpointId>`: the holders (`<createdAt>#<deliveryId>`, each with when it was claimed) and the waiting jobs by the same key. */
  readonly held = new Map<string, Map<string, string>>();
  readonly waiting = new Map<string, Map<string, DeliveryJob>>();

  constructor(
    private readonly records: MemoryWebhookDeliveryStore,
    private readonly now: () => Date = () => new Date(),
  ) {}

  private static endpoint(mode: Mode, endpointId: string) {
    return `${mode}\u0000${endpointId}`;
  }
  private list(mode: Mode, endpointId: string) {
    const key = MemoryDeliverySlots.endpoint(mode, endpointId);
    let list = this.waiting.get(key);
    if (!list) this.waiting.set(key, (list = new Map()));
    return list;
  }
  private holdersOf(mode: Mode, endpointId: string) {
    const key = MemoryDeliverySlots.endpoint(mode, endpointId);
    let held = this.held.get(key);
    if (!held) this.held.set(key, (held = new Map()));
    return held;
  }

  async wait(jobs: readonly DeliveryJob[]): Promise<void> {
    for (const job of jobs) this.list(job.mode, job.endpointId).set(`${job.createdAt}#${job.deliveryId}`, copy(job));
  }
  async forget(jobs: readonly DeliveryJob[]): Promise<void> {
    for (const job of jobs) this.list(job.mode, job.endpointId).delete(`${job.createdAt}#${job.deliveryId}`);
  }
  async promoted(jobs: readonly DeliveryJob[]): Promise<void> {
    await this.forget(jobs);
  }
  async claimWaiting(
    mode: Mode,
    endpointId: string,
    cap: number,
    _fresh?: readonly DeliveryJob[],
    releasing: readonly DeliveryKey[] = [],
  ): Promise<DeliveryJob[]> {
    await Promise.resolve();
    const holders = this.holdersOf(mode, endpointId);
    for (const key of releasing)
      if (key.mode === mode && key.endpointId === endpointId) holders.delete(`${key.createdAt}#${key.deliveryId}`);
    const free = cap - holders.size;
    const candidates = [...this.list(mode, endpointId).entries()]
      .filter(([key]) => !holders.has(key))
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .slice(0, Math.max(0, free));
    for (const [key] of candidates) holders.set(key, this.now().toISOString());
    return candidates.map(([, job]) => copy(job));
  }
  async startClaimed(jobs: readonly DeliveryJob[], startedAt: string, cap: number): Promise<StartedClaimed> {
    // Yield first, as a storage call would; then check and write at once.
    await Promise.resolve();
    const distinct = distinctDeliveries(jobs);
    const key = (job: DeliveryJob) => `${job.createdAt}#${job.deliveryId}`;
    let claimable: DeliveryJob[][] = [];
    let listable: DeliveryJob[][] = [];
    for (const group of jobsByEndpoint(distinct)) {
      const holders = this.holdersOf(group[0]!.mode, group[0]!.endpointId);
      // A record or claim there already (a replayed stream record): untouched, for the caller's usual road.
      if (group.some((job) => holders.has(key(job)) || this.records.records.has(keyString(job)))) continue;
      // All or none per endpoint: claimed with slots free for every job, else listed and started without a claim.
      if (group.length <= cap && holders.size + group.length <= cap) claimable.push(group);
      else listable.push(group);
    }
    // One write holds what DynamoDB's TransactWriteItems does, 100 actions (each job's waiting entry and record, a
    // claimed endpoint's slots): the claims first, then the listings, while they fit; the rest left untouched.
    let actions = 0;
    const fits = (group: DeliveryJob[], claim: boolean) => {
      const cost = 2 * group.length + (claim ? 1 : 0);
      if (actions + cost > ONE_WRITE_ACTIONS) return false;
      actions += cost;
      return true;
    };
    claimable = claimable.filter((group) => fits(group, true));
    listable = listable.filter((group) => fits(group, false));
    // Never listed alone: with nothing to claim, nothing is written (as the adapter sends no transaction).
    if (claimable.length === 0) return { claimed: [], listed: [] };
    // Checked and written with no wait between, as one transaction: two calls at once never both pass the cap.
    const write = (group: DeliveryJob[], claim: boolean) =>
      group.map((job) => {
        this.list(job.mode, job.endpointId).set(key(job), copy(job));
        this.records.records.set(keyString(job), newDeliveryRecord(job, startedAt));
        if (claim) this.holdersOf(job.mode, job.endpointId).set(key(job), this.now().toISOString());
        return copy(job);
      });
    return { claimed: claimable.flatMap((group) => write(group, true)), listed: listable.flatMap((group) => write(group, false)) };
  }
  async abandon(jobs: readonly DeliveryJob[]): Promise<void> {
    for (const job of jobs) await this.release(job);
  }
  async release(key: DeliveryKey): Promise<void> {
    this.holdersOf(key.mode, key.endpointId).delete(`${key.createdAt}#${key.deliveryId}`);
  }
  async holders(mode: Mode, endpointId: string): Promise<DeliveryKey[]> {
    return [...this.holdersOf(mode, endpointId).keys()].map((h) => {
      const at = h.lastIndexOf('#');
      return { mode, endpointId, createdAt: h.slice(0, at), deliveryId: h.slice(at + 1) };
    });
  }
  async stalePromotions(mode: Mode, endpointId: string, olderThanMs: number): Promise<DeliveryJob[]> {
    const before = this.now().getTime() - olderThanMs;
    const list = this.list(mode, endpointId);
    return [...this.holdersOf(mode, endpointId).entries()]
      .filter(([key, at]) => list.has(key) && Date.parse(at) <= before)
      .map(([key]) => copy(list.get(key)!));
  }
}

/** Endpoints with their secrets, for the delivery use cases (endpoint management has its own DynamoDB tests). */
export class MemoryWebhookEndpointStore implements WebhookEndpointStore {
  readonly endpoints = new Map<string, { endpoint: WebhookEndpoint; secrets: EndpointSecret[] }>();
  readonly healthWrites: { endpointId: string; health: EndpointHealth; disable?: { disabledReason: string } }[] = [];

  private static key(mode: Mode, companyId: string, endpointId: string) {
    return `${mode}\u0000${companyId}\u0000${endpointId}`;
  }

  put(endpoint: WebhookEndpoint, secrets: EndpointSecret[] = []): void {
    this.endpoints.set(MemoryWebhookEndpointStore.key(endpoint.mode, endpoint.companyId, endpoint.endpointId), {
      endpoint: copy(endpoint),
      secrets: copy(secrets),
    });
  }

  async create(endpoint: WebhookEndpoint, secrets: readonly EndpointSecret[]): Promise<void> {
    this.put(endpoint, [...secrets]);
  }

  async list(mode: Mode, companyId: string): Promise<WebhookEndpoint[]> {
    return [...this.endpoints.values()]
      .map((e) => e.endpoint)
      .filter((e) => e.mode === mode && e.companyId === companyId)
      .map(copy);
  }

  async get(mode: Mode, companyId: string, endpointId: string): Promise<WebhookEndpoint | undefined> {
    const found = this.endpoints.get(MemoryWebhookEndpointStore.key(mode, companyId, endpointId));
    return found && copy(found.endpoint);
  }

  async getWithSecrets(mode: Mode, companyId: string, endpointId: string) {
    const found = this.endpoints.get(MemoryWebhookEndpointStore.key(mode, companyId, endpointId));
    return found && copy(found);
  }

  async update(
    endpoint: WebhookEndpoint,
    expectedVersion: number,
    secrets: readonly EndpointSecret[] | undefined,
    _deadline?: unknown,
    options: { resetHealth?: boolean } = {},
  ) {
    // Yield first, as a storage call would (a health write may land between the caller's read and this).
    await Promise.resolve();
    const found = this.endpoints.get(MemoryWebhookEndpointStore.key(endpoint.mode, endpoint.companyId, endpoint.endpointId));
    if (!found) return 'gone' as const;
    if (found.endpoint.version !== expectedVersion) return 'stale' as const;
    if (options.resetHealth && found.endpoint.status !== 'disabled') return 'stale' as const;
    // The settings only, as the DynamoDB store writes them: the stored health stands unless reset.
    const { failingSince, lastFailureAt } = found.endpoint;
    const next: WebhookEndpoint = copy(endpoint);
    delete next.failingSince;
    delete next.lastFailureAt;
    if (failingSince !== undefined && !options.resetHealth) next.failingSince = failingSince;
    if (lastFailureAt !== undefined && !options.resetHealth) next.lastFailureAt = lastFailureAt;
    this.put(next, secrets ? [...secrets] : found.secrets);
    return 'updated' as const;
  }

  async delete(mode: Mode, companyId: string, endpointId: string): Promise<boolean> {
    return this.endpoints.delete(MemoryWebhookEndpointStore.key(mode, companyId, endpointId));
  }

  async recordHealth(mode: Mode, companyId: string, endpointId: string, health: EndpointHealth, disable?: { disabledReason: string }) {
    const found = this.endpoints.get(MemoryWebhookEndpointStore.key(mode, companyId, endpointId));
    if (!found) return 'gone' as const;
    if (disable && found.endpoint.status !== 'enabled') return 'unchanged' as const;
    this.healthWrites.push({ endpointId, health: copy(health), ...(disable ? { disable } : {}) });
    if (health.failingSince === undefined) {
      delete found.endpoint.failingSince;
      delete found.endpoint.lastFailureAt;
    } else {
      // As the DynamoDB store records a failure: by the stored run, whatever the caller read (endpoint-health.ts failureRecord).
      const failedAt = health.lastFailureAt ?? health.failingSince;
      const record = failureRecord(found.endpoint, { ...health, failingSince: health.failingSince });
      if (record === 'start') found.endpoint.failingSince = health.failingSince;
      if (record !== 'keep') found.endpoint.lastFailureAt = failedAt;
    }
    if (disable) {
      found.endpoint.status = 'disabled';
      found.endpoint.disabledReason = disable.disabledReason;
      found.endpoint.version++;
    }
    return 'recorded' as const;
  }
}
