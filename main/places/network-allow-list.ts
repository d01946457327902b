import { isIP } from 'node:net';
import { MAX_ALLOWED_HOSTS } from '../../common/api/places.js';

/**
 * The host names a place's sandboxed commands may reach through the network proxy (issue 16):
 * exact names (`api.github.com`), wildcards for the names under a domain (`*.npmjs.org`, not
 * `npmjs.org` itself), `*` for any host, and IP literals. Kept normalized: lowercase ASCII
 * (international names in punycode), no trailing dot, IPv6 without brackets.
 */
export class AllowListError extends Error {
  override readonly name = 'AllowListError';
}

/** How an allow-list names a host: exactly, through a `*.domain` wildcard, through `*`, or not at all. */
export type HostMatch = 'exact' | 'wildcard' | 'any' | undefined;

/**
 * The canonical form of a host as a person, a URL or a proxy request writes it, or undefined when
 * it is not a host name or IP literal. The WHATWG URL parser does the work browsers do: case,
 * punycode for international names, and every IPv4 spelling (`127.1`, `0x7f.0.0.1`) as a dotted quad.
 */
export function canonicalHost(input: string): string | undefined {
  let text = input.trim();
  if (text.startsWith('[') && text.endsWith(']')) text = text.slice(1, -1);
  if (isIP(text) === 6) {
    // A zone id names an interface of this machine, never a remote host.
    if (text.includes('%')) return undefined;
    return new URL(`http://[${text}]/`).hostname.slice(1, -1);
  }
  // Anything a URL would read as another part (user, port, path) or decode (%) is not a plain host.
  if (text === '' || /[\s/:@?#\\%[\]*]/.test(text)) return undefined;
  let host: string;
  try {
    host = new URL(`http://${text}/`).hostname;
  } catch {
    return undefined;
  }
  host = host.replace(/\.$/, '');
  if (isIP(host)) return host;
  if (host.length === 0 || host.length > 253) return undefined;
  return host.split('.').every((label) => /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/.test(label)) ? host : undefined;
}

/** One entry as a person gave it, normalized; throws with what is wrong and what to write instead. */
export function allowListEntry(input: string): string {
  const text = input.trim();
  if (text === '*') return '*';
  const wildcard = text.startsWith('*.');
  const host = canonicalHost(wildcard ? text.slice(2) : text);
  if (host === undefined || (wildcard && isIP(host))) {
    throw new AllowListError(
      `${JSON.stringify(input)} is not a host name: write a name (api.github.com), a wildcard for the names under a domain (*.example.com), an IP address, or * for any host; no scheme, port or path.`,
    );
  }
  return wildcard ? `*.${host}` : host;
}

/** A whole list, normalized, duplicates dropped (order kept). */
export function checkAllowList(entries: readonly string[]): string[] {
  if (entries.length > MAX_ALLOWED_HOSTS) throw new AllowListError(`At most ${MAX_ALLOWED_HOSTS} hosts on a network allow-list.`);
  return [...new Set(entries.map(allowListEntry))];
}

/** How `host` (canonical: canonicalHost's answer) is named by `list` (normalized), the most precise way first. */
export function matchHost(host: string, list: readonly string[]): HostMatch {
  if (list.includes(host)) return 'exact';
  if (!isIP(host) && list.some((entry) => entry.startsWith('*.') && host.endsWith(entry.slice(1)))) return 'wildcard';
  if (list.includes('*')) return 'any';
  return undefined;
}
