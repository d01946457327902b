import { createHash } from 'node:crypto';
import { catalogEntrySchema, serverKeyOf, type CatalogEntry } from './catalog-schema.js';

export { endpointKey } from './catalog-schema.js';
import { excludedProviderReason } from './excluded-providers.js';
import { canonicalHost } from '../../places/network-allow-list.js';
import type { RegistryArgument, RegistryHeader, RegistryPackage, RegistryRemote, RegistryServerItem } from './registry-response.js';

export interface RegistryMappingOptions {
  /** Ids already taken (the built-in entries); registry ids never reuse them. */
  reservedIds?: Iterable<string>;
  /** Servers already offered (the built-in entries, by serverKeyOf); the registry's copies are dropped. */
  skipKeys?: Iterable<string>;
}

const MAX_ID_LENGTH = 32;
const MAX_DESCRIPTION_LENGTH = 200;
const KEY_HEADER = /authorization|api[-_]?key|token|secret|key/i;

/**
 * Turns registry servers into catalog entries: the latest version of each name, only if it is
 * active and has an https remote (streamable HTTP preferred over SSE) or, failing that, an npm or
 * PyPI package run over stdio that needs no input but its variables; minus Google, GitHub and
 * anything the built-in list already offers. Sorted by name.
 *
 * The registry does not say how a remote authenticates. An entry is `api-key` when the remote
 * declares a required header that looks like a key; otherwise `none`, and the real scheme (most
 * often OAuth) is discovered when connecting, from the server's protected-resource metadata.
 */
export function catalogEntriesFromRegistry(items: Iterable<RegistryServerItem>, options: RegistryMappingOptions = {}): CatalogEntry[] {
  const seen = new Set(options.skipKeys ?? []);
  const candidates: { item: RegistryServerItem; server: RegistryRemote | LocalPackage }[] = [];
  for (const item of latestPerName(items)) {
    if (item.status !== undefined && item.status !== 'active') continue;
    const server = pickRemote(item.remotes) ?? pickPackage(item.packages);
    if (!server) continue;
    if (excludedProviderReason({ name: item.title, url: 'url' in server ? server.url : '', registryName: item.name })) continue;
    const key =
      'url' in server ? serverKeyOf({ transport: 'streamable-http', url: server.url }) : serverKeyOf({ transport: 'stdio', local: server });
    if (seen.has(key)) continue;
    seen.add(key);
    candidates.push({ item, server });
  }
  const ids = assignIds(
    candidates.map(({ item }) => item.name),
    new Set(options.reservedIds ?? []),
  );
  const entries: CatalogEntry[] = [];
  for (const { item, server } of candidates) {
    const id = ids.get(item.name)!;
    const parsed = catalogEntrySchema.safeParse('url' in server ? toEntry(item, server, id) : toLocalEntry(item, server, id));
    if (parsed.success) entries.push(parsed.data);
  }
  return entries.sort((a, b) => a.name.localeCompare(b.name, 'en', { sensitivity: 'base', numeric: true }) || a.id.localeCompare(b.id));
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

/** A package as the catalog runs it: its launcher, arguments, variables and where it installs from. */
interface LocalPackage {
  command: 'npx' | 'uvx';
  args: string[];
  env: { name: string; description?: string; required: boolean; secret: boolean }[];
  hosts: string[];
}

const LAUNCHERS: Record<string, 'npx' | 'uvx'> = { npm: 'npx', pypi: 'uvx' };

/**
 * The first npm or PyPI package run over stdio whose arguments are all fixed: one that needs a
 * value from the person (a folder, say), or a secret on its command line, is not offered yet.
 */
function pickPackage(packages: RegistryPackage[]): LocalPackage | undefined {
  for (const pkg of packages) {
    const command = LAUNCHERS[pkg.registryType];
    if (!command || (pkg.transport && pkg.transport.type !== 'stdio')) continue;
    const runtime = argumentsOf(pkg.runtimeArguments ?? []);
    const own = argumentsOf(pkg.packageArguments ?? []);
    if (!runtime || !own || !/^[@A-Za-z0-9][\w.@/-]*$/.test(pkg.identifier)) continue;
    const spec = pkg.version && /^[\w.+-]+$/.test(pkg.version) ? `${pkg.identifier}@${pkg.version}` : pkg.identifier;
    const host = pkg.registryBaseUrl?.startsWith('https://') ? canonicalHost(new URL(pkg.registryBaseUrl).hostname) : undefined;
    return {
      command,
      args: [...(command === 'npx' ? ['-y'] : []), ...runtime, spec, ...own],
      env: (pkg.environmentVariables ?? []).map((v) => ({
        name: v.name,
        ...(v.description && { description: v.description.replace(/\s+/g, ' ').slice(0, 300) }),
        required: v.isRequired === true,
        secret: v.isSecret === true,
      })),
      hosts: host ? [host] : [],
    };
  }
  return undefined;
}

/** The arguments as a command line, or undefined when one needs the person's input or is secret. */
function argumentsOf(declared: RegistryArgument[]): string[] | undefined {
  const args: string[] = [];
  for (const arg of declared) {
    const value = arg.value ?? arg.default;
    if (arg.isSecret || (value !== undefined && value.includes('{'))) return undefined;
    if (value === undefined && arg.isRequired) return undefined;
    if (arg.type === 'named' && arg.name) args.push(arg.name, ...(value !== undefined ? [value] : []));
    else if (arg.type === 'positional' && value !== undefined) args.push(value);
  }
  return args;
}

function toLocalEntry(item: RegistryServerItem, local: LocalPackage, id: string): unknown {
  return {
    id,
    name: oneLine(item.title || item.name.slice(item.name.indexOf('/') + 1), 100),
    description: oneLine(item.description || `MCP server ${item.name} from the MCP Registry.`, MAX_DESCRIPTION_LENGTH),
    transport: 'stdio',
    auth: 'none',
    local,
    ...(item.websiteUrl && isPlainHttpsUrl(item.websiteUrl) && { homepage: item.websiteUrl }),
    source: 'registry',
    registryName: item.name,
  };
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
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
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
