import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { callApi } from '../../test/support/control-api.js';
import { startHost, waitFor, type HostFixture } from '../../test/support/host-fixture.js';
import { startUpstream, type UpstreamFixture } from '../fixtures/upstream-server.js';
import { launchChromium, pageLive, screenshot, skipReason, PAGE_WAIT_MS } from './page-support.js';

// The page shows what a connection's server really answered: a refused key and an unreachable
// server on the row with Fix, Retry and Remove (never "connected"); fixing it in place, with a
// "New secret…" that asks before replacing one; its details, with a tool turned off.

const RIGHT_KEY = 'sk-page-health-4e2d';
const skip = skipReason;

describe('the page: connections that do not work, and fixing them in place', { skip }, () => {
  let fx: HostFixture;
  let upstream: UpstreamFixture;
  let browser: Browser;
  let page: Page;
  let api: (method: string, path: string, body?: unknown) => Promise<{ status: number; json: any }>;

  const shot = (name: string) => screenshot(page, `page-health-${name}`);
  const connected = () => page.getByRole('region', { name: 'Connected' });
  const available = () => page.getByRole('region', { name: 'Available' });
  const row = (name: string) => connected().getByRole('listitem').filter({ hasText: name });

  before(async () => {
    upstream = await startUpstream({ name: 'issues', apiKey: { header: 'X-Api-Key', value: RIGHT_KEY } });
    fx = await startHost({}, { WORKSPACE_ALLOW_PRIVATE_NETWORK: '1', WORKSPACE_UPSTREAM_TIMEOUT: '3' });
    const controlUrl = await fx.host.open();
    const token = await fx.host.adminToken();
    api = (method, path, body) => callApi(controlUrl, token, method, path, body);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    page.setDefaultTimeout(PAGE_WAIT_MS);
    await page.goto(await fx.host.loginUrl());
    await pageLive(page);
    await page.getByRole('heading', { name: 'Connections', level: 1 }).waitFor();
  });

  after(async () => {
    await browser?.close();
    await fx?.close();
    await upstream?.close();
  });

  async function addServer(url: string, name: string, key?: { secret: string; value: string }): Promise<void> {
    const toggle = available().getByText('Add a server that is not listed');
    const form = available().getByRole('form', { name: 'Add a server that is not listed' });
    if (!(await form.isVisible())) await toggle.click();
    await form.getByRole('textbox', { name: 'Server URL' }).fill(url);
    await form.getByRole('textbox', { name: 'Name (optional)' }).fill(name);
    if (key) {
      await form.getByRole('checkbox', { name: 'It needs an API key' }).check();
      await form.getByRole('textbox', { name: 'Header' }).fill('X-Api-Key');
      await form.getByRole('textbox', { name: 'Before the key (optional)' }).fill('');
      const secret = form.getByRole('combobox', { name: 'Secret', exact: true });
      await secret.waitFor();
      if ((await secret.inputValue()) !== '+new') await secret.selectOption('+new');
      await form.getByRole('textbox', { name: 'Secret name' }).fill(key.secret);
      await form.getByLabel('Value (the API key)').fill(key.value);
    }
    await form.getByRole('button', { name: 'Add and connect' }).click();
  }

  it('shows a refused key on the row with Fix, Retry and Remove, and never says it was added fine', async () => {
    await addServer(upstream.url, 'Issue tracker', { secret: 'ISSUES_KEY', value: 'sk-wrong' });
    const r = row('Issue tracker');
    await r.getByText('Key refused', { exact: true }).waitFor();
    await r.getByText(/refused the API key \(HTTP 401\)/).waitFor();
    for (const button of ['Fix Issue tracker', 'Retry Issue tracker', 'Remove Issue tracker'])
      await r.getByRole('button', { name: button }).waitFor();
    await available()
      .getByText(/Issue tracker is in Connected, but it does not work/)
      .waitFor();
    assert.equal(await page.getByRole('status').filter({ hasText: 'Issue tracker is connected' }).count(), 0);
    await shot('key-refused');
  });

  it('shows a server that cannot be reached, saying why', async () => {
    const gone = await startUpstream();
    const url = gone.url;
    await gone.close();
    await addServer(url, 'Gone server');
    const r = row('Gone server');
    await r.getByText('Unreachable', { exact: true }).waitFor();
    await r.getByText(/connection was refused/).waitFor();
    await r.getByRole('button', { name: 'Retry Gone server' }).waitFor();
    await shot('unreachable');
    await r.getByRole('button', { name: 'Remove Gone server' }).click();
    await r.getByRole('button', { name: 'Yes, remove' }).click();
    await r.waitFor({ state: 'detached' });
  });

  it('fixes the key in place: "New secret…" with an existing name asks before replacing it', async () => {
    const r = row('Issue tracker');
    await r.getByRole('button', { name: 'Fix Issue tracker' }).click();
    const form = r.getByRole('form', { name: 'Fix Issue tracker' });
    await form.getByRole('combobox', { name: 'Secret', exact: true }).selectOption('+new');
    await form.getByRole('textbox', { name: 'Secret name' }).fill('ISSUES_KEY');
    await form.getByLabel('Value (the API key)').fill(RIGHT_KEY);
    const replace = form.getByRole('checkbox', { name: /already has a secret named ISSUES_KEY\. Replace its value\?/ });
    await replace.waitFor();
    await shot('replace-secret');
    await form.getByRole('button', { name: 'Save and test' }).click();
    // Not agreed yet: nothing is saved, the key is still refused.
    assert.equal(await replace.evaluate((box) => (box as unknown as { validity: { valueMissing: boolean } }).validity.valueMissing), true);
    await replace.check();
    await form.getByRole('button', { name: 'Save and test' }).click();
    await r.getByText('Connected', { exact: true }).waitFor();
    await r.getByText('5 tools').waitFor();
    await page.getByRole('status').filter({ hasText: 'Issue tracker is fixed: connected, 5 tools.' }).waitFor();
    await form.waitFor({ state: 'detached' });
    const list = (await api('GET', '/mcp/place?workspace_path=')).json.connections;
    assert.equal(list.length, 1, 'the same connection, fixed in place');
    assert.equal(list[0].state, 'connected');
  });

  it('shows the details: tools with switches, the last check and errors; a tool turned off is gone for agents', async () => {
    const r = row('Issue tracker');
    if (!(await r.getByRole('region', { name: 'Details of Issue tracker' }).isVisible())) {
      await r.getByRole('button', { name: 'Show the details of Issue tracker' }).click();
    }
    const details = r.getByRole('region', { name: 'Details of Issue tracker' });
    await details.getByText(/^Last checked /).waitFor();
    await details.getByText(/refused the API key/).waitFor();
    const echo = details.getByRole('switch', { name: 'echo on' });
    assert.equal(await echo.isChecked(), true);
    await echo.click();
    await page.getByRole('status').filter({ hasText: 'echo is off for the agents of this place.' }).waitFor();
    await waitFor(async () => !(await details.getByRole('switch', { name: 'echo on' }).isChecked()), 5_000, 'the switch to show off');
    await shot('details-tool-off');
    const name = (await api('GET', '/mcp/place?workspace_path=')).json.connections[0].name;
    const tools = (await api('GET', `/mcp/place/${name}?workspace_path=`)).json.connection.toolList;
    assert.equal(tools.find((t: { name: string }) => t.name === 'echo').enabled, false);
    const agent = (await fx.connect(await fx.token())).client;
    const listed = (await agent.listTools()).tools.map((t) => t.name);
    assert.ok(listed.includes(`${name}__add`) && !listed.includes(`${name}__echo`), listed.join(', '));
  });
});
