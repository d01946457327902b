import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { isForbiddenAddress } from './address-policy.js';
import { interfaceAddresses, isThisMachine } from './this-machine.js';
import { LOCAL_DEVELOPMENT_HINT, NetworkPolicyError, originOf } from './network-policy-error.js';

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Every address a host name stands for. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

/** The system resolver (hosts file included), every answer rather than the first. */
export const resolveWithSystem: Resolver = (hostname) => lookup(hostname, { all: true });

export interface TargetPolicy {
  /** Local development: plain http, loopback and private addresses allowed (never link-local, metadata or unspecified ones). */
  allowPrivateNetwork: boolean;
  /** The ports this app listens on (agent endpoint, control plane): on this machine, refused whatever the setting. */
  appPorts: () => readonly number[];
  resolve: Resolver;
}

/**
 * Checks that `url` may be fetched: its scheme, that it carries no credentials, and where it
 * points. Returns the addresses its host name resolved to — all of them checked, for the caller to
 * connect to and nothing else — or undefined when the host is an IP literal (already normalized by
 * the WHATWG URL parser: decimal, octal, hex and short IPv4 forms all arrive as a dotted quad).
 */
export async function checkTarget(url: URL, policy: TargetPolicy): Promise<ResolvedAddress[] | undefined> {
  const origin = originOf(url);
  const allowPrivate = policy.allowPrivateNetwork;
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) {
    const allowed = allowPrivate ? 'https and http' : 'https';
    throw new NetworkPolicyError(
      'scheme',
      `Refused ${origin}: connections use ${allowed} only.${allowPrivate ? '' : ` ${LOCAL_DEVELOPMENT_HINT}`}`,
    );
  }
  if (url.username || url.password) {
    throw new NetworkPolicyError(
      'userinfo',
      `Refused ${origin}: the URL contains a user name or password. Remove them; credentials are sent as a header.`,
    );
  }

  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  const appPort = policy.appPorts().includes(port);
  if (isIP(host)) {
    const reason = isForbiddenAddress(host, allowPrivate);
    if (reason) throw privateAddress(origin, `${host} is ${reason}`, allowPrivate);
    if (appPort && isThisMachine(host)) throw ownPort(origin, host, port);
    return undefined;
  }
  // Refused by name: resolvers answer these with loopback without asking DNS (RFC 6761), and a
  // resolver that did not would make the check below depend on this machine's configuration.
  if (!allowPrivate && isLocalhostName(host)) {
    throw new NetworkPolicyError(
      'localhost',
      `Refused ${origin}: "${host}" is this machine, which connections may not reach. ${LOCAL_DEVELOPMENT_HINT}`,
    );
  }

  let addresses: ResolvedAddress[];
  try {
    addresses = await policy.resolve(host);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new NetworkPolicyError(
      'resolve-failed',
      `Refused ${origin}: "${host}" does not resolve${typeof code === 'string' ? ` (${code})` : ''}. Check the URL.`,
      { cause: error },
    );
  }
  if (addresses.length === 0) {
    throw new NetworkPolicyError('resolve-failed', `Refused ${origin}: "${host}" resolves to no address. Check the URL.`);
  }
  // Every answer, not just the first: the socket may try any of them, and a mix of public and
  // private answers is how DNS rebinding slips past a check of one.
  const local = appPort ? interfaceAddresses() : [];
  for (const { address } of addresses) {
    const reason = isForbiddenAddress(address, allowPrivate);
    if (reason) {
      const answers = addresses.map((a) => a.address);
      const why =
        answers.length === 1
          ? `"${host}" resolves to ${address}, which is ${reason}`
          : `"${host}" resolves to ${answers.join(' and ')}; ${address} is ${reason}`;
      throw privateAddress(origin, why, allowPrivate);
    }
    if (appPort && isThisMachine(address, local)) throw ownPort(origin, `"${host}" (${address})`, port);
  }
  return addresses;
}

function isLocalhostName(host: string): boolean {
  const name = host.replace(/\.+$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

function privateAddress(origin: string, why: string, allowPrivate: boolean): NetworkPolicyError {
  const rule = allowPrivate
    ? 'Connections may reach public addresses and, with WORKSPACE_ALLOW_PRIVATE_NETWORK=1, loopback and private networks; never link-local, metadata or unspecified addresses.'
    : `Connections may only reach public internet addresses. ${LOCAL_DEVELOPMENT_HINT}`;
  return new NetworkPolicyError('private-address', `Refused ${origin}: ${why}. ${rule}`);
}

function ownPort(origin: string, where: string, port: number): NetworkPolicyError {
  return new NetworkPolicyError(
    'app-port',
    `Refused ${origin}: ${where} is this machine, and ${port} is a port of this app (its agent endpoint or control plane), which connections never reach, whatever the private-network setting.`,
  );
}
