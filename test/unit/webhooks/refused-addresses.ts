import type { AddressClass } from '../../../lib/webhooks/address-class.js';

/**
 * One address of every range a webhook may not reach, with the class it must be given: the URL
 * rules test them as IP literals, the sender as what a name resolves to.
 */
export const REFUSED_ADDRESSES: ReadonlyArray<[string, AddressClass]> = [
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'this-network'],
  ['10.0.0.1', 'private'],
  ['10.255.255.255', 'private'],
  ['100.64.0.1', 'shared-cgnat'],
  ['100.127.255.254', 'shared-cgnat'],
  ['127.0.0.1', 'loopback'],
  ['127.255.0.9', 'loopback'],
  ['169.254.169.254', 'link-local'],
  ['169.254.0.1', 'link-local'],
  ['172.16.0.1', 'private'],
  ['172.31.255.254', 'private'],
  ['192.0.0.8', 'protocol-assignments'],
  ['192.0.2.10', 'documentation'],
  ['192.88.99.1', 'relay-anycast'],
  ['192.168.1.1', 'private'],
  ['198.18.0.1', 'benchmarking'],
  ['198.19.255.255', 'benchmarking'],
  ['198.51.100.7', 'documentation'],
  ['203.0.113.9', 'documentation'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['240.0.0.1', 'reserved'],
  ['255.255.255.255', 'broadcast'],
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['::ffff:10.0.0.1', 'private'],
  ['::ffff:169.254.169.254', 'link-local'],
  ['::127.0.0.1', 'reserved'], // the deprecated IPv4-compatible form
  ['64:ff9b::10.0.0.1', 'private'], // NAT64
  ['64:ff9b::a9fe:a9fe', 'link-local'], // NAT64 of 169.254.169.254
  ['64:ff9b:1::1', 'reserved'], // local-use NAT64
  ['2002:7f00:1::1', 'loopback'], // 6to4 of 127.0.0.1
  ['2002:a9fe:a9fe::', 'link-local'], // 6to4 of 169.254.169.254
  ['2002:c0a8:101::1', 'private'], // 6to4 of 192.168.1.1
  ['100::1', 'discard-only'],
  ['fc00::1', 'unique-local'],
  ['fd12:3456:789a::1', 'unique-local'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local'],
  ['febf:ffff::1', 'link-local'],
  ['fec0::1', 'site-local'],
  ['ff02::1', 'multicast'],
  ['ff05::1:3', 'multicast'],
  ['2001:db8::1', 'documentation'],
  ['3fff::1', 'documentation'],
  ['2001::1', 'protocol-assignments'], // Teredo
  ['2001:2::1', 'protocol-assignments'], // benchmarking
  ['4000::1', 'reserved'],
  ['fd00:ec2::254', 'unique-local'], // the EC2 instance metadata service over IPv6
];

/** Public addresses, at the edges of the refused ranges among them. */
export const PUBLIC_ADDRESSES: readonly string[] = [
  '1.1.1.1',
  '8.8.8.8',
  '9.255.255.255',
  '11.0.0.0',
  '100.63.255.255',
  '100.128.0.0',
  '126.255.255.255',
  '128.0.0.0',
  '169.253.255.255',
  '169.255.0.0',
  '172.15.255.255',
  '172.32.0.0',
  '192.0.1.0',
  '192.167.255.255',
  '192.169.0.0',
  '198.17.255.255',
  '198.20.0.0',
  '223.255.255.255',
  '2606:4700:4700::1111',
  '2a00:1450:4001::200e',
  '::ffff:8.8.8.8',
  '64:ff9b::808:808',
  '2002:808:808::1',
  '2001:200::1',
];
