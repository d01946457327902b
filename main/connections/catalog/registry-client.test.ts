import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, afterEach, before, describe, it } from 'node:test';
import { generateRegistryServers, startRegistryFixture, type RegistryFixture } from '../../../e2e/fixtures/registry-server.js';
import { loadBuiltinCatalog, serverKeyOf, type RemoteCatalogEntry } from './catalog-schema.js';
import { fetchRegistryCatalog, fetchRegistryServers, OFFICIAL_REGISTRY_URL, RegistryError } from './registry-client.js';
import { parseRegistryPage } from './registry-response.js';

async function rejectsWith(promise: Promise<unknown>, kind: RegistryError['kind'], message: RegExp): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof RegistryError, `expected RegistryError, got ${String(error)}`);
    assert.equal(error.kind, kind);
    assert.match(error.message, message);
    return true;
  });
}

async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

describe('fetchRegistryServers', () => {
  let fixture: RegistryFixture;
  before(async () => (fixture = await startRegistryFixture({ servers: generateRegistryServers(25) })));
  after(() => fixture.close());
  afterEach(() => {
    fixture.requests.length = 0;
    fixture.setMode('ok');
  });

  it('defaults to the official registry', () => {
    assert.equal(OFFICIAL_REGISTRY_URL, 'https://registry.modelcontextprotocol.io');
  });

  it('follows nextCursor through every page of /v0.1/servers, asking for the latest versions', async () => {
    const servers = await fetchRegistryServers({ baseUrl: fixture.url, pageSize: 10 });
    // 25 servers, 3 older versions (every tenth), Google and Linear: 30 items, 3 pages of 10.
    assert.equal(servers.length, 30);
    assert.equal(fixture.requests.length, 3);
    assert.ok(
      fixture.requests.every(
        (url) => url.pathname === '/v0.1/servers' && url.searchParams.get('limit') === '10' && url.searchParams.get('version') === 'latest',
      ),
    );
    assert.equal(fixture.requests[0]!.searchParams.get('cursor'), null);
    assert.ok(fixture.requests[1]!.searchParams.get('cursor'));
    assert.notEqual(fixture.requests[2]!.searchParams.get('cursor'), fixture.requests[1]!.searchParams.get('cursor'));
  });

  it('accepts a base URL with a path prefix or a trailing slash', async () => {
    await assert.rejects(fetchRegistryServers({ baseUrl: `${fixture.url}/mirror/` }), /answered HTTP 404/);
    assert.equal(fixture.requests[0]!.pathname, '/mirror/v0.1/servers');
    const servers = await fetchRegistryServers({ baseUrl: `${fixture.url}/` });
    assert.equal(servers.length, 30);
  });

  it('stops after maxPages pages', async () => {
    const servers = await fetchRegistryServers({ baseUrl: fixture.url, pageSize: 5, maxPages: 2 });
    assert.equal(servers.length, 10);
    assert.equal(fixture.requests.length, 2);
  });

  it('gives up on a request that takes longer than the timeout', async () => {
    fixture.setMode('hang');
    const started = Date.now();
    await rejectsWith(
      fetchRegistryServers({ baseUrl: fixture.url, timeoutMs: 200 }),
      'timeout',
      /^Could not reach the MCP Registry at http:\/\/127\.0\.0\.1:\d+ \(timeout after 0\.2 s\)\.$/,
    );
    assert.ok(Date.now() - started < 2000);
  });

  it('reports an HTTP error with its status', async () => {
    fixture.setMode('http-500');
    await rejectsWith(fetchRegistryServers({ baseUrl: fixture.url }), 'http', /answered HTTP 500 for page 1\.$/);
  });

  it('reports a body that is not JSON', async () => {
    fixture.setMode('garbage');
    await rejectsWith(fetchRegistryServers({ baseUrl: fixture.url }), 'invalid-response', /sent a response that is not JSON \(page 1\)/);
  });

  it('refuses a page larger than maxResponseBytes', async () => {
    await rejectsWith(
      fetchRegistryServers({ baseUrl: fixture.url, maxResponseBytes: 1000 }),
      'too-large',
      /sent more than 1000 bytes in one page/,
    );
  });

  it('reports a registry that cannot be reached, with the reason', async () => {
    const baseUrl = `http://127.0.0.1:${await closedPort()}`;
    await rejectsWith(
      fetchRegistryServers({ baseUrl }),
      'network',
      /^Could not reach the MCP Registry at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)\.$/,
    );
  });

  it('refuses a registry URL that is not an http(s) URL, saying what to set', async () => {
    await rejectsWith(
      fetchRegistryServers({ baseUrl: 'registry.example.com' }),
      'invalid-response',
      /is not a URL\. Set it to an https URL such as https:\/\/registry\.modelcontextprotocol\.io/,
    );
    await rejectsWith(fetchRegistryServers({ baseUrl: 'ftp://registry.example.com' }), 'invalid-response', /must be an http\(s\) URL/);
  });

  it('gives each error an actionable hint', () => {
    assert.equal(new RegistryError('timeout', 'x').hint, 'Retry, or check the network.');
    assert.equal(new RegistryError('http', 'x').hint, 'Retry later; the registry may be having trouble.');
    assert.match(new RegistryError('invalid-response', 'x').hint, /check that the registry URL setting points at an MCP Registry/);
  });
});

