import { ConditionalCheckFailedException, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { RateLimiter, RatePermit } from '../../cases/verification/ports.js';
import {
  DEFAULT_REGISTRY_RATE_LIMIT,
  EMPTY_RATE_WINDOW,
  companyShare,
  planPermit,
  slotLength,
  type RateLimitConfig,
  type RateWindowState,
} from '../../cases/verification/rate-window.js';
import type { Deadline } from '../../deadline.js';
import { backoffMs, DEFAULT_RETRY_POLICY, sleep, withRetries } from '../retry.js';
import { ITEM_TYPES, keys, TTL_ATTRIBUTE, type ItemKey } from './table-keys.js';

/**
 * The registry rate limit across every worker in every Lambda instance (the RateLimiter port;
 * the rule is lib/cases/verification/rate-window.ts): the registry's window on one item,
 * `REGISTRY#RATE` / `WINDOW#<name>` (table-keys.ts), holding a count per 30-second slot
 * (`slot_<n>`), `blockedUntil` after a registry 429, and a `ttl` for housekeeping; and each
 * company's share of it on an item of the company's own (below).
 *
 * The hot item. Every grant is one UpdateItem that ADDs to the current slot under a condition on
 * the counts themselves (planPermit): the current slot below its cap, every earlier counted slot
 * no higher than this worker last saw it, no later slot begun, no block in force. There is no
 * version: grants by concurrent workers in the same slot do not invalidate each other, so a burst
 * of workers costs one write per permit on each item, not a storm of optimistic-lock failures. What makes
 * contention cheap:
 * - no read before a write: the state a worker last saw (its last write's new image, or a failed
 *   condition's old image) is its plan; a wrong guess costs one failed condition, which returns the
 *   item as it is (ALL_OLD) for the next plan;
 * - a refusal costs nothing: counts only grow and blocks only lengthen (old slots are removed only
 *   once no window counts them), so a state once seen refuses no more than the item would; a worker
 *   answers "not before T" from it without a request until T. Under a burst of 10,000 cases each
 *   instance writes about once per refusal period, the grants (at most the limit) aside;
 * - a failed condition that still leaves room (another worker's clock started a slot, a 429 block)
 *   is retried at most MAX_PLANS times with jittered backoff, then answered as a short wait.
 * Taking several permits per write was not chosen: permits held by one instance would be idle
 * while others are refused, and the conditional ADD already makes each grant one write per item. At
 * the default rate the item takes about 2 writes a second (500 per 5 minutes), far under a
 * partition's 1,000.
 *
 * The guarantee (never more than `limit` in any rolling window) holds whatever the concurrency,
 * as long as the workers' clocks agree to well within a slot (30 s): Lambda's are NTP-synchronised.
 *
 * Each company's share (rate-window.ts, `companyShare`) is a window of the same kind on an item of
 * its own (`WINDOW#<name>#COMPANY#<companyId>`), taken first: a company past its share is refused
 * there, from this process's view of its item more often than not, and never writes to the
 * registry's hot item. A grant is therefore two writes, the share's and the window's. A take the
 * process's view of the registry's window already refuses (full, or blocked after a 429) is
 * answered from it before the share is touched, so a refusal still costs no write; a company
 * permit followed by the registry's refusal all the same (another worker filled the window since)
 * is spent: it counts against that company only. Company items share the hot item's partition:
 * at most the company's share of writes per window each, the partition's 1,000 a second far off.
 */
const MAX_PLANS = 5;
const SLOT_ATTRIBUTE_PREFIX = 'slot_';
const HOUSEKEEPING_MARGIN_S = 24 * 60 * 60;
/** The registry's name in the item's key; one rate window per API key. */
export const COMPANIES_HOUSE_RATE_WINDOW = 'companies-house';

export interface DynamoRateLimiterOptions {
  /** The window's item (`WINDOW#<name>`): COMPANIES_HOUSE_RATE_WINDOW unless a test isolates its own. */
  name?: string;
  config?: RateLimitConfig;
  deadline?: () => Deadline;
  /** Jitter of the backoff after a failed condition; Math.random unless a test fixes it. */
  random?: () => number;
}

interface StoredWindow {
  blockedUntil?: number;
  [attribute: string]: unknown;
}

function stateOf(item: StoredWindow | undefined): RateWindowState {
  if (!item) return EMPTY_RATE_WINDOW;
  const counts: Record<string, number> = {};
  for (const [name, value] of Object.entries(item)) {
    if (name.startsWith(SLOT_ATTRIBUTE_PREFIX) && typeof value === 'number') counts[name.slice(SLOT_ATTRIBUTE_PREFIX.length)] = value;
  }
  return typeof item.blockedUntil === 'number' ? { counts, blockedUntil: item.blockedUntil } : { counts };
}

function isConditionFailure(error: unknown): error is ConditionalCheckFailedException {
  return error instanceof ConditionalCheckFailedException || (error as { name?: string })?.name === 'ConditionalCheckFailedException';
}

function oldImage(error: ConditionalCheckFailedException): StoredWindow | undefined {
  const raw = error.Item as Record<string, AttributeValue> | undefined;
  return raw ? (unmarshall(raw) as StoredWindow) : undefined;
}

/**
 * The most company windows one process keeps the last seen state of (the least recently written
 * forgotten first): a window forgotten costs one failed condition when its company comes back,
 * never a wrong grant.
 */
const MAX_COMPANY_WINDOWS = 1_000;

export class DynamoRegistryRateLimiter implements RateLimiter {
  private readonly name: string;
  readonly config: RateLimitConfig;
  /** Each company's window: the registry's, with the company's share of its limit. */
  private readonly shareConfig: RateLimitConfig;
  private readonly random: () => number;
  /** The registry's window as this process last saw it: the plan of the next take (see the module comment). */
  private seen: RateWindowState = EMPTY_RATE_WINDOW;
  /** The same for each company's window, by company id, least recently used first. */
  private readonly companies = new Map<string, RateWindowState>();
  /** Conditional writes sent (granted or not) to both kinds of window, for the bench's figures. */
  writes = 0;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly options: DynamoRateLimiterOptions = {},
  ) {
    this.name = options.name ?? COMPANIES_HOUSE_RATE_WINDOW;
    this.config = options.config ?? DEFAULT_REGISTRY_RATE_LIMIT;
    this.shareConfig = companyShare(this.config);
    this.random = options.random ?? Math.random;
  }

  async take(now: Date, companyId: string): Promise<RatePermit> {
    // The registry's window as last seen refuses: no share is spent on a request that cannot be made.
    const known = planPermit(this.seen, now.getTime(), this.config);
    if (!known.granted) return { granted: false, retryAt: new Date(known.retryAtMs), limitedBy: 'registry' };
    const share = await this.takeFrom(
      keys.registryCompanyShare(this.name, companyId),
      this.companies.get(companyId) ?? EMPTY_RATE_WINDOW,
      (state) => {
        this.companies.delete(companyId);
        this.companies.set(companyId, state);
        if (this.companies.size > MAX_COMPANY_WINDOWS) this.companies.delete(this.companies.keys().next().value as string);
      },
      this.shareConfig,
      now,
    );
    if (!share.granted) return { granted: false, retryAt: share.retryAt, limitedBy: 'company' };
    const registry = await this.takeFrom(keys.registryRateWindow(this.name), this.seen, (state) => (this.seen = state), this.config, now);
    return registry.granted ? registry : { granted: false, retryAt: registry.retryAt, limitedBy: 'registry' };
  }

  /** One permit from one window item, planned from the state last seen (`seen`), which `keep` replaces. */
  private async takeFrom(
    key: ItemKey,
    seen: RateWindowState,
    keep: (state: RateWindowState) => void,
    config: RateLimitConfig,
    now: Date,
  ): Promise<{ granted: true } | { granted: false; retryAt: Date }> {
    const nowMs = now.getTime();
    for (let plans = 1; ; plans++) {
      const plan = planPermit(seen, nowMs, config);
      if (!plan.granted) return { granted: false, retryAt: new Date(plan.retryAtMs) };
      const names: Record<string, string> = { '#type': 'type', '#ttl': TTL_ATTRIBUTE, '#slot': `${SLOT_ATTRIBUTE_PREFIX}${plan.slot}` };
      const values: Record<string, unknown> = {
        ':type': ITEM_TYPES.registryRateWindow,
        ':one': 1,
        ':cap': plan.slotCap,
        ':now': nowMs,
        ':slot': plan.slot,
        ':ttl': this.ttl(nowMs),
      };
      const conditions = ['(attribute_not_exists(#slot) OR #slot < :cap)', '(attribute_not_exists(blockedUntil) OR blockedUntil <= :now)'];
      conditions.push('(attribute_not_exists(latestSlot) OR latestSlot <= :slot)');
      Object.entries(plan.earlier).forEach(([slot, count], i) => {
        names[`#e${i}`] = `${SLOT_ATTRIBUTE_PREFIX}${slot}`;
        values[`:e${i}`] = count;
        conditions.push(`(attribute_not_exists(#e${i}) OR #e${i} <= :e${i})`);
      });
      // Slots no window will count again (`latestSlot` only moves forward): kept out of the hot item.
      const dropped = Object.keys(seen.counts).filter((slot) => Number(slot) < plan.slot - config.slots);
      dropped.forEach((slot, i) => (names[`#d${i}`] = `${SLOT_ATTRIBUTE_PREFIX}${slot}`));
      const remove = dropped.length > 0 ? ` REMOVE ${dropped.map((_, i) => `#d${i}`).join(', ')}` : '';
      try {
        this.writes++;
        const out = await withRetries(
          (options) =>
            this.client.send(
              new UpdateCommand({
                TableName: this.tableName,
                Key: key,
                UpdateExpression: `SET #type = :type, latestSlot = :slot, #ttl = :ttl ADD #slot :one${remove}`,
                ConditionExpression: conditions.join(' AND '),
                ExpressionAttributeNames: names,
                ExpressionAttributeValues: values,
                ReturnValues: 'ALL_NEW',
                ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
              }),
              options,
            ),
          this.options.deadline?.(),
        );
        keep(stateOf(out.Attributes as StoredWindow | undefined));
        return { granted: true };
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        seen = stateOf(oldImage(error));
        keep(seen);
      }
      if (plans >= MAX_PLANS) {
        // Still room by the item's last state but no write went through: come back shortly rather than spin.
        return { granted: false, retryAt: new Date(nowMs + slotLength(config) / 10) };
      }
      await sleep(backoffMs(plans, DEFAULT_RETRY_POLICY, this.random));
    }
  }

  async blockUntil(until: Date): Promise<void> {
    const untilMs = until.getTime();
    try {
      const out = await withRetries(
        (options) =>
          this.client.send(
            new UpdateCommand({
              TableName: this.tableName,
              Key: keys.registryRateWindow(this.name),
              UpdateExpression: 'SET #type = :type, blockedUntil = :until, #ttl = :ttl',
              // A block only ever lengthens: a shorter wait named by a later 429 does not lift a longer one.
              ConditionExpression: 'attribute_not_exists(blockedUntil) OR blockedUntil < :until',
              ExpressionAttributeNames: { '#type': 'type', '#ttl': TTL_ATTRIBUTE },
              ExpressionAttributeValues: { ':type': ITEM_TYPES.registryRateWindow, ':until': untilMs, ':ttl': this.ttl(untilMs) },
              ReturnValues: 'ALL_NEW',
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            }),
            options,
          ),
        this.options.deadline?.(),
      );
      this.seen = stateOf(out.Attributes as StoredWindow | undefined);
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      this.seen = stateOf(oldImage(error));
    }
  }

  /** Cleared a day after the last window it could matter to: the counts and the block are the state, the TTL only housekeeping. */
  private ttl(fromMs: number): number {
    return Math.ceil((fromMs + this.config.windowMs + slotLength(this.config)) / 1000) + HOUSEKEEPING_MARGIN_S;
  }
}
