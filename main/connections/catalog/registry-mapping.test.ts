import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { serverKeyOf, type RemoteCatalogEntry } from './catalog-schema.js';
import { catalogEntriesFromRegistry, compareVersions, endpointKey } from './registry-mapping.js';
import type { RegistryRemote, RegistryServerItem } from './registry-response.js';

function server(name: string, overrides: Partial<RegistryServerItem> = {}): RegistryServerItem {
  const slug = name.replace(/[^a-z0-9]+/gi, '-');
  return {
    name,
    version: '1.0.0',
    description: `Server ${name}.`,
    remotes: [{ type: 'streamable-http', url: `https://${slug}.example.com/mcp` }],
    packages: [],
    status: 'active',
    isLatest: true,
    ...overrides,
  };
}

const remote = (type: string, url: string, headers?: RegistryRemote['headers']): RegistryRemote => ({
  type,
  url,
  ...(headers && { headers }),
});

describe('catalogEntriesFromRegistry', () => {
  it('maps a remote server to a registry entry', () => {
    const [entry] = catalogEntriesFromRegistry([
      server('io.github.acme/weather', {
        title: 'Acme Weather',
        description: 'Forecasts\n  and alerts.',
        websiteUrl: 'https://acme.example.com',
      }),
    ]);
    assert.deepEqual(entry, {
      id: 'io-github-acme-weather',
      name: 'Acme Weather',
      description: 'Forecasts and alerts.',
      url: 'https://io-github-acme-weather.example.com/mcp',
      transport: 'streamable-http',
      auth: 'none',
      homepage: 'https://acme.example.com',
      source: 'registry',
      registryName: 'io.github.acme/weather',
    });
  });

  it('names an untitled server after its registry name and describes an undescribed one', () => {
    const [entry] = catalogEntriesFromRegistry([server('com.example/tickets', { description: '' })]);
    assert.equal(entry?.name, 'tickets');
    assert.equal(entry?.description, 'MCP server com.example/tickets from the MCP Registry.');
  });

  it('keeps only servers with an https streamable HTTP or SSE remote, preferring streamable HTTP', () => {
    const entries = catalogEntriesFromRegistry([
      server('a.example/local', { remotes: [] }),
      server('a.example/http', { remotes: [remote('streamable-http', 'http://plain.example.com/mcp')] }),
      server('a.example/template', { remotes: [remote('streamable-http', 'https://{tenant}.example.com/mcp')] }),
      server('a.example/ws', { remotes: [remote('websocket', 'https://ws.example.com/mcp')] }),
      server('a.example/both', {
        remotes: [remote('sse', 'https://both.example.com/sse'), remote('streamable-http', 'https://both.example.com/mcp')],
      }),
      server('a.example/sse', { remotes: [remote('sse', 'https://sse-only.example.com/sse')] }),
    ]);
    assert.deepEqual(
      entries.map((e) => [e.registryName, e.transport, (e as RemoteCatalogEntry).url]),
      [
        ['a.example/both', 'streamable-http', 'https://both.example.com/mcp'],
        ['a.example/sse', 'sse', 'https://sse-only.example.com/sse'],
      ],
    );
  });

  it('keeps the latest version of each server, whatever the order', () => {
    const entries = catalogEntriesFromRegistry([
      server('a.example/flagged', { version: '2.0.0', isLatest: false, remotes: [remote('sse', 'https://flagged-old.example.com/sse')] }),
      server('a.example/flagged', { version: '1.0.0', isLatest: true, remotes: [remote('sse', 'https://flagged-new.example.com/sse')] }),
      server('a.example/versions', { version: '1.10.0', isLatest: undefined, remotes: [remote('sse', 'https://v110.example.com/sse')] }),
      server('a.example/versions', { version: '1.9.0', isLatest: undefined, remotes: [remote('sse', 'https://v19.example.com/sse')] }),
    ]);
    assert.deepEqual(
      entries.map((e) => (e as RemoteCatalogEntry).url),
      ['https://flagged-new.example.com/sse', 'https://v110.example.com/sse'],
    );
  });

  it('drops a server whose latest version is not active, or has no remote any more', () => {
    const entries = catalogEntriesFromRegistry([
      server('a.example/deleted', { status: 'deleted' }),
      server('a.example/deprecated', { status: 'deprecated' }),
      server('a.example/went-local', { version: '1.0.0', isLatest: false }),
      server('a.example/went-local', { version: '2.0.0', remotes: [] }),
      server('a.example/unflagged', { status: undefined }),
    ]);
    assert.deepEqual(
      entries.map((e) => e.registryName),
      ['a.example/unflagged'],
    );
  });

  it('drops Google and GitHub servers', () => {
    const entries = catalogEntriesFromRegistry([
      server('io.github.acme/drive', {
        title: 'Google Drive',
        remotes: [remote('streamable-http', 'https://drivemcp.googleapis.com/mcp/v1')],
      }),
      server('io.github.github/github-mcp-server'),
      server('io.github.acme/ok'),
    ]);
    assert.deepEqual(
      entries.map((e) => e.registryName),
      ['io.github.acme/ok'],
    );
  });

  it('drops servers at a URL already offered, counting /mcp and /sse of one host as one server', () => {
    const entries = catalogEntriesFromRegistry(
      [
        server('app.linear/linear', { remotes: [remote('sse', 'https://MCP.linear.app/sse')] }),
        server('com.stripe/mcp', { remotes: [remote('streamable-http', 'https://mcp.stripe.com/')] }),
        server('a.example/first', { remotes: [remote('streamable-http', 'https://same.example.com/mcp')] }),
        server('a.example/second', { remotes: [remote('sse', 'https://same.example.com/sse')] }),
      ],
      {
        skipKeys: ['https://mcp.linear.app/mcp', 'https://mcp.stripe.com'].map((url) => serverKeyOf({ transport: 'streamable-http', url })),
      },
    );
    assert.deepEqual(
      entries.map((e) => e.registryName),
      ['a.example/first'],
    );
  });

  it('marks a remote that requires a key header as api-key, keeping the header and its scheme', () => {
    const entries = catalogEntriesFromRegistry([
      server('a.example/secret', {
        remotes: [remote('streamable-http', 'https://s.example.com/mcp', [{ name: 'X-Fixture-Auth', isRequired: true, isSecret: true }])],
      }),
      server('a.example/bearer', {
        remotes: [
          remote('streamable-http', 'https://b.example.com/mcp', [{ name: 'Authorization', value: 'Bearer {api_key}', isRequired: true }]),
        ],
      }),
      server('a.example/optional', {
        remotes: [remote('streamable-http', 'https://o.example.com/mcp', [{ name: 'X-API-Key', isRequired: false, isSecret: true }])],
      }),
      server('a.example/region', {
        remotes: [remote('streamable-http', 'https://r.example.com/mcp', [{ name: 'X-Region', isRequired: true }])],
      }),
    ]);
    assert.deepEqual(Object.fromEntries(entries.map((e) => [e.registryName, [e.auth, (e as RemoteCatalogEntry).apiKey]])), {
      'a.example/bearer': ['api-key', { header: 'Authorization', prefix: 'Bearer ' }],
      'a.example/optional': ['none', undefined],
      'a.example/region': ['none', undefined],
      'a.example/secret': ['api-key', { header: 'X-Fixture-Auth' }],
    });
  });

  it('derives ids deterministically, hashing names that are too long or whose slug is taken', () => {
    const long = 'io.github.a-rather-long-organisation-name/with-a-long-server-name';
    const items = [
      server('a.example/notion'),
      server('a.example/x-y', { remotes: [remote('sse', 'https://dash.example.com/sse')] }),
      server('a.example/x.y', { remotes: [remote('sse', 'https://dot.example.com/sse')] }),
      server(long),
      server('io.github.acme/weather'),
    ];
    const first = catalogEntriesFromRegistry(items, { reservedIds: ['a-example-notion'] });
    const again = catalogEntriesFromRegistry([...items].reverse(), { reservedIds: ['a-example-notion'] });
    const idOf = (entries: typeof first, name: string) => entries.find((e) => e.registryName === name)?.id;

    assert.equal(idOf(first, 'io.github.acme/weather'), 'io-github-acme-weather');
    assert.match(idOf(first, 'a.example/notion')!, /^a-example-notion-[0-9a-f]{8}$/);
    assert.match(idOf(first, long)!, /^io-github-a-rather-long-[0-9a-f]{8}$/);
    assert.notEqual(idOf(first, 'a.example/x-y'), idOf(first, 'a.example/x.y'));
    for (const entry of first) {
      assert.ok(entry.id.length <= 32, entry.id);
      assert.equal(idOf(again, entry.registryName!), entry.id);
    }
  });

  it('sorts by name, ignoring case and reading numbers as numbers', () => {
    const entries = catalogEntriesFromRegistry([
      server('a.example/s10', { title: 'Server 10' }),
      server('a.example/b', { title: 'beta' }),
      server('a.example/s2', { title: 'Server 2' }),
      server('a.example/a', { title: 'Alpha' }),
    ]);
    assert.deepEqual(
      entries.map((e) => e.name),
      ['Alpha', 'beta', 'Server 2', 'Server 10'],
    );
  });
});