describe('parseRegistryPage', () => {
  it('reads nextCursor, and next_cursor from registries on the first published MCP Registry API spec', () => {
    assert.deepEqual(parseRegistryPage({ servers: [], metadata: { nextCursor: 'abc' } }), { items: [], nextCursor: 'abc' });
    assert.deepEqual(parseRegistryPage({ servers: [1], metadata: { next_cursor: 'def' } }), { items: [1], nextCursor: 'def' });
    assert.deepEqual(parseRegistryPage({ servers: [] }), { items: [], nextCursor: undefined });
  });

  it('refuses JSON that is not a server list', () => {
    assert.deepEqual(parseRegistryPage({ items: [] }), { problem: 'expected an object with a "servers" array' });
  });
});

describe('fetchRegistryCatalog', () => {
  let fixture: RegistryFixture;
  before(async () => (fixture = await startRegistryFixture({ servers: generateRegistryServers(12) })));
  after(() => fixture.close());

  it('keeps the latest version of each server, remote or a local package, minus Google and the built-in list', async () => {
    const builtin = loadBuiltinCatalog();
    const entries = await fetchRegistryCatalog({
      baseUrl: fixture.url,
      reservedIds: builtin.entries.map((e) => e.id),
      skipKeys: builtin.entries.map(serverKeyOf),
    });
    assert.deepEqual(
      entries.map((e) => e.registryName),
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11].map((i) => `io.github.fixture-org/server-${String(i).padStart(4, '0')}`),
    );
    assert.ok(entries.every((e) => e.source === 'registry'));
    const byName = (n: number) =>
      entries.find((e) => e.registryName?.endsWith(`server-${String(n).padStart(4, '0')}`)) as RemoteCatalogEntry;
    assert.equal(byName(0).url, 'https://server-0.mcp.example.com/mcp', 'the 1.2.0 version, not the older 0.9.0 listed after it');
    assert.equal(byName(1).transport, 'sse');
    assert.deepEqual(byName(3).apiKey, { header: 'X-API-Key' });
    // Servers 2, 6 and 10 are packages only: run with npx.
    const local = entries.find((e) => e.registryName?.endsWith('server-0002'));
    assert.ok(local?.transport === 'stdio');
    assert.deepEqual(local.local, { command: 'npx', args: ['-y', '@fixture/server-2@1.2.0'], env: [], hosts: [] });
  });

  it('reads a registry of 1,000 servers in pages of 100', async () => {
    const large = await startRegistryFixture({ servers: generateRegistryServers(1000) });
    try {
      const entries = await fetchRegistryCatalog({ baseUrl: large.url });
      // 1,000 servers plus 100 older versions, Google and Linear: 1,102 items in 12 pages.
      assert.equal(large.requests.length, 12);
      // Three in four servers have a remote, the others a package; Linear is kept here, as no built-in URLs were given.
      assert.equal(entries.length, 1001);
      assert.equal(entries.filter((e) => e.transport === 'stdio').length, 250);
      assert.equal(new Set(entries.map((e) => e.id)).size, 1001);
    } finally {
      await large.close();
    }
  });
});
