import http from 'node:http';
import https from 'node:https';
import { isIPv4 } from 'node:net';
import { performance } from 'node:perf_hooks';
import { classifyAddress } from '../../webhooks/address-class.js';
import { bareHostname, endpointUrlProblems, refusedResolution } from '../../webhooks/endpoint-url.js';
import type { HostResolver, OutgoingWebhook, SentWebhook } from '../../webhooks/ports.js';
import { signatureHeaders } from '../../webhooks/signature.js';
import { dnsResolver, type DnsResolverOptions } from './dns-resolver.js';

/**
 * Sends one webhook attempt, safe against server-side request forgery (product rules "Webhooks"):
 *
 * - The URL is checked again by the endpoint URL rules (lib/webhooks/endpoint-url.ts).
 * - The host name is resolved once, to all its addresses, and every address must be public
 *   (address-class.ts): a name with one private address among public ones is refused, since a
 *   resolver may hand out any of them. Resolution is c-ares's (dns-resolver.ts: no thread of
 *   libuv's pool, RESOLUTION_TIMEOUT_MS of the attempt at most), so a name that never answers
 *   delays nothing but its own attempt. Once the addresses are checked, `onResolved` is called:
 *   the delivery's slow-answer mark counts from there, not from the start of the resolution.
 * - The connection goes to the checked address itself (`host` is the IP, `servername` carries the
 *   name for TLS SNI and certificate checking, the `Host` header carries it for HTTP), so nothing
 *   resolves the name a second time: a DNS answer that changes between check and connect
 *   (rebinding) reaches nothing.
 * - No redirect is followed (node:http never follows one): a 3xx is a failed attempt.
 * - No proxy: the requests go through this sender's own agents, which take no proxy settings, so
 *   neither HTTP(S)_PROXY nor Node 24's NODE_USE_ENV_PROXY (which only the global agents and fetch
 *   read) can route a delivery elsewhere.
 * - Only Content-Type, User-Agent and the three webhook-* headers are sent (plus what HTTP itself
 *   needs: Host, Content-Length, Connection); no credentials, no tracing or internal headers.
 * - One timeout for the whole attempt (resolution, connection, TLS, the answer's status and the
 *   part of its body read); at most MAX_RESPONSE_BYTES of the body are read, then the connection
 *   is closed: a receiver cannot hold the sender with a huge or endless answer.
 *
 * It never throws for anything a receiver or the network does: every failure is an outcome with
 * `error`. Success is a 2xx status.
 */
export const DELIVERY_TIMEOUT_MS = 10_000;
export const MAX_RESPONSE_BYTES = 4_096;
export const USER_AGENT = 'PartnerCaseAPI-Webhooks/1';

// The port is the domain's (creation checks names through it too); re-exported for the sender's callers.
export type { HostResolver };

/** The system's name servers (resolv.conf), asked through c-ares (dns-resolver.ts): the sender's resolver unless given one. */
export const systemResolver: HostResolver = dnsResolver();

export interface WebhookSenderOptions {
  /** The system resolver unless the wiring (webhookResolver) or a test gives one. */
  resolver?: HostResolver;
  /** Without `resolver`: a c-ares resolver of its own with these name servers and timeout (the tests' loopback DNS server). */
  dns?: DnsResolverOptions;
  timeoutMs?: number;
  maxResponseBytes?: number;
  /** npm start only: loopback URLs and addresses are accepted (endpoint-url.ts). */
  allowLocalDevelopment?: boolean;
  /** Extra trust anchors for a test's own TLS receiver; deployed senders use Node's bundled CAs only. */
  ca?: string | Buffer;
  /** The attempt's time (its webhook-timestamp); new Date() unless a test fixes it. */
  now?: () => Date;
}

/** The attempt and its outcome are the domain's port types (lib/webhooks/ports.ts), named as this sender has always named them. */
export type WebhookAttempt = OutgoingWebhook;
export type AttemptOutcome = SentWebhook;

type Settle = (result: { statusCode?: number; error?: string; address?: string }) => void;

export class WebhookSender {
  private readonly resolver: HostResolver;
  private readonly timeoutMs: number;
  private readonly maxResponseBytes: number;
  private readonly now: () => Date;
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;

  constructor(private readonly options: WebhookSenderOptions = {}) {
    this.resolver = options.resolver ?? (options.dns ? dnsResolver(options.dns) : systemResolver);
    this.timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
    this.maxResponseBytes = options.maxResponseBytes ?? MAX_RESPONSE_BYTES;
    this.now = options.now ?? (() => new Date());
    // One connection per attempt: no socket of an earlier delivery is reused, so every attempt
    // connects to the address it checked, and a receiver's stale keep-alive cannot fail an attempt.
    this.httpAgent = new http.Agent({ keepAlive: false });
    this.httpsAgent = new https.Agent({ keepAlive: false, ...(options.ca ? { ca: options.ca } : {}) });
  }