describe('compareVersions', () => {
  it('orders numerically, with a release above its pre-releases', () => {
    assert.equal(compareVersions('1.10.0', '1.9.0'), 1);
    assert.equal(compareVersions('1.0.0', '1.0.0-beta.2'), 1);
    assert.equal(compareVersions('1.0.0-beta.2', '1.0.0-beta.10'), -1);
    assert.equal(compareVersions('v2.0', '2.0.0'), 0);
    assert.equal(compareVersions('1.0.0+build.5', '1.0.0'), 0);
    assert.equal(compareVersions('1.0.0-beta', '1.0.0-beta.1'), -1);
  });
});

describe('endpointKey', () => {
  it('ignores case of the host, the query, a trailing slash and a trailing /mcp or /sse', () => {
    assert.equal(endpointKey('https://MCP.linear.app/sse'), endpointKey('https://mcp.linear.app/mcp'));
    assert.equal(endpointKey('https://huggingface.co/mcp?login'), endpointKey('https://huggingface.co/mcp'));
    assert.equal(endpointKey('https://mcp.stripe.com/'), endpointKey('https://mcp.stripe.com'));
    assert.notEqual(endpointKey('https://bindings.mcp.cloudflare.com/mcp'), endpointKey('https://builds.mcp.cloudflare.com/mcp'));
  });
});

