import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { clipboardText, openPage, pageUntil, skipReason, tabUntil, type PageFixture } from './page-support.js';
import { INITIALIZE_BODY } from '../../test/support/raw-http.js';

// The Agent access screen in Debian's Chromium against a real headless host: a token made on the
// page, copied from the page, works on /mcp until it is revoked on the page.

if (skipReason) console.log(`# skipping the page tests: ${skipReason}`);

describe('the page: agent access', { skip: skipReason }, () => {
  let p: PageFixture;

  before(async () => {
    p = await openPage('access', 'Agent access');
  });
  after(() => p?.close());

  const tokens = () => p.page.getByRole('list', { name: 'Tokens' });
  const form = () => p.page.getByRole('form', { name: 'Create a token' });
  const newToken = () => p.page.getByRole('region', { name: /^Token “.*” created$/ });
  /** A raw MCP request with a bearer token: what a client meets before any session. */
  const mcpStatus = async (token: string) =>
    (
      await fetch(p.fx.url, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        body: INITIALIZE_BODY,
      })
    ).status;

  it('shows the MCP URL, how agents sign in, no tokens yet, and configurations with a placeholder', async () => {
    const { page } = p;
    const endpoint = page.getByRole('region', { name: 'Connect to' });
    await endpoint.getByText(p.fx.url, { exact: true }).waitFor();
    await endpoint
      .getByText('Token required: agents sign in and you allow each one here, or they send a token made here', { exact: false })
      .waitFor();
    await page.getByText('No tokens yet. Create one above', { exact: false }).waitFor();
    const snippet = page.getByRole('tabpanel').locator('pre');
    // Claude Code signs in by itself: no header to fill in.
    assert.equal(await snippet.textContent(), `claude mcp add --transport http persona-workspace "${p.fx.url}"`);
    await p.shot('empty');
  });

  it('creates a token for a place, shows it once with Copy, and the copied token works on /mcp', async () => {
    const { page } = p;
    await form().getByRole('textbox', { name: 'Name' }).fill('ci agent');
    await form().getByRole('combobox', { name: 'Place' }).selectOption({ label: 'Crew alpha' });
    await form().getByRole('combobox', { name: 'Expires after' }).selectOption({ label: '7 days' });
    await form().getByRole('button', { name: 'Create token' }).click();

    await newToken().getByText('Copy it now: you will not see it again.').waitFor();
    const shown = (await newToken().locator('code').textContent()) ?? '';
    assert.match(shown, /^eyJ[\w-]+\.[\w-]+\.[\w-]+$/);
    await newToken().getByRole('button', { name: 'Copy the token' }).click();
    await newToken().getByRole('status').getByText('Copied').waitFor();
    const copied = await clipboardText(page);
    assert.equal(copied, shown, 'the clipboard holds the token');
    await p.shot('created');

    const { client } = await p.fx.connect(copied);
    assert.ok(
      (await client.listTools()).tools.some((t) => t.name === 'bash'),
      'the copied token works',
    );
    await client.close();

    const row = tokens().getByRole('listitem').filter({ hasText: 'ci agent' });
    await row.getByText('Crew alpha', { exact: false }).waitFor();
    await row.getByText('Active', { exact: true }).waitFor();
    const tokenList = (await p.api('GET', '/tokens')).json.tokens as Array<{
      name: string;
      workspacePath?: string;
      expiresAt?: string;
      createdAt: string;
    }>;
    const record = tokenList.find((t) => t.name === 'ci agent')!;
    assert.equal(record.workspacePath, 'Crew/alpha');
    assert.equal(Date.parse(record.expiresAt!) - Date.parse(record.createdAt), 7 * 86_400_000, 'expires after the chosen 7 days');
  });

  it("fills the new token into every client's configuration, the one the panel says", async () => {
    const { page } = p;
    const token = (await newToken().locator('code').textContent())!;
    await newToken().getByText('Every configuration below includes this token until you press Done.', { exact: true }).waitFor();
    const panel = page.getByRole('tabpanel');
    const headers = { Authorization: `Bearer ${token}` };
    await page.getByRole('tab', { name: 'Other clients' }).click();
    await panel.getByRole('button', { name: 'Copy the Other clients configuration' }).click();
    await panel.getByRole('status').getByText('Copied').waitFor();
    assert.deepEqual(JSON.parse(await clipboardText(page)), {
      mcpServers: { 'persona-workspace': { type: 'http', url: p.fx.url, headers } },
    });
    await page.getByRole('tab', { name: 'VS Code' }).click();
    await panel.getByText('It sends the token you just created.', { exact: false }).waitFor();
    assert.deepEqual(JSON.parse((await panel.locator('pre').textContent())!), {
      servers: { 'persona-workspace': { type: 'http', url: p.fx.url, headers } },
    });
    await page.getByRole('tab', { name: 'Claude Code' }).click();
    assert.equal(
      await panel.locator('pre').textContent(),
      `claude mcp add --transport http persona-workspace "${p.fx.url}" --header "Authorization: Bearer ${token}"`,
    );
    await page.getByRole('tab', { name: 'Cursor' }).click();
    await panel.getByText('.cursor/mcp.json', { exact: false }).waitFor();
    assert.deepEqual(JSON.parse((await panel.locator('pre').textContent())!), {
      mcpServers: { 'persona-workspace': { url: p.fx.url, headers } },
    });
    // Arrow keys move between the tabs.
    await page.getByRole('tab', { name: 'Cursor' }).press('ArrowRight');
    assert.equal(await page.getByRole('tab', { name: 'VS Code' }).getAttribute('aria-selected'), 'true');
    await p.shot('configs-filled');
  });

  it("says in each client's configuration whether tool search is on for it, and sets it per token", async () => {
    const { page } = p;
    const panel = page.getByRole('tabpanel');
    await page.getByRole('tab', { name: 'Cursor' }).click();
    await panel
      .getByText('Tool search is off (Crew alpha has 6 tools, no more than 40): the agent gets all 6 tools.', { exact: true })
      .waitFor();
    await page.getByRole('tab', { name: 'Claude Code' }).click();
    await panel.getByText('Claude Code also searches tools itself', { exact: false }).waitFor();

    const row = tokens().getByRole('listitem').filter({ hasText: 'ci agent' });
    await row.getByRole('combobox', { name: 'Tool search for ci agent' }).selectOption('on');
    await row.getByText('tool search on', { exact: false }).waitFor();
    const record = ((await p.api('GET', '/tokens')).json.tokens as Array<{ name: string; toolSearch?: string }>).find(
      (t) => t.name === 'ci agent',
    );
    assert.equal(record?.toolSearch, 'on');
    await row.getByRole('combobox', { name: 'Tool search for ci agent' }).selectOption('auto');
    await row.getByText('tool search as its place', { exact: false }).waitFor();
  });

  it('never shows the token again', async () => {
    const { page } = p;
    const token = (await newToken().locator('code').textContent())!;
    await page.reload();
    await tokens().getByRole('listitem').filter({ hasText: 'ci agent' }).waitFor();
    assert.equal(await newToken().count(), 0);
    assert.ok(!(await page.content()).includes(token), 'not on the page after a reload');
    await page.getByRole('tab', { name: 'Other clients' }).click();
    assert.ok((await page.getByRole('tabpanel').locator('pre').textContent())!.includes('<paste-your-token-here>'));
    await p.shot('tokens');
  });

  it('revokes after an inline Yes, No keeps it, and the revoked token is refused', async () => {
    const { page } = p;
    const created = await p.api('POST', '/tokens', { name: 'revoke me', workspace_path: 'Crew/alpha' });
    const token = created.json.token.token as string;
    const { client } = await p.fx.connect(token);
    await page.reload();
    const row = tokens().getByRole('listitem').filter({ hasText: 'revoke me' });
    await row.getByRole('button', { name: 'Revoke revoke me' }).click();
    await row.getByRole('group', { name: 'Revoke revoke me?' }).waitFor();
    await p.shot('revoke-confirm');
    await row.getByRole('button', { name: 'No' }).click();
    assert.equal(await mcpStatus(token), 200, 'No keeps it working');
    await row.getByRole('button', { name: 'Revoke revoke me' }).click();
    await row.getByRole('button', { name: 'Yes, revoke' }).click();
    await page.getByRole('status').filter({ hasText: 'Token “revoke me” was revoked.' }).waitFor();
    await row.waitFor({ state: 'detached' });
    await page.getByText('1 revoked token is not shown', { exact: false }).waitFor();

    assert.equal(await mcpStatus(token), 401, 'a new session is refused');
    await assert.rejects(client.listTools(), 'the open session is refused too');
    assert.ok((await tokens().textContent())!.includes('ci agent'), 'the other token stays');
    await p.shot('revoked');
  });

  it('creates, copies and revokes a token with the keyboard alone, with focus always visible', async () => {
    const { page } = p;
    await page.reload();
    await tokens().waitFor();
    await tabUntil(page, `document.activeElement?.getAttribute('aria-describedby') === 'token-name-hint'`, 60);
    await page.keyboard.type('keyboard agent');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(`document.activeElement?.getAttribute('aria-describedby')`), 'token-place-hint');
    await page.keyboard.press('ArrowDown'); // the first place after This machine: Crew alpha
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(`document.activeElement?.textContent`), 'Create token');
    await page.keyboard.press('Enter');

    await newToken().waitFor();
    assert.equal(await page.evaluate(`document.activeElement?.id`), 'new-token-heading', 'focus lands on the new token');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(`document.activeElement?.getAttribute('aria-label')`), 'Copy the token');
    assert.notEqual(await page.evaluate(`getComputedStyle(document.activeElement).outlineStyle`), 'none', 'focus is visible');
    await page.keyboard.press('Enter');
    await newToken().getByRole('status').getByText('Copied').waitFor();
    const token = await clipboardText(page);
    assert.equal(await mcpStatus(token), 200);
    assert.ok((await tokens().getByRole('listitem').filter({ hasText: 'keyboard agent' }).textContent())!.includes('Crew alpha'));
    await p.shot('keyboard-created');

    await tabUntil(page, `document.activeElement?.getAttribute('aria-label') === 'Revoke keyboard agent'`, 60);
    assert.notEqual(await page.evaluate(`getComputedStyle(document.activeElement).outlineStyle`), 'none', 'focus is visible');
    await page.keyboard.press('Enter');
    assert.equal(await page.evaluate(`document.activeElement?.textContent`), 'No', 'focus goes to the safe choice');
    // The keyboard goes on to the row that takes its place, as after a connection's removal.
    const next = await tokens()
      .getByRole('listitem')
      .filter({ hasText: 'keyboard agent' })
      .evaluate((li) => li.nextElementSibling?.getAttribute('aria-label'));
    assert.ok(next, 'another token is listed after it');
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Enter');
    await tokens().getByRole('listitem').filter({ hasText: 'keyboard agent' }).waitFor({ state: 'detached' });
    await pageUntil(page, `document.activeElement?.getAttribute('aria-label') === ${JSON.stringify(next)}`);
    assert.equal(await newToken().count(), 0, 'the revoked token is no longer shown');
    assert.equal(await mcpStatus(token), 401);
    await p.shot('keyboard-revoked');

    // The last one revoked: the keyboard goes to the list's heading.
    const live = ((await p.api('GET', '/tokens')).json.tokens as Array<{ id: string; name: string; revokedAt?: string }>).filter(
      (t) => !t.revokedAt,
    );
    const last = live.at(-1)!;
    for (const t of live.slice(0, -1)) assert.equal((await p.api('DELETE', `/tokens/${t.id}`)).status, 200);
    const lastRow = tokens().getByRole('listitem').filter({ hasText: last.name });
    await tokens().getByRole('listitem').filter({ hasNotText: last.name }).first().waitFor({ state: 'detached' });
    await lastRow.getByRole('button', { name: `Revoke ${last.name}` }).click();
    await lastRow.getByRole('button', { name: 'Yes, revoke' }).click();
    await lastRow.waitFor({ state: 'detached' });
    await pageUntil(page, `document.activeElement?.id === 'tokens-heading'`);
  });

  it('selects the text to copy by hand when the browser refuses the clipboard', async () => {
    const { page } = p;
    await page.evaluate(
      `navigator.clipboard.writeText = () => Promise.reject(new DOMException('Write permission denied.', 'NotAllowedError'))`,
    );
    const endpoint = page.getByRole('region', { name: 'Connect to' });
    await endpoint.getByRole('button', { name: 'Copy the MCP URL' }).click();
    await endpoint.getByRole('status').getByText('The browser did not allow copying. The text is selected', { exact: false }).waitFor();
    assert.equal(await page.evaluate(`window.getSelection().toString()`), p.fx.url);
    await p.shot('copy-refused');
    await page.reload();
  });

  it('says when the server is stopped and what to do', async () => {
    const { page } = p;
    assert.equal((await p.api('POST', '/server/stop')).json.state, 'stopped');
    try {
      await page.reload();
      const endpoint = page.getByRole('region', { name: 'Connect to' });
      await endpoint.getByText('The server is stopped, so agents cannot connect now.', { exact: false }).waitFor();
      await endpoint.getByRole('link', { name: 'Server' }).waitFor();
      await endpoint.getByText(p.fx.url, { exact: true }).waitFor(); // the URL it will have: the port is fixed
      await p.shot('server-stopped');
    } finally {
      assert.equal((await p.api('POST', '/server/start')).json.state, 'running');
    }
  });

  it('follows a dark system theme', async () => {
    const { page } = p;
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.reload();
    await page.getByRole('heading', { name: 'Tokens', level: 2 }).waitFor();
    assert.equal(await page.evaluate(`getComputedStyle(document.body).backgroundColor`), 'rgb(21, 23, 27)');
    await p.shot('dark');
    await page.emulateMedia({ colorScheme: 'light' });
  });
});
