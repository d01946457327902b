import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Browser, Page } from 'playwright-core';
import { parse } from 'jsonc-parser';
import { callApi } from '../../test/support/control-api.js';
import { enterWorkspace, startHost, textOf, waitFor, type HostFixture } from '../../test/support/host-fixture.js';
import { LOCAL_SERVER_SCRIPT, npxArgs, packLocalServer } from '../fixtures/local-server.js';
import { launchChromium, pageLive, screenshot, skipReason, PAGE_WAIT_MS } from './page-support.js';

// Local servers and the MCP clients on this machine, on the page in Debian's Chromium against a
// real headless host: a command added with its variable from a new place secret, its stderr in its
// details; a local catalog entry that says what it runs and the host it installs from; the import
// panel over the clients' files in a home folder of the test's own; and Agent access writing this
// server into Cursor's file, then saying what it wrote.

const SECRET = 'page-local-secret-0b7c51';
/** The host's longest wait for one answer of an upstream (WORKSPACE_UPSTREAM_TIMEOUT). */
const UPSTREAM_TIMEOUT_MS = 60_000;
const IMPORTED = 'page-imported-token-9a2e';

const skip = skipReason;
if (skip) console.log(`# skipping the page tests: ${skip}`);

describe('the page: local servers and the clients on this machine', { skip }, () => {
  let fx: HostFixture;
  let workspace: Awaited<ReturnType<typeof enterWorkspace>>;
  let home: string;
  let browser: Browser;
  let page: Page;
  let api: (method: string, path: string, body?: unknown) => Promise<{ status: number; json: any; text: string }>;
  let registryHost: string;
  const files: Record<string, string> = {};
  const originals = new Map<string, string>();

  const shot = (name: string) => screenshot(page, `page-local-${name}`);
  const connected = () => page.getByRole('region', { name: 'Connected' });
  const available = () => page.getByRole('region', { name: 'Available' });
  const connectionOf = async (displayName: string) =>
    (await api('GET', '/mcp/place?workspace_path=Crew/alpha')).json.connections.find(
      (c: { displayName: string }) => c.displayName === displayName,
    );

  before(async () => {
    workspace = await enterWorkspace('pw-page-local-', ['Crew/alpha']);
    home = await mkdtemp(join(tmpdir(), 'pw-page-local-home-'));
    const tarball = await packLocalServer(join(workspace.dir, 'Crew', 'alpha'));
    registryHost = new URL((await promisify(execFile)('npm', ['config', 'get', 'registry'])).stdout.trim()).hostname;
    const catalogFile = join(home, 'connectors.json');
    const local = {
      command: 'npx',
      args: npxArgs(tarball),
      env: [{ name: 'TINY_TOKEN', description: 'The token it checks', required: true, secret: true }],
    };
    await writeFile(
      catalogFile,
      JSON.stringify({
        version: 1,
        groups: [],
        entries: [
          {
            id: 'tiny-cat',
            name: 'Tiny from the catalog',
            description: 'The tiny server, offered by the catalog.',
            transport: 'stdio',
            auth: 'none',
            local,
          },
        ],
      }),
    );
    files['claude-desktop'] = join(home, '.config', 'Claude', 'claude_desktop_config.json');
    files.cursor = join(home, '.cursor', 'mcp.json');
    const contents: Record<string, string> = {
      'claude-desktop': JSON.stringify(
        { mcpServers: { 'tiny-imported': { command: 'node', args: [LOCAL_SERVER_SCRIPT], env: { TINY_TOKEN: IMPORTED } } } },
        null,
        2,
      ),
      cursor: '{\n  "mcpServers": {\n    "linear": { "url": "https://mcp.linear.app/mcp" }\n  }\n}\n',
    };
    for (const [key, path] of Object.entries(files)) {
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, contents[key]!);
      originals.set(path, contents[key]!);
    }
    fx = await startHost(
      {},
      {
        HOME: home,
        XDG_CACHE_HOME: join(home, '.cache'),
        WORKSPACE_SECRET_STORE: 'file',
        WORKSPACE_UPSTREAM_TIMEOUT: String(UPSTREAM_TIMEOUT_MS / 1000),
        WORKSPACE_CATALOG_FILE: catalogFile,
        WORKSPACE_REGISTRY_URL: '',
      },
    );
    const controlUrl = await fx.host.open();
    const adminToken = await fx.host.adminToken();
    api = (method, path, body) => callApi(controlUrl, adminToken, method, path, body);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    page.setDefaultTimeout(PAGE_WAIT_MS);
    await page.goto(await fx.host.loginUrl());
    await pageLive(page);
    await page.getByRole('heading', { name: 'Connections', level: 1 }).waitFor();
    await page.getByRole('combobox', { name: 'Place' }).selectOption({ label: 'Crew alpha' });
    await page.getByText('MCP servers the agents of Crew alpha can use.').waitFor();
  });

  after(async () => {
    await browser?.close();
    await fx?.close();
    await workspace?.leave();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('adds a local server by its command, its variable from a new place secret, and shows its stderr', async () => {
    await available().getByText('Add a server that is not listed').click();
    await available().getByRole('radio', { name: 'Local, a command run on this machine' }).check();
    const form = available().getByRole('form', { name: 'Add a local server' });
    await form.getByRole('textbox', { name: 'Command' }).fill(`node '${LOCAL_SERVER_SCRIPT}'`);
    await form.getByRole('textbox', { name: 'Name (optional)' }).fill('Tiny');
    await form.getByRole('button', { name: 'Add a variable' }).click();
    await form.getByRole('textbox', { name: 'Variable' }).fill('TINY_TOKEN');
    await form.getByRole('combobox', { name: 'Secret' }).selectOption('+new');
    await form.getByRole('textbox', { name: 'Secret name' }).fill('TINY_KEY');
    await form.getByLabel('Value', { exact: true }).fill(SECRET);
    // node installs nothing: no host is filled in for it.
    assert.equal(await form.getByRole('textbox', { name: 'Hosts it needs (optional)' }).inputValue(), '');
    await shot('command-form');
    await form.getByRole('button', { name: 'Add and start' }).click();
    await page.getByRole('status').filter({ hasText: 'Tiny runs on this machine and is connected: 10 tools.' }).waitFor();
    const added = await connectionOf('Tiny');
    assert.deepEqual([added.state, added.transport, added.local.env], ['connected', 'stdio', [{ name: 'TINY_TOKEN', secret: 'TINY_KEY' }]]);
    const { token } = await (await fx.host.tokens()).create({ name: 'alpha agent', workspacePath: 'Crew/alpha' });
    const { client } = await fx.connect(token);
    assert.equal(
      textOf((await client.callTool({ name: `${added.name}__env`, arguments: { name: 'TINY_TOKEN' } })) as CallToolResult),
      SECRET,
    );
    await client.close();

    const row = connected()
      .getByRole('listitem')
      .filter({ has: page.getByText('Tiny', { exact: true }) });
    await row.getByRole('button', { name: 'Show the details of Tiny' }).click();
    await row
      .getByLabel('Its last lines on stderr')
      .getByText(/tiny-stdio-mcp ready/)
      .waitFor();
    await shot('details-stderr');
    assert.ok(!(await page.content()).includes(SECRET), 'the page never shows the secret');
  });

  it('asks for the install host of npx under strict, and warns when it is taken out', async () => {
    assert.equal((await api('PUT', '/places/policy', { workspace_path: 'Crew/alpha', policy: 'strict' })).status, 200);
    await page.reload();
    await pageLive(page);
    await page.getByText('MCP servers the agents of Crew alpha can use.').waitFor();
    await available().getByText('Add a server that is not listed').click();
    await available().getByRole('radio', { name: 'Local, a command run on this machine' }).check();
    const form = available().getByRole('form', { name: 'Add a local server' });
    await form.getByRole('textbox', { name: 'Command' }).fill('npx -y @acme/some-mcp');
    const hosts = form.getByRole('textbox', { name: 'Hosts it needs (optional)' });
    await waitFor(async () => (await hosts.inputValue()) === registryHost, 15_000, `the hosts to be ${registryHost}`);
    assert.equal(await form.getByRole('note').count(), 0);
    await hosts.fill('api.example.com');
    await form
      .getByRole('note')
      .filter({ hasText: `This place is strict: without ${registryHost} in the hosts, npx cannot install the server.` })
      .waitFor();
    await shot('strict-install-host');
    await form.getByRole('textbox', { name: 'Command' }).fill('');
    assert.equal((await api('PUT', '/places/policy', { workspace_path: 'Crew/alpha', policy: 'machine' })).status, 200);
    await page.reload();
    await pageLive(page);
    await page.getByText('MCP servers the agents of Crew alpha can use.').waitFor();
  });

  it('adds a local catalog entry after saying what it runs and where it installs from, its variable from a secret the place has', async () => {
    await available().getByRole('searchbox', { name: 'Search connectors' }).fill('tiny');
    const row = available().getByRole('listitem').filter({ hasText: 'Tiny from the catalog' });
    await row.getByText('Runs here').waitFor();
    await row.getByRole('button', { name: 'Connect Tiny from the catalog' }).click();
    const form = row.getByRole('form', { name: 'Add Tiny from the catalog' });
    await form.getByText(/^It runs npx --yes --offline/).waitFor();
    await form
      .getByRole('note')
      .filter({ hasText: `npx installs it from ${registryHost}: under the place and strict policies it may reach that host too.` })
      .waitFor();
    await form
      .getByRole('group', { name: 'TINY_TOKEN: The token it checks, from a secret of this place' })
      .getByRole('combobox', { name: 'Secret' })
      .selectOption('TINY_KEY');
    await shot('catalog-local-entry');
    await form.getByRole('button', { name: 'Add Tiny from the catalog' }).click();
    // Listed (Added) as soon as it is stored; connected once npx has installed and started it.
    await row.getByText('Added').waitFor({ timeout: 60_000 });
    await waitFor(async () => (await connectionOf('Tiny from the catalog')).state !== 'checking', 60_000, 'the check to end');
    const added = await connectionOf('Tiny from the catalog');
    assert.equal(added.state, 'connected', added.reason);
    assert.deepEqual(added.local.hosts, [registryHost]);
    assert.deepEqual(added.local.env, [{ name: 'TINY_TOKEN', secret: 'TINY_KEY' }]);
  });

  it('imports a server of Claude Desktop, its literal token moved into a place secret, and writes nothing back', async () => {
    await page.getByText('Import from Claude Desktop, Cursor, VS Code or Claude Code').click();
    const list = page.getByRole('list', { name: 'Servers in the clients’ configurations' });
    const item = list.getByRole('listitem').filter({ hasText: 'tiny-imported' });
    await item.getByText('Claude Desktop, yours').waitFor();
    await item.getByText(`runs node ${LOCAL_SERVER_SCRIPT}`).waitFor();
    await item.getByText('New secret TINY_TOKEN of this place, from its variable TINY_TOKEN.').waitFor();
    await page.getByRole('button', { name: 'Pick the servers to import' }).waitFor();
    await item.getByRole('checkbox').check();
    await shot('import');
    await page.getByRole('button', { name: 'Import 1 server' }).click();
    // The import answers once the server is checked, which waits up to the upstream timeout (60 s here);
    // what it said is then compared whole, so that a failure shows it.
    const results = page.getByRole('list', { name: 'What was imported' });
    const failed = page.getByText('Nothing was imported.');
    await results
      .or(failed)
      .waitFor({ timeout: UPSTREAM_TIMEOUT_MS + PAGE_WAIT_MS })
      .catch(async (error: Error) => {
        const panel = await page.locator('details.import').innerText();
        throw new Error(
          `${error.message}\nThe import panel showed: ${panel}\nThe connection: ${JSON.stringify(await connectionOf('tiny-imported'))}`,
        );
      });
    const added = await connectionOf('tiny-imported');
    assert.equal(await results.or(failed).first().innerText(), 'tiny-imported: added as tiny-imported, connected.', JSON.stringify(added));
    assert.deepEqual((await api('GET', '/secrets?workspace_path=Crew/alpha')).json.names, ['TINY_KEY', 'TINY_TOKEN']);
    assert.equal(added.state, 'connected', added.reason);
    await connected().getByText('tiny-imported').first().waitFor();
    assert.ok(!(await page.content()).includes(IMPORTED));
    for (const [path, text] of originals) assert.equal(await readFile(path, 'utf8'), text, `${path} was changed`);
  });

  it("writes this server into Cursor's configuration from Agent access, says what it wrote, and replaces it only when asked", async () => {
    await page.getByRole('link', { name: 'Agent access' }).click();
    const form = page.getByRole('form', { name: 'Write this server into a client' });
    await form.getByRole('combobox', { name: 'Client' }).selectOption({ label: 'Cursor' });
    await form.getByRole('combobox', { name: 'Its agent works in' }).selectOption({ label: 'Crew alpha' });
    await form.getByRole('radio', { name: `Yours, for every project: ${files.cursor}` }).check();
    await form.getByRole('radio', { name: /A new token of this app for Crew alpha/ }).check();
    await form.getByRole('button', { name: 'Write into Cursor’s configuration' }).click();
    const said = page.getByRole('status', { name: 'What was written' });
    await said.getByText(`Changed ${files.cursor}: added the server “persona-workspace” for Cursor, working in Crew alpha:`).waitFor();
    await said.getByText(/"Authorization": "Bearer <token>"/).waitFor();
    await said.getByText(/revoke it under Tokens/).waitFor();
    await shot('client-written');
    const written = await readFile(files.cursor!, 'utf8');
    const entry = parse(written).mcpServers['persona-workspace'];
    assert.match(entry.headers.Authorization, /^Bearer \S+$/);
    assert.ok(!(await page.content()).includes(entry.headers.Authorization.slice(7)), 'the token is in the file only');
    assert.ok(written.startsWith('{\n  "mcpServers": {\n    "linear": { "url": "https://mcp.linear.app/mcp" },\n'), written);
    const backup = (await said.locator('code').last().textContent())!;
    assert.equal(await readFile(backup, 'utf8'), originals.get(files.cursor!));
    assert.ok(
      (await api('GET', '/tokens')).json.tokens.some(
        (t: { name: string; workspacePath?: string }) =>
          t.name === 'Cursor (written to its configuration)' && t.workspacePath === 'Crew/alpha',
      ),
    );

    await form.getByRole('button', { name: 'Write into Cursor’s configuration' }).click();
    await form
      .getByRole('alert')
      .getByText(/already has a server named "persona-workspace"/)
      .waitFor();
    assert.equal(await form.getByRole('button', { name: 'Write into Cursor’s configuration' }).isDisabled(), true);
    await form.getByRole('checkbox', { name: /Replace the entry Cursor has of that name/ }).check();
    await form.getByRole('radio', { name: /It signs in on first use/ }).check();
    await form.getByRole('button', { name: 'Write into Cursor’s configuration' }).click();
    await said.getByText(`Changed ${files.cursor}: replaced the server “persona-workspace” for Cursor, working in Crew alpha:`).waitFor();
    await said.getByText('Cursor signs in on first use: approve it under Waiting sign-ins.', { exact: false }).waitFor();
    assert.match(parse(await readFile(files.cursor!, 'utf8')).mcpServers['persona-workspace'].url, /\/mcp\?workspace_path=Crew%2Falpha$/);
  });
});