describe('catalogEntriesFromRegistry: local servers', () => {
  const pkg = (overrides: Record<string, unknown> = {}) => ({
    registryType: 'npm',
    registryBaseUrl: 'https://packages.example.org',
    identifier: '@acme/files-mcp',
    version: '2.1.0',
    transport: { type: 'stdio' },
    ...overrides,
  });

  it('offers an npm or PyPI package run over stdio when there is no remote, with its variables and where it installs from', () => {
    const entries = catalogEntriesFromRegistry([
      server('a.example/files', {
        remotes: [],
        packages: [
          pkg({
            packageArguments: [
              { type: 'named', name: '--read-only' },
              { type: 'positional', value: 'stdio' },
            ],
            environmentVariables: [{ name: 'ACME_TOKEN', description: 'Your token', isRequired: true, isSecret: true }],
          }),
        ],
      }),
      server('a.example/py', {
        remotes: [],
        packages: [pkg({ registryType: 'pypi', identifier: 'acme-mcp', version: '0.3', registryBaseUrl: undefined })],
      }),
    ]);
    assert.deepEqual(
      entries.map((e) => [e.registryName, e.transport === 'stdio' && e.local]),
      [
        [
          'a.example/files',
          {
            command: 'npx',
            args: ['-y', '@acme/files-mcp@2.1.0', '--read-only', 'stdio'],
            env: [{ name: 'ACME_TOKEN', description: 'Your token', required: true, secret: true }],
            hosts: ['packages.example.org'],
          },
        ],
        ['a.example/py', { command: 'uvx', args: ['acme-mcp@0.3'], env: [], hosts: [] }],
      ],
    );
  });

  it('prefers a remote, and leaves out a package that needs input or a secret on its command line, or is not stdio', () => {
    const entries = catalogEntriesFromRegistry([
      server('a.example/both', { packages: [pkg()] }),
      server('a.example/folder', {
        remotes: [],
        packages: [pkg({ packageArguments: [{ type: 'positional', valueHint: 'dir', isRequired: true }] })],
      }),
      server('a.example/secret-arg', {
        remotes: [],
        packages: [pkg({ packageArguments: [{ type: 'named', name: '--token', value: 'x', isSecret: true }] })],
      }),
      server('a.example/template', { remotes: [], packages: [pkg({ packageArguments: [{ type: 'positional', value: '{dir}' }] })] }),
      server('a.example/http', { remotes: [], packages: [pkg({ transport: { type: 'streamable-http' } })] }),
      server('a.example/oci', { remotes: [], packages: [pkg({ registryType: 'oci' })] }),
    ]);
    assert.deepEqual(
      entries.map((e) => [e.registryName, e.transport]),
      [['a.example/both', 'streamable-http']],
    );
  });
});
