import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { generateRegistryServers, startRegistryFixture, type RegistryFixture } from '../../../e2e/fixtures/registry-server.js';
import { AUTO_REFRESH_INTERVAL_MS, CatalogService, type CatalogServiceOptions } from './catalog-service.js';
import { loadBuiltinCatalog, type CatalogEntry } from './catalog-schema.js';
import { registryCachePath, writeRegistryCache } from './registry-cache.js';

const HOUR = 3_600_000;
const builtin = loadBuiltinCatalog();

const cachedEntry: CatalogEntry = {
  id: 'io-github-acme-weather',
  name: 'Acme Weather',
  description: 'Forecasts from the cache.',
  url: 'https://weather.example.com/mcp',
  transport: 'streamable-http',
  auth: 'none',
  source: 'registry',
  registryName: 'io.github.acme/weather',
};

describe('CatalogService', () => {
  let fixture: RegistryFixture;
  let stateDir: string;
  let clock: number;
  let reports: string[];
  let services: CatalogService[];

  before(async () => (fixture = await startRegistryFixture({ servers: generateRegistryServers(12) })));
  after(() => fixture.close());
  beforeEach(async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'catalog-service-'));
    clock = Date.parse('2026-10-01T12:00:00Z');
    reports = [];
    services = [];
    fixture.requests.length = 0;
    fixture.setMode('ok');
  });
  afterEach(async () => {
    fixture.setMode('ok');
    await Promise.all(services.map((service) => service.idle()));
    await rm(stateDir, { recursive: true, force: true });
  });

  function service(overrides: Partial<CatalogServiceOptions> = {}): CatalogService {
    const created = new CatalogService({
      stateDir,
      registryUrl: fixture.url,
      builtin,
      // Long enough for the local fixture on a busy machine; the test of a timeout sets a short one.
      registry: { timeoutMs: 10_000 },
      report: (message) => reports.push(message),
      now: () => clock,
      ...overrides,
    });
    services.push(created);
    return created;
  }

  async function cacheFetched(agoMs: number, entries: CatalogEntry[] = [cachedEntry], registryUrl = fixture.url): Promise<void> {
    await writeRegistryCache(stateDir, { registryUrl, fetchedAt: new Date(clock - agoMs).toISOString(), entries });
  }

  it('lists only the built-in catalog when the registry is turned off, and never calls it', async () => {
    const catalog = service({ registryUrl: '' });
    await catalog.start();
    await catalog.refresh();
    const listing = catalog.list();
    assert.deepEqual(listing.registry, { state: 'disabled' });
    assert.deepEqual(listing.entries, builtin.entries);
    assert.deepEqual(listing.groups, builtin.groups);
    assert.equal(fixture.requests.length, 0);
  });

  it('fetches the registry on first start, lists built-in entries first, then registry entries, and writes the cache', async () => {
    const catalog = service();
    await catalog.start();
    assert.equal(catalog.list().registry.state, 'loading');
    assert.deepEqual(catalog.list().entries, builtin.entries, 'the built-in list shows while the registry loads');
    await catalog.idle();

    const listing = catalog.list();
    assert.deepEqual(listing.registry, { state: 'ok', fetchedAt: new Date(clock).toISOString(), ageSeconds: 0 });
    assert.deepEqual(listing.entries.slice(0, builtin.entries.length), builtin.entries);
    const registry = listing.entries.slice(builtin.entries.length);
    // Servers 0-11, three of them local packages.
    assert.equal(registry.length, 12);
    assert.ok(registry.every((entry) => entry.source === 'registry'));
    assert.ok(!registry.some((entry) => /linear|google/i.test(entry.name)), 'Linear is built in; Google is not offered');

    const cache = JSON.parse(await readFile(registryCachePath(stateDir), 'utf8'));
    assert.equal(cache.fetchedAt, new Date(clock).toISOString());
    assert.equal(cache.registryUrl, fixture.url);
    assert.deepEqual(cache.entries, registry);
  });

  it('serves a fresh cache after a restart without calling the registry', async () => {
    await cacheFetched(2 * HOUR);
    fixture.setMode('http-500');
    const catalog = service();
    await catalog.start();
    const listing = catalog.list();
    assert.deepEqual(listing.registry, { state: 'ok', fetchedAt: new Date(clock - 2 * HOUR).toISOString(), ageSeconds: 7200 });
    assert.deepEqual(listing.entries.at(-1), cachedEntry);
    await catalog.idle();
    assert.equal(fixture.requests.length, 0);
  });

  it('serves a stale cache at once and refreshes it in the background', async () => {
    await cacheFetched(7 * HOUR);
    const catalog = service();
    await catalog.start();
    const stale = catalog.list();
    assert.equal(stale.registry.state, 'ok');
    assert.equal(stale.registry.ageSeconds, 7 * 3600);
    assert.deepEqual(stale.entries.at(-1), cachedEntry, 'the cached list is served without waiting for the registry');

    await catalog.idle();
    const refreshed = catalog.list();
    assert.deepEqual(refreshed.registry, { state: 'ok', fetchedAt: new Date(clock).toISOString(), ageSeconds: 0 });
    assert.ok(!refreshed.entries.some((entry) => entry.id === cachedEntry.id));
  });

  it('keeps the built-in list and the stale registry list when a refresh fails, and says how old that list is', async () => {
    await cacheFetched(7 * HOUR);
    fixture.setMode('http-500');
    const catalog = service();
    await catalog.start();
    await catalog.idle();
    const listing = catalog.list();
    assert.equal(listing.registry.state, 'failed');
    assert.equal(listing.registry.fetchedAt, new Date(clock - 7 * HOUR).toISOString());
    assert.equal(listing.registry.ageSeconds, 7 * 3600);
    assert.equal(
      listing.registry.error,
      `The MCP Registry at ${fixture.url} answered HTTP 500 for page 1. Showing the registry list from 7 hours ago. The built-in connectors are still listed. Retry later; the registry may be having trouble.`,
    );
    assert.deepEqual(listing.entries, [...builtin.entries, cachedEntry]);
  });

  it('lists the built-in catalog with an actionable error when the first fetch times out', async () => {
    fixture.setMode('hang');
    const catalog = service({ registry: { timeoutMs: 300 } });
    await catalog.start();
    await catalog.idle();
    const listing = catalog.list();
    assert.deepEqual(listing.registry, {
      state: 'failed',
      error: `Could not reach the MCP Registry at ${fixture.url} (timeout after 0.3 s). The built-in connectors are still listed. Retry, or check the network.`,
    });
    assert.deepEqual(listing.entries, builtin.entries);
  });

  it('shares one fetch among concurrent Retries, and shows loading while retrying after a failure', async () => {
    fixture.setMode('http-500');
    const catalog = service();
    await catalog.start();
    await catalog.idle();
    fixture.setMode('ok');
    fixture.requests.length = 0;

    const first = catalog.refresh();
    const second = catalog.refresh();
    assert.equal(first, second);
    assert.equal(catalog.list().registry.state, 'loading');
    await Promise.all([first, second]);
    assert.equal(fixture.requests.length, 1, 'one page, fetched once');
    assert.equal(catalog.list().registry.state, 'ok');
  });

  it('does not refetch on every listing after a failure, but again once the retry interval has passed', async () => {
    fixture.setMode('http-500');
    const catalog = service();
    await catalog.start();
    await catalog.idle();
    assert.equal(fixture.requests.length, 1);

    clock += AUTO_REFRESH_INTERVAL_MS - 1;
    catalog.list();
    await catalog.idle();
    assert.equal(fixture.requests.length, 1);

    clock += 1;
    catalog.list();
    await catalog.idle();
    assert.equal(fixture.requests.length, 2);
  });

  it('ignores a cache of another registry URL', async () => {
    await cacheFetched(HOUR, [cachedEntry], 'https://other-registry.example.com');
    const catalog = service();
    await catalog.start();
    assert.equal(catalog.list().registry.state, 'loading');
    assert.ok(!catalog.list().entries.some((entry) => entry.id === cachedEntry.id));
  });

  it('reports a corrupt cache, moves it aside and fetches again', async () => {
    await writeFile(registryCachePath(stateDir), 'not json');
    const catalog = service();
    await catalog.start();
    await catalog.idle();
    assert.equal(reports.length, 1);
    assert.match(reports[0]!, /was unreadable \(not JSON\); kept it as .*corrupt-\d+ and will fetch the registry again/);
    assert.equal(catalog.list().registry.state, 'ok');
    assert.equal((await readdir(stateDir)).filter((name) => name.includes('corrupt')).length, 1);
  });

  it('reports a cache it can neither read nor write, but still lists what it fetched', async () => {
    const catalog = service({ stateDir: join(stateDir, 'file-in-the-way', 'state') });
    await writeFile(join(stateDir, 'file-in-the-way'), '');
    await catalog.start();
    await catalog.idle();
    assert.equal(catalog.list().registry.state, 'ok');
    assert.equal(reports.length, 2);
    assert.match(
      reports[0]!,
      /^Could not read the MCP Registry cache .*registry-cache\.json \(ENOTDIR\); will fetch the registry instead\.$/,
    );
    assert.match(
      reports[1]!,
      /^Could not save the MCP Registry cache in .*state \(.*\); the registry will be fetched again at the next start\.$/,
    );
  });

  it('hides cached registry entries that the built-in list now offers itself', async () => {
    const duplicate = { ...cachedEntry, id: 'io-github-x-linear', url: 'https://mcp.linear.app/sse' };
    const sameId = { ...cachedEntry, id: 'notion', url: 'https://notion-clone.example.com/mcp' };
    await cacheFetched(HOUR, [duplicate, sameId, cachedEntry]);
    const catalog = service();
    await catalog.start();
    assert.deepEqual(catalog.list().entries.slice(builtin.entries.length), [cachedEntry]);
  });

  it('searches built-in and registry entries, and returns only the sign-in groups still listed', async () => {
    const mirror = {
      ...cachedEntry,
      id: 'cf-radar-mirror',
      name: 'Cloudflare Radar Mirror',
      description: 'Internet trends.',
      url: 'https://radar-mirror.example.com/mcp',
    };
    await cacheFetched(HOUR, [mirror, cachedEntry]);
    const catalog = service();
    await catalog.start();

    const cloudflare = catalog.list({ search: 'cloudflare' });
    assert.deepEqual(
      cloudflare.groups.map((group) => group.id),
      ['cloudflare'],
    );
    assert.ok(cloudflare.entries.every((entry) => /cloudflare/i.test(`${entry.name} ${entry.description} ${entry.id}`)));
    assert.equal(cloudflare.entries.at(-1)?.source, 'registry', 'equal ranks keep built-in first');

    const weather = catalog.list({ search: 'WEATHER acme' });
    assert.deepEqual(weather.entries, [cachedEntry]);
    assert.deepEqual(weather.groups, []);

    const ranked = catalog.list({ search: 'docs' }).entries.map((entry) => entry.id);
    assert.equal(ranked[0], 'cloudflare-docs', 'a name word starting with the query ranks above description matches');
  });
});
