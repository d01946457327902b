import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { BrowserContext } from 'playwright-core';
import { textOf } from '../../test/support/host-fixture.js';
import { finishSignIn, MemoryOAuthProvider, startSignIn } from '../../test/support/oauth-client.js';
import { openPage, skipReason, type PageFixture } from './page-support.js';

// An agent signs in with OAuth: the MCP SDK client's own flow, its sign-in page in a Chromium
// context that is not signed in to the app, and the owner allowing (or denying) it on the page.

if (skipReason) console.log(`# skipping the page tests: ${skipReason}`);

describe('the page: agents signing in with OAuth', { skip: skipReason }, () => {
  let p: PageFixture;
  let callback: Server;
  let redirect: string;
  /** The client's browser: another context, with no session of the app. */
  let visitor: BrowserContext;

  before(async () => {
    p = await openPage('access', 'Agent access');
    // Where the client's browser is sent back to: the client's own loopback listener.
    callback = createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'text/plain' }).end('You can go back to your app.')).listen(
      0,
      '127.0.0.1',
    );
    await once(callback, 'listening');
    redirect = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`;
    visitor = await p.browser.newContext();
  });
  after(async () => {
    await visitor?.close();
    callback?.close();
    await p?.close();
  });

  const waiting = () => p.page.getByRole('list', { name: 'Waiting sign-ins' });

  it('waits for the owner, who allows it for a place on the page; the client then calls bash', async () => {
    const provider = new MemoryOAuthProvider(redirect, 'Page-approved agent');
    const serverUrl = `${p.fx.url}?workspace_path=Crew/alpha`;
    const tab = await visitor.newPage();
    await tab.goto((await startSignIn(provider, serverUrl)).href);
    await tab.getByRole('heading', { name: 'Waiting for the owner of this machine' }).waitFor();
    const code = (await tab.locator('.code').textContent())!.trim();
    assert.match(code, /^[A-Z2-9]{4}-[A-Z2-9]{4}$/);
    // The waiting page reloads itself every few seconds: a locator is looked up again on the new page.
    await tab.getByText('Page-approved agent', { exact: false }).first().waitFor();

    const row = waiting().getByRole('listitem', { name: `Sign-in of Page-approved agent, code ${code}` });
    await row.getByText('Allow Page-approved agent to work on this machine in Crew alpha?').waitFor();
    await row.getByText(redirect, { exact: false }).waitFor();
    // Where it came from and when, so that two clients' requests tell apart by more than the code.
    assert.match((await row.textContent()) ?? '', /asked at \d{1,2}:\d{2}( [AP]M)? from 127\.0\.0\.1 · its answer goes to/);
    await p.shot('sign-in-waiting');
    await row.getByRole('button', { name: 'Allow Page-approved agent' }).click();

    await tab.waitForURL((url) => url.href.startsWith(redirect), { timeout: 10_000 });
    const answer = new URL(tab.url());
    assert.equal(answer.searchParams.get('state'), provider.sentState);
    await finishSignIn(provider, serverUrl, answer.searchParams.get('code')!);

    const client = new Client({ name: 'page-approved', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(p.fx.url), { authProvider: provider }));
    assert.match(textOf(await client.callTool({ name: 'bash', arguments: { command: 'echo page-approved' } })), /page-approved/);

    // The call shows in the server's activity under the client's own name.
    await p.page.goto(`${p.controlUrl}/#server`);
    await p.page.getByRole('region', { name: 'Recent activity' }).getByText('Page-approved agent').first().waitFor();
    await p.page.goto(`${p.controlUrl}/#access`);
    const signedIn = p.page
      .getByRole('list', { name: 'Signed-in clients' })
      .getByRole('listitem')
      .filter({ hasText: 'Page-approved agent' });
    await signedIn.getByText('Crew alpha', { exact: false }).waitFor();
    // Its client id and where its answer went tell it from another client of the same name.
    await signedIn.locator('code', { hasText: provider.client!.client_id }).waitFor();
    await signedIn.locator('code', { hasText: redirect }).waitFor();
    await p.shot('signed-in');
    await signedIn.getByRole('button', { name: 'Revoke Page-approved agent' }).click();
    await signedIn.getByRole('button', { name: 'Yes, revoke' }).click();
    await p.page.getByText('Page-approved agent was revoked', { exact: false }).waitFor();
    await assert.rejects(client.callTool({ name: 'bash', arguments: { command: 'echo after' } }));
    await client.close().catch(() => {});
    await tab.close();
  });

  it('sends the browser back with access_denied when the owner denies', async () => {
    const provider = new MemoryOAuthProvider(redirect, 'Page-denied agent');
    const tab = await visitor.newPage();
    await tab.goto((await startSignIn(provider, p.fx.url)).href);
    const code = (await tab.locator('.code').textContent())!.trim();
    const row = waiting().getByRole('listitem', { name: `Sign-in of Page-denied agent, code ${code}` });
    await row.getByText('in This machine?', { exact: false }).waitFor();
    await row.getByRole('button', { name: 'Deny Page-denied agent' }).click();
    await tab.waitForURL((url) => url.href.startsWith(redirect), { timeout: 10_000 });
    const answer = new URL(tab.url());
    assert.equal(answer.searchParams.get('error'), 'access_denied');
    assert.equal(answer.searchParams.get('state'), provider.sentState);
    await p.page.getByText('No sign-ins waiting', { exact: false }).waitFor();
    await tab.close();
  });

  it("refuses to show the sign-in page inside another site's frame", async () => {
    const provider = new MemoryOAuthProvider(redirect, 'Framed agent');
    const authorize = (await startSignIn(provider, p.fx.url)).href;
    const framer = createServer((_req, res) =>
      res
        .writeHead(200, { 'Content-Type': 'text/html' })
        .end(`<!doctype html><iframe id="f" src="${authorize.replace(/"/g, '&quot;')}"></iframe>`),
    ).listen(0, '127.0.0.1');
    await once(framer, 'listening');
    try {
      const tab = await visitor.newPage();
      await tab.goto(`http://localhost:${(framer.address() as AddressInfo).port}/`);
      await tab.waitForTimeout(1_000);
      const frame = tab.frames().find((f) => f !== tab.mainFrame());
      assert.ok(frame, 'the frame exists');
      // Chromium shows its own error document where a page refuses to be framed.
      const text = await frame
        .locator('body')
        .innerText()
        .catch(() => '');
      assert.doesNotMatch(text, /Waiting for the owner/);
      await tab.close();
    } finally {
      framer.close();
    }
    for (const r of (await p.api('GET', '/agent-access/sign-ins')).json.requests)
      await p.api('POST', `/agent-access/sign-ins/${r.code}/deny`, {});
  });
});
