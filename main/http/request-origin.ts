import type { IncomingMessage } from 'node:http';
import { originText, parseAuthority, type Authority } from './authority.js';

/**
 * The origin (scheme, host and port) a request reached this server at: what clients must name in
 * resources and audiences. `vary` lists the request headers it depends on, for the `Vary` header
 * of every answer that shows it.
 */
export type RequestOrigin = ((req: IncomingMessage) => string) & { readonly vary: string };

/**
 * Without a public URL, a request's origin is http:// and its Host header, as the host guard parsed
 * and allowed it (rebuilt from the parsed host and port, never copied). With one (a TLS-terminating
 * reverse proxy in front), a request for the public host, in its Host header or in the proxy's
 * X-Forwarded-Host or Forwarded header, reached the server at the public origin. Only the
 * configured origin is ever answered: a forged header can at most name the operator's own public
 * address, never one of the sender's choosing.
 */
export function requestOrigin(publicUrl: string | undefined): RequestOrigin {
  const own = (req: IncomingMessage) => originText('http', checkedHost(req));
  if (publicUrl === undefined) return Object.assign(own, { vary: 'Host' });
  const pub = new URL(publicUrl);
  const scheme = pub.protocol.slice(0, -1);
  const isPublic = (host: string | undefined) => {
    const authority = host === undefined ? undefined : parseAuthority(host);
    return authority !== undefined && originText(scheme, authority) === pub.origin;
  };
  const origin = (req: IncomingMessage) => {
    const named = [firstValue(req.headers['x-forwarded-host']), forwardedHost(req.headers.forwarded), req.headers.host];
    return named.some(isPublic) ? pub.origin : own(req);
  };
  return Object.assign(origin, { vary: 'Host, X-Forwarded-Host, Forwarded' });
}

/** The Host header the guard let through; every listener checks it before anything asks for the origin. */
function checkedHost(req: IncomingMessage): Authority {
  const authority = req.headers.host === undefined ? undefined : parseAuthority(req.headers.host);
  if (!authority) throw new Error('The request origin was asked for before the Host header was checked.');
  return authority;
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
