import { isIPv4, isIPv6 } from 'node:net';

/**
 * Which IP addresses a webhook may reach: the one classifier used when an endpoint's URL is checked
 * (an IP literal) and again at every delivery, against each address its host name resolves to and
 * the address actually connected to (product rules "Webhooks": DNS rebinding reaches nothing internal).
 *
 * IPv4 is public unless it lies in one of the special-purpose ranges below (IANA's IPv4
 * Special-Purpose Address Registry, the ones that are not globally reachable or are reserved).
 * IPv6 is the other way round, an allow-list: only global unicast (2000::/3) can be public, minus
 * its special-purpose blocks; everything outside it (::/8 with loopback, unspecified and the
 * deprecated IPv4-compatible form, 100::/64 discard, fc00::/7, fe80::/10, fec0::/10, ff00::/8, …)
 * is refused. Forms that carry an IPv4 address inside (IPv4-mapped ::ffff:0:0/96, NAT64
 * 64:ff9b::/96, 6to4 2002::/16) are judged by that IPv4 address: `::ffff:127.0.0.1` is loopback.
 */
export type AddressClass =
  | 'public'
  | 'unspecified'
  | 'this-network'
  | 'private'
  | 'loopback'
  | 'link-local'
  | 'shared-cgnat'
  | 'protocol-assignments'
  | 'documentation'
  | 'benchmarking'
  | 'relay-anycast'
  | 'multicast'
  | 'reserved'
  | 'broadcast'
  | 'unique-local'
  | 'site-local'
  | 'discard-only'
  | 'not-an-ip-address';

interface Range {
  /** The first address of the block, as bits. */
  base: bigint;
  prefix: number;
  class: AddressClass;
}

/** Most specific first: the first block that holds an address names its class. */
const IPV4_RANGES: ReadonlyArray<[string, number, AddressClass]> = [
  ['255.255.255.255', 32, 'broadcast'],
  ['0.0.0.0', 32, 'unspecified'],
  ['0.0.0.0', 8, 'this-network'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'shared-cgnat'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'], // includes the instance metadata service, 169.254.169.254
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'protocol-assignments'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.88.99.0', 24, 'relay-anycast'], // the deprecated 6to4 relays
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];

/** Blocks refused inside 2000::/3 (everything outside it is refused anyway). */
const IPV6_GLOBAL_EXCEPTIONS: ReadonlyArray<[string, number, AddressClass]> = [
  ['2001:db8::', 32, 'documentation'],
  ['2001::', 23, 'protocol-assignments'], // Teredo, ORCHID, benchmarking (2001:2::/48), AMT, …
  ['3fff::', 20, 'documentation'],
];

/** Blocks outside 2000::/3 whose class is worth naming; the rest of that space is `reserved`. */
const IPV6_NAMED_RANGES: ReadonlyArray<[string, number, AddressClass]> = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['100::', 64, 'discard-only'],
  ['fc00::', 7, 'unique-local'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'site-local'],
  ['ff00::', 8, 'multicast'],
];

const IPV4_MAPPED: Range = { base: parseIPv6('::ffff:0:0'), prefix: 96, class: 'reserved' };
const NAT64: Range = { base: parseIPv6('64:ff9b::'), prefix: 96, class: 'reserved' };
const SIX_TO_FOUR: Range = { base: parseIPv6('2002::'), prefix: 16, class: 'reserved' };
const GLOBAL_UNICAST: Range = { base: parseIPv6('2000::'), prefix: 3, class: 'public' };

const v4Ranges: Range[] = IPV4_RANGES.map(([a, prefix, c]) => ({ base: BigInt(parseIPv4(a)), prefix, class: c }));
const v6Exceptions: Range[] = IPV6_GLOBAL_EXCEPTIONS.map(([a, prefix, c]) => ({ base: parseIPv6(a), prefix, class: c }));
const v6Named: Range[] = IPV6_NAMED_RANGES.map(([a, prefix, c]) => ({ base: parseIPv6(a), prefix, class: c }));

function within(bits: bigint, width: number, range: Range): boolean {
  const shift = BigInt(width - range.prefix);
  return bits >> shift === range.base >> shift;
}

/** The class of an IP address in its text form (IPv4 dotted quad, or IPv6 with or without brackets or a zone). */
export function classifyAddress(address: string): AddressClass {
  const text = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  if (isIPv4(text)) return classifyIPv4(parseIPv4(text));
  // A zone (fe80::1%eth0) only exists on non-global addresses; classify what precedes it.
  const bare = text.split('%')[0]!;
  if (isIPv6(bare)) return classifyIPv6(parseIPv6(bare));
  return 'not-an-ip-address';
}

/** Whether a webhook may be sent to this address: only a public one. */
export function isPublicAddress(address: string): boolean {
  return classifyAddress(address) === 'public';
}

/** Whether the address is a loopback address (127.0.0.0/8, ::1, or either inside an IPv6 form that embeds IPv4). */
export function isLoopbackAddress(address: string): boolean {
  return classifyAddress(address) === 'loopback';
}

function classifyIPv4(value: number): AddressClass {
  const bits = BigInt(value);
  return v4Ranges.find((range) => within(bits, 32, range))?.class ?? 'public';
}

function classifyIPv6(bits: bigint): AddressClass {
  // IPv4 carried inside IPv6: the IPv4 address decides.
  if (within(bits, 128, IPV4_MAPPED) || within(bits, 128, NAT64)) return classifyIPv4(Number(bits & 0xffffffffn));
  if (within(bits, 128, SIX_TO_FOUR)) return classifyIPv4(Number((bits >> 80n) & 0xffffffffn));
  if (within(bits, 128, GLOBAL_UNICAST)) return v6Exceptions.find((range) => within(bits, 128, range))?.class ?? 'public';
  return v6Named.find((range) => within(bits, 128, range))?.class ?? 'reserved';
}

/** A dotted quad (already checked by isIPv4) as an unsigned 32-bit number. */
function parseIPv4(text: string): number {
  return text.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
}

/** An IPv6 address (already checked by isIPv6, or a constant here) as a 128-bit number; a dotted IPv4 tail is accepted. */
function parseIPv6(text: string): bigint {
  let groups = text;
  const lastColon = groups.lastIndexOf(':');
  const tail = groups.slice(lastColon + 1);
  if (tail.includes('.')) {
    const v4 = parseIPv4(tail);
    groups = `${groups.slice(0, lastColon + 1)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const [head, rest] = groups.split('::') as [string, string | undefined];
  const headParts = head === '' ? [] : head.split(':');
  const restParts = rest === undefined || rest === '' ? [] : rest.split(':');
  const missing = 8 - headParts.length - restParts.length;
  const all = rest === undefined ? headParts : [...headParts, ...Array<string>(missing).fill('0'), ...restParts];
  return all.reduce((acc, part) => (acc << 16n) | BigInt(parseInt(part, 16)), 0n);
}
