import { BlockList, isIP } from 'node:net';
import { networkInterfaces } from 'node:os';

/** Every address of this machine's network interfaces. */
export function interfaceAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flat()
    .flatMap((info) => (info ? [info.address] : []));
}

/**
 * Whether a socket to `address` reaches this machine: loopback, the unspecified address (which
 * connects to this machine), or an address of one of its interfaces; IPv4-mapped forms too
 * (BlockList checks them as IPv4).
 */
export function isThisMachine(address: string, localAddresses: readonly string[] = interfaceAddresses()): boolean {
  const list = new BlockList();
  list.addSubnet('127.0.0.0', 8, 'ipv4');
  list.addSubnet('0.0.0.0', 8, 'ipv4');
  list.addAddress('::1', 'ipv6');
  list.addAddress('::', 'ipv6');
  for (const local of localAddresses) {
    const family = isIP(local);
    if (family) list.addAddress(local.replace(/%.*$/, ''), family === 4 ? 'ipv4' : 'ipv6');
  }
  const family = isIP(address);
  return family !== 0 && list.check(address.replace(/%.*$/, ''), family === 4 ? 'ipv4' : 'ipv6');
}
