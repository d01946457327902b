import { groupOf, loadBuiltinCatalog, serverKeyOf, type BuiltinCatalog, type CatalogEntry, type SignInGroup } from './catalog-schema.js';
import { searchCatalog } from '../../../common/catalog-search.js';
import { readRegistryCache, writeRegistryCache, type RegistryCache } from './registry-cache.js';
import { fetchRegistryCatalog, RegistryError, type RegistryFetchOptions } from './registry-client.js';

export const DEFAULT_REGISTRY_MAX_AGE_MS = 6 * 60 * 60 * 1000;
/** Automatic refreshes (on a stale or failed registry) wait this long after the last attempt; Retry does not. */
export const AUTO_REFRESH_INTERVAL_MS = 60 * 1000;

export interface CatalogServiceOptions {
  stateDir: string;
  /** Base URL of the MCP Registry; empty turns the registry off (built-in entries only). */
  registryUrl: string;
  builtin?: BuiltinCatalog;
  /** Cached registry results younger than this are served without refetching (default 6 h). */
  maxAgeMs?: number;
  /** Bounds of each registry fetch (timeout, pages, sizes). */
  registry?: Omit<RegistryFetchOptions, 'baseUrl'>;
  /** Problems that do not stop the catalog, such as a cache that could not be read or written. */
  report?: (message: string) => void;
  now?: () => number;
}

export type RegistryState = 'ok' | 'loading' | 'failed' | 'disabled';

export interface RegistryStatus {
  state: RegistryState;
  /** When the registry entries shown were fetched. */
  fetchedAt?: string;
  ageSeconds?: number;
  /** Set when the last fetch failed: what happened and what to do. */
  error?: string;
}

export interface CatalogListing {
  /** Built-in entries first, then registry entries (or by rank when searching). */
  entries: CatalogEntry[];
  /** The sign-in groups that the listed entries use. */
  groups: SignInGroup[];
  registry: RegistryStatus;
}

interface Failure {
  message: string;
  hint: string;
}

/**
 * The connector catalog: the curated built-in list plus the official MCP Registry's remote
 * servers. Registry results are cached in `<stateDir>/registry-cache.json`, served while fresh and
 * refreshed in the background when stale. A failed fetch never hides the built-in list; it shows
 * in `registry` with what to do.
 */
export class CatalogService {
  private readonly builtin: BuiltinCatalog;
  private readonly builtinIds: Set<string>;
  private readonly builtinEndpoints: Set<string>;
  private readonly maxAgeMs: number;
  private readonly now: () => number;
  private cache: RegistryCache | undefined;
  private failure: Failure | undefined;
  private lastAttemptAt: number | undefined;
  private inFlight: Promise<void> | undefined;
  private readonly listeners = new Set<() => void>();

  constructor(private readonly options: CatalogServiceOptions) {
    this.builtin = options.builtin ?? loadBuiltinCatalog();
    this.builtinIds = new Set(this.builtin.entries.map((entry) => entry.id));
    this.builtinEndpoints = new Set(this.builtin.entries.map((entry) => serverKeyOf(entry)));
    this.maxAgeMs = options.maxAgeMs ?? DEFAULT_REGISTRY_MAX_AGE_MS;
    this.now = options.now ?? Date.now;
  }

  private get registryUrl(): string {
    return this.options.registryUrl.trim();
  }

  /** Loads the cache on disk and, if it is missing or stale, starts a refresh in the background. */
  async start(): Promise<void> {
    if (!this.registryUrl) return;
    try {
      const cache = await readRegistryCache(this.options.stateDir);
      // A cache of another registry (the setting changed) says nothing about this one.
      if (cache?.registryUrl === this.registryUrl) this.cache = cache;
    } catch (error) {
      this.options.report?.((error as Error).message);
    }
    this.refreshIfDue();
  }

