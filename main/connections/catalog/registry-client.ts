import { OFFICIAL_REGISTRY_URL } from '../../settings.js';
import type { CatalogEntry } from './catalog-schema.js';
import { catalogEntriesFromRegistry, type RegistryMappingOptions } from './registry-mapping.js';
import { parseRegistryPage, parseServerItem, type RegistryServerItem } from './registry-response.js';

export { OFFICIAL_REGISTRY_URL };

/** `/v0.1` is the registry's stable API; `/v0` may still change. */
const LIST_PATH = '/v0.1/servers';

export const REGISTRY_DEFAULTS = {
  timeoutMs: 10_000,
  /** 50 pages of 100 (the registry's maximum page size) is well above its current size. */
  maxPages: 50,
  pageSize: 100,
  maxResponseBytes: 5 * 1024 * 1024,
} as const;

export interface RegistryFetchOptions {
  /** Registry base URL, e.g. `https://registry.modelcontextprotocol.io`; the API path is appended. */
  baseUrl: string;
  /** Per request, body included. */
  timeoutMs?: number;
  /** Pages beyond this are not fetched; what was fetched is kept. */
  maxPages?: number;
  pageSize?: number;
  /** Per page; a larger body is refused rather than buffered. */
  maxResponseBytes?: number;
}

export type RegistryErrorKind = 'timeout' | 'network' | 'http' | 'invalid-response' | 'too-large';

/** The registry could not be read; `message` says what happened, `hint` what to do about it. */
export class RegistryError extends Error {
  override readonly name = 'RegistryError';
  constructor(
    readonly kind: RegistryErrorKind,
    message: string,
  ) {
    super(message);
  }

  get hint(): string {
    switch (this.kind) {
      case 'timeout':
      case 'network':
        return 'Retry, or check the network.';
      case 'http':
        return 'Retry later; the registry may be having trouble.';
      case 'invalid-response':
      case 'too-large':
        return 'Retry later, or check that the registry URL setting points at an MCP Registry.';
    }
  }
}

/** The registry's servers as catalog entries (see `catalogEntriesFromRegistry` for what is kept). */
export async function fetchRegistryCatalog(options: RegistryFetchOptions & RegistryMappingOptions): Promise<CatalogEntry[]> {
  return catalogEntriesFromRegistry(await fetchRegistryServers(options), options);
}

/** Every server the registry lists, following `nextCursor` up to `maxPages` pages. */
export async function fetchRegistryServers(options: RegistryFetchOptions): Promise<RegistryServerItem[]> {
  const { timeoutMs, maxPages, pageSize, maxResponseBytes } = { ...REGISTRY_DEFAULTS, ...definedOnly(options) };
  const listUrl = listUrlOf(options.baseUrl);
  const servers: RegistryServerItem[] = [];
  let cursor: string | undefined;
  for (let page = 1; page <= maxPages; page++) {
    const url = new URL(listUrl);
    url.searchParams.set('limit', String(pageSize));
    // Supported by the official registry; a registry that ignores it is handled by the mapping.
    url.searchParams.set('version', 'latest');
    if (cursor) url.searchParams.set('cursor', cursor);
    const parsed = parseRegistryPage(await fetchJson(url, options.baseUrl, page, timeoutMs, maxResponseBytes));
    if ('problem' in parsed) {
      throw new RegistryError(
        'invalid-response',
        `The MCP Registry at ${options.baseUrl} sent a response that is not a server list (page ${page}: ${parsed.problem}).`,
      );
    }
    for (const item of parsed.items) {
      const server = parseServerItem(item);
      if (server) servers.push(server);
    }
    if (!parsed.nextCursor) break;
    cursor = parsed.nextCursor;
  }
  return servers;
}

function listUrlOf(baseUrl: string): URL {
  let base: URL;
  try {
    base = new URL(baseUrl);
  } catch {
    throw new RegistryError(
      'invalid-response',
      `The MCP Registry URL "${baseUrl}" is not a URL. Set it to an https URL such as ${OFFICIAL_REGISTRY_URL}, or leave it empty to turn the registry off.`,
    );
  }
  if (base.protocol !== 'https:' && base.protocol !== 'http:') {
    throw new RegistryError(
      'invalid-response',
      `The MCP Registry URL "${baseUrl}" must be an http(s) URL, such as ${OFFICIAL_REGISTRY_URL}.`,
    );
  }
  base.pathname = base.pathname.replace(/\/+$/, '') + LIST_PATH;
  base.search = '';
  return base;
}

async function fetchJson(url: URL, baseUrl: string, page: number, timeoutMs: number, maxBytes: number): Promise<unknown> {
  const signal = AbortSignal.timeout(timeoutMs);
  let text: string;
  try {
    const response = await fetch(url, { signal, headers: { accept: 'application/json' } });
    if (!response.ok) {
      await response.body?.cancel();
      throw new RegistryError('http', `The MCP Registry at ${baseUrl} answered HTTP ${response.status} for page ${page}.`);
    }
    text = await readBounded(response, maxBytes, baseUrl);
  } catch (error) {
    if (error instanceof RegistryError) throw error;
    if (signal.aborted) {
      throw new RegistryError('timeout', `Could not reach the MCP Registry at ${baseUrl} (timeout after ${formatSeconds(timeoutMs)}).`);
    }
    throw new RegistryError('network', `Could not reach the MCP Registry at ${baseUrl} (${networkReason(error)}).`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new RegistryError('invalid-response', `The MCP Registry at ${baseUrl} sent a response that is not JSON (page ${page}).`);
  }
}

/** The body as text, refusing to buffer more than `maxBytes`. */
async function readBounded(response: Response, maxBytes: number, baseUrl: string): Promise<string> {
  const tooLarge = () =>
    new RegistryError(
      'too-large',
      `The MCP Registry at ${baseUrl} sent more than ${formatBytes(maxBytes)} in one page; stopped reading it.`,
    );
  if (Number(response.headers.get('content-length')) > maxBytes) {
    await response.body?.cancel();
    throw tooLarge();
  }
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message;
  return error instanceof Error ? error.message : String(error);
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}

function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / (1024 * 1024)).toFixed(bytes % (1024 * 1024) === 0 ? 0 : 1)} MB` : `${bytes} bytes`;
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
