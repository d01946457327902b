import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { startHost, waitFor, type HostFixture } from '../../test/support/host-fixture.js';
import { launchChromium, pageUntil, skipReason } from './page-support.js';

// A page served from another port of 127.0.0.1 is another site, though the browser sends the
// SameSite=Strict session cookie to every port of the host: in Chromium, its requests to the
// control plane must reach it and be refused, and the server must keep running.

if (skipReason) console.log(`# skipping the cross-site page test: ${skipReason}`);

function attackerPage(controlUrl: string): string {
  return `<!doctype html><title>attacker</title>
<iframe name="sink"></iframe>
<form id="stop" method="POST" action="${controlUrl}/api/server/stop" target="sink"></form>
<script>
  (async () => {
    const send = (path, init) => fetch('${controlUrl}' + path, { method: 'POST', mode: 'no-cors', credentials: 'include', ...init }).catch(() => {});
    await send('/api/server/stop');
    await send('/api/catalog/refresh');
    await send('/api/server/stop', { headers: { 'Content-Type': 'text/plain' }, body: '{}' });
    document.getElementById('stop').submit();
    document.title = 'sent';
  })();
</script>`;
}

describe('the control plane and a page of another local port', { skip: skipReason }, () => {
  let fx: HostFixture;
  let browser: Browser;
  let attacker: Server;
  let attackerUrl: string;
  let controlUrl: string;

  before(async () => {
    fx = await startHost({}, { WORKSPACE_SECRET_STORE: 'file' });
    controlUrl = await fx.host.open();
    attacker = createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end(attackerPage(controlUrl))).listen(
      0,
      '127.0.0.1',
    );
    await once(attacker, 'listening');
    attackerUrl = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}/`;
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    attacker?.close();
    await fx?.close();
  });

  it('refuses its POSTs, body-less ones included, while the owner is signed in in the same browser', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(await fx.host.loginUrl());
    assert.ok(
      (await context.cookies(controlUrl)).some((c) => c.name === 'pw_session'),
      'the owner is signed in',
    );

    // The attacker's page in a tab of its own, in the same browser: only its requests are counted,
    // not those the owner's page goes on making (it loads its data once it has loaded).
    const tab = await context.newPage();
    const answers: Array<{ url: string; status: number }> = [];
    tab.on('response', (response) => {
      if (response.url().startsWith(`${controlUrl}/api/`)) answers.push({ url: response.url(), status: response.status() });
    });
    await tab.goto(attackerUrl);
    await pageUntil(tab, "document.title === 'sent'");
    await waitFor(() => answers.length >= 4, 10_000, 'the answers to the four requests');
    assert.equal(answers.length, 4, JSON.stringify(answers));
    for (const answer of answers) assert.equal(answer.status, 403, answer.url);
    assert.equal(fx.host.status.state, 'running', 'the server was not stopped');
    await context.close();
  });
});
