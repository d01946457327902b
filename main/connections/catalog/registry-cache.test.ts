import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { CatalogEntry } from './catalog-schema.js';
import { readRegistryCache, REGISTRY_CACHE_FILE, RegistryCacheError, registryCachePath, writeRegistryCache } from './registry-cache.js';

const entry: CatalogEntry = {
  id: 'io-github-acme-weather',
  name: 'Acme Weather',
  description: 'Forecasts.',
  url: 'https://weather.example.com/mcp',
  transport: 'streamable-http',
  auth: 'none',
  source: 'registry',
  registryName: 'io.github.acme/weather',
};

describe('registry cache', () => {
  let stateDir: string;
  beforeEach(async () => (stateDir = await mkdtemp(join(tmpdir(), 'registry-cache-'))));
  afterEach(() => rm(stateDir, { recursive: true, force: true }));

  it('has no cache before the first write', async () => {
    assert.equal(await readRegistryCache(stateDir), undefined);
  });

  it('reads back what it wrote, creating the state folder', async () => {
    const nested = join(stateDir, 'state');
    const cache = { registryUrl: 'https://registry.example.com', fetchedAt: '2026-10-01T12:00:00.000Z', entries: [entry] };
    await writeRegistryCache(nested, cache);
    assert.deepEqual(await readRegistryCache(nested), cache);
    assert.equal(JSON.parse(await readFile(registryCachePath(nested), 'utf8')).version, 1);
  });

  for (const [label, content] of [
    ['not JSON', '{"version": 1, "entr'],
    ['of the wrong shape', JSON.stringify({ version: 1, registryUrl: 'https://r.example.com', fetchedAt: 'yesterday', entries: [] })],
    [
      'holding a built-in entry',
      JSON.stringify({
        version: 1,
        registryUrl: 'https://r.example.com',
        fetchedAt: '2026-10-01T12:00:00Z',
        entries: [{ ...entry, source: 'built-in' }],
      }),
    ],
  ]) {
    it(`moves a cache ${label} aside and says so`, async () => {
      await writeFile(registryCachePath(stateDir), content!);
      await assert.rejects(readRegistryCache(stateDir), (error: unknown) => {
        assert.ok(error instanceof RegistryCacheError);
        assert.match(
          error.message,
          /^The MCP Registry cache .*registry-cache\.json was unreadable \(.+\); kept it as .*registry-cache\.json\.corrupt-\d+ and will fetch the registry again\.$/,
        );
        return true;
      });
      const files = await readdir(stateDir);
      assert.ok(!files.includes(REGISTRY_CACHE_FILE));
      const aside = files.find((name) => name.startsWith(`${REGISTRY_CACHE_FILE}.corrupt-`));
      assert.equal(await readFile(join(stateDir, aside!), 'utf8'), content);
      assert.equal(await readRegistryCache(stateDir), undefined);
    });
  }
});
