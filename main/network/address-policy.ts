import { BlockList, isIP } from 'node:net';

/**
 * Which IP addresses a connection may never reach: anything that is not a public unicast address
 * on the internet. A remote MCP server is always public; an address on this machine, its networks
 * or its cloud provider's metadata service is where a forged URL would do harm (SSRF).
 *
 * The private-network setting (local development) lets in the ranges marked `private` only:
 * loopback and the private networks. Link-local and metadata addresses, the unspecified address and
 * every other special range stay refused whatever the setting: no MCP server is reached there.
 */

interface Range {
  network: string;
  prefix: number;
  reason: string;
  /** Loopback or a private network: allowed with the private-network setting. */
  private?: true;
}

// Checked in order, so the metadata services (never allowed) come before the private ranges holding them.
const IPV4_RANGES: Range[] = [
  { network: '169.254.169.254', prefix: 32, reason: 'the cloud metadata service address' },
  { network: '100.100.100.200', prefix: 32, reason: 'the cloud metadata service address (Alibaba Cloud)' },
  { network: '0.0.0.0', prefix: 8, reason: 'an unspecified ("this network") address (0.0.0.0/8)' },
  { network: '10.0.0.0', prefix: 8, reason: 'a private address (10.0.0.0/8)', private: true },
  { network: '100.64.0.0', prefix: 10, reason: 'a carrier-grade NAT address (100.64.0.0/10)', private: true },
  { network: '127.0.0.0', prefix: 8, reason: 'a loopback address (127.0.0.0/8)', private: true },
  { network: '169.254.0.0', prefix: 16, reason: 'a link-local address (169.254.0.0/16)' },
  { network: '172.16.0.0', prefix: 12, reason: 'a private address (172.16.0.0/12)', private: true },
  { network: '192.0.0.0', prefix: 24, reason: 'an IETF protocol address (192.0.0.0/24)' },
  { network: '192.0.2.0', prefix: 24, reason: 'a documentation address (192.0.2.0/24)' },
  { network: '192.88.99.0', prefix: 24, reason: 'a deprecated 6to4 relay address (192.88.99.0/24)' },
  { network: '192.168.0.0', prefix: 16, reason: 'a private address (192.168.0.0/16)', private: true },
  { network: '198.18.0.0', prefix: 15, reason: 'a benchmarking address (198.18.0.0/15)' },
  { network: '198.51.100.0', prefix: 24, reason: 'a documentation address (198.51.100.0/24)' },
  { network: '203.0.113.0', prefix: 24, reason: 'a documentation address (203.0.113.0/24)' },
  { network: '224.0.0.0', prefix: 4, reason: 'a multicast address (224.0.0.0/4)' },
  { network: '255.255.255.255', prefix: 32, reason: 'the broadcast address' },
  { network: '240.0.0.0', prefix: 4, reason: 'a reserved address (240.0.0.0/4)' },
];

// Addresses embedding an IPv4 address (mapped, NAT64, 6to4) are decoded before these are consulted.
const IPV6_RANGES: Range[] = [
  { network: '::', prefix: 128, reason: 'the unspecified address (::)' },
  { network: '::1', prefix: 128, reason: 'the loopback address (::1)', private: true },
  { network: 'fd00:ec2::254', prefix: 128, reason: 'the cloud metadata service address (AWS)' },
  { network: 'fc00::', prefix: 7, reason: 'a unique-local (private) address (fc00::/7)', private: true },
  { network: 'fe80::', prefix: 10, reason: 'a link-local address (fe80::/10)' },
  { network: 'fec0::', prefix: 10, reason: 'a deprecated site-local address (fec0::/10)' },
  { network: 'ff00::', prefix: 8, reason: 'a multicast address (ff00::/8)' },
  { network: '100::', prefix: 64, reason: 'a discard-only address (100::/64)' },
  // A Teredo address tunnels to an IPv4 host hidden (XOR-obfuscated) in it; no MCP server needs one.
  { network: '2001::', prefix: 32, reason: 'a Teredo tunnelling address (2001::/32)' },
  { network: '2001:2::', prefix: 48, reason: 'a benchmarking address (2001:2::/48)' },
  { network: '2001:10::', prefix: 28, reason: 'a deprecated ORCHID address (2001:10::/28)' },
  { network: '2001:20::', prefix: 28, reason: 'an ORCHIDv2 address (2001:20::/28)' },
  { network: '2001:db8::', prefix: 32, reason: 'a documentation address (2001:db8::/32)' },
  { network: '3fff::', prefix: 20, reason: 'a documentation address (3fff::/20)' },
  { network: '5f00::', prefix: 16, reason: 'a segment-routing address (5f00::/16)' },
  // Local-use NAT64 translates to whatever the local network chooses, private addresses included.
  { network: '64:ff9b:1::', prefix: 48, reason: 'a local-use NAT64 address (64:ff9b:1::/48)' },
];

