import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Browser, Page } from 'playwright-core';
import { callApi } from '../../test/support/control-api.js';
import { enterWorkspace, startHost, textOf, type HostFixture } from '../../test/support/host-fixture.js';
import { launchChromium, pageLive, screenshot, skipReason, tabUntil, PAGE_WAIT_MS } from './page-support.js';
import { startOAuthFixture, type OAuthFixture } from '../fixtures/oauth-server.js';

// Signing in from the page: Connect opens the provider's sign-in in a new tab (a real
// authorization server whose consent answers by itself), the tab lands on /oauth/callback, and the
// Connected list turns to Connected by itself, and an agent of the place then has the tools. A
// sign-in group's "Connect 3 services" signs in once for all three. The own-OAuth-app panel for a
// provider that lets no app register itself, and a machine login (client credentials) set in Fix.

const skip = skipReason;
if (skip) console.log(`# skipping the page sign-in tests: ${skip}`);

describe('the page: signing in to connections', { skip }, () => {
  let fx: HostFixture;
  let provider: OAuthFixture;
  let closed: OAuthFixture;
  let workspace: Awaited<ReturnType<typeof enterWorkspace>>;
  let browser: Browser;
  let page: Page;

  const shot = (name: string) => screenshot(page, `page-${name}`);
  const connected = () => page.getByRole('region', { name: 'Connected' });
  const available = () => page.getByRole('region', { name: 'Available' });

  before(async () => {
    workspace = await enterWorkspace('pw-page-oauth-', ['Crew/ops']);
    delete process.env.BROWSER; // the page opens the sign-in, not the host
    provider = await startOAuthFixture({ moreServices: ['docs/mcp', 'builds/mcp'] });
    closed = await startOAuthFixture({ registration: false });
    // The person's own catalog: three services of one provider, behind one login.
    const [docs, builds] = provider.moreServiceUrls;
    const service = (id: string, name: string, url: string) => ({
      id,
      name,
      description: `${name}, for the group test.`,
      url,
      transport: 'streamable-http',
      auth: 'oauth',
      signInGroup: 'acme',
    });
    const catalogFile = join(workspace.dir, 'connectors.json');
    await writeFile(
      catalogFile,
      JSON.stringify({
        version: 1,
        groups: [{ id: 'acme', name: 'Acme', description: 'One Acme login covers all of them.' }],
        entries: [
          service('acme-tracker', 'Acme Tracker', provider.mcpUrl),
          service('acme-docs', 'Acme Docs', docs!),
          service('acme-builds', 'Acme Builds', builds!),
        ],
      }),
    );
    fx = await startHost({}, { WORKSPACE_ALLOW_PRIVATE_NETWORK: '1', WORKSPACE_SECRET_STORE: 'file', WORKSPACE_CATALOG_FILE: catalogFile });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
    page.setDefaultTimeout(PAGE_WAIT_MS);
    await page.goto(await fx.host.loginUrl());
    await pageLive(page);
    await page.getByRole('heading', { name: 'Connections', level: 1 }).waitFor();
    await page.getByRole('combobox', { name: 'Place' }).selectOption({ label: 'Crew ops' });
    await page.getByText('everyone who uses this Crew uses it as that person').waitFor();
  });

  after(async () => {
    await browser?.close();
    await fx?.close();
    await provider?.close();
    await closed?.close();
    await workspace?.leave();
  });

  /** An MCP client of the place, as an agent there would connect. */
  async function placeAgent(): Promise<Client> {
    const url = new URL(fx.url);
    url.searchParams.set('workspace_path', 'Crew/ops');
    const client = new Client({ name: 'page-test-agent', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${await fx.token()}` } } }),
    );
    return client;
  }

  async function addServer(url: string, name: string): Promise<void> {
    const disclosure = available().locator('details', { has: page.getByText('Add a server that is not listed') });
    if ((await disclosure.getAttribute('open')) === null) await available().getByText('Add a server that is not listed').click();
    const form = available().getByRole('form', { name: 'Add a server that is not listed' });
    await form.getByRole('textbox', { name: 'Server URL' }).fill(url);
    await form.getByRole('textbox', { name: 'Name (optional)' }).fill(name);
    await form.getByRole('button', { name: 'Add and connect' }).click();
  }

  it('goes straight to the sign-in, and Connected updates by itself when it finishes', async () => {
    const popup = page.waitForEvent('popup');
    await addServer(provider.mcpUrl, 'Tracker');
    const tab = await popup;
    await tab.getByRole('heading', { name: 'Signed in' }).waitFor();
    const row = connected().getByRole('listitem').filter({ hasText: 'Tracker' });
    await row.getByText('Connected', { exact: true }).waitFor();
    await row.getByText('Uses your login').waitFor();
    await page.getByRole('status').filter({ hasText: 'Tracker is connected.' }).waitFor();
    await tab.close();
    await shot('signed-in');

    // An agent of the place now has the server's tools, and they work with the login.
    const agent = await placeAgent();
    const tools = (await agent.listTools()).tools.map((t) => t.name);
    const echo = tools.find((t) => t.endsWith('__echo'));
    assert.ok(echo, `the upstream tools are listed: ${tools.join(', ')}`);
    const result = (await agent.callTool({ name: echo, arguments: { text: 'from the page' } })) as CallToolResult;
    assert.deepEqual(result.content, [{ type: 'text', text: 'echo: from the page' }]);
    await agent.close();
  });

  it('says on its row that the provider ended the login (not "not signed in yet"), and signs in again from there', async () => {
    assert.ok(provider.revokeAllRefreshTokens() > 0);
    provider.revokeAllAccessTokens();
    // The agent's next call meets the 401, the refresh is refused: the login has ended.
    const agent = await placeAgent();
    const echo = (await agent.listTools()).tools.map((t) => t.name).find((t) => t.endsWith('__echo'));
    const result = echo
      ? ((await agent.callTool({ name: echo, arguments: { text: 'after the revocation' } })) as CallToolResult)
      : undefined;
    await agent.close();
    if (result) assert.equal(result.isError, true, JSON.stringify(result));
    // The page learns it by itself: an open page's list is at most 10 s old.
    const row = connected().getByRole('listitem').filter({ hasText: 'Tracker' });
    await row.getByText('The login ended at the provider (revoked there, or expired): sign in again.').waitFor({ timeout: 25_000 });
    await row.getByText('Sign in', { exact: true }).first().waitFor();
    await shot('login-ended');

    const popup = page.waitForEvent('popup');
    await row.getByRole('button', { name: 'Sign in to Tracker' }).click();
    const tab = await popup;
    await tab.getByRole('heading', { name: 'Signed in' }).waitFor();
    await tab.close();
    await row.getByText('Connected', { exact: true }).waitFor();
  });

  it('keeps a sign-in group one card when its sign-in is refused: each chip says so, and Connect counts what is not connected', async () => {
    await available().getByRole('searchbox', { name: 'Search connectors' }).fill('acme');
    const group = available().getByRole('group', { name: 'Acme', exact: true });
    const chips = group.getByRole('group', { name: 'Acme services' });
    provider.setConsent('deny');
    try {
      const popup = page.waitForEvent('popup');
      await group.getByRole('button', { name: 'Connect 3 services' }).click();
      const tab = await popup;
      await tab.getByRole('heading', { name: 'Sign-in failed' }).waitFor();
      await tab.close();
    } finally {
      provider.setConsent('approve');
    }
    for (const name of ['Acme Tracker', 'Acme Docs', 'Acme Builds']) {
      await chips.getByRole('button', { name: `${name} · sign-in failed` }).waitFor();
      await connected().getByRole('listitem').filter({ hasText: name }).getByText('Sign-in failed', { exact: true }).waitFor();
    }
    assert.equal(await available().getByRole('group', { name: 'Acme', exact: true }).count(), 1, 'one card');
    await chips.getByRole('button', { name: 'Acme Builds · sign-in failed' }).click();
    await group.getByRole('button', { name: 'Connect 2 services' }).waitFor();
    await chips.getByRole('button', { name: 'Acme Builds · sign-in failed' }).click();
    await group.getByRole('button', { name: 'Connect 3 services' }).waitFor();
    await shot('group-refused');
  });

  it('connects a sign-in group’s services with one sign-in', async () => {
    await available().getByRole('searchbox', { name: 'Search connectors' }).fill('acme');
    const group = available().getByRole('group', { name: 'Acme', exact: true });
    await group.getByRole('group', { name: 'Acme services' }).getByRole('button', { name: 'Acme Docs' }).waitFor();
    await shot('group-chips');
    // Signed out at the provider (its session cookies gone, the app's login kept), so the group's sign-in asks for a login.
    await page.context().clearCookies({ name: /^_(session|interaction|resume)/ });
    const logins = provider.counters.logins;
    const popup = page.waitForEvent('popup');
    await group.getByRole('button', { name: 'Connect 3 services' }).click();
    const tab = await popup;
    // The tab goes through the three sign-ins and ends on the summary.
    await tab.getByRole('heading', { name: 'Signed in' }).waitFor();
    for (const name of ['Acme Tracker', 'Acme Docs', 'Acme Builds']) await tab.getByText(`${name}: signed in.`).waitFor();
    for (const name of ['Acme Tracker', 'Acme Docs', 'Acme Builds']) {
      await connected().getByRole('listitem').filter({ hasText: name }).getByText('Connected', { exact: true }).waitFor();
    }
    assert.equal(provider.counters.logins - logins, 1, 'one sign-in for the three services');
    // Still one card: each chip says its service is connected, and nothing is left to connect.
    for (const name of ['Acme Tracker', 'Acme Docs', 'Acme Builds']) await group.getByText(`${name} · connected`).waitFor();
    assert.equal(await group.getByRole('button', { name: /^Connect \d/ }).count(), 0);
    await tab.close();
    await shot('group-connected');

    const agent = await placeAgent();
    const tools = (await agent.listTools()).tools.map((t) => t.name);
    assert.equal(tools.filter((t) => t.endsWith('__whoami')).length, 4, 'Tracker and the three Acme services');
    await agent.close();
  });

  it('removes and connects again with the keyboard only, sign-in included', async () => {
    await page.reload();
    await pageLive(page);
    await page.getByRole('heading', { name: 'Connections', level: 1 }).waitFor();
    await connected().getByRole('listitem').filter({ hasText: 'Acme Docs' }).waitFor();
    await tabUntil(page, `document.activeElement?.getAttribute('aria-label') === 'Remove Acme Docs'`, 200);
    assert.notEqual(await page.evaluate(`getComputedStyle(document.activeElement).outlineStyle`), 'none', 'focus is visible');
    await page.keyboard.press('Enter');
    assert.equal(await page.evaluate(`document.activeElement?.textContent`), 'No', 'focus goes to the safe choice');
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'Acme Docs was removed.' }).waitFor();

    await tabUntil(page, `document.activeElement?.id === 'catalog-search'`, 200);
    await page.keyboard.type('acme');
    await tabUntil(page, `document.activeElement?.textContent === 'Connect 1 service'`, 200);
    const popup = page.waitForEvent('popup');
    await page.keyboard.press('Enter');
    const tab = await popup;
    await tab.getByRole('heading', { name: 'Signed in' }).waitFor();
    await tab.close();
    await connected().getByRole('listitem').filter({ hasText: 'Acme Docs' }).getByText('Connected', { exact: true }).waitFor();
    await shot('keyboard-signed-in');
  });

  it('shows a denied sign-in on its row within 2 seconds, with Retry, and never stays on "Signing in…"', async () => {
    const denying = await startOAuthFixture();
    try {
      denying.setConsent('deny');
      const popup = page.waitForEvent('popup');
      await addServer(denying.mcpUrl, 'Stern');
      const tab = await popup;
      const row = connected().getByRole('listitem').filter({ hasText: 'Stern' });
      await row.waitFor();
      // The provider redirected with error=access_denied; the callback page says so.
      await tab.getByRole('heading', { name: 'Sign-in failed' }).waitFor();
      const deniedAt = Date.now();
      await row.getByText('Sign-in failed', { exact: true }).waitFor({ timeout: 2_000 });
      assert.ok(Date.now() - deniedAt <= 2_000, `the row showed the failure ${Date.now() - deniedAt} ms after the denial`);
      await row.getByText(/The sign-in to Stern was declined/).waitFor();
      assert.equal(await row.getByText('Signing in…').count(), 0);
      await page.getByRole('status').filter({ hasText: 'The sign-in to Stern failed' }).waitFor();
      await tab.close();
      await shot('sign-in-denied');

      // Retry signs in again; this time the person allows it.
      denying.setConsent('approve');
      const again = page.waitForEvent('popup');
      await row.getByRole('button', { name: 'Retry the sign-in to Stern' }).click();
      const second = await again;
      await second.getByRole('heading', { name: 'Signed in' }).waitFor();
      await row.getByText('Connected', { exact: true }).waitFor();
      assert.equal(await row.getByText('Sign-in failed').count(), 0);
      await second.close();
      await row.getByRole('button', { name: 'Remove Stern' }).click();
      await row.getByRole('button', { name: 'Yes, remove' }).click();
      await row.waitFor({ state: 'detached' });
    } finally {
      await denying.close();
    }
  });

  it('opens the own-OAuth-app panel when the provider needs one, and signs in with it', async () => {
    await addServer(closed.mcpUrl, 'Closed');
    const row = connected().getByRole('listitem').filter({ hasText: 'Closed' });
    const panel = row.getByRole('form', { name: 'Use your own OAuth app for Closed' });
    await panel.waitFor();
    const redirectUrl = (await panel.locator('code').textContent()) ?? '';
    assert.equal(redirectUrl, `${new URL(await fx.host.loginUrl()).origin}/oauth/callback`);
    await row.getByText('Sign in', { exact: true }).first().waitFor();
    await shot('own-app-panel');
    await closed.addClient({ clientId: 'my-own-app', clientSecret: 'own-app-secret-5d1e', redirectUris: [redirectUrl] });
    await panel.getByRole('textbox', { name: 'Client ID' }).fill('my-own-app');
    await panel.getByLabel('Client secret (optional)').fill('own-app-secret-5d1e');
    const popup = page.waitForEvent('popup');
    await panel.getByRole('button', { name: 'Sign in' }).click();
    const tab = await popup;
    await tab.getByRole('heading', { name: 'Signed in' }).waitFor();
    await row.getByText('Connected', { exact: true }).waitFor();
    await panel.waitFor({ state: 'detached' });
    assert.equal(closed.counters.registrations, 0);
    await tab.close();
    await shot('own-app-signed-in');

    // Fix in place: another own app, without removing the connection; the next sign-in uses it.
    await closed.addClient({ clientId: 'second-page-app', clientSecret: 'second-page-secret-2b', redirectUris: [redirectUrl] });
    await row.getByRole('button', { name: 'Show the details of Closed' }).click();
    await row
      .getByRole('region', { name: 'Details of Closed' })
      .getByText('signs in with your own OAuth app my-own-app', { exact: false })
      .waitFor();
    await row.getByRole('button', { name: 'Edit Closed' }).click();
    const form = row.getByRole('form', { name: 'Fix Closed' });
    assert.equal(await form.getByRole('textbox', { name: 'Client ID' }).inputValue(), 'my-own-app');
    await form.getByRole('textbox', { name: 'Client ID' }).fill('second-page-app');
    await form.getByLabel('Client secret (optional)').fill('second-page-secret-2b');
    await form.getByRole('button', { name: 'Save and test' }).click();
    await page.getByRole('status').filter({ hasText: 'Closed was changed. Sign in to it again to use it.' }).waitFor();
    const again = page.waitForEvent('popup');
    await row.getByRole('button', { name: 'Sign in to Closed' }).click();
    const second = await again;
    await second.getByRole('heading', { name: 'Signed in' }).waitFor();
    assert.equal(new URL(second.url()).origin, new URL(redirectUrl).origin);
    await row.getByText('Connected', { exact: true }).waitFor();
    await row.getByText('signs in with your own OAuth app second-page-app', { exact: false }).waitFor();
    assert.equal(closed.counters.registrations, 0);
    await second.close();
    await shot('own-app-edited');
  });

  it('sets a machine login in Fix: logged in at once with no sign-in page, the secret never shown again', async () => {
    await provider.addMachineClient({ clientId: 'page-robot', clientSecret: 'page-machine-secret-4e2d' });
    const added = await callApi(await fx.host.open(), await fx.host.adminToken(), 'POST', '/mcp/place', {
      workspace_path: 'Crew/ops',
      server: { url: provider.mcpUrl, name: 'Robot' },
    });
    assert.equal(added.status, 201, added.text);
    await page.reload();
    await pageLive(page);
    await page.getByRole('combobox', { name: 'Place' }).selectOption({ label: 'Crew ops' });
    const row = connected().getByRole('listitem').filter({ hasText: 'Robot' });
    await row.getByText('Sign in', { exact: true }).first().waitFor();
    await row.getByRole('button', { name: 'Show the details of Robot' }).click();
    await row.getByRole('button', { name: 'Edit Robot' }).click();
    const form = row.getByRole('form', { name: 'Fix Robot' });
    await form.getByLabel('Log in with client credentials the provider gave you, with no browser').check();
    await form.getByRole('textbox', { name: 'Machine client ID' }).fill('page-robot');
    await form.getByLabel('Machine client secret').fill('page-machine-secret-4e2d');
    let popups = 0;
    page.on('popup', () => (popups += 1));
    await form.getByRole('button', { name: 'Save and test' }).click();
    await page.getByRole('status').filter({ hasText: 'Robot is fixed: connected, 2 tools.' }).waitFor();
    await row.getByText('Connected', { exact: true }).waitFor();
    await row.getByText('logs in with the client credentials page-robot, with a client secret', { exact: false }).waitFor();
    assert.equal(popups, 0, 'no sign-in page was opened');
    await shot('machine-login');

    // The place's agents call as that client.
    const agent = await placeAgent();
    const whoami = (await agent.listTools()).tools.map((t) => t.name).find((t) => t.includes('robot') && t.endsWith('__whoami'));
    assert.ok(whoami);
    assert.deepEqual(JSON.parse(textOf(await agent.callTool({ name: whoami, arguments: {} }))), { client: 'page-robot' });
    await agent.close();

    // Fix again: the credentials are set, the secret field is empty and the page holds no secret.
    await row.getByRole('button', { name: 'Edit Robot' }).click();
    await form.getByText('Set: page-robot, with a client secret.', { exact: false }).waitFor();
    assert.equal(await form.getByLabel('Machine client secret').inputValue(), '');
    assert.ok(!(await page.content()).includes('page-machine-secret-4e2d'));
  });
});
