/**
 * Google and GitHub are not offered as MCP connectors (the place connections spec, place-mcp-connections.md, 2026-09-30): Google apps live in the
 * Gmail tab, GitHub is a personal access token secret. This is the one place that decides what
 * counts as either, for the built-in file and for registry results alike.
 */

const EXCLUDED_WORDS = ['google', 'gmail', 'youtube', 'github'];

/** Registrable domains (and their subdomains) of the excluded providers. */
const EXCLUDED_DOMAINS = [
  'google.com',
  'googleapis.com',
  'gmail.com',
  'youtube.com',
  'withgoogle.com',
  'github.com',
  'githubcopilot.com',
  'githubusercontent.com',
];

export interface ProviderIdentity {
  id?: string | undefined;
  name?: string | undefined;
  url: string;
  /** Registry server name, `namespace/server`: the namespace is a reverse domain. */
  registryName?: string;
}

/** Why the entry is Google or GitHub, or `undefined` when it is neither. */
export function excludedProviderReason(entry: ProviderIdentity): string | undefined {
  const host = hostOf(entry.url);
  if (host && isExcludedDomain(host)) return `points at ${host}`;
  for (const [label, value] of [
    ['id', entry.id],
    ['name', entry.name],
  ] as const) {
    const word = value && excludedWordIn(value);
    if (word) return `has "${word}" in its ${label}`;
  }
  if (entry.registryName) {
    const [namespace = '', server = ''] = entry.registryName.split('/', 2);
    // `io.github.<user>` is only the publisher's GitHub-verified namespace, not a GitHub server.
    const domain = namespace.split('.').reverse().join('.').toLowerCase();
    if (isExcludedDomain(domain)) return `is published under ${namespace}`;
    const word = excludedWordIn(server);
    if (word) return `has "${word}" in its registry name`;
  }
  return undefined;
}

function excludedWordIn(value: string): string | undefined {
  const lower = value.toLowerCase();
  return EXCLUDED_WORDS.find((word) => lower.includes(word));
}

function isExcludedDomain(host: string): boolean {
  return EXCLUDED_DOMAINS.some((domain) => host === domain || host.endsWith(`.${domain}`));
}

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}
