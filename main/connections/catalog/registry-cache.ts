import { mkdir, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import * as z from 'zod';
import { writeFileAtomic } from '../../state/atomic-write.js';
import { catalogEntrySchema, type CatalogEntry } from './catalog-schema.js';

export const REGISTRY_CACHE_FILE = 'registry-cache.json';

const cacheFileSchema = z.object({
  version: z.literal(1),
  registryUrl: z.string(),
  fetchedAt: z.iso.datetime(),
  entries: z.array(catalogEntrySchema.refine((entry) => entry.source === 'registry', 'must be a registry entry')),
});

/** The registry's entries as last fetched, with when and from where. */
export interface RegistryCache {
  registryUrl: string;
  fetchedAt: string;
  entries: CatalogEntry[];
}

/** The cache file could not be used (and, if corrupt, was moved aside); the message says what happened. */
export class RegistryCacheError extends Error {
  override readonly name = 'RegistryCacheError';
}

export function registryCachePath(stateDir: string): string {
  return join(stateDir, REGISTRY_CACHE_FILE);
}

/**
 * The cache on disk, or `undefined` when there is none. A corrupt file is renamed aside (never
 * silently overwritten) and reported with `RegistryCacheError`; the registry is then fetched anew.
 */
export async function readRegistryCache(stateDir: string): Promise<RegistryCache | undefined> {
  const path = registryCachePath(stateDir);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    throw new RegistryCacheError(
      `Could not read the MCP Registry cache ${path} (${code ?? (error as Error).message}); will fetch the registry instead.`,
    );
  }
  let problem: string;
  try {
    const parsed = cacheFileSchema.safeParse(JSON.parse(text));
    if (parsed.success) return { registryUrl: parsed.data.registryUrl, fetchedAt: parsed.data.fetchedAt, entries: parsed.data.entries };
    problem = parsed.error.issues[0]?.message ?? 'unexpected content';
  } catch {
    problem = 'not JSON';
  }
  const aside = `${path}.corrupt-${Date.now()}`;
  await rename(path, aside);
  throw new RegistryCacheError(
    `The MCP Registry cache ${path} was unreadable (${problem}); kept it as ${aside} and will fetch the registry again.`,
  );
}

export async function writeRegistryCache(stateDir: string, cache: RegistryCache): Promise<void> {
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  await writeFileAtomic(registryCachePath(stateDir), JSON.stringify({ version: 1, ...cache }) + '\n');
}
