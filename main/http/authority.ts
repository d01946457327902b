import { isIPv6 } from 'node:net';

/** A host and an optional port (RFC 3986 §3.2.2–3.2.3), as a Host header or an origin carries them. */
export interface Authority {
  /** Lower case; an IPv6 address without its brackets. */
  hostname: string;
  port?: number;
}

/**
 * A host name, an IPv4 address or a bracketed IPv6 address, then `:port`: nothing else. No user
 * info (`a@b`), path, space, tab or second authority, and no characters a name never has (percent
 * escapes, sub-delimiters), so what is compared is all there is.
 */
const AUTHORITY = /^(?:\[([0-9a-f:.]+)\]|([a-z0-9._-]+))(?::([0-9]{1,5}))?$/i;
/** An origin (RFC 6454): a scheme, `://` and an authority; or `null` (sandboxed frames, file: pages). */
const ORIGIN = /^([a-z][a-z0-9+.-]*):\/\/([^/?#]*)$/i;
const DEFAULT_PORTS: Record<string, number> = { http: 80, https: 443 };

/** `value` as an authority, or undefined when it is anything else. */
export function parseAuthority(value: string): Authority | undefined {
  // Matched before lower-casing: no character outside ASCII may turn into one inside it.
  const match = AUTHORITY.exec(value);
  if (!match) return undefined;
  const [, ipv6, name, port] = match;
  if (ipv6 !== undefined && !isIPv6(ipv6)) return undefined;
  if (port !== undefined && Number(port) > 65535) return undefined;
  return { hostname: (ipv6 ?? name!).toLowerCase(), ...(port !== undefined && { port: Number(port) }) };
}

/** `scheme://host[:port]` in the one form browsers and URLs use: lower case, brackets around IPv6, no default port. */
export function originText(scheme: string, authority: Authority): string {
  const host = authority.hostname.includes(':') ? `[${authority.hostname}]` : authority.hostname;
  const port = authority.port === undefined || authority.port === DEFAULT_PORTS[scheme] ? '' : `:${authority.port}`;
  return `${scheme}://${host}${port}`;
}

/** An Origin header in that form, `null` as itself, or undefined when it is not an origin. */
export function parseOrigin(value: string): string | undefined {
  if (value === 'null') return value;
  const match = ORIGIN.exec(value);
  const authority = match && parseAuthority(match[2]!);
  return authority ? originText(match[1]!.toLowerCase(), authority) : undefined;
}
