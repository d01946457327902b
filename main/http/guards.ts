import type { IncomingHttpHeaders } from 'node:http';
import { networkInterfaces, hostname } from 'node:os';
import type { RequestHandler } from 'express';
import { isLoopbackHost } from '../config.js';
import { originText, parseAuthority, parseOrigin } from './authority.js';

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '::1'];

/**
 * The host names a request may carry in its Host header for a listener bound to `bindHost`.
 * A browser tricked by DNS rebinding sends the attacker's name, which is never in this list.
 */
export function allowedHostNames(bindHost: string, extra: string[]): Set<string> {
  const names = new Set(extra.map(normalizeHost));
  const bind = normalizeHost(bindHost);
  if (isLoopbackHost(bind)) {
    for (const n of LOOPBACK_NAMES) names.add(n);
  } else if (bind === '0.0.0.0' || bind === '::') {
    // Bound to every interface: any address of this machine, and its own name, is a fair Host.
    for (const n of LOOPBACK_NAMES) names.add(n);
    names.add(hostname().toLowerCase());
    for (const addresses of Object.values(networkInterfaces())) {
      for (const a of addresses ?? []) names.add(normalizeHost(a.address));
    }
  } else {
    names.add(bind);
  }
  return names;
}

/** A configured host name or bind address (never a request's header) without port and brackets, lower-cased. */
export function normalizeHost(value: string): string {
  let host = value.trim().toLowerCase();
  if (host.startsWith('[')) return host.slice(1, host.indexOf(']'));
  const colons = host.split(':').length - 1;
  if (colons === 1) host = host.slice(0, host.indexOf(':'));
  return host;
}

/** Why a request is refused before anything else reads it: 400 for a header that is not what it must be, 403 for one naming another site. */
export interface GuardRefusal {
  status: 400 | 403;
  message: string;
}

/**
 * DNS-rebinding and cross-site protection. The Host header must be a host and an optional port
 * (RFC 3986), and the host one of `hosts`; a browser's Origin must be an origin, and exactly this
 * server's own (scheme, host and port: a page on another port of this machine is another site) or
 * an explicitly allowed one. `anyOrigin` lets any browser page in (the public OAuth documents and
 * endpoints, which take no cookies): its Origin must still be one.
 */
export function hostAndOriginCheck(
  hosts: Set<string>,
  extraOrigins: string[],
): (headers: IncomingHttpHeaders, anyOrigin?: boolean) => GuardRefusal | undefined {
  const origins = new Set(extraOrigins.map((o) => parseOrigin(o.replace(/\/$/, '')) ?? o));
  // Clients send the same Host header on every request: the last one allowed is not parsed again.
  let lastAllowed: string | undefined;
  return ({ host, origin }, anyOrigin = false) => {
    if (host === undefined || host !== lastAllowed) {
      const authority = host === undefined ? undefined : parseAuthority(host);
      if (!authority)
        return {
          status: 400,
          message: `The Host header ${host === undefined ? 'is missing' : `"${shown(host)}" is not a host name with an optional port`}. Send the address of this server, as in its URL.`,
        };
      if (!hosts.has(authority.hostname)) {
        return {
          status: 403,
          message: `Host "${shown(host!)}" is not allowed. Connect with an address this server is bound to, or add the name to WORKSPACE_ALLOWED_HOSTS.`,
        };
      }
      lastAllowed = host;
    }
    if (origin === undefined) return undefined;
    const sent = parseOrigin(origin);
    if (sent === undefined)
      return { status: 400, message: `The Origin header "${shown(origin)}" is not an origin (scheme://host[:port]).` };
    if (anyOrigin || origins.has(sent) || sent === originText('http', parseAuthority(host!)!)) return undefined;
    return {
      status: 403,
      message: `Origin "${sent}" is not allowed. Browser pages may call this server only from its own origin (scheme, host and port) or from an origin listed in WORKSPACE_ALLOWED_ORIGINS.`,
    };
  };
}

/** hostAndOriginCheck as Express middleware. */
export function hostAndOriginGuard(hosts: Set<string>, extraOrigins: string[]): RequestHandler {
  const check = hostAndOriginCheck(hosts, extraOrigins);
  return (req, res, next) => {
    const refused = check(req.headers);
    if (refused) res.status(refused.status).json(refusedBody(refused.message));
    else next();
  };
}

/** A refused header in a message: printable ASCII only, and short. */
function shown(value: string): string {
  return value.replace(/[^\x20-\x7e]/g, '?').slice(0, 100);
}

export function refusedBody(message: string) {
  return { jsonrpc: '2.0', error: { code: -32000, message }, id: null };
}