// All of global unicast: an IPv6 address outside it that nothing above named is still not public.
const GLOBAL_UNICAST = blockList('2000::', 3, 'ipv6');

const IPV4_CHECKS = IPV4_RANGES.map((range) => ({
  list: blockList(range.network, range.prefix, 'ipv4'),
  reason: range.reason,
  private: range.private === true,
}));
const IPV6_CHECKS = IPV6_RANGES.map((range) => ({
  list: blockList(range.network, range.prefix, 'ipv6'),
  reason: range.reason,
  private: range.private === true,
}));

/**
 * Why a connection may not go to `ip`, or undefined when it is a public unicast address (or, with
 * `allowPrivateNetwork`, a loopback or private one). `ip` must be a plain IPv4 dotted quad or an
 * IPv6 address (a zone id is ignored); anything else — shorthand IPv4 forms included — is refused,
 * since it is not what DNS answers or the URL parser produce.
 */
export function isForbiddenAddress(ip: string, allowPrivateNetwork = false): string | undefined {
  const version = isIP(ip);
  if (version === 4) return ipv4Reason(ip, allowPrivateNetwork);
  // The zone says which interface to use, not where the address points.
  if (version === 6) return ipv6Reason(ip.replace(/%.*$/, ''), allowPrivateNetwork);
  return 'not a plain IP address';
}

function ipv4Reason(ip: string, allowPrivate: boolean): string | undefined {
  const check = IPV4_CHECKS.find((c) => c.list.check(ip, 'ipv4'));
  return check && !(allowPrivate && check.private) ? check.reason : undefined;
}

function ipv6Reason(ip: string, allowPrivate: boolean): string | undefined {
  const groups = hextets(ip);
  const embedded = embeddedIPv4(groups);
  if (embedded) {
    // Judged as the IPv4 host it reaches: ::ffff:127.0.0.1 is loopback, ::ffff:169.254.169.254 the metadata service.
    const reason = ipv4Reason(embedded.ipv4, allowPrivate);
    if (reason) return `${embedded.form} of ${embedded.ipv4}, ${reason}`;
    // Deprecated and not routed as the IPv4 host it names: nothing answers on it.
    if (embedded.form === 'an IPv4-compatible IPv6 address') return `${embedded.form} (deprecated, ::/96)`;
    return undefined;
  }
  const check = IPV6_CHECKS.find((c) => c.list.check(ip, 'ipv6'));
  if (check) return allowPrivate && check.private ? undefined : check.reason;
  if (!GLOBAL_UNICAST.check(ip, 'ipv6')) return 'not a global unicast address (outside 2000::/3)';
  return undefined;
}

/**
 * The IPv4 address an IPv6 address stands for, when it is one of the forms that reach an IPv4 host:
 * a socket connecting to any of them may end up at that host, so it is judged as that host.
 */
function embeddedIPv4(groups: number[]): { form: string; ipv4: string } | undefined {
  const [a, b, c, d, e, f, g, h] = groups as [number, number, number, number, number, number, number, number];
  const zeroHead = a === 0 && b === 0 && c === 0 && d === 0;
  if (zeroHead && e === 0 && f === 0xffff) return { form: 'an IPv4-mapped IPv6 address', ipv4: dottedQuad(g, h) };
  // SIIT's IPv4-translated form (::ffff:0:a.b.c.d), RFC 7915.
  if (zeroHead && e === 0xffff && f === 0) return { form: 'an IPv4-translated IPv6 address', ipv4: dottedQuad(g, h) };
  // ::a.b.c.d, except :: and ::1 which are IPv6's own unspecified and loopback addresses.
  if (zeroHead && e === 0 && f === 0 && (g !== 0 || h > 1)) return { form: 'an IPv4-compatible IPv6 address', ipv4: dottedQuad(g, h) };
  if (a === 0x64 && b === 0xff9b && c === 0 && d === 0 && e === 0 && f === 0)
    return { form: 'a NAT64 address (64:ff9b::/96)', ipv4: dottedQuad(g, h) };
  if (a === 0x2002) return { form: 'a 6to4 address (2002::/16)', ipv4: dottedQuad(b, c) };
  return undefined;
}

/** The eight 16-bit groups of an IPv6 address that `isIP` accepted (so its form is known to be valid). */
function hextets(ip: string): number[] {
  let text = ip;
  const tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (tail) {
    const [w, x, y, z] = tail.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, tail.index)}${((w << 8) | x).toString(16)}:${((y << 8) | z).toString(16)}`;
  }
  const parse = (part: string | undefined) => (part ? part.split(':').map((group) => Number.parseInt(group, 16)) : []);
  const [head, rest] = text.split('::');
  const front = parse(head);
  if (rest === undefined) return front;
  const back = parse(rest);
  return [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}

function dottedQuad(high: number, low: number): string {
  return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
}

function blockList(network: string, prefix: number, type: 'ipv4' | 'ipv6'): BlockList {
  const list = new BlockList();
  list.addSubnet(network, prefix, type);
  return list;
}
