import * as z from 'zod';
import type { CompanyRegistry, RegistryAnswer } from '../../cases/verification/ports.js';

/**
 * The Companies House public data API as the verifier's CompanyRegistry: one `GET
 * {base}/company/{number}` (the company profile) per look-up, HTTP Basic auth with the API key as
 * the user name and an empty password.
 *
 * What it answers: 200 → the profile's `company_name` and `company_status`; 404 → not found;
 * 429 → rate limited (the key's allowance is 600 requests per 5 minutes), with the wait the
 * registry named in `Retry-After` or, failing that, `X-Ratelimit-Reset` (it often sends no
 * Retry-After); 5xx, a timeout or a network failure → unavailable. Anything else (401 for a refused
 * key, another status, a 200 it cannot read) throws CompaniesHouseError: an operator's problem,
 * not the case's. No retries here: the verifier schedules them (lib/cases/verification/).
 *
 * The key comes from the function it is given, asked on every look-up (the wiring reads it from
 * Secrets Manager and keeps it, so a rotated key is picked up when that cache is refreshed).
 */
export const COMPANIES_HOUSE_BASE_URL = 'https://api.company-information.service.gov.uk';
export const DEFAULT_REGISTRY_TIMEOUT_MS = 5_000;

export interface CompaniesHouseOptions {
  /** Without a trailing slash; the real API's, or the local stand-in's (infra/local/companies-house-stand-in.ts). */
  baseUrl?: string;
  apiKey: () => string | Promise<string>;
  /** The whole exchange, headers and body. */
  timeoutMs?: number;
  /** For the wait a 429 names as a date; Date.now unless a test fixes it. */
  now?: () => number;
}

export class CompaniesHouseError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'CompaniesHouseError';
  }
}

/** The profile fields read; the rest of the (large) profile is ignored. */
const profileSchema = z.object({
  company_name: z.string().min(1),
  company_status: z.string().min(1),
  company_number: z.string().optional(),
});

/**
 * How long a 429 asks us to wait, in ms: `Retry-After` as seconds or an HTTP date, else
 * `X-Ratelimit-Reset` (epoch seconds when the key's window starts again); undefined when neither
 * is usable.
 */
export function retryAfterMs(headers: Headers, now: number): number | undefined {
  const retryAfter = headers.get('retry-after')?.trim();
  if (retryAfter) {
    if (/^\d+$/.test(retryAfter)) return Number(retryAfter) * 1000;
    const date = Date.parse(retryAfter);
    if (!Number.isNaN(date)) return Math.max(0, date - now);
  }
  const reset = headers.get('x-ratelimit-reset')?.trim();
  if (reset && /^\d+$/.test(reset)) return Math.max(0, Number(reset) * 1000 - now);
  return undefined;
}

export class CompaniesHouseRegistry implements CompanyRegistry {
  private readonly baseUrl: string;
  private readonly timeoutMs: number;
  private readonly now: () => number;

  constructor(private readonly options: CompaniesHouseOptions) {
    this.baseUrl = (options.baseUrl ?? COMPANIES_HOUSE_BASE_URL).replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs ?? DEFAULT_REGISTRY_TIMEOUT_MS;
    this.now = options.now ?? Date.now;
  }

  async lookup(companyNumber: string): Promise<RegistryAnswer> {
    const key = await this.options.apiKey();
    const url = `${this.baseUrl}/company/${encodeURIComponent(companyNumber)}`;
    const signal = AbortSignal.timeout(this.timeoutMs);
    let response: Response;
    let body: string;
    try {
      response = await fetch(url, {
        headers: { Authorization: `Basic ${Buffer.from(`${key}:`, 'utf8').toString('base64')}`, Accept: 'application/json' },
        signal,
        redirect: 'error',
      });
      // Read every answer whole, within the same timeout: an unread body holds its connection.
      body = await response.text();
    } catch (error) {
      if (signal.aborted) return { kind: 'unavailable', detail: `no answer within ${this.timeoutMs} ms` };
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      return { kind: 'unavailable', detail: `network failure: ${cause?.code ?? cause?.message ?? (error as Error).message}` };
    }

    const { status } = response;
    if (status === 200) {
      let parsed: z.infer<typeof profileSchema>;
      try {
        parsed = profileSchema.parse(JSON.parse(body));
      } catch {
        throw new CompaniesHouseError(
          `Companies House answered 200 for ${companyNumber} with a body that is not a company profile`,
          status,
        );
      }
      return {
        kind: 'found',
        profile: {
          companyNumber: parsed.company_number ?? companyNumber,
          companyName: parsed.company_name,
          companyStatus: parsed.company_status,
        },
      };
    }
    if (status === 404) return { kind: 'not-found' };
    if (status === 429) {
      const wait = retryAfterMs(response.headers, this.now());
      return wait === undefined ? { kind: 'rate-limited' } : { kind: 'rate-limited', retryAfterMs: wait };
    }
    if (status >= 500) return { kind: 'unavailable', detail: `Companies House answered ${status}` };
    if (status === 401 || status === 403)
      throw new CompaniesHouseError(`Companies House refused the API key (${status}): check the registry key secret`, status);
    throw new CompaniesHouseError(`Companies House answered ${status} for ${companyNumber}`, status);
  }
}
