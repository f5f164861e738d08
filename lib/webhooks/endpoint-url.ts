import { InvalidRequestError, type FieldError } from '../errors.js';
import { classifyAddress, type AddressClass } from './address-class.js';

/**
 * The rules of a webhook endpoint's URL (product rules "Webhooks"), checked when an endpoint is
 * created or its URL changed. `https://` only, at most 2,048 characters, no user info, no
 * fragment, and a host that is either a public IP address or a DNS name; an IP literal outside
 * the public ranges (address-class.ts) is refused here, a name is resolved and its addresses
 * checked with the same classifier at creation and again at every delivery (the sender,
 * lib/adapters/webhooks/webhook-sender.ts).
 *
 * Names that can only mean this machine or its network are refused without resolving them:
 * `localhost` and `*.localhost` (RFC 6761 reserves them for loopback) and single-label names
 * (`intranet`, resolved through search domains and hosts files, never a partner's public host).
 *
 * Node's URL parser normalises every IPv4 spelling it accepts (`2130706433`, `0177.0.0.1`,
 * `0x7f.1`, `127.1`, `127.0.0.1.`, percent-encoded digits) to the dotted quad before we look at
 * the host, so one check covers them all; IPv6 hosts arrive in brackets.
 *
 * `allowLocalDevelopment` (npm start only, never a deployed stack): `http://localhost:<port>` and
 * `http://127.0.0.1:<port>` (or https) are accepted too, so a developer can point an endpoint at
 * a receiver on their machine.
 */
export const MAX_ENDPOINT_URL_LENGTH = 2_048;

export interface EndpointUrlOptions {
  allowLocalDevelopment?: boolean;
}

/** The hosts the local-development option accepts, and only those. */
export const LOCAL_DEVELOPMENT_HOSTS: readonly string[] = ['localhost', '127.0.0.1'];

const FIELD = 'url';

const CLASS_WORDS: Readonly<Record<Exclude<AddressClass, 'public' | 'not-an-ip-address'>, string>> = {
  unspecified: 'the unspecified address',
  'this-network': 'a "this network" address (0.0.0.0/8)',
  private: 'a private address',
  loopback: 'a loopback address',
  'link-local': 'a link-local address',
  'shared-cgnat': 'a shared (carrier-grade NAT) address',
  'protocol-assignments': 'an address reserved for protocol assignments',
  documentation: 'an address reserved for documentation',
  benchmarking: 'an address reserved for benchmarking',
  'relay-anycast': 'a 6to4 relay anycast address',
  multicast: 'a multicast address',
  reserved: 'a reserved address',
  broadcast: 'the broadcast address',
  'unique-local': 'a unique-local IPv6 address',
  'site-local': 'a site-local IPv6 address',
  'discard-only': 'a discard-only IPv6 address',
};

/** Why an address may not receive webhooks, in words a partner reads in a field error or a delivery's `error`. */
export function refusedAddressReason(address: string, cls: AddressClass): string {
  if (cls === 'public') return '';
  if (cls === 'not-an-ip-address') return `${address} is not an IP address`;
  return `${address} is ${CLASS_WORDS[cls]}, which cannot receive webhooks`;
}

/** The host as the classifier and a resolver take it: no brackets, no trailing dot, lower case. */
export function bareHostname(url: URL): string {
  const host = url.hostname.toLowerCase();
  if (host.startsWith('[') && host.endsWith(']')) return host.slice(1, -1);
  return host.endsWith('.') ? host.slice(0, -1) : host;
}

function isIpLiteral(url: URL): boolean {
  return classifyAddress(bareHostname(url)) !== 'not-an-ip-address';
}

/** Whether the URL is one the local-development option lets through (loopback, http or https). */
export function isLocalDevelopmentUrl(url: URL): boolean {
  return (url.protocol === 'http:' || url.protocol === 'https:') && LOCAL_DEVELOPMENT_HOSTS.includes(bareHostname(url));
}

/** What is wrong with a proposed endpoint URL, as field errors on `url`; empty when it is acceptable. */
export function endpointUrlProblems(input: string, options: EndpointUrlOptions = {}): FieldError[] {
  const problem = (message: string): FieldError[] => [{ field: FIELD, message }];
  if (input.length > MAX_ENDPOINT_URL_LENGTH) return problem(`url must be at most ${MAX_ENDPOINT_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    return problem('url must be an absolute https:// URL');
  }
  // The raw text is looked at too: the parser drops an empty fragment ("…/#") and empty user info ("https://@host").
  if (input.includes('#')) return problem('url must not have a fragment (#…)');
  const authority = input.slice(input.indexOf('//') + 2).split(/[/?]/, 1)[0] ?? '';
  if (url.username !== '' || url.password !== '' || authority.includes('@'))
    return problem('url must not carry user info (user:password@)');
  if (url.href.length > MAX_ENDPOINT_URL_LENGTH) {
    return problem(`url must be at most ${MAX_ENDPOINT_URL_LENGTH} characters once normalised (${url.href.length})`);
  }
  if (options.allowLocalDevelopment && isLocalDevelopmentUrl(url)) return [];
  if (url.protocol !== 'https:') return problem('url must start with https://');
  const host = bareHostname(url);
  if (isIpLiteral(url)) {
    const cls = classifyAddress(host);
    return cls === 'public' ? [] : problem(`url must reach a public address: ${refusedAddressReason(host, cls)}`);
  }
  if (host === 'localhost' || host.endsWith('.localhost')) return problem('url must reach a public address: localhost is this machine');
  if (!host.includes('.')) return problem('url must name a public host: a single-label name such as "' + host + '" is not one');
  return [];
}

/** The URL, normalised, or InvalidRequestError with field `url` errors. */
export function checkEndpointUrl(input: string, options: EndpointUrlOptions = {}): URL {
  const errors = endpointUrlProblems(input, options);
  if (errors.length > 0) throw new InvalidRequestError('The webhook endpoint URL is not acceptable.', errors);
  return new URL(input);
}

/**
 * The addresses a host name resolved to, judged together: every one must be public (or, under the
 * local-development option, loopback), since the resolver may hand any of them to the next caller.
 * Answers the reason for refusal, or undefined when all are acceptable.
 */
export function refusedResolution(hostname: string, addresses: readonly string[], options: EndpointUrlOptions = {}): string | undefined {
  if (addresses.length === 0) return `${hostname} resolves to no address`;
  for (const address of addresses) {
    const cls = classifyAddress(address);
    if (cls === 'public') continue;
    if (options.allowLocalDevelopment && cls === 'loopback') continue;
    return `${hostname} resolves to ${refusedAddressReason(address, cls)}`;
  }
  return undefined;
}
