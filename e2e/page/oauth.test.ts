import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startHost, type HostFixture } from '../../test/support/host-fixture.js';
import { startOAuthFixture, type OAuthFixture } from '../fixtures/oauth-server.js';

// Signing in from the page: Connect opens the provider's sign-in in a new tab (a real
// authorization server whose consent answers by itself), the tab lands on /oauth/callback, and the
// Connected list turns to Connected by itself. And the own-OAuth-app panel for a provider that
// lets no app register itself.

const CHROMIUM = '/usr/bin/chromium';
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const PAGE_BUILT = existsSync(join(ROOT, 'dist', 'renderer', 'index.html'));
const OUT = join(ROOT, 'e2e', 'out');

const skip = !existsSync(CHROMIUM) ? `${CHROMIUM} is missing (apt-get install chromium)` : !PAGE_BUILT ? 'the page is not built (npm run build)' : false;
if (skip) console.log(`# skipping the page sign-in tests: ${skip}`);

describe('the page: signing in to connections', { skip }, () => {
  let fx: HostFixture;
  let provider: OAuthFixture;
  let closed: OAuthFixture;
  let workspace: string;
  let previousCwd: string;
  let browser: Browser;
  let page: Page;

  const shot = (name: string) => page.screenshot({ path: join(OUT, `page-${name}.png`), fullPage: true });
  const connected = () => page.getByRole('region', { name: 'Connected' });
  const available = () => page.getByRole('region', { name: 'Available' });

  before(async () => {
    await mkdir(OUT, { recursive: true });
    previousCwd = process.cwd();
    workspace = await realpath(await mkdtemp(join(tmpdir(), 'pw-page-oauth-')));
    await mkdir(join(workspace, 'Crew', 'ops'), { recursive: true });
    process.chdir(workspace);
    delete process.env.BROWSER; // the page opens the sign-in, not the host
    provider = await startOAuthFixture();
    closed = await startOAuthFixture({ registration: false });
    fx = await startHost({}, { WORKSPACE_ALLOW_PRIVATE_NETWORK: '1', WORKSPACE_SECRET_STORE: 'file' });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
    page.setDefaultTimeout(15_000);
    await page.goto(await fx.host.loginUrl());
    await page.getByRole('heading', { name: 'Connections', level: 1 }).waitFor();
    await page.getByRole('combobox', { name: 'Place' }).selectOption({ label: 'Crew ops' });
    await page.getByText('everyone who uses this Crew uses it as that person').waitFor();
  });

  after(async () => {
    await browser?.close();
    await fx?.close();
    await provider?.close();
    await closed?.close();
    if (previousCwd) process.chdir(previousCwd);
    if (workspace) await rm(workspace, { recursive: true, force: true });
  });

  async function addServer(url: string, name: string): Promise<void> {
    const disclosure = available().locator('details');
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
  });
});
