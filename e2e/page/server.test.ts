import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { openPage, skipReason, type PageFixture } from './page-support.js';
import { waitFor } from '../../test/support/wait.js';

// The Server screen in Debian's Chromium against a real headless host: Stop and Start really close
// and open the /mcp port, and tool calls of real MCP clients appear in the activity by themselves.

if (skipReason) console.log(`# skipping the page tests: ${skipReason}`);

describe('the page: the server', { skip: skipReason }, () => {
  let p: PageFixture;

  before(async () => {
    p = await openPage('server', 'Server');
  });
  after(() => p?.close());

  const status = () => p.page.getByRole('region', { name: /^The MCP server: / });
  const activity = () => p.page.getByRole('region', { name: 'Recent activity' });
  const callRow = (tool: string) =>
    activity()
      .getByRole('row')
      .filter({ has: p.page.getByRole('cell', { name: tool, exact: true }) });
  /** Whether the /mcp port answers at all (401 without a token) or refuses the connection. */
  const portAnswers = () =>
    fetch(p.fx.url, { method: 'POST' }).then(
      (r) => r.status === 401,
      () => false,
    );

  it('shows the server running with its URL, address and sign-in, and no activity yet', async () => {
    await status().getByText('Running', { exact: true }).waitFor();
    await status().getByText(p.fx.url, { exact: true }).waitFor();
    await status().getByText(`127.0.0.1:${p.port}`, { exact: true }).waitFor();
    await status().getByText('Only programs on this machine can reach it.', { exact: false }).waitFor();
    await status().getByText('Token required', { exact: false }).waitFor();
    await activity().getByText('No tool calls yet.', { exact: false }).waitFor();
    await p.shot('running-empty');
  });

  it('stops from the page, and the /mcp port refuses; starts again, and it works', async () => {
    const { page } = p;
    await status().getByRole('button', { name: 'Stop server' }).click();
    await status().getByText('Stopped', { exact: true }).waitFor();
    await page.getByRole('status').filter({ hasText: 'The server is stopped. Agents cannot connect.' }).waitFor();
    assert.equal(await portAnswers(), false, 'the port refuses');
    await status().getByText(p.fx.url, { exact: true }).waitFor(); // the URL it will have again
    await p.shot('stopped');

    await status().getByRole('button', { name: 'Start server' }).click();
    await status().getByText('Running', { exact: true }).waitFor();
    assert.equal(await portAnswers(), true);
    const { client, transport } = await p.fx.connect(await p.fx.token('after restart'));
    assert.ok((await client.listTools()).tools.length > 0);
    // Ended, not left open: with no agent connected, the next Stop does not ask.
    await transport.terminateSession();
    await client.close();
  });

  it('says why a start failed, and starts once that is fixed', async () => {
    await status().getByRole('button', { name: 'Stop server' }).click();
    await status().getByText('Stopped', { exact: true }).waitFor();
    const squatter = createServer().listen(p.port, '127.0.0.1');
    await once(squatter, 'listening');
    try {
      await status().getByRole('button', { name: 'Start server' }).click();
      await status().getByText('Could not start', { exact: true }).waitFor();
      await status().getByRole('alert').getByText(`Port ${p.port} on 127.0.0.1 is already in use.`, { exact: false }).waitFor();
      await p.shot('failed');
    } finally {
      squatter.close();
      await once(squatter, 'close');
    }
    await status().getByRole('button', { name: 'Start server' }).click();
    await status().getByText('Running', { exact: true }).waitFor();
    assert.equal(await portAnswers(), true);
  });

  it('shows an MCP client’s tool calls as they happen, with caller, place and outcome', async () => {
    const created = await p.api('POST', '/tokens', { name: 'activity agent', workspace_path: 'Crew/alpha' });
    const { client } = await p.fx.connect(created.json.token.token);
    await client.callTool({ name: 'bash', arguments: { command: 'true' } });
    await client.callTool({ name: 'read', arguments: { path: 'no-such-file.txt' } });

    // No reload: the table polls while the screen is open.
    const bash = callRow('bash');
    await bash.waitFor();
    const cells = async (row: typeof bash) => (await row.getByRole('cell').allTextContents()).map((t) => t.trim());
    const [, tool, caller, place, duration, outcome] = await cells(bash);
    assert.equal(tool, 'bash');
    assert.match(caller!, /^activity agent/);
    assert.equal(place, 'Crew alpha');
    assert.match(duration!, /^\d+(\.\d)? m?s$/);
    assert.equal(outcome, 'OK');

    const read = callRow('read');
    await read.waitFor();
    const readCells = await cells(read);
    assert.match(readCells[5]!, /^Failed/);
    const tools = await activity().locator('tbody tr td:nth-child(2)').allTextContents();
    assert.ok(tools.indexOf('read') < tools.indexOf('bash'), `newest first: ${tools.join(', ')}`);
    await client.close();
    await p.shot('activity');
  });

  it('says when the activity cannot be loaded, and Retry brings it back', async () => {
    const { page } = p;
    await page.route('**/api/activity*', (route) =>
      route.fulfill({
        status: 500,
        contentType: 'application/json',
        body: JSON.stringify({ error: { message: 'Something went wrong on the server. The server log has the details.' } }),
      }),
    );
    await page.reload();
    const failure = activity().getByRole('alert').filter({ hasText: 'The recent activity could not be loaded.' });
    await failure.waitFor();
    await p.shot('activity-failed');
    await page.unroute('**/api/activity*');
    await failure.getByRole('button', { name: 'Retry' }).click();
    await callRow('bash').waitFor();
  });

  it('follows a dark system theme', async () => {
    const { page } = p;
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.reload();
    await callRow('bash').waitFor();
    assert.equal(await page.evaluate(`getComputedStyle(document.body).backgroundColor`), 'rgb(21, 23, 27)');
    await p.shot('dark');
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('asks before stopping while agents are connected, saying how many, and Escape keeps it running', async () => {
    const { page } = p;
    const { client } = await p.fx.connect(await p.fx.token('connected agent'));
    const open = (await p.api('GET', '/server')).json.agentSessions as number;
    assert.ok(open >= 1, `sessions open: ${open}`);
    await status().getByRole('button', { name: 'Stop server' }).click();
    const confirm = status().getByRole('group', { name: 'Stop the server?' });
    await confirm
      .getByText(
        `Stop? ${open === 1 ? '1 agent session is' : `${open} agent sessions are`} open; stopping ends ${open === 1 ? 'it' : 'them'}.`,
        { exact: true },
      )
      .waitFor();
    await page.keyboard.press('Escape');
    await confirm.waitFor({ state: 'detached' });
    assert.equal((await p.api('GET', '/server')).json.state, 'running');
    assert.ok((await client.listTools()).tools.length > 0, 'the agent is still connected');
    await client.close();
  });

  it('asks before stopping while agents have commands running, says how many, and No keeps it running', async () => {
    const { page } = p;
    const { client } = await p.fx.connect(await p.fx.token('long runner'));
    const call = client.callTool({ name: 'bash', arguments: { command: 'sleep 60' } }).catch((error: unknown) => error);
    await waitFor(async () => (await p.api('GET', '/server')).json.runningCommands === 1, 10_000, 'the command to run');
    await status().getByRole('button', { name: 'Stop server' }).click();
    const confirm = status().getByRole('group', { name: 'Stop the server?' });
    await confirm.getByText(/^Stop\? \d+ agent sessions? (is|are) open and 1 command is running; stopping ends them\.$/).waitFor();
    await p.shot('stop-confirm');
    await page.keyboard.press('Escape');
    await confirm.waitFor({ state: 'detached' });
    assert.equal((await p.api('GET', '/server')).json.state, 'running');
    assert.equal((await p.api('GET', '/server')).json.runningCommands, 1, 'the command still runs');

    await status().getByRole('button', { name: 'Stop server' }).click();
    await confirm.getByRole('button', { name: 'Yes, stop' }).click();
    await status().getByText('Stopped', { exact: true }).waitFor();
    await call;
    assert.equal((await p.api('GET', '/server')).json.runningCommands, 0, 'stopping ended it');
    await status().getByRole('button', { name: 'Start server' }).click();
    await status().getByText('Running', { exact: true }).waitFor();
  });
});
