import assert from 'node:assert/strict';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  CATALOG_ID_PATTERN,
  CatalogFileError,
  loadBuiltinCatalog,
  loadCatalog,
  parseBuiltinCatalog,
  type CatalogEntry,
  type RemoteCatalogEntry,
} from './catalog-schema.js';

const rawFile = JSON.parse(await readFile(new URL('./builtin-catalog.json', import.meta.url), 'utf8')) as {
  version: 1;
  groups: Array<Record<string, unknown>>;
  entries: Array<Record<string, unknown>>;
};

/** A copy of the real file with `change` applied, to break one rule at a time. */
function fileWith(change: (file: typeof rawFile) => void): typeof rawFile {
  const copy = structuredClone(rawFile);
  change(copy);
  return copy;
}

function rejects(data: unknown, pattern: RegExp): void {
  assert.throws(
    () => parseBuiltinCatalog(data, 'test-catalog.json'),
    (error: unknown) => {
      assert.ok(error instanceof CatalogFileError, `expected CatalogFileError, got ${String(error)}`);
      assert.match(error.message, /^test-catalog\.json is not a valid connector catalog: /);
      assert.match(error.message, pattern);
      assert.match(error.message, /Fix the file/);
      return true;
    },
  );
}

function remoteEntries(entries: readonly CatalogEntry[]): RemoteCatalogEntry[] {
  return entries.filter((entry): entry is RemoteCatalogEntry => entry.transport !== 'stdio');
}

describe('the built-in catalog file', () => {
  const catalog = loadBuiltinCatalog();

  it('is taken as it is only because it passes the catalog file check unchanged', () => {
    assert.deepEqual(parseBuiltinCatalog(rawFile), catalog);
  });

  it('loads, with at least 20 connectors, all marked built-in', () => {
    assert.ok(catalog.entries.length >= 20, `only ${catalog.entries.length} entries`);
    assert.ok(catalog.entries.every((entry) => entry.source === 'built-in'));
  });

  it('has unique ids of at most 32 lowercase letters, digits and dashes', () => {
    const ids = catalog.entries.map((entry) => entry.id);
    assert.equal(new Set(ids).size, ids.length);
    for (const id of ids) assert.match(id, CATALOG_ID_PATTERN);
  });

  it('points every remote entry at an https URL with a known transport and auth kind', () => {
    for (const entry of remoteEntries(catalog.entries)) {
      assert.equal(new URL(entry.url).protocol, 'https:', entry.id);
      assert.ok(['streamable-http', 'sse'].includes(entry.transport), entry.id);
      assert.ok(['oauth', 'api-key', 'none'].includes(entry.auth), entry.id);
      assert.equal(entry.auth === 'api-key', entry.apiKey !== undefined, `${entry.id}: apiKey goes with api-key auth`);
      assert.ok(entry.name.trim() && entry.description.trim() && !/\n/.test(entry.description), entry.id);
    }
  });

  it('defines every sign-in group it uses, and each group covers at least two servers', () => {
    const groupIds = new Set(catalog.groups.map((group) => group.id));
    for (const entry of remoteEntries(catalog.entries)) if (entry.signInGroup) assert.ok(groupIds.has(entry.signInGroup), entry.id);
    for (const group of catalog.groups) {
      assert.ok(remoteEntries(catalog.entries).filter((entry) => entry.signInGroup === group.id).length >= 2, group.id);
    }
  });

  it('offers neither Google nor GitHub, by id, name or URL host', () => {
    for (const entry of catalog.entries) assert.doesNotMatch(`${entry.id} ${entry.name}`, /google|gmail|youtube|github/i, entry.id);
    for (const entry of remoteEntries(catalog.entries)) {
      assert.doesNotMatch(new URL(entry.url).hostname, /(^|\.)(google|googleapis|gmail|youtube|github|githubcopilot)\.com$/, entry.id);
    }
  });

  it('offers a few well-known local servers, each run by its launcher with no input but its variables', () => {
    const local = catalog.entries.filter((entry) => entry.transport === 'stdio');
    assert.ok(local.length >= 3);
    for (const entry of local) {
      assert.ok(['npx', 'uvx'].includes(entry.local.command), entry.id);
      assert.equal(entry.auth, 'none');
    }
  });
});

