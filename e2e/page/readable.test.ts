import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { enterWorkspace, freePort, startHost, waitFor, type HostFixture } from '../../test/support/host-fixture.js';
import { startUpstream, type UpstreamFixture } from '../fixtures/upstream-server.js';
import { callApi } from '../../test/support/control-api.js';
import { launchChromium, pageLive, pageUntil, screenshot, skipReason, PAGE_WAIT_MS } from './page-support.js';

// The page says only what is true and readable (issue 26, item 4), in Debian's Chromium against a
// real headless host, real upstream MCP servers (one that works, one that hangs) and a dead address.

const CLI = fileURLToPath(new URL('../../dist/main/cli.js', import.meta.url));

if (skipReason) console.log(`# skipping the page tests: ${skipReason}`);

describe('the page: only what is true and readable', { skip: skipReason }, () => {
  let fx: HostFixture;
  let workspace: Awaited<ReturnType<typeof enterWorkspace>>;
  let good: UpstreamFixture;
  let hanging: UpstreamFixture;
  let browser: Browser;
  let page: Page;
  /** Every answer the page got with a 4xx or 5xx status: none is expected. */
  const failedLoads: string[] = [];

  /** The CLI against the host's state dir (it asks the running server), as a child to signal. */
  const cli = (args: string[]) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', WORKSPACE_STATE_DIR: fx.stateDir, WORKSPACE_REGISTRY_URL: '' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) =>
      child.on('error', reject).on('close', (code) => resolve({ code, stdout, stderr })),
    );
    return { child, done };
  };
  const shot = (name: string) => screenshot(page, `page-readable-${name}`);
  const connected = () => page.getByRole('region', { name: 'Connected' });
  const available = () => page.getByRole('region', { name: 'Available' });

  before(async () => {
    workspace = await enterWorkspace('pw-page-readable-', ['Crew/alpha']);
    good = await startUpstream({ name: 'notes' });
    hanging = await startUpstream({ name: 'stuck' });
    hanging.setMode('hang');
    const dead = `http://127.0.0.1:${await freePort()}/mcp`;
    const entry = (id: string, name: string, url: string) => ({
      id,
      name,
      description: `The ${name.toLowerCase()} of the tests.`,
      url,
      transport: 'streamable-http',
      auth: 'none',
    });
    const catalogFile = join(workspace.dir, 'connectors.json');
    await writeFile(
      catalogFile,
      JSON.stringify({
        version: 1,
        groups: [],
        entries: [
          entry('gone-server', 'Gone server', dead),
          entry('notes-server', 'Notes server', good.url),
          entry('stuck-server', 'Stuck server', hanging.url),
        ],
      }),
    );
    fx = await startHost(
      {},
      { WORKSPACE_ALLOW_PRIVATE_NETWORK: '1', WORKSPACE_UPSTREAM_TIMEOUT: '30', WORKSPACE_CATALOG_FILE: catalogFile },
    );
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
    page.setDefaultTimeout(PAGE_WAIT_MS);
    page.on('response', (response) => {
      if (response.status() >= 400) failedLoads.push(`${response.status()} ${response.url()}`);
    });
    await page.goto(await fx.host.loginUrl());
    await pageLive(page);
    await page.getByRole('heading', { name: 'Connections', level: 1 }).waitFor();
  });

  after(async () => {
    await browser?.close();
    // The upstreams go first: the host's close waits for a check still running (the stuck server's) to end.
    await Promise.all([good?.close(), hanging?.close()]);
    await fx?.close();
    await workspace?.leave();
  });

  it('has a favicon, and loads with no failed request', async () => {
    await available().getByRole('button', { name: 'Connect Notes server' }).waitFor();
    // The browser asks for the icon by itself, after the page loaded.
    await page.waitForTimeout(500);
    assert.deepEqual(failedLoads, []);
    const icon = await page.evaluate(`document.querySelector('link[rel="icon"]')?.href`);
    assert.equal((await fetch(icon as string)).status, 200);
  });

  it('searches the catalog by the starts of words, names first', async () => {
    const search = available().getByRole('searchbox', { name: 'Search connectors' });
    // "hang" is inside Webflow's "changes", and starts no word of it.
    await search.fill('hang');
    await available().getByText('No connector matches “hang”.', { exact: false }).waitFor();
    await search.fill('serv');
    await available().getByRole('button', { name: 'Connect Gone server' }).waitFor();
    const names = await available().getByRole('list', { name: 'Connectors' }).locator('.name').allTextContents();
    assert.deepEqual(names.slice(0, 3), ['Gone server', 'Notes server', 'Stuck server'], `names first: ${names.join(', ')}`);
    await search.fill('');
  });

  it('shows a connection that does not work in Connected when it says so', async () => {
    await available().getByRole('searchbox', { name: 'Search connectors' }).fill('');
    await available().getByRole('button', { name: 'Connect Gone server' }).click();
    const alert = available().getByRole('alert').filter({ hasText: 'Gone server is in Connected, but it does not work' });
    await alert.waitFor();
    // At once, not on the list's next poll.
    assert.equal(await connected().getByRole('listitem').filter({ hasText: 'Gone server' }).count(), 1, 'the row is there with its alert');
    await shot('added-not-working');
  });

  it('opens Fix in its form, Escape and Cancel close it back to Fix, and Save and test keeps the keyboard in the row', async () => {
    const row = connected().getByRole('listitem').filter({ hasText: 'Gone server' });
    await row.getByRole('button', { name: 'Fix Gone server' }).click();
    const form = row.getByRole('form', { name: 'Fix Gone server' });
    await form.waitFor();
    await pageUntil(page, `document.activeElement?.closest('form')?.getAttribute('aria-label') === 'Fix Gone server'`); // focus is in the form
    await page.keyboard.press('Escape');
    await form.waitFor({ state: 'detached' });
    await pageUntil(page, `document.activeElement?.getAttribute('aria-label') === 'Fix Gone server'`); // back on Fix

    await page.keyboard.press('Enter');
    await form.getByRole('button', { name: 'Cancel' }).click();
    await form.waitFor({ state: 'detached' });
    await pageUntil(page, `document.activeElement?.getAttribute('aria-label') === 'Fix Gone server'`); // Cancel goes back to Fix too

    await page.keyboard.press('Enter');
    await form.getByRole('textbox', { name: 'Server URL' }).fill(good.url);
    await form.getByRole('button', { name: 'Save and test' }).click();
    await row.getByText('Connected', { exact: true }).waitFor();
    await form.waitFor({ state: 'detached' });
    // Fix is gone (it works now): the keyboard stays in the row, on its details.
    await pageUntil(page, `document.activeElement?.getAttribute('aria-label') === 'Hide the details of Gone server'`);
    await shot('fixed');
  });

  it('clears the error of an added connection once it works', async () => {
    await available()
      .getByRole('alert')
      .filter({ hasText: 'Gone server is in Connected, but it does not work' })
      .waitFor({ state: 'detached' });
  });

  it('clears the error of the server form when its fields change', async () => {
    await available().getByText('Add a server that is not listed').click();
    const form = available().getByRole('form', { name: 'Add a server that is not listed' });
    await form.getByRole('textbox', { name: 'Server URL' }).fill('https://169.254.169.254/mcp');
    await form.getByRole('button', { name: 'Add and connect' }).click();
    const error = form.getByRole('alert');
    await error.waitFor();
    await form.getByRole('textbox', { name: 'Server URL' }).fill('https://169.254.169.254/mcp2');
    await error.waitFor({ state: 'detached' });
    await page.keyboard.press('Escape');
  });

  it('moves the keyboard to the next row after a removal', async () => {
    await available().getByRole('button', { name: 'Connect Notes server' }).click();
    const notes = connected().getByRole('listitem', { name: 'Notes server', exact: true });
    await notes.getByText('Connected', { exact: true }).waitFor();
    const gone = connected().getByRole('listitem', { name: 'Gone server', exact: true });
    await gone.getByRole('button', { name: 'Remove Gone server' }).click();
    await gone.getByRole('button', { name: 'Yes, remove' }).click();
    await gone.waitFor({ state: 'detached' });
    await pageUntil(page, `document.activeElement?.getAttribute('aria-label') === 'Notes server'`); // on the row that took its place
  });

  it('says how long a check has taken and how long it waits at most', async () => {
    const controlUrl = await fx.host.open();
    // Added as a script would, not waited for: its server never answers.
    const adding = callApi(controlUrl, await fx.host.adminToken(), 'POST', '/mcp/place', {
      workspace_path: '',
      catalog: 'stuck-server',
    }).catch(() => undefined);
    const row = connected().getByRole('listitem', { name: 'Stuck server', exact: true });
    await waitFor(
      async () => {
        await page.evaluate(`window.dispatchEvent(new Event('blur')), window.dispatchEvent(new Event('focus'))`);
        return (await row.count()) === 1;
      },
      10_000,
      'the stuck server in Connected',
    );
    await row.getByText('Checking…', { exact: true }).waitFor();
    const detail = row.locator('.row-detail');
    await detail.getByText(/ · for \d+ s — Asking the server for its tools now; it waits up to 30 s for each answer\./).waitFor();
    const first = Number(/for (\d+) s/.exec((await detail.textContent())!)![1]);
    await page.waitForTimeout(2_100);
    const later = Number(/for (\d+) s/.exec((await detail.textContent())!)![1]);
    assert.ok(later >= first + 2, `the time counts up: ${first} then ${later}`);
    await shot('checking');
    void adding;
  });

  it('cancels a running check on the server: the row says so with Retry, as the API does, and the keyboard goes to Retry', async () => {
    const controlUrl = await fx.host.open();
    const token = await fx.host.adminToken();
    const stuck = (
      (await callApi(controlUrl, token, 'GET', '/mcp/place?workspace_path=')).json.connections as Array<{
        name: string;
        displayName: string;
        state: string;
      }>
    ).find((c) => c.displayName === 'Stuck server')!;
    // A check of its own (joining one that runs): the server accepts it and never answers.
    const testing = callApi(controlUrl, token, 'POST', `/mcp/place/${stuck.name}/test?workspace_path=`);
    const row = connected().getByRole('listitem', { name: 'Stuck server', exact: true });
    await row.getByText('Checking…', { exact: true }).waitFor();
    await waitFor(() => hanging.openSockets() > 0, 10_000, 'the check to reach the stuck server');
    await row.getByRole('button', { name: 'Cancel the check of Stuck server' }).click();
    await row.locator('.state', { hasText: 'Check cancelled' }).waitFor();
    await row.getByText(/ — The check was cancelled after \d+ s, before the server answered\. Retry to ask it again\./).waitFor();
    await pageUntil(page, `document.activeElement?.getAttribute('aria-label') === 'Retry Stuck server'`);
    assert.equal((await testing).json.connection.state, 'cancelled', 'the Test that was waiting hears it too');
    const listed = (await callApi(controlUrl, token, 'GET', '/mcp/place?workspace_path=')).json.connections.find(
      (c: { name: string }) => c.name === stuck.name,
    );
    assert.equal(listed.state, 'cancelled');
    assert.match(listed.reason, /The check was cancelled after \d+ s/);
    // The request to the server ended with it, long before its 30 s limit.
    await waitFor(() => hanging.openSockets() === 0, 5_000, 'the request to the stuck server to be closed');
    await shot('check-cancelled');
    // The CLI says the same: it asks the running server.
    const list = await cli(['connections', 'list', '--json']).done;
    assert.equal(list.code, 0, list.stderr);
    assert.equal(JSON.parse(list.stdout).find((c: { name: string }) => c.name === stuck.name)?.state, 'cancelled');
  });

  it("cancels the server's check when Ctrl-C stops the CLI's connections test", async () => {
    const controlUrl = await fx.host.open();
    const token = await fx.host.adminToken();
    const view = async () =>
      (
        (await callApi(controlUrl, token, 'GET', '/mcp/place?workspace_path=')).json.connections as Array<{
          name: string;
          displayName: string;
          state: string;
        }>
      ).find((c) => c.displayName === 'Stuck server')!;
    const { name } = await view();
    const testing = cli(['connections', 'test', name]);
    await waitFor(async () => (await view()).state === 'checking' && hanging.openSockets() > 0, 10_000, 'the check the CLI asked for');
    testing.child.kill('SIGINT');
    const tested = await testing.done;
    assert.equal(tested.code, 1, tested.stderr);
    assert.match(tested.stdout, /^Stuck server \(.+\): cancelled \(The check was cancelled after \d+ s/);
    assert.equal((await view()).state, 'cancelled');
    await waitFor(() => hanging.openSockets() === 0, 5_000, 'the request to the stuck server to be closed');
    await connected()
      .getByRole('listitem', { name: 'Stuck server', exact: true })
      .locator('.state', { hasText: 'Check cancelled' })
      .waitFor();
  });

  it('shows recent activity by connection › tool, with plain reasons and the whole of a failure one click away', async () => {
    const { client } = await fx.connect(await fx.token('reader'));
    const echo = (await client.listTools()).tools.find((t) => t.title === 'Notes server: echo');
    assert.ok(echo, 'the connection lists echo');
    await client.callTool({ name: echo.name, arguments: { text: 'hi' } });
    const controlUrl = await fx.host.open();
    const list = await callApi(controlUrl, await fx.host.adminToken(), 'GET', '/mcp/place?workspace_path=');
    const notes = (list.json.connections as Array<{ name: string; owner: string; displayName: string }>).find(
      (c) => c.displayName === 'Notes server',
    )!;
    const off = await callApi(
      controlUrl,
      await fx.host.adminToken(),
      'PATCH',
      `/mcp/place/${notes.name}?workspace_path=&owner=${notes.owner}`,
      { tools: { echo: false } },
    );
    assert.equal(off.status, 200, off.text);
    const refused = await client.callTool({ name: echo.name, arguments: { text: 'hi' } });
    assert.equal(refused.isError, true);
    await client.close();

    await page.goto(`${controlUrl}/#server`);
    const activity = page.getByRole('region', { name: 'Recent activity' });
    const rows = activity.locator('tbody tr');
    await rows.nth(1).waitFor();
    const text = (await activity.textContent()) ?? '';
    assert.doesNotMatch(text, /errPlaceMCPUnavailable|u[0-9a-f]{8}__/, `no codes or ids: ${text}`);
    assert.equal((await rows.nth(1).getByRole('cell').nth(1).textContent())?.trim(), 'Notes server › echo');
    const failed = rows.nth(0);
    await failed.getByText('Failed', { exact: true }).waitFor();
    await failed.getByText(/^“Notes server › echo” was turned off for This machine/).waitFor();
    assert.equal(await failed.getByText('can turn it on again.', { exact: false }).count(), 0, 'a long reason starts short');
    await failed.getByRole('button', { name: 'Show all' }).click();
    await failed.getByText('The person who added it or an editor of the place can turn it on again.', { exact: false }).waitFor();
    await shot('activity');
  });
});
