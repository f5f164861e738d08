import { randomUUID } from 'node:crypto';
import type { CachedAnswer, FetchLease, ProfileCache, RateLimiter, RatePermit } from '../cases/verification/ports.js';
import {
  blockWindow,
  DEFAULT_REGISTRY_RATE_LIMIT,
  EMPTY_RATE_WINDOW,
  takePermit,
  type RateLimitConfig,
  type RateWindowState,
} from '../cases/verification/rate-window.js';

/**
 * INTERIM, to be replaced: the profile cache and rate limiter held in this process only. They
 * keep every rule of the ports within one process (one request per number, never above the rate),
 * but not across concurrent Lambda instances: the shared DynamoDB adapters (`REGISTRY#PROFILE#…`,
 * `REGISTRY#RATE`, docs/lifecycle-design.md step 5) are being built on another branch, and
 * `verificationStores()` in production-adapters.ts is the one place that will point at them.
 * Until then the stack caps the worker's concurrency at one instance (infra/stack/debtor-verifier.ts),
 * so "one process" is "every worker".
 */
export class ProcessProfileCache implements ProfileCache {
  private readonly answers = new Map<string, CachedAnswer>();
  private readonly leases = new Map<string, { token: string; until: number }>();

  async get(companyNumber: string): Promise<CachedAnswer | undefined> {
    return this.answers.get(companyNumber);
  }

  async lease(companyNumber: string, request: { now: Date; until: Date; freshSince: Date }): Promise<FetchLease> {
    const cached = this.answers.get(companyNumber);
    if (cached && new Date(cached.fetchedAt) >= request.freshSince) return { kind: 'cached', cached };
    const held = this.leases.get(companyNumber);
    if (held && held.until > request.now.getTime()) return { kind: 'held', heldUntil: new Date(held.until) };
    const token = randomUUID();
    this.leases.set(companyNumber, { token, until: request.until.getTime() });
    return { kind: 'taken', token };
  }

  async put(companyNumber: string, cached: CachedAnswer, token: string): Promise<void> {
    this.answers.set(companyNumber, cached);
    await this.release(companyNumber, token);
  }

  async release(companyNumber: string, token: string): Promise<void> {
    if (this.leases.get(companyNumber)?.token === token) this.leases.delete(companyNumber);
  }
}

export class ProcessRateLimiter implements RateLimiter {
  private state: RateWindowState = EMPTY_RATE_WINDOW;

  constructor(private readonly config: RateLimitConfig = DEFAULT_REGISTRY_RATE_LIMIT) {}

  async take(now: Date): Promise<RatePermit> {
    const decision = takePermit(this.state, now.getTime(), this.config);
    if (!decision.granted) return { granted: false, retryAt: new Date(decision.retryAtMs) };
    this.state = decision.state;
    return { granted: true };
  }

  async blockUntil(until: Date): Promise<void> {
    this.state = blockWindow(this.state, until.getTime());
  }
}
