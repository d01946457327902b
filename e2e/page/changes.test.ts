import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page, Request } from 'playwright-core';
import { callApi } from '../../test/support/control-api.js';
import { enterWorkspace, startHost, waitFor, type HostFixture } from '../../test/support/host-fixture.js';
import { startUpstream, type UpstreamFixture } from '../fixtures/upstream-server.js';
import { launchChromium, pageLive, skipReason, PAGE_WAIT_MS } from './page-support.js';

// One truth, pushed: a state changed through the API, by the CLI in another process, or by an
// upstream server itself reaches the open page within a second, with no reload and nothing asked
// on a timer; the CLI shows what the page shows, because it asks the running server.

const CLI = fileURLToPath(new URL('../../dist/main/cli.js', import.meta.url));
const RIGHT_KEY = 'sk-changes-31f7';

/** Runs the CLI against the host's state dir, without the host's settings (it must ask the host, not check itself). */
function cli(stateDir: string, args: string[], stdin = ''): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      WORKSPACE_STATE_DIR: stateDir,
      WORKSPACE_SECRET_STORE: 'file',
      WORKSPACE_REGISTRY_URL: '',
    };
    const child = spawn(process.execPath, [CLI, ...args], { env });
    child.stdin.end(stdin);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject).on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('the page follows every change as it happens', { skip: skipReason }, () => {
  let workspace: { leave(): Promise<void> };
  let fx: HostFixture;
  let upstream: UpstreamFixture;
  let keyed: UpstreamFixture;
  let browser: Browser;
  let page: Page;
  let api: (method: string, path: string, body?: unknown) => Promise<{ status: number; json: any }>;
  const requests: Request[] = [];

  const row = (name: string) => page.getByRole('region', { name: 'Connected' }).getByRole('listitem').filter({ hasText: name });
  /**
   * How long after `change()` ended the page showed it: `shown` (a page expression) is watched in
   * the page itself, which notes the time (this machine's clock) of the DOM change that made it
   * true. So the page's own reaction is measured, not how soon a poll from here happened to look.
   */
  async function timeToPage(change: () => Promise<unknown>, shown: string): Promise<number> {
    await page.evaluate(`(() => {
      window.__shownAt = undefined;
      window.__watch?.disconnect();
      const look = () => { if (window.__shownAt === undefined && (${shown})) window.__shownAt = Date.now(); };
      window.__watch = new MutationObserver(look);
      window.__watch.observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
      look();
    })()`);
    await change();
    const changed = Date.now();
    const seen = await waitFor(
      () => page.evaluate(`window.__shownAt`) as Promise<number | undefined>,
      10_000,
      `the page to show: ${shown}`,
    );
    return Math.max(0, seen - changed);
  }
  /** The state word and detail line of a connection's row, as a page expression reads them. */
  const rowText = (name: string) => `(document.querySelector('li[aria-label=${JSON.stringify(name)}]')?.textContent ?? '')`;

  before(async () => {
    workspace = await enterWorkspace('pw-changes-', ['Crew/alpha']);
    upstream = await startUpstream({ name: 'live' });
    keyed = await startUpstream({ name: 'keyed', apiKey: { header: 'X-Api-Key', value: RIGHT_KEY } });
    fx = await startHost({}, { WORKSPACE_ALLOW_PRIVATE_NETWORK: '1', WORKSPACE_UPSTREAM_TIMEOUT: '2' });
    const controlUrl = await fx.host.open();
    const token = await fx.host.adminToken();
    api = (method, path, body) => callApi(controlUrl, token, method, path, body);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    page.setDefaultTimeout(PAGE_WAIT_MS);
    page.on('request', (request) => requests.push(request));
    const stream = page.waitForResponse((response) => new URL(response.url()).pathname === '/api/events');
    await page.goto(await fx.host.loginUrl());
    await pageLive(page);
    await page.getByRole('heading', { name: 'Connections', level: 1 }).waitFor();
    await stream;
  });

  after(async () => {
    await browser?.close();
    await fx?.close();
    await Promise.all([upstream?.close(), keyed?.close()]);
    await workspace?.leave();
  });

  it('shows a connection added through the API within 1 s', async () => {
    const ms = await timeToPage(
      () => api('POST', '/mcp/place', { workspace_path: '', server: { url: upstream.url, name: 'Live server' } }),
      `[...document.querySelectorAll('li[aria-label="Live server"] .state')].some((e) => e.textContent === 'Connected')`,
    );
    assert.ok(ms < 1000, `${ms.toFixed(0)} ms`);
    await row('Live server').getByText('Connected', { exact: true }).waitFor();
  });

  it('shows what the upstream itself changed (a tool it added) within 1 s', async () => {
    await row('Live server').getByText('5 tools').waitFor();
    const ms = await timeToPage(async () => upstream.addTool('fresh_tool'), `${rowText('Live server')}.includes('6 tools')`);
    assert.ok(ms < 1000, `${ms.toFixed(0)} ms`);
    await row('Live server').getByText('6 tools').waitFor();
  });

  it('shows a token the CLI made in another process within 1 s', async () => {
    await page.getByRole('link', { name: 'Agent access' }).click();
    await page.getByRole('heading', { name: 'Agent access', level: 1 }).waitFor();
    let made: Awaited<ReturnType<typeof cli>> | undefined;
    const ms = await timeToPage(
      async () => (made = await cli(fx.stateDir, ['token', 'create', '--name', 'from-the-cli'])),
      `document.querySelector('main')?.textContent?.includes('from-the-cli')`,
    );
    assert.equal(made?.code, 0, made?.stderr);
    assert.ok(ms < 1000, `${ms.toFixed(0)} ms after the CLI ended`);
    await page.getByText('from-the-cli').first().waitFor();
  });

  it('shows a tool call within 1 s of its end, and asks nothing on a timer for 30 idle seconds', async () => {
    await page.getByRole('link', { name: 'Server' }).click();
    await page.getByRole('heading', { name: 'Server', level: 1 }).waitFor();
    const agent = (await fx.connect(await fx.token('agent'))).client;
    const ms = await timeToPage(
      () => agent.callTool({ name: 'read', arguments: { path: fileURLToPath(import.meta.url), limit: 1 } }),
      `[...document.querySelectorAll('td')].some((td) => td.textContent.trim() === 'read')`,
    );
    assert.ok(ms < 1000, `${ms.toFixed(0)} ms`);
    await page.getByRole('cell', { name: 'read', exact: true }).first().waitFor();
    await agent.close();

    // Let what the last change started settle, then count what the page asks while nobody does anything.
    await new Promise((r) => setTimeout(r, 2_000));
    const from = requests.length;
    await new Promise((r) => setTimeout(r, 30_000));
    const asked = requests.slice(from).map((r) => `${r.method()} ${new URL(r.url()).pathname}`);
    assert.deepEqual(asked, [], 'requests while idle');
    const streams = requests.filter((r) => new URL(r.url()).pathname === '/api/events');
    assert.equal(streams.length, 1, 'one event stream, opened once');
  });

  it('says on the CLI what the page says, for every state the server can find (the CLI asks the server)', async () => {
    await page.getByRole('link', { name: 'Connections' }).click();
    await page.getByRole('heading', { name: 'Connections', level: 1 }).waitFor();
    assert.equal((await api('PUT', '/secrets/KEYED?workspace_path=', { value: 'sk-wrong' })).status, 204);
    const added = await api('POST', '/mcp/place', {
      workspace_path: '',
      server: { url: keyed.url, name: 'Keyed server', header: { name: 'X-Api-Key', secret: 'KEYED' } },
    });
    assert.equal(added.status, 201, JSON.stringify(added.json));
    const live = (await api('GET', '/mcp/place?workspace_path=')).json.connections.find(
      (c: { displayName: string }) => c.displayName === 'Live server',
    );
    const states: Array<[string, () => unknown, string]> = [
      ['connected', () => upstream.setMode('ok'), 'Connected'],
      ['not-mcp', () => upstream.setMode('garbage'), 'Not an MCP server'],
      ['unreachable', () => upstream.setMode('http-500'), 'Unreachable'],
      ['unreachable', () => upstream.setMode('hang'), 'Unreachable'],
      ['sign-in', () => upstream.setMode('sign-in'), 'Sign in'],
    ];
    for (const [state, cause, words] of states) {
      cause();
      const tested = (await api('POST', `/mcp/place/${live.name}/test?workspace_path=`)).json.connection;
      assert.equal(tested.state, state, JSON.stringify(tested));
      await agree('Live server', live.name, state, words, tested.reason);
    }
    upstream.setMode('ok');
    await agree('Keyed server', added.json.connection.name, 'key-refused', 'Key refused', added.json.connection.reason);
  });

  /** The page's row and the CLI's list and show say the state and the reason the server found. */
  async function agree(display: string, name: string, state: string, words: string, reason: string | undefined): Promise<void> {
    await row(display).locator('.state', { hasText: words }).waitFor();
    if (reason) await row(display).getByText(reason, { exact: false }).first().waitFor();
    // A failing server is checked again on its own (after 1 s, 2 s, ...): while that runs, the server
    // says "checking" to every surface, so a command that lands in it asks again.
    for (let tries = 1; ; tries++) {
      const list = await cli(fx.stateDir, ['connections', 'list', '--json']);
      assert.equal(list.code, 0, list.stderr);
      assert.doesNotMatch(list.stderr, /No server runs/);
      const shown = JSON.parse(list.stdout).find((c: { name: string }) => c.name === name);
      const details = await cli(fx.stateDir, ['connections', 'show', name]);
      if (tries < 5 && (shown.state === 'checking' || /state: checking/.test(details.stdout))) continue;
      assert.equal(shown.state, state, `${display}: the CLI says ${shown.state}, the page ${state}`);
      assert.equal(shown.reason, reason);
      assert.match(details.stdout, new RegExp(`state: ${state}`));
      return;
    }
  }
});
