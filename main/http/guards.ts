import type { IncomingHttpHeaders } from 'node:http';
import { networkInterfaces, hostname } from 'node:os';
import type { RequestHandler } from 'express';
import { isLoopbackHost } from '../config.js';

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

/** Host header or URL host without port and brackets, lower-cased. */
export function normalizeHost(value: string): string {
  let host = value.trim().toLowerCase();
  if (host.startsWith('[')) return host.slice(1, host.indexOf(']'));
  const colons = host.split(':').length - 1;
  if (colons === 1) host = host.slice(0, host.indexOf(':'));
  return host;
}

/**
 * DNS-rebinding and cross-site protection: the reason to refuse a request (403) unless its Host
 * header names this server, and unless a browser's Origin is exactly this server's own (scheme,
 * host and port: a page on another port of this machine is another site) or an explicitly allowed
 * origin.
 */
export function hostAndOriginCheck(hosts: Set<string>, extraOrigins: string[]): (headers: IncomingHttpHeaders) => string | undefined {
  const origins = new Set(extraOrigins.map((o) => o.replace(/\/$/, '').toLowerCase()));
  // Clients send the same Host header on every request: the last one allowed is not parsed again.
  let lastAllowed: string | undefined;
  return ({ host, origin }) => {
    if (host !== lastAllowed) {
      if (!host || !hosts.has(normalizeHost(host))) {
        return `Host "${host ?? ''}" is not allowed. Connect with an address this server is bound to, or add the name to WORKSPACE_ALLOWED_HOSTS.`;
      }
      lastAllowed = host;
    }
    if (origin !== undefined && !origins.has(origin.toLowerCase()) && !sameOrigin(origin, host ?? '')) {
      return `Origin "${origin}" is not allowed. Browser pages may call this server only from its own origin (scheme, host and port) or from an origin listed in WORKSPACE_ALLOWED_ORIGINS.`;
    }
    return undefined;
  };
}

/** hostAndOriginCheck as Express middleware. */
export function hostAndOriginGuard(hosts: Set<string>, extraOrigins: string[]): RequestHandler {
  const check = hostAndOriginCheck(hosts, extraOrigins);
  return (req, res, next) => {
    const refused = check(req.headers);
    if (refused) res.status(403).json(forbidden(refused));
    else next();
  };
}

/** Whether `origin` is http://<the Host the request was sent to>, port included (default ports aside). */
function sameOrigin(origin: string, host: string): boolean {
  try {
    const own = new URL(`http://${host}`);
    const url = new URL(origin);
    // The literal "null" origin of sandboxed frames and file: pages does not parse, and is refused.
    return url.origin === own.origin && url.origin === origin.toLowerCase();
  } catch {
    return false;
  }
}

export function forbidden(message: string) {
  return { jsonrpc: '2.0', error: { code: -32000, message }, id: null };
}
