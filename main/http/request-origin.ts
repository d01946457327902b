import type { IncomingMessage } from 'node:http';

/** The origin (scheme, host and port) a request reached this server at: what clients must name in resources and audiences. */
export type RequestOrigin = (req: IncomingMessage) => string;

/**
 * Without a public URL, a request's origin is http:// and its Host header (already checked by the
 * host guard). With one (a TLS-terminating reverse proxy in front), a request for the public host,
 * in its Host header or in the proxy's X-Forwarded-Host or Forwarded header, reached the server at
 * the public origin. Only the configured origin is ever answered: a forged header can at most name
 * the operator's own public address, never one of the sender's choosing.
 */
export function requestOrigin(publicUrl: string | undefined): RequestOrigin {
  if (publicUrl === undefined) return (req) => `http://${req.headers.host ?? 'localhost'}`;
  const pub = new URL(publicUrl);
  const isPublic = (host: string | undefined) => host !== undefined && hostOf(pub.protocol, host) === pub.host;
  return (req) => {
    const forwarded = [firstValue(req.headers['x-forwarded-host']), forwardedHost(req.headers.forwarded), req.headers.host];
    return forwarded.some(isPublic) ? pub.origin : `http://${req.headers.host ?? 'localhost'}`;
  };
}

/** `host[:port]` as a URL of `protocol` normalizes it (lower case, default port dropped), or undefined. */
function hostOf(protocol: string, host: string): string | undefined {
  try {
    const url = new URL(`${protocol}//${host.trim()}`);
    return url.pathname === '/' && !url.username && !url.search ? url.host : undefined;
  } catch {
    return undefined;
  }
}

/** The first of a list header's values (a proxy chain appends; the first is what the client asked for). */
function firstValue(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  return value?.split(',')[0]?.trim() || undefined;
}

/** `host=` of the first element of an RFC 7239 Forwarded header. */
function forwardedHost(header: string | undefined): string | undefined {
  const first = header?.split(',')[0] ?? '';
  for (const pair of first.split(';')) {
    const [name, value] = pair.split('=', 2);
    if (name?.trim().toLowerCase() === 'host' && value) return value.trim().replace(/^"(.*)"$/, '$1');
  }
  return undefined;
}
