import { createHash } from 'node:crypto';
import { catalogEntrySchema, type CatalogEntry } from './catalog-schema.js';
import { excludedProviderReason } from './excluded-providers.js';
import type { RegistryHeader, RegistryRemote, RegistryServerItem } from './registry-response.js';

export interface RegistryMappingOptions {
  /** Ids already taken (the built-in entries); registry ids never reuse them. */
  reservedIds?: Iterable<string>;
  /** Server URLs already offered (the built-in entries); the registry's copies are dropped. */
  skipUrls?: Iterable<string>;
}

const MAX_ID_LENGTH = 32;
const MAX_DESCRIPTION_LENGTH = 200;
const KEY_HEADER = /authorization|api[-_]?key|token|secret|key/i;

/**
 * Turns registry servers into catalog entries: the latest version of each name, only if it is
 * active and has an https remote (streamable HTTP preferred over SSE), minus Google, GitHub and
 * anything the built-in list already offers. Sorted by name.
 *
 * The registry does not say how a remote authenticates. An entry is `api-key` when the remote
 * declares a required header that looks like a key; otherwise `none`, and the real scheme (most
 * often OAuth) is discovered when connecting, from the server's protected-resource metadata.
 */
export function catalogEntriesFromRegistry(items: Iterable<RegistryServerItem>, options: RegistryMappingOptions = {}): CatalogEntry[] {
  const seenEndpoints = new Set([...(options.skipUrls ?? [])].map(endpointKey));
  const candidates: { item: RegistryServerItem; remote: RegistryRemote }[] = [];
  for (const item of latestPerName(items)) {
    if (item.status !== undefined && item.status !== 'active') continue;
    const remote = pickRemote(item.remotes);
    if (!remote) continue;
    if (excludedProviderReason({ name: item.title, url: remote.url, registryName: item.name })) continue;
    const endpoint = endpointKey(remote.url);
    if (seenEndpoints.has(endpoint)) continue;
    seenEndpoints.add(endpoint);
    candidates.push({ item, remote });
  }
  const ids = assignIds(candidates.map(({ item }) => item.name), new Set(options.reservedIds ?? []));
  const entries: CatalogEntry[] = [];
  for (const { item, remote } of candidates) {
    const parsed = catalogEntrySchema.safeParse(toEntry(item, remote, ids.get(item.name)!));
    if (parsed.success) entries.push(parsed.data);
  }
  return entries.sort((a, b) => a.name.localeCompare(b.name, 'en', { sensitivity: 'base', numeric: true }) || a.id.localeCompare(b.id));
}

/**
 * Identifies a server endpoint regardless of spelling: host and path, case-insensitive, without
 * query, trailing slash or the trailing `/mcp` or `/sse` (a provider's two transports are one server).
 */
export function endpointKey(url: string): string {
  try {
    const parsed = new URL(url);
    const path = parsed.pathname.toLowerCase().replace(/\/+$/, '').replace(/\/(mcp|sse)$/, '');
    return `${parsed.host.toLowerCase()}${path}`;
  } catch {
    return url.toLowerCase();
  }
}

function latestPerName(items: Iterable<RegistryServerItem>): RegistryServerItem[] {
  const latest = new Map<string, RegistryServerItem>();
  for (const item of items) {
    const current = latest.get(item.name);
    if (!current || isNewer(item, current)) latest.set(item.name, item);
  }
  return [...latest.values()];
}

/** The registry's own `isLatest` flag wins; without it, the higher version, then the later publication. */
function isNewer(a: RegistryServerItem, b: RegistryServerItem): boolean {
  if (Boolean(a.isLatest) !== Boolean(b.isLatest)) return Boolean(a.isLatest);
  const byVersion = compareVersions(a.version, b.version);
  if (byVersion !== 0) return byVersion > 0;
  return (a.publishedAt ?? '') > (b.publishedAt ?? '');
}

/** Semantic-version order for `1.2.3` and `1.2.3-beta.1`; other strings compare numerically part by part. */
export function compareVersions(a: string, b: string): number {
  const [coreA, preA] = splitVersion(a);
  const [coreB, preB] = splitVersion(b);
  const byCore = compareParts(coreA.split('.'), coreB.split('.'), '0');
  if (byCore !== 0) return byCore;
  if (preA === undefined || preB === undefined) return preA === preB ? 0 : preA === undefined ? 1 : -1;
  return compareParts(preA.split('.'), preB.split('.'), '');
}

