import { BlockList, isIP } from 'node:net';
import { isForbiddenAddress } from '../../network/address-policy.js';
import type { ResolvedAddress, Resolver } from '../../network/target-check.js';
import { canonicalHost, matchHost } from '../../places/network-allow-list.js';
import { networkCommandLine } from '../../places/sandbox-policy.js';

/** What a place's sandboxed commands may reach through the proxy. */
export interface NetworkRules {
  readonly kind: 'place' | 'strict';
  readonly placeLabel: string;
  /** The place's root (`Crew/alpha`, `""` for This machine): the refusals name the command that changes the list. */
  readonly placeRoot: string;
  /** The allow-list, normalized (network-allow-list.ts). */
  readonly allow: readonly string[];
}

/** The facts of this machine a decision needs. */
export interface NetworkMachine {
  readonly resolve: Resolver;
  /** The ports the app listens on (agent endpoint, control plane): never reached on this machine. */
  readonly appPorts: () => readonly number[];
  /** The addresses of this machine's own interfaces (besides loopback and unspecified). */
  readonly localAddresses: () => readonly string[];
}

export type ConnectDecision =
  | { readonly allowed: true; readonly host: string; readonly port: number; readonly addresses: readonly ResolvedAddress[] }
  | {
      readonly allowed: false;
      /** 400: not a target at all; 403: refused by the policy; 502: the name does not resolve. */
      readonly status: 400 | 403 | 502;
      /** RFC 9209's Proxy-Status error type. */
      readonly proxyError: 'http_request_error' | 'destination_ip_prohibited' | 'dns_error';
      readonly message: string;
    };

/** Whether a sandboxed command may open a connection to `rawHost`:`rawPort`, and to which addresses. */
export async function decideConnection(
  rawHost: string,
  rawPort: string | number,
  rules: NetworkRules,
  machine: NetworkMachine,
): Promise<ConnectDecision> {
  const host = canonicalHost(rawHost);
  const port = Number(rawPort);
  const shown = `${rawHost}:${rawPort}`;
  if (host === undefined) return badRequest(`Refused ${shown}: "${rawHost}" is not a host name or IP address.`);
  if (!Number.isInteger(port) || port < 1 || port > 65_535 || !/^\d+$/.test(String(rawPort)))
    return badRequest(`Refused ${shown}: "${rawPort}" is not a port (1 to 65535).`);
  const target = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  const match = matchHost(host, rules.allow);
  if (rules.kind === 'strict' && match === undefined) {
    const listed = rules.allow.length ? `, which lists only ${rules.allow.join(', ')}` : '';
    return refused(rules, target, `${host} is not on the place's network allow-list${listed}`);
  }

  let addresses: ResolvedAddress[];
  const family = isIP(host);
  if (family) addresses = [{ address: host, family }];
  else {
    try {
      addresses = await machine.resolve(host);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      return {
        allowed: false,
        status: 502,
        proxyError: 'dns_error',
        message: `Cannot connect to ${target}: "${host}" does not resolve${typeof code === 'string' ? ` (${code})` : ''}.`,
      };
    }
    if (addresses.length === 0)
      return {
        allowed: false,
        status: 502,
        proxyError: 'dns_error',
        message: `Cannot connect to ${target}: "${host}" resolves to no address.`,
      };
  }

  const thisMachine = machineAddresses(machine.localAddresses());
  const appPorts = machine.appPorts();
  // Every answer, not just the first: the proxy may connect to any of them, and a mix of public and
  // private answers is how DNS rebinding slips past a check of one.
  for (const { address } of addresses) {
    const local = onThisMachine(thisMachine, address);
    if (local && appPorts.includes(port)) {
      return refused(
        rules,
        target,
        `${port} is a port of this app (its agent endpoint or control plane) on this machine (${address}), which sandboxed commands never reach`,
        false,
      );
    }
    const reason = isForbiddenAddress(address) ?? (local ? 'an address of this machine' : undefined);
    if (reason && match !== 'exact') {
      const through = family ? `${address} is ${reason}` : `${host} resolves to ${address}, which is ${reason}`;
      return refused(
        rules,
        target,
        `${through}; a loopback, private or local address is reached only through a name listed exactly on the place's network allow-list`,
      );
    }
  }
  return { allowed: true, host, port, addresses };
}

/** What an agent reads when the proxy refuses: which policy, why, and who can change it (and how). */
function refused(rules: NetworkRules, target: string, why: string, changeable = true): ConnectDecision {
  const change = changeable
    ? ` The person who runs this app can change the list with "${networkCommandLine(rules.placeRoot)}" (or the policy on the Connections page).`
    : '';
  return {
    allowed: false,
    status: 403,
    proxyError: 'destination_ip_prohibited',
    message: `Refused by the ${rules.kind} policy of ${rules.placeLabel}: cannot connect to ${target}, because ${why}.${change}`,
  };
}

function badRequest(message: string): ConnectDecision {
  return { allowed: false, status: 400, proxyError: 'http_request_error', message };
}

/** Loopback, unspecified and this machine's interfaces' addresses (IPv4-mapped forms included: BlockList checks them as IPv4). */
function machineAddresses(local: readonly string[]): BlockList {
  const list = new BlockList();
  list.addSubnet('127.0.0.0', 8, 'ipv4');
  list.addSubnet('0.0.0.0', 8, 'ipv4');
  list.addAddress('::1', 'ipv6');
  list.addAddress('::', 'ipv6');
  for (const address of local) {
    const family = isIP(address);
    if (family) list.addAddress(address.replace(/%.*$/, ''), family === 4 ? 'ipv4' : 'ipv6');
  }
  return list;
}

function onThisMachine(list: BlockList, address: string): boolean {
  const family = isIP(address);
  return family !== 0 && list.check(address.replace(/%.*$/, ''), family === 4 ? 'ipv4' : 'ipv6');
}
