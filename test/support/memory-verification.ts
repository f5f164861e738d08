import type {
  CachedAnswer,
  CompanyRegistry,
  FetchLease,
  ProfileCache,
  RateLimiter,
  RatePermit,
  RegistryAnswer,
} from '../../lib/cases/verification/ports.js';
import {
  EMPTY_RATE_WINDOW,
  DEFAULT_REGISTRY_RATE_LIMIT,
  blockWindow,
  companyShare,
  planPermit,
  takePermit,
  type RateLimitConfig,
  type RateWindowState,
} from '../../lib/cases/verification/rate-window.js';

/**
 * The verification ports in memory, for the fast tier: the same semantics as shared stores
 * (each operation atomic; every method first yields to the event loop, so concurrent callers
 * interleave between operations as workers on a shared table do).
 */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

export class MemoryProfileCache implements ProfileCache {
  readonly answers = new Map<string, CachedAnswer>();
  readonly leases = new Map<string, { token: string; until: number }>();
  private nextToken = 0;

  async get(companyNumber: string): Promise<CachedAnswer | undefined> {
    await turn();
    return this.answers.get(companyNumber);
  }

  async lease(companyNumber: string, request: { now: Date; until: Date; freshSince: Date }): Promise<FetchLease> {
    await turn();
    const cached = this.answers.get(companyNumber);
    if (cached && new Date(cached.fetchedAt) >= request.freshSince) return { kind: 'cached', cached };
    const held = this.leases.get(companyNumber);
    if (held && held.until > request.now.getTime()) return { kind: 'held', heldUntil: new Date(held.until) };
    const token = `lease-${++this.nextToken}`;
    this.leases.set(companyNumber, { token, until: request.until.getTime() });
    return { kind: 'taken', token };
  }

  async put(companyNumber: string, cached: CachedAnswer, token: string): Promise<void> {
    await turn();
    // An older answer never replaces a newer one (a slow worker whose lease was taken over).
    const stored = this.answers.get(companyNumber);
    if (!stored || stored.fetchedAt <= cached.fetchedAt) this.answers.set(companyNumber, cached);
    if (this.leases.get(companyNumber)?.token === token) this.leases.delete(companyNumber);
  }

  async release(companyNumber: string, token: string): Promise<void> {
    await turn();
    if (this.leases.get(companyNumber)?.token === token) this.leases.delete(companyNumber);
  }
}

/**
 * The shared rate rule (lib/cases/verification/rate-window.ts) over one state every caller shares,
 * and each company's share over a state of its own, taken first unless the shared state already
 * refuses, each step atomic on its own (as the two items are: a company permit followed by the
 * registry's refusal, another caller having filled the window between the two, is spent).
 */
export class MemoryRateLimiter implements RateLimiter {
  state: RateWindowState = EMPTY_RATE_WINDOW;
  /** Each company's window, by company id. */
  readonly companies = new Map<string, RateWindowState>();
  /** Epoch ms of every permit granted, for tests that check the rolling windows. */
  readonly granted: number[] = [];
  /** The companies of those permits, in the same order. */
  readonly grantedTo: string[] = [];

  constructor(readonly config: RateLimitConfig = DEFAULT_REGISTRY_RATE_LIMIT) {}

  async take(now: Date, companyId: string): Promise<RatePermit> {
    await turn();
    // As the adapter: a window that refuses now costs the company's share nothing.
    const known = planPermit(this.state, now.getTime(), this.config);
    if (!known.granted) return { granted: false, retryAt: new Date(known.retryAtMs), limitedBy: 'registry' };
    const share = takePermit(this.companies.get(companyId) ?? EMPTY_RATE_WINDOW, now.getTime(), companyShare(this.config));
    if (!share.granted) return { granted: false, retryAt: new Date(share.retryAtMs), limitedBy: 'company' };
    this.companies.set(companyId, share.state);
    await turn();
    const decision = takePermit(this.state, now.getTime(), this.config);
    if (!decision.granted) return { granted: false, retryAt: new Date(decision.retryAtMs), limitedBy: 'registry' };
    this.state = decision.state;
    this.granted.push(now.getTime());
    this.grantedTo.push(companyId);
    return { granted: true };
  }

  async blockUntil(until: Date): Promise<void> {
    await turn();
    this.state = blockWindow(this.state, until.getTime());
  }
}

/** A registry answering from a script per number (the last answer repeats), counting every request. */
export class ScriptedRegistry implements CompanyRegistry {
  readonly requests: string[] = [];
  constructor(private readonly script: (companyNumber: string, nth: number) => RegistryAnswer | Error) {}

  async lookup(companyNumber: string): Promise<RegistryAnswer> {
    const nth = this.requests.filter((n) => n === companyNumber).length;
    this.requests.push(companyNumber);
    await turn();
    const answer = this.script(companyNumber, nth);
    if (answer instanceof Error) throw answer;
    return answer;
  }
}