  async send(attempt: WebhookAttempt): Promise<AttemptOutcome> {
    const at = this.now();
    const started = performance.now();
    const result = await new Promise<{ statusCode?: number; error?: string; address?: string }>((resolve) => {
      const controller = new AbortController();
      let settled = false;
      // The status decides (any 2xx within the timeout): once it has arrived, a body still trickling in at the timeout is cut off, not held against the receiver.
      const answered: { statusCode?: number; address?: string } = {};
      const timer = setTimeout(
        () =>
          settle(
            answered.statusCode === undefined
              ? { error: `no answer within ${this.timeoutMs} ms` }
              : { ...answered, ...redirectError(answered.statusCode) },
          ),
        this.timeoutMs,
      );
      const settle: Settle = (value) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        controller.abort();
        resolve(value);
      };
      this.exchange(attempt, at, controller.signal, settle, answered).catch((error: unknown) => settle({ error: describe(error) }));
    });
    const durationMs = Math.round(performance.now() - started);
    const delivered = result.error === undefined && result.statusCode !== undefined && result.statusCode >= 200 && result.statusCode < 300;
    return {
      at: at.toISOString(),
      delivered,
      ...(result.statusCode !== undefined ? { statusCode: result.statusCode } : {}),
      durationMs,
      ...(result.error !== undefined ? { error: result.error } : {}),
      ...(result.address !== undefined ? { address: result.address } : {}),
    };
  }

  private async exchange(
    attempt: WebhookAttempt,
    at: Date,
    signal: AbortSignal,
    settle: Settle,
    answered: { statusCode?: number; address?: string },
  ): Promise<void> {
    const local = { allowLocalDevelopment: this.options.allowLocalDevelopment ?? false };
    const problems = endpointUrlProblems(attempt.url, local);
    if (problems.length > 0) return settle({ error: problems.map((p) => p.message).join('; ') });
    const url = new URL(attempt.url);
    const hostname = bareHostname(url);
    const literal = classifyAddress(hostname) !== 'not-an-ip-address';

    let addresses: string[];
    try {
      addresses = literal ? [hostname] : await this.resolver(hostname);
    } catch (error) {
      return settle({ error: `could not resolve ${hostname}: ${describe(error)}` });
    }
    if (signal.aborted) return;
    const refused = refusedResolution(hostname, addresses, local);
    if (refused) return settle({ error: refused });
    // IPv4 first: a Lambda function outside a dual-stack VPC has no IPv6 route out.
    const address = addresses.find((a) => isIPv4(a)) ?? addresses[0]!;
    attempt.onResolved?.();

    const body = Buffer.from(attempt.payload, 'utf8');
    const headers = {
      host: url.host,
      'content-type': 'application/json',
      'content-length': String(body.length),
      'user-agent': USER_AGENT,
      ...signatureHeaders(attempt.eventId, attempt.payload, at, attempt.secrets),
    };
    const secure = url.protocol === 'https:';
    const requestOptions: https.RequestOptions = {
      method: 'POST',
      host: address,
      port: url.port === '' ? (secure ? 443 : 80) : Number(url.port),
      path: `${url.pathname}${url.search}`,
      headers,
      agent: secure ? this.httpsAgent : this.httpAgent,
      signal,
      // SNI and the certificate's name check use the host name; an IP-literal URL checks the IP (RFC 6066 forbids an IP as SNI).
      ...(secure && !literal ? { servername: hostname } : {}),
    };
    const request = (secure ? https : http).request(requestOptions, (response) => {
      const statusCode = response.statusCode;
      answered.statusCode = statusCode;
      answered.address = address;
      let read = 0;
      const done = () => {
        settle({ ...(statusCode !== undefined ? { statusCode } : {}), ...redirectError(statusCode), address });
        response.destroy();
      };
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > this.maxResponseBytes) done();
      });
      response.on('end', done);
      response.on('close', done);
      response.on('error', done);
    });
    request.on('error', (error) => settle({ error: describe(error), address }));
    request.end(body);
  }
}

function redirectError(statusCode: number | undefined): { error?: string } {
  return statusCode !== undefined && statusCode >= 300 && statusCode < 400 ? { error: `redirect (${statusCode}) not followed` } : {};
}

/** A failure in words for the delivery log: the system error code where there is one. */
function describe(error: unknown): string {
  const e = error as { code?: string; message?: string };
  if (e?.code && e.message && !e.message.includes(e.code)) return `${e.code}: ${e.message}`;
  return e?.message ?? String(error);
}
