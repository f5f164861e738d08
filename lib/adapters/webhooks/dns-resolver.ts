import { Resolver } from 'node:dns/promises';
import type { HostResolver } from '../../webhooks/ports.js';

/**
 * Webhook host names resolved on their own clock (product rules "Webhook isolation and
 * operators"): with c-ares (`dns.promises.Resolver`), which sends its queries from its own sockets
 * on the event loop, never with `dns.lookup`, whose getaddrinfo calls take threads of libuv's pool
 * (4 threads, of which slow I/O such as getaddrinfo gets 2): two names that never answer held
 * both, and every other name, file read or zlib call of the process waited behind them.
 *
 * Each name is asked for its A and AAAA records at once; every address found is answered, IPv4
 * first (the sender connects to the first IPv4 one, address-class.ts judges them all). A name with
 * none of either is an error (ENOTFOUND, ENODATA, or what the server said).
 *
 * The clock: each query waits DNS_QUERY_TIMEOUT_MS for an answer and is sent DNS_QUERY_TRIES times
 * (one retransmission for a lost UDP packet; c-ares may lengthen the later waits), and the whole
 * resolution ends after RESOLUTION_TIMEOUT_MS whatever c-ares does, with ResolutionTimeoutError
 * (`ETIMEOUT`), so a name that never answers fails its attempt inside the attempt's 10 s, leaving
 * at least 7 s to connect, shake hands and hear the answer. A healthy resolver answers in
 * milliseconds (a recursive lookup not yet cached, in some hundreds). A family still unanswered at
 * the deadline while the other has answered is left out: the connection only ever goes to an
 * address that was checked, so an address never seen cannot be reached.
 *
 * Each resolution has a c-ares channel of its own (about 0.2 ms to make), cancelled at the
 * deadline: nothing of a name that never answers outlives its attempt, and no hanging name shares
 * a socket, a timer or a retry with another name's queries.
 *
 * `localhost` and `*.localhost` are this machine (RFC 6761), answered without asking DNS, as the
 * hosts file answered them for dns.lookup (c-ares reads no hosts file for resolve4): the endpoint
 * URL rules let them through only under npm start's local-development option.
 */
export const RESOLUTION_TIMEOUT_MS = 3_000;
export const DNS_QUERY_TIMEOUT_MS = 1_000;
export const DNS_QUERY_TRIES = 2;

export interface DnsResolverOptions {
  /**
   * The name servers to ask (`ip` or `ip:port`): the system's (/etc/resolv.conf) when left out.
   * Given only locally (WEBHOOK_DNS_SERVERS: the tests' and the bench's loopback DNS server).
   */
  servers?: readonly string[];
  /** RESOLUTION_TIMEOUT_MS unless a test shortens it. */
  timeoutMs?: number;
}

export class ResolutionTimeoutError extends Error {
  readonly code = 'ETIMEOUT';
  constructor(timeoutMs: number) {
    super(`no DNS answer within ${timeoutMs} ms`);
    this.name = 'ResolutionTimeoutError';
  }
}

const LOOPBACK = ['127.0.0.1', '::1'];

type Answer = { addresses: string[] } | { error: { code?: string } };

/** A resolver for the sender and endpoint creation alike: each name on a c-ares channel of its own, under the timeout. */
export function dnsResolver(options: DnsResolverOptions = {}): HostResolver {
  const timeoutMs = options.timeoutMs ?? RESOLUTION_TIMEOUT_MS;
  const servers = options.servers ? [...options.servers] : undefined;

  return async (hostname) => {
    const name = hostname.toLowerCase();
    if (name === 'localhost' || name.endsWith('.localhost')) return [...LOOPBACK];
    const channel = new Resolver({ timeout: DNS_QUERY_TIMEOUT_MS, tries: DNS_QUERY_TRIES });
    if (servers) channel.setServers(servers);
    const answers: (Answer | undefined)[] = [undefined, undefined];
    const settled = [channel.resolve4(name), channel.resolve6(name)].map((query, i) =>
      query.then(
        (addresses) => void (answers[i] = { addresses }),
        (error: { code?: string }) => void (answers[i] = { error }),
      ),
    );
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    try {
      await Promise.race([Promise.all(settled), deadline]);
    } finally {
      clearTimeout(timer);
    }
    const found = [...answers];
    // Whatever is still asked ends now (its promise settles with ECANCELLED, after `found` was taken).
    if (found.includes(undefined)) channel.cancel();
    const addresses = found.flatMap((a) => (a && 'addresses' in a ? a.addresses : []));
    if (addresses.length > 0) return addresses;
    const errors = found.flatMap((a) => (a && 'error' in a ? [a.error] : []));
    // Unanswered at the deadline, or c-ares's own timeout first: the same failure, in one wording.
    if (errors.length < found.length || errors.some((e) => e.code === 'ETIMEOUT')) throw new ResolutionTimeoutError(timeoutMs);
    // The most telling error: what the server said (SERVFAIL, REFUSED…) before "no such name", before "no such record".
    const rank = (e: { code?: string }) => (e.code === 'ENODATA' ? 2 : e.code === 'ENOTFOUND' ? 1 : 0);
    throw errors.sort((a, b) => rank(a) - rank(b))[0];
  };
}
