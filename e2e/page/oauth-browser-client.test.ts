import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { startHost, type HostFixture } from '../../test/support/host-fixture.js';
import { launchChromium, skipReason } from './page-support.js';

// A browser-based MCP client (the Inspector's web page is one, on http://localhost:6274) runs in a
// page of another origin: in Chromium, it discovers, registers and reaches the token endpoint
// through CORS preflights, while the MCP endpoint and the control plane still refuse its origin.

if (skipReason) console.log(`# skipping the browser-based OAuth client test: ${skipReason}`);

describe('a browser-based OAuth client on another origin', { skip: skipReason }, () => {
  let fx: HostFixture;
  let browser: Browser;
  let clientSite: Server;
  let page: Page;
  let base: string;
  let clientOrigin: string;

  before(async () => {
    fx = await startHost();
    base = new URL(fx.url).origin;
    clientSite = createServer((_req, res) =>
      res.writeHead(200, { 'Content-Type': 'text/html' }).end('<!doctype html><title>client</title>'),
    ).listen(0, '127.0.0.1');
    await once(clientSite, 'listening');
    browser = await launchChromium();
    page = await browser.newPage();
    clientOrigin = `http://localhost:${(clientSite.address() as AddressInfo).port}`;
    await page.goto(`${clientOrigin}/`);
  });
  after(async () => {
    await browser?.close();
    clientSite?.close();
    await fx?.close();
  });

  it("discovers and registers with preflighted requests, and reads the token endpoint's answer", async () => {
    const seen = await page.evaluate(
      async ({ server, self }) => {
        // MCP-Protocol-Version and a JSON body make each of these a preflighted request.
        const headers = { 'MCP-Protocol-Version': '2025-11-25' };
        const resource = (await (await fetch(`${server}/.well-known/oauth-protected-resource/mcp`, { headers })).json()) as {
          resource: string;
        };
        const metadata = (await (await fetch(`${server}/.well-known/oauth-authorization-server`, { headers })).json()) as Record<
          string,
          string
        >;
        const registration = (await (
          await fetch(metadata.registration_endpoint!, {
            method: 'POST',
            headers: { ...headers, 'Content-Type': 'application/json' },
            body: JSON.stringify({ client_name: 'Browser client', redirect_uris: [`${self}/oauth/callback`] }),
          })
        ).json()) as { client_id: string };
        const token = await fetch(metadata.token_endpoint!, {
          method: 'POST',
          headers: { ...headers, 'Content-Type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            grant_type: 'authorization_code',
            client_id: registration.client_id,
            code: 'not-a-code',
            code_verifier: 'v'.repeat(43),
          }),
        });
        return {
          resource: resource.resource,
          issuer: metadata.issuer,
          clientId: registration.client_id,
          tokenStatus: token.status,
          tokenError: ((await token.json()) as { error: string }).error,
        };
      },
      { server: base, self: clientOrigin },
    );
    assert.equal(seen.resource, fx.url);
    assert.equal(seen.issuer, base);
    assert.match(String(seen.clientId), /^[0-9a-f]{32}$/);
    assert.equal(seen.tokenStatus, 400);
    assert.equal(seen.tokenError, 'invalid_grant');
  });

  it('cannot call the MCP endpoint or the control plane from that origin', async () => {
    const controlUrl = await fx.host.open();
    const blocked = await page.evaluate(
      (urls) =>
        Promise.all(
          urls.map((url) =>
            fetch(url, {
              method: 'POST',
              headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
              body: '{}',
            }).then(
              (res) => `answered ${res.status}`,
              () => 'blocked',
            ),
          ),
        ),
      [fx.url, `${controlUrl}/api/server/stop`],
    );
    assert.deepEqual(blocked, ['blocked', 'blocked']);
    assert.equal(fx.host.status.state, 'running');
  });
});
