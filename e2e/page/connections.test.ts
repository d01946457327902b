import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { callApi } from '../../test/support/control-api.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SignJWT } from 'jose';
import type { Browser, Page } from 'playwright-core';
import { enterWorkspace, startHost, type HostFixture } from '../../test/support/host-fixture.js';
import { launchChromium, pageLive, screenshot, skipReason, tabUntil, PAGE_WAIT_MS } from './page-support.js';
import { startRegistryFixture, type RegistryFixture } from '../fixtures/registry-server.js';
import { startUpstream, type UpstreamFixture } from '../fixtures/upstream-server.js';

// The page (PlaceMcpSection) in Debian's Chromium against a real headless host, a real upstream MCP
// server that checks an API key, and a registry fixture that fails until it is told not to.

const API_KEY = 'sk-page-test-51c0ffee';
const JWT_SECRET = 'page-test-signing-secret';

const skip = skipReason;
if (skip) console.log(`# skipping the page tests: ${skip}`);

describe('the page: connections of a place', { skip }, () => {
  let fx: HostFixture;
  let workspace: Awaited<ReturnType<typeof enterWorkspace>>;
  let upstream: UpstreamFixture;
  let registry: RegistryFixture;
  let browser: Browser;
  let page: Page;

  const shot = (name: string) => screenshot(page, `page-${name}`);
  const connected = () => page.getByRole('region', { name: 'Connected' });
  const available = () => page.getByRole('region', { name: 'Available' });

  before(async () => {
    workspace = await enterWorkspace('pw-page-', ['Crew/alpha']);
    upstream = await startUpstream({ name: 'issues', apiKey: { header: 'X-Api-Key', value: API_KEY } });
    registry = await startRegistryFixture({ mode: 'http-500' });
    // Another person's agent adds "Bob tracker" from this own catalog (the page is the owner's only).
    const catalogFile = join(workspace.dir, 'connectors.json');
    const bobTracker = {
      id: 'bob-tracker',
      name: 'Bob tracker',
      description: "Bob's issues.",
      url: upstream.url,
      transport: 'streamable-http',
      auth: 'api-key',
      apiKey: { header: 'X-Api-Key' },
    };
    await writeFile(catalogFile, JSON.stringify({ version: 1, groups: [], entries: [bobTracker] }));
    fx = await startHost(
      {},
      {
        WORKSPACE_REGISTRY_URL: registry.url,
        WORKSPACE_JWT_SECRET: JWT_SECRET,
        WORKSPACE_ALLOW_PRIVATE_NETWORK: '1',
        WORKSPACE_SECRET_STORE: 'file',
        WORKSPACE_UPSTREAM_TIMEOUT: '5',
        WORKSPACE_CATALOG_FILE: catalogFile,
      },
    );
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
    page.setDefaultTimeout(PAGE_WAIT_MS);
    await page.goto(await fx.host.loginUrl());
    await pageLive(page);
    await page.getByRole('heading', { name: 'Connections', level: 1 }).waitFor();
  });

  after(async () => {
    await browser?.close();
    await fx?.close();
    await upstream?.close();
    await registry?.close();
    await workspace?.leave();
  });

  it('shows the rule above an empty Connected list, and the place picker', async () => {
    await page.getByText('Each connection uses the login of the person who added it').waitFor();
    await connected().getByText('No connections yet').waitFor();
    const picker = page.getByRole('combobox', { name: 'Place' });
    assert.equal(await picker.inputValue(), '');
    assert.ok((await picker.locator('option').allTextContents()).includes('Crew alpha'));
    await shot('connections-empty');
  });

  it('says quietly that the registry failed, keeps the built-in list, and Retry brings the registry in', async () => {
    const failure = available()
      .getByRole('status')
      .filter({ hasText: 'The MCP Registry could not be reached, so only the built-in connectors are shown.' });
    await failure.waitFor();
    assert.equal(await available().getByRole('alert').count(), 0, 'a quiet note, not an error box');
    assert.doesNotMatch((await failure.getAttribute('class')) ?? '', /note-error/);
    assert.ok(await available().getByText('DeepWiki', { exact: true }).isVisible(), 'built-in entries stay listed');
    await shot('catalog-failed');
    registry.setMode('ok');
    await failure.getByRole('button', { name: 'Retry' }).click();
    // The list is long now: the first rows, then all of them on request.
    await available()
      .getByRole('button', { name: /^Show all \d+ connectors$/ })
      .click();
    await available().getByText('Fixture Server 0', { exact: true }).waitFor();
    await failure.waitFor({ state: 'detached' });
    await shot('catalog-after-retry');
  });

  it('searches the catalog, with sign-in groups as service chips', async () => {
    const search = available().getByRole('searchbox', { name: 'Search connectors' });
    await search.fill('cloudflare');
    const group = available().getByRole('group', { name: 'Cloudflare', exact: true });
    await group.waitFor();
    await group.getByRole('button', { name: /^Connect \d+ services$/ }).waitFor();
    const chips = group.getByRole('group', { name: 'Cloudflare services' }).getByRole('button');
    const n = await chips.count();
    assert.ok(n >= 2, `chips: ${n}`);
    await group.getByRole('button', { name: `Connect ${n} services` }).waitFor();
    await chips.first().click(); // unpick one
    assert.equal(await chips.first().getAttribute('aria-pressed'), 'false');
    await group.getByRole('button', { name: `Connect ${n - 1} services` }).waitFor();
    await shot('catalog-search-group');

    await search.fill('deepwiki');
    await available().getByRole('button', { name: 'Connect DeepWiki' }).waitFor();
    await available().getByText('Fixture Server 0', { exact: true }).waitFor({ state: 'detached' });
    await search.fill('zzzz-nothing-here');
    await available().getByText('No connector matches “zzzz-nothing-here”.', { exact: false }).waitFor();
    await shot('catalog-search-empty');
    await search.fill('');
  });

  it('adds a server that is not listed, with a new place secret, and shows it Connected with whose login', async () => {
    await available().getByText('Add a server that is not listed').click();
    const form = available().getByRole('form', { name: 'Add a server that is not listed' });
    await form.getByRole('textbox', { name: 'Server URL' }).fill(upstream.url);
    await form.getByRole('textbox', { name: 'Name (optional)' }).fill('Issue tracker');
    await form.getByRole('checkbox', { name: 'It needs an API key' }).check();
    await form.getByRole('textbox', { name: 'Header' }).fill('X-Api-Key');
    await form.getByRole('textbox', { name: 'Before the key (optional)' }).fill('');
    const secret = form.getByRole('combobox', { name: 'Secret', exact: true });
    await secret.waitFor();
    await form.getByRole('textbox', { name: 'Secret name' }).waitFor(); // a place without secrets: a new one
    assert.equal(await secret.inputValue(), '+new');
    await form.getByRole('textbox', { name: 'Secret name' }).fill('ISSUES_KEY');
    await form.getByLabel('Value (the API key)').fill(API_KEY);
    await shot('add-server-form');
    await form.getByRole('button', { name: 'Add and connect' }).click();

    const row = connected().getByRole('listitem').filter({ hasText: 'Issue tracker' });
    await row.getByText('Connected', { exact: true }).waitFor();
    await row.getByText('Uses your login').waitFor();
    await row.getByText('key from secret ISSUES_KEY').waitFor();
    await page.getByRole('status').filter({ hasText: 'Issue tracker is connected' }).waitFor();
    assert.ok(
      upstream.requests.some((h) => h['x-api-key'] === API_KEY),
      'the upstream got the key from the new secret',
    );
    const secrets = (await (
      await fetch(`${await controlUrl()}/api/secrets?workspace_path=`, {
        headers: { Authorization: `Bearer ${await fx.host.adminToken()}` },
      })
    ).json()) as { names: string[] };
    assert.deepEqual(secrets.names, ['ISSUES_KEY']);
    await shot('connected');
  });

  it('shows a missing secret with its reason, and setting it there connects again', async () => {
    const admin = { Authorization: `Bearer ${await fx.host.adminToken()}` };
    const gone = await fetch(`${await controlUrl()}/api/secrets/ISSUES_KEY?workspace_path=`, { method: 'DELETE', headers: admin });
    assert.equal(gone.status, 204);
    await refocus(); // the list refetches on focus
    const row = connected().getByRole('listitem').filter({ hasText: 'Issue tracker' });
    await row.getByText('Needs secret', { exact: true }).waitFor();
    await row.getByText('The secret "ISSUES_KEY" is missing', { exact: false }).waitFor();
    await shot('needs-secret');
    await row.getByRole('button', { name: 'Set the secret ISSUES_KEY for Issue tracker' }).click();
    await row.getByLabel('Value of ISSUES_KEY (the API key)').fill(API_KEY);
    await row.getByRole('button', { name: 'Save secret' }).click();
    await row.getByText('Connected', { exact: true }).waitFor();
  });

  it('shows another person’s connection with whose login it uses, and paused with the reason', async () => {
    const base = await controlUrl();
    const call = async (method: string, path: string, body: unknown, token: string) => {
      const response = await fetch(`${base}/api${path}`, {
        method,
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      assert.ok(response.ok, `${method} ${path}: ${response.status} ${await response.text()}`);
    };
    const admin = await fx.host.adminToken();
    const bob = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('bob')
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode(JWT_SECRET));
    await call('PUT', '/access/people/bob', { name: 'Bob' }, admin);
    await call('PUT', '/access/places', { workspace_path: 'Crew/alpha', editors: ['bob'] }, admin);
    await call('PUT', '/secrets/BOB_KEY?workspace_path=Crew/alpha', { value: API_KEY }, admin);
    const agentUrl = new URL(fx.url);
    agentUrl.searchParams.set('workspace_path', 'Crew/alpha');
    const bobsAgent = new Client({ name: 'bobs-agent', version: '1.0.0' });
    await bobsAgent.connect(new StreamableHTTPClientTransport(agentUrl, { requestInit: { headers: { Authorization: `Bearer ${bob}` } } }));
    const added = await bobsAgent.callTool({
      name: 'manage_my_mcp_servers',
      arguments: { action: 'connect', catalog: 'bob-tracker', secret: 'BOB_KEY' },
    });
    assert.notEqual(added.isError, true, JSON.stringify(added));
    await bobsAgent.close();

    await page.getByRole('combobox', { name: 'Place' }).selectOption({ label: 'Crew alpha' });
    const row = connected().getByRole('listitem').filter({ hasText: 'Bob tracker' });
    await row.getByText('Uses Bob’s login').waitFor();
    await row.getByText('Connected', { exact: true }).waitFor();
    assert.equal(await row.getByRole('button', { name: 'Sign in to Bob tracker' }).count(), 0);

    await call('PUT', '/access/people/bob', { name: 'Bob', disabled: true }, admin);
    await refocus(); // the list refetches on focus
    await row.getByText('Paused', { exact: true }).waitFor();
    const detail = (await row.locator('.row-detail').textContent()) ?? '';
    assert.match(detail, /Uses Bob’s login.* — \S/, `a reason follows: ${detail}`);
    await shot('paused');
    await page.getByRole('combobox', { name: 'Place' }).selectOption({ label: 'This machine' });
    await connected().getByRole('listitem').filter({ hasText: 'Issue tracker' }).waitFor();
  });

  it('removes it after an inline Yes, and No keeps it', async () => {
    const row = connected().getByRole('listitem').filter({ hasText: 'Issue tracker' });
    await row.getByRole('button', { name: 'Remove Issue tracker' }).click();
    await row.getByRole('group', { name: 'Remove Issue tracker?' }).waitFor();
    await shot('remove-confirm');
    await row.getByRole('button', { name: 'No' }).click();
    await row.getByRole('button', { name: 'Remove Issue tracker' }).click();
    await row.getByRole('button', { name: 'Yes, remove' }).click();
    await connected().getByText('No connections yet').waitFor();
    await page.getByRole('status').filter({ hasText: 'Issue tracker was removed.' }).waitFor();
    await shot('removed');
  });

  it('adds a server with the keyboard only', async () => {
    await page.reload();
    await pageLive(page);
    await page.getByRole('heading', { name: 'Connections', level: 1 }).waitFor();
    await available().getByRole('button', { name: 'Connect DeepWiki' }).waitFor();
    // From the top of the page, Tab to "Add a server that is not listed" and open it.
    await tabUntil(page, `document.activeElement?.textContent === 'Add a server that is not listed'`, 200);
    await page.keyboard.press('Enter');
    // First the choice of a remote or a local server: remote is chosen.
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(`document.activeElement?.type === 'radio' && document.activeElement.checked`), true);
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(`document.activeElement?.type`), 'url');
    await page.keyboard.type(upstream.url);
    await page.keyboard.press('Tab');
    await page.keyboard.type('Keyboard tracker');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Space'); // It needs an API key
    await page.keyboard.press('Tab');
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.type('X-Api-Key');
    await page.keyboard.press('Tab');
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.press('Backspace');
    await page.keyboard.press('Tab'); // the secret: the one made before
    assert.equal(await page.evaluate(`document.activeElement?.tagName`), 'SELECT');
    await page.locator('select option[value="ISSUES_KEY"]').waitFor({ state: 'attached' }); // the place's secrets are loaded
    await page.keyboard.press('ArrowDown');
    assert.equal(await page.evaluate(`document.activeElement?.value`), 'ISSUES_KEY');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(`document.activeElement?.textContent`), 'Add and connect');
    await shot('keyboard-add');
    await page.keyboard.press('Enter');
    const row = connected().getByRole('listitem').filter({ hasText: 'Keyboard tracker' });
    await row.getByText('Connected', { exact: true }).waitFor();
    // Focus stays visible: the focused element draws an outline.
    await tabUntil(page, `document.activeElement?.getAttribute('aria-label') === 'Remove Keyboard tracker'`, 200, true);
    const outline = await page.evaluate(`getComputedStyle(document.activeElement).outlineStyle`);
    assert.notEqual(outline, 'none');
    await page.keyboard.press('Enter');
    assert.equal(await page.evaluate(`document.activeElement?.textContent`), 'No', 'focus goes to the safe choice');
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Enter');
    await connected().getByText('No connections yet').waitFor();
    assert.equal(await page.evaluate(`document.activeElement?.id`), 'connected-heading', 'focus stays on the list, not lost to the body');
    await shot('keyboard-removed');
  });

  it("sets the place's tool search, saying what its agents get now", async () => {
    const setting = page.getByRole('region', { name: 'Tool search' });
    await setting.getByText(/^Off \(\d+ tools, no more than 40\): agents get all \d+ tools\./).waitFor();
    await setting.getByRole('combobox', { name: /For agents in/ }).selectOption('on');
    await setting.getByText(/^On \(set here\): agents get the machine's tools with search_tools and call_tool/).waitFor();
    const place = await page.getByRole('combobox', { name: 'Place' }).inputValue();
    const access = await callApi(await fx.host.open(), await fx.host.adminToken(), 'GET', '/access');
    assert.equal(access.json.places[place].toolSearch, 'on');
    await setting.getByRole('combobox', { name: /For agents in/ }).selectOption('auto');
    await setting.getByText(/^Off \(\d+ tools/).waitFor();
  });

  it('moves between the four screens from the rail, with Back and reload keeping the screen', async () => {
    const rail = page.getByRole('navigation', { name: 'Place and sections' });
    for (const [link, heading] of [
      ['Skills', 'Skills'],
      ['Agent access', 'Agent access'],
      ['Server', 'Server'],
      ['Connections', 'Connections'],
    ]) {
      await rail.getByRole('link', { name: link }).click();
      await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
      assert.equal(await rail.getByRole('link', { name: link }).getAttribute('aria-current'), 'page');
      // The place picker is the Connections screen's; the others are the machine's.
      assert.equal(await rail.getByRole('combobox', { name: 'Place' }).count(), link === 'Connections' ? 1 : 0);
    }
    await page.goBack();
    await page.getByRole('heading', { name: 'Server', level: 1 }).waitFor();
    await page.reload();
    await pageLive(page);
    await page.getByRole('heading', { name: 'Server', level: 1 }).waitFor();
    await rail.getByRole('link', { name: 'Connections' }).click();
    await page.getByRole('heading', { name: 'Connections', level: 1 }).waitFor();
  });

  it("says when a screen's code cannot be loaded, keeps the window, and loads it again on Retry", async () => {
    // A page loaded before the app was updated, or a dropped connection: the screen's chunk does not come.
    const other = await browser.newPage({ viewport: { width: 1100, height: 800 } });
    try {
      other.setDefaultTimeout(PAGE_WAIT_MS);
      const chunk = /\/assets\/AgentAccessSection-[^/]*\.js$/;
      await other.route(chunk, (route) => route.abort('connectionreset'));
      await other.goto(await fx.host.loginUrl());
      await pageLive(other);
      const rail = other.getByRole('navigation', { name: 'Place and sections' });
      await rail.getByRole('link', { name: 'Agent access' }).click();
      await other.getByRole('alert').filter({ hasText: 'This part of the page could not be loaded.' }).waitFor();
      assert.equal(await rail.getByRole('link', { name: 'Agent access' }).getAttribute('aria-current'), 'page');
      // Another screen still opens; coming back asks for the chunk again only on Retry (a reload).
      await rail.getByRole('link', { name: 'Server' }).click();
      await other.getByRole('heading', { name: 'Server', level: 1 }).waitFor();
      await rail.getByRole('link', { name: 'Agent access' }).click();
      await other.unroute(chunk);
      await other.getByRole('button', { name: 'Retry' }).click();
      await pageLive(other);
      await other.getByRole('heading', { name: 'Agent access', level: 1 }).waitFor();
    } finally {
      await other.close();
    }
  });

  it('follows a dark system theme', async () => {
    await page.emulateMedia({ colorScheme: 'dark' });
    const background = await page.evaluate(`getComputedStyle(document.body).backgroundColor`);
    assert.equal(background, 'rgb(21, 23, 27)');
    await shot('dark');
    await page.emulateMedia({ colorScheme: 'light' });
  });

  /** As a person coming back to the window: it lost focus, then got it again. */
  async function refocus(): Promise<void> {
    await page.evaluate(`window.dispatchEvent(new Event('blur')), window.dispatchEvent(new Event('focus'))`);
  }

  async function controlUrl(): Promise<string> {
    return new URL(await fx.host.loginUrl()).origin;
  }
});

/** Presses Tab (or Shift+Tab backwards) until `check` (a page expression) is true. */
