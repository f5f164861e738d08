import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in of the Companies House public data API (there is no network here), so the
 * live-mode verifier can run against the same adapter it uses in AWS
 * (lib/adapters/companies-house/companies-house-registry.ts). It serves what that adapter asks:
 * `GET /company/{number}` with HTTP Basic auth (the API key as user name, empty password; 401
 * otherwise, as the real API), answering the profile fields of the real API's shape.
 *
 * Fixture numbers (documented in docs/lifecycle-design.md; any other number is 404):
 *
 * | number     | answer                                                                        |
 * |------------|-------------------------------------------------------------------------------|
 * | `01000001` | 200, active, `ACME WIDGETS LIMITED` (the README walk-through's debtor)        |
 * | `01000002` | 200, `dissolved`, `OLD TRADING LIMITED`                                       |
 * | `01000003` | 200, active, `COMPLETELY DIFFERENT HOLDINGS LIMITED` (a name mismatch)        |
 * | `01000404` | 404, as any number not listed here                                            |
 * | `01000429` | 429 with `Retry-After: 1` on its first request (per stand-in), then as `01000001` |
 * | `01000500` | 503 every time                                                                |
 * | `01000408` | 200 as `01000001`, but only after `slowMs` (default 10 s): longer than the adapter's timeout |
 * | `01000200` | 200 with a body that is not a company profile                                 |
 *
 * With `unlisted: 'active'` every number not listed answers as `01000001` instead (the bench's
 * bursts of many distinct numbers).
 *
 * Not wired into `npm start` yet (docs/lifecycle-design.md says how to run it alone meanwhile).
 */
export const STAND_IN_API_KEY = 'local-companies-house-key';

export const STAND_IN_FIXTURES = {
  ACTIVE: '01000001',
  DISSOLVED: '01000002',
  NAME_MISMATCH: '01000003',
  NOT_FOUND: '01000404',
  RATE_LIMITED_ONCE: '01000429',
  UNAVAILABLE: '01000500',
  SLOW: '01000408',
  UNREADABLE: '01000200',
} as const;

interface Company {
  company_name: string;
  company_status: string;
}
const ACME: Company = { company_name: 'ACME WIDGETS LIMITED', company_status: 'active' };
const PROFILES: Readonly<Record<string, Company>> = {
  [STAND_IN_FIXTURES.ACTIVE]: ACME,
  [STAND_IN_FIXTURES.DISSOLVED]: { company_name: 'OLD TRADING LIMITED', company_status: 'dissolved' },
  [STAND_IN_FIXTURES.NAME_MISMATCH]: { company_name: 'COMPLETELY DIFFERENT HOLDINGS LIMITED', company_status: 'active' },
  [STAND_IN_FIXTURES.RATE_LIMITED_ONCE]: ACME,
  [STAND_IN_FIXTURES.SLOW]: ACME,
};

/** The real API's profile, abridged to its usual top-level fields. */
function profile(companyNumber: string, company: Company): Record<string, unknown> {
  return {
    company_number: companyNumber,
    company_name: company.company_name,
    company_status: company.company_status,
    type: 'ltd',
    jurisdiction: 'england-wales',
    date_of_creation: '2010-04-01',
    registered_office_address: { address_line_1: '1 High Street', locality: 'London', postal_code: 'EC1A 1AA' },
    has_charges: false,
    has_insolvency_history: false,
    links: { self: `/company/${companyNumber}` },
  };
}

export interface StandInOptions {
  /** 0 (default): a free port. */
  port?: number;
  host?: string;
  apiKey?: string;
  slowMs?: number;
  /** What a number not listed above answers: 404 (default), or 200 active as `01000001`. */
  unlisted?: 'not-found' | 'active';
}

export interface CompaniesHouseStandIn {
  /** e.g. `http://127.0.0.1:41234`: the adapter's `baseUrl`. */
  url: string;
  /** Every request's path, in order (authorised or not). */
  readonly requests: string[];
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

function authorised(req: IncomingMessage, apiKey: string): boolean {
  const match = /^Basic ([A-Za-z0-9+/=]+)$/.exec(req.headers.authorization ?? '');
  return match !== null && Buffer.from(match[1]!, 'base64').toString('utf8') === `${apiKey}:`;
}

export async function startCompaniesHouseStandIn(options: StandInOptions = {}): Promise<CompaniesHouseStandIn> {
  const apiKey = options.apiKey ?? STAND_IN_API_KEY;
  const slowMs = options.slowMs ?? 10_000;
  const requests: string[] = [];
  const seen = new Map<string, number>();
  const timers = new Set<NodeJS.Timeout>();

  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://stand-in').pathname;
    requests.push(path);
    if (!authorised(req, apiKey)) {
      send(res, 401, { error: 'Invalid Authorization', type: 'ch:service' }, { 'WWW-Authenticate': 'Basic realm="Companies House API"' });
      return;
    }
    const match = /^\/company\/([A-Z0-9]{8})$/.exec(path);
    if (req.method !== 'GET' || !match) {
      send(res, 404, { errors: [{ error: 'not-found', type: 'ch:service' }] });
      return;
    }
    const number = match[1]!;
    const nth = seen.get(number) ?? 0;
    seen.set(number, nth + 1);
    if (number === STAND_IN_FIXTURES.RATE_LIMITED_ONCE && nth === 0) {
      send(res, 429, { error: 'Too Many Requests' }, { 'Retry-After': '1' });
      return;
    }
    if (number === STAND_IN_FIXTURES.UNAVAILABLE) {
      send(res, 503, { error: 'Service Unavailable' });
      return;
    }
    if (number === STAND_IN_FIXTURES.UNREADABLE) {
      send(res, 200, { items: [] });
      return;
    }
    const company = PROFILES[number] ?? (options.unlisted === 'active' && number !== STAND_IN_FIXTURES.NOT_FOUND ? ACME : undefined);
    if (!company) {
      send(res, 404, { errors: [{ error: 'company-profile-not-found', type: 'ch:service' }] });
      return;
    }
    if (number === STAND_IN_FIXTURES.SLOW) {
      const timer = setTimeout(() => {
        timers.delete(timer);
        if (!res.destroyed) send(res, 200, profile(number, company));
      }, slowMs);
      timers.add(timer);
      return;
    }
    send(res, 200, profile(number, company));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  return {
    url: `http://${address.includes(':') ? `[${address}]` : address}:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