/** Part by part; a missing part counts as `missing` (0 for the core, before anything for a pre-release). */
function compareParts(a: string[], b: string[], missing: string): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const diff = comparePart(a[i] ?? missing, b[i] ?? missing);
    if (diff !== 0) return diff;
  }
  return 0;
}

function splitVersion(version: string): [string, string | undefined] {
  const withoutBuild = version.trim().replace(/^v/i, '').split('+', 1)[0] ?? '';
  const dash = withoutBuild.indexOf('-');
  return dash < 0 ? [withoutBuild, undefined] : [withoutBuild.slice(0, dash), withoutBuild.slice(dash + 1)];
}

function comparePart(a: string, b: string): number {
  const numA = /^\d+$/.test(a) ? Number(a) : NaN;
  const numB = /^\d+$/.test(b) ? Number(b) : NaN;
  if (!Number.isNaN(numA) && !Number.isNaN(numB)) return Math.sign(numA - numB);
  return a < b ? -1 : a > b ? 1 : 0;
}

function pickRemote(remotes: RegistryRemote[]): RegistryRemote | undefined {
  const usable = remotes.filter((remote) => (remote.type === 'streamable-http' || remote.type === 'sse') && isPlainHttpsUrl(remote.url));
  return usable.find((remote) => remote.type === 'streamable-http') ?? usable[0];
}

/** https, and no `{variable}` left to fill in: the catalog has nowhere to ask for one. */
function isPlainHttpsUrl(url: string): boolean {
  if (url.includes('{')) return false;
  try {
    return new URL(url).protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * Deterministic ids from registry names: `io.github.foo/bar` → `io-github-foo-bar`. A name whose
 * slug is too long, or shared (with a built-in id or another registry name), gets a short hash of
 * the full name instead, so the same registry contents always give the same ids.
 */
function assignIds(names: string[], reserved: Set<string>): Map<string, string> {
  const slugs = new Map(names.map((name) => [name, slugOf(name)]));
  const slugCounts = new Map<string, number>();
  for (const slug of slugs.values()) slugCounts.set(slug, (slugCounts.get(slug) ?? 0) + 1);
  const ids = new Map<string, string>();
  for (const [name, slug] of slugs) {
    const unique = slug.length > 0 && slug.length <= MAX_ID_LENGTH && slugCounts.get(slug) === 1 && !reserved.has(slug);
    ids.set(name, unique ? slug : hashedId(name, slug));
  }
  return ids;
}

function slugOf(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
}

function hashedId(name: string, slug: string): string {
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 8);
  const head = slug.slice(0, MAX_ID_LENGTH - hash.length - 1).replace(/-+$/, '');
  return head ? `${head}-${hash}` : hash;
}

function toEntry(item: RegistryServerItem, remote: RegistryRemote, id: string): unknown {
  const keyHeader = remote.headers?.find(looksLikeKey);
  const prefix = keyHeader?.value ? /^([A-Za-z]+ )\{[^}]*\}$/.exec(keyHeader.value)?.[1] : undefined;
  return {
    id,
    name: oneLine(item.title || item.name.slice(item.name.indexOf('/') + 1), 100),
    description: oneLine(item.description || `MCP server ${item.name} from the MCP Registry.`, MAX_DESCRIPTION_LENGTH),
    url: remote.url,
    transport: remote.type,
    auth: keyHeader ? 'api-key' : 'none',
    ...(keyHeader && { apiKey: { header: keyHeader.name, ...(prefix && { prefix }) } }),
    ...(item.websiteUrl && isPlainHttpsUrl(item.websiteUrl) && { homepage: item.websiteUrl }),
    source: 'registry',
    registryName: item.name,
  };
}

function looksLikeKey(header: RegistryHeader): boolean {
  return header.isRequired === true && (header.isSecret === true || KEY_HEADER.test(header.name));
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1).trimEnd()}…`;
}
