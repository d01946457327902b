import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isForbiddenAddress } from './address-policy.js';

// [address, a word the reason must contain]
const FORBIDDEN: [string, string][] = [
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['::1', 'loopback'],
  ['0:0:0:0:0:0:0:1', 'loopback'],
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['::', 'unspecified'],
  ['10.0.0.1', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.1.1', 'private'],
  ['100.64.0.1', 'carrier-grade NAT'],
  ['100.127.255.255', 'carrier-grade NAT'],
  ['169.254.1.1', 'link-local'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local'],
  ['febf::1', 'link-local'],
  ['fc00::1', 'unique-local'],
  ['fd12:3456::1', 'unique-local'],
  ['fec0::1', 'site-local'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['ff02::1', 'multicast'],
  ['255.255.255.255', 'broadcast'],
  ['240.0.0.1', 'reserved'],
  ['192.0.2.1', 'documentation'],
  ['198.51.100.1', 'documentation'],
  ['203.0.113.1', 'documentation'],
  ['2001:db8::1', 'documentation'],
  ['198.18.0.1', 'benchmarking'],
  ['192.0.0.170', 'IETF'],
  ['169.254.169.254', 'metadata'],
  ['100.100.100.200', 'metadata'],
  ['fd00:ec2::254', 'metadata'],
  ['::ffff:127.0.0.1', 'IPv4-mapped IPv6 address of 127.0.0.1, a loopback'],
  ['::ffff:7f00:1', 'IPv4-mapped IPv6 address of 127.0.0.1, a loopback'],
  ['::ffff:a9fe:a9fe', 'IPv4-mapped IPv6 address of 169.254.169.254, the cloud metadata'],
  ['0:0:0:0:0:ffff:10.1.2.3', 'IPv4-mapped IPv6 address of 10.1.2.3, a private'],
  ['::ffff:127.0.0.1%eth0', 'IPv4-mapped IPv6 address of 127.0.0.1, a loopback'],
  ['::ffff:0:7f00:1', 'IPv4-translated IPv6 address of 127.0.0.1'],
  ['::127.0.0.1', 'IPv4-compatible IPv6 address of 127.0.0.1'],
  ['::7f00:1', 'IPv4-compatible IPv6 address of 127.0.0.1'],
  ['::8.8.8.8', 'IPv4-compatible IPv6 address (deprecated'],
  ['64:ff9b::7f00:1', 'NAT64 address (64:ff9b::/96) of 127.0.0.1'],
  ['64:ff9b::10.0.0.1', 'NAT64 address (64:ff9b::/96) of 10.0.0.1'],
  ['64:ff9b:1::808:808', 'local-use NAT64'],
  ['2002:7f00:1::1', '6to4 address (2002::/16) of 127.0.0.1'],
  ['2002:a9fe:a9fe::', '6to4 address (2002::/16) of 169.254.169.254'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
  ['2001::1', 'Teredo'],
  ['100::1', 'discard-only'],
  ['2001:10::1', 'ORCHID'],
  ['4000::1', 'not a global unicast'],
  ['::2:3:4:5', 'not a global unicast'],
];

const ALLOWED = [
  '8.8.8.8',
  '93.184.216.34',
  '1.1.1.1',
  '172.15.255.255',
  '172.32.0.1',
  '100.63.255.255',
  '100.128.0.1',
  '169.253.255.255',
  '223.255.255.255',
  '2606:4700:4700::1111',
  '2a00:1450:4001:80b::200e',
  '::ffff:8.8.8.8',
  '::ffff:808:808',
  '64:ff9b::8.8.8.8',
  '2002:808:808::1',
];

describe('isForbiddenAddress', () => {
  for (const [address, reason] of FORBIDDEN) {
    it(`refuses ${address} (${reason})`, () => {
      const got = isForbiddenAddress(address);
      assert.ok(got?.includes(reason), `${address}: expected a reason with "${reason}", got ${JSON.stringify(got)}`);
    });
  }

  it('allows public unicast addresses, also when embedded in IPv6 (mapped, NAT64, 6to4)', () => {
    for (const address of ALLOWED) assert.equal(isForbiddenAddress(address), undefined, address);
  });

  it('refuses what is not a plain IP address (shorthand IPv4 forms, names, brackets) instead of guessing', () => {
    for (const text of ['127.1', '0177.0.0.1', '0x7f.0.0.1', '2130706433', '[::1]', 'localhost', 'example.com', '']) {
      assert.equal(isForbiddenAddress(text), 'not a plain IP address', text);
    }
  });

  it('with the private-network setting, lets in loopback and private ranges, also in their IPv4-mapped forms', () => {
    for (const address of [
      '127.0.0.1',
      '127.1.2.3',
      '::1',
      '10.0.0.1',
      '172.16.0.1',
      '192.168.1.1',
      '100.64.0.1',
      'fd12:3456::1',
      '::ffff:127.0.0.1',
      '::ffff:10.1.2.3',
      '8.8.8.8',
    ]) {
      assert.equal(isForbiddenAddress(address, true), undefined, address);
    }
  });

  it('with the private-network setting, still refuses link-local, metadata, unspecified and other special addresses', () => {
    const refused: [string, string][] = [
      ['169.254.169.254', 'metadata'],
      ['169.254.0.23', 'link-local'],
      ['100.100.100.200', 'metadata'],
      ['fd00:ec2::254', 'metadata'],
      ['fe80::1', 'link-local'],
      ['fe80::1%eth0', 'link-local'],
      ['0.0.0.0', 'unspecified'],
      ['::', 'unspecified'],
      ['::ffff:169.254.169.254', 'IPv4-mapped IPv6 address of 169.254.169.254, the cloud metadata'],
      ['::ffff:a9fe:a9fe', 'metadata'],
      ['::ffff:0.0.0.0', 'unspecified'],
      ['64:ff9b::a9fe:a9fe', 'metadata'],
      ['2002:a9fe:a9fe::', 'metadata'],
      ['::127.0.0.1', 'deprecated'],
      ['192.0.0.192', 'IETF'],
      ['224.0.0.1', 'multicast'],
      ['255.255.255.255', 'broadcast'],
      ['fec0::1', 'site-local'],
    ];
    for (const [address, reason] of refused) {
      const got = isForbiddenAddress(address, true);
      assert.ok(got?.includes(reason), `${address}: expected a reason with "${reason}", got ${JSON.stringify(got)}`);
    }
  });
});