describe('parseBuiltinCatalog', () => {
  it('accepts the real file', () => {
    assert.equal(parseBuiltinCatalog(rawFile).entries.length, rawFile.entries.length);
  });

  it('refuses a duplicate id', () => {
    rejects(
      fileWith((f) => f.entries.push({ ...f.entries[0]!, url: 'https://other.example.com/mcp' })),
      /entry id "linear" is used twice/,
    );
  });

  it('refuses an id that is too long or not lowercase', () => {
    rejects(
      fileWith((f) => (f.entries[0]!.id = 'a'.repeat(33))),
      /entries\.0\.id: must be 1-32 characters/,
    );
    rejects(
      fileWith((f) => (f.entries[0]!.id = 'Linear')),
      /entries\.0\.id/,
    );
  });

  it('refuses a URL that is not https', () => {
    rejects(
      fileWith((f) => (f.entries[0]!.url = 'http://mcp.linear.app/mcp')),
      /entries\.0\.url: must be an https URL/,
    );
  });

  it('refuses a sign-in group that is not defined', () => {
    rejects(
      fileWith((f) => (f.entries[0]!.signInGroup = 'atlassian')),
      /entry "linear" names sign-in group "atlassian", which is not defined/,
    );
  });

  it('refuses a sign-in group with fewer than two servers', () => {
    rejects(
      fileWith((f) => f.groups.push({ id: 'solo', name: 'Solo', description: 'One server.' })),
      /group "solo" has 0 entries; a sign-in group needs at least two/,
    );
  });

  it('refuses Google and GitHub entries, by name and by host', () => {
    rejects(
      fileWith((f) => (f.entries[0]!.name = 'Gmail')),
      /entry "linear" has "gmail" in its name/,
    );
    rejects(
      fileWith((f) => (f.entries[0]!.url = 'https://api.githubcopilot.com/mcp/')),
      /entry "linear" points at api\.githubcopilot\.com/,
    );
  });

  it('refuses an api-key entry that does not say which header carries the key, and apiKey on other entries', () => {
    rejects(
      fileWith((f) => (f.entries[0]!.auth = 'api-key')),
      /entries\.0\.apiKey: an api-key entry must say which header carries the key/,
    );
    rejects(
      fileWith((f) => (f.entries[0]!.apiKey = { header: 'Authorization' })),
      /entries\.0\.apiKey: only an api-key entry may have apiKey/,
    );
  });

  it('refuses needsOwnOAuthApp on an entry that does not use OAuth', () => {
    rejects(
      fileWith((f) => Object.assign(f.entries[0]!, { auth: 'none', needsOwnOAuthApp: true })),
      /only an oauth entry may need an own OAuth app/,
    );
  });

  it('refuses a description on more than one line, and unknown fields', () => {
    rejects(
      fileWith((f) => (f.entries[0]!.description = 'Line one\nline two')),
      /entries\.0\.description: must be one line/,
    );
    rejects(
      fileWith((f) => (f.entries[0]!.icon = 'linear.png')),
      /entries\.0/,
    );
  });

  it('lists every problem at once', () => {
    rejects(
      fileWith((f) => {
        f.entries[1]!.id = 'linear';
        f.entries[2]!.signInGroup = 'nope';
      }),
      /entry id "linear" is used twice; .*sign-in group "nope", which is not defined/,
    );
  });
});

describe('loadCatalog with an own catalog file', () => {
  const own = (entries: object[], groups: object[] = []) => ({ version: 1, groups, entries });
  const entry = (id: string, url = `https://${id}.example.com/mcp`, extra: object = {}) => ({
    id,
    name: id,
    description: `The ${id} server.`,
    url,
    transport: 'streamable-http',
    auth: 'none',
    ...extra,
  });
  const write = async (data: unknown) => {
    const dir = await mkdtemp(join(tmpdir(), 'pw-catalog-'));
    const path = join(dir, 'connectors.json');
    await writeFile(path, typeof data === 'string' ? data : JSON.stringify(data));
    return path;
  };

  it('lists its entries and groups first, marked as custom, then the built-in ones', async () => {
    const path = await write(
      own(
        [entry('wiki-a', undefined, { signInGroup: 'intra' }), entry('wiki-b', undefined, { signInGroup: 'intra' })],
        [{ id: 'intra', name: 'Intranet', description: 'Our servers.' }],
      ),
    );
    const catalog = loadCatalog({ path, allowHttp: false });
    assert.deepEqual(
      catalog.entries.slice(0, 2).map((e) => [e.id, e.source]),
      [
        ['wiki-a', 'custom'],
        ['wiki-b', 'custom'],
      ],
    );
    assert.equal(catalog.entries.length, rawFile.entries.length + 2);
    assert.equal(catalog.entries[2]!.source, 'built-in');
    assert.equal(catalog.groups[0]!.id, 'intra');
  });

  it('takes http URLs only when private network targets are allowed', async () => {
    const path = await write(own([entry('local', 'http://127.0.0.1:8080/mcp')]));
    assert.throws(
      () => loadCatalog({ path, allowHttp: false }),
      (error: unknown) => error instanceof CatalogFileError && /entries\.0\.url: must be an https URL/.test(error.message),
    );
    assert.equal(remoteEntries(loadCatalog({ path, allowHttp: true }).entries)[0]!.url, 'http://127.0.0.1:8080/mcp');
  });

  it('refuses ids of the built-in catalog, a file that is not JSON, and a missing file, saying what to do', async () => {
    assert.throws(
      () => loadCatalog({ path: '/nonexistent/connectors.json', allowHttp: false }),
      /WORKSPACE_CATALOG_FILE=\/nonexistent\/connectors\.json cannot be used: it cannot be read \(ENOENT\)/,
    );
    const broken = await write('{ not json');
    assert.throws(() => loadCatalog({ path: broken, allowHttp: false }), /it is not JSON/);
    const clash = await write(own([entry('linear')]));
    assert.throws(() => loadCatalog({ path: clash, allowHttp: false }), /reuses ids of the built-in catalog \(linear\)/);
    const google = await write(own([entry('mail', 'https://gmail.googleapis.com/mcp')]));
    assert.throws(() => loadCatalog({ path: google, allowHttp: false }), /Google and GitHub are not offered/);
  });
});