  list(query: { search?: string } = {}): CatalogListing {
    this.refreshIfDue();
    const entries = searchCatalog([...this.builtin.entries, ...this.registryEntries()], query.search);
    const usedGroups = new Set(entries.map(groupOf));
    return {
      entries,
      groups: this.builtin.groups.filter((group) => usedGroups.has(group.id)),
      registry: this.status(),
    };
  }

  /** Fetches the registry now (the page's Retry). Concurrent calls share one fetch; never rejects. */
  refresh(): Promise<void> {
    if (!this.registryUrl) return Promise.resolve();
    if (!this.inFlight) {
      this.inFlight = this.fetchAndStore().finally(() => {
        this.inFlight = undefined;
        this.changed();
      });
      this.changed();
    }
    return this.inFlight;
  }

  /** Hears when what list() answers changes: a registry fetch started or ended. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }

  /** Resolves once no refresh is running (for shutdown). */
  async idle(): Promise<void> {
    while (this.inFlight) await this.inFlight;
  }

  private refreshIfDue(): void {
    if (!this.registryUrl || this.inFlight) return;
    const fresh = this.cache && this.now() - Date.parse(this.cache.fetchedAt) < this.maxAgeMs;
    const tooSoon = this.lastAttemptAt !== undefined && this.now() - this.lastAttemptAt < AUTO_REFRESH_INTERVAL_MS;
    if (!fresh && !tooSoon) void this.refresh();
  }

  private async fetchAndStore(): Promise<void> {
    this.lastAttemptAt = this.now();
    let entries: CatalogEntry[];
    try {
      entries = await fetchRegistryCatalog({
        ...this.options.registry,
        baseUrl: this.registryUrl,
        reservedIds: this.builtinIds,
        skipKeys: this.builtin.entries.map(serverKeyOf),
      });
    } catch (error) {
      this.failure =
        error instanceof RegistryError
          ? { message: error.message, hint: error.hint }
          : {
              message: `Could not load the MCP Registry at ${this.registryUrl} (${(error as Error).message ?? error}).`,
              hint: 'Retry later.',
            };
      return;
    }
    this.cache = { registryUrl: this.registryUrl, fetchedAt: new Date(this.now()).toISOString(), entries };
    this.failure = undefined;
    try {
      await writeRegistryCache(this.options.stateDir, this.cache);
    } catch (error) {
      this.options.report?.(
        `Could not save the MCP Registry cache in ${this.options.stateDir} (${(error as Error).message}); the registry will be fetched again at the next start.`,
      );
    }
  }

  /** Cached registry entries minus any that a newer built-in list now offers itself. */
  private registryEntries(): CatalogEntry[] {
    return (this.cache?.entries ?? []).filter((entry) => !this.builtinIds.has(entry.id) && !this.builtinEndpoints.has(serverKeyOf(entry)));
  }

  private status(): RegistryStatus {
    if (!this.registryUrl) return { state: 'disabled' };
    const age = this.cache
      ? { fetchedAt: this.cache.fetchedAt, ageSeconds: Math.max(0, Math.floor((this.now() - Date.parse(this.cache.fetchedAt)) / 1000)) }
      : {};
    if (this.inFlight && (!this.cache || this.failure)) return { state: 'loading', ...age };
    if (this.failure) {
      const shown = age.ageSeconds !== undefined ? ` Showing the registry list from ${formatAge(age.ageSeconds)} ago.` : '';
      return {
        state: 'failed',
        ...age,
        error: `${this.failure.message}${shown} The built-in connectors are still listed. ${this.failure.hint}`,
      };
    }
    return this.cache ? { state: 'ok', ...age } : { state: 'loading' };
  }
}

function formatAge(seconds: number): string {
  const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;
  if (seconds < 60) return plural(seconds, 'second');
  if (seconds < 3600) return plural(Math.floor(seconds / 60), 'minute');
  if (seconds < 86_400) return plural(Math.floor(seconds / 3600), 'hour');
  return plural(Math.floor(seconds / 86_400), 'day');
}
