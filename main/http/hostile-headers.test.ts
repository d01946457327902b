import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startHost, type HostFixture } from '../../test/support/host-fixture.js';
import { raw } from '../../test/support/raw-http.js';

const INSPECTOR_PAGE = 'http://localhost:6274';

/**
 * Host and Origin headers that are not what they claim, sent raw to both listeners: refused
 * before anything reads them, and never echoed into a document. Documents that name the origin
 * say so (Vary) and stay out of shared caches.
 */
describe('Host and Origin headers, on the agent endpoint and the control plane', () => {
  let fx: HostFixture;
  let port: string;
  let controlUrl: string;
  let adminToken: string;

  before(async () => {
    fx = await startHost();
    port = new URL(fx.url).port;
    controlUrl = await fx.host.open();
    adminToken = await fx.host.adminToken();
  });
  after(() => fx.close());

  const get = (url: string, headers: Record<string, string>) => raw(url, { method: 'GET', headers });
  const notHosts = () => [
    `127.0.0.1:${port}@evil.com`,
    `127.0.0.1:${port} evil.com`,
    `127.0.0.1:${port}\tevil.com`,
    `me@127.0.0.1:${port}`,
    `127.0.0.1:${port}/x`,
  ];

  it('answers 400 to a Host that is not a host and a port, on the documents and the 401', async () => {
    for (const host of notHosts()) {
      for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/oauth-protected-resource/mcp', '/mcp']) {
        const res = await raw(`${fx.url.replace('/mcp', '')}${path}`, {
          method: path === '/mcp' ? 'POST' : 'GET',
          headers: { Host: host },
          body: path === '/mcp' ? '{}' : undefined,
        });
        assert.equal(res.status, 400, `${JSON.stringify(host)} ${path}: ${res.body}`);
        assert.match(JSON.parse(res.body).error.message, /is not a host name with an optional port/);
        assert.equal(res.headers['www-authenticate'], undefined);
      }
    }
  });

  it("answers 400 to such a Host on the control API, even with the owner's credential", async () => {
    const controlPort = new URL(controlUrl).port;
    assert.equal((await get(`${controlUrl}/api/tokens`, { Authorization: `Bearer ${adminToken}` })).status, 200);
    for (const host of [`127.0.0.1:${controlPort} evil.com`, `127.0.0.1:${controlPort}\tevil.com`, `127.0.0.1:${controlPort}@evil.com`]) {
      const res = await get(`${controlUrl}/api/tokens`, { Host: host, Authorization: `Bearer ${adminToken}` });
      assert.equal(res.status, 400, `${JSON.stringify(host)}: ${res.body}`);
    }
  });

  it('answers 400 to an Origin that is not an origin, on both listeners', async () => {
    for (const origin of [`http://127.0.0.1:${port}/path`, `http://127.0.0.1:${port} evil.com`, `http://x@127.0.0.1:${port}`]) {
      assert.equal((await raw(fx.url, { headers: { Origin: origin }, body: '{}' })).status, 400, origin);
      assert.equal((await get(`${controlUrl}/api/tokens`, { Origin: origin, Authorization: `Bearer ${adminToken}` })).status, 400, origin);
    }
  });

  it('names the origin only as the allowed host and port, rebuilt, in the documents and the 401', async () => {
    const as = await get(`${fx.url.replace('/mcp', '')}/.well-known/oauth-authorization-server`, { Host: `LOCALHOST:${port}` });
    assert.equal(as.status, 200);
    assert.equal(JSON.parse(as.body).issuer, `http://localhost:${port}`);
    const refused = await raw(fx.url, { headers: { Host: `[::1]:${port}` }, body: '{}' });
    assert.equal(refused.status, 401);
    assert.match(
      String(refused.headers['www-authenticate']),
      new RegExp(`resource_metadata="http://\\[::1\\]:${port}/\\.well-known/oauth-protected-resource/mcp"`),
    );
  });

  it('marks what names the origin as depending on Host and keeps it out of shared caches', async () => {
    const base = fx.url.replace('/mcp', '');
    for (const path of [
      '/.well-known/oauth-authorization-server',
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-protected-resource',
    ]) {
      const res = await get(`${base}${path}`, {});
      assert.equal(res.status, 200, path);
      assert.match(String(res.headers.vary), /\bHost\b/, path);
      assert.equal(res.headers['cache-control'], 'no-store', path);
    }
    const refused = await raw(fx.url, { headers: {}, body: '{}' });
    assert.equal(refused.status, 401);
    assert.match(String(refused.headers.vary), /\bHost\b/);
    assert.equal(refused.headers['cache-control'], 'no-store');
  });

  it('serves no OpenID discovery document: it would be incomplete', async () => {
    const res = await get(`${fx.url.replace('/mcp', '')}/.well-known/openid-configuration`, {});
    assert.equal(res.status, 404);
  });

  it('lets a browser-based client (another origin) discover, register and reach the token endpoint with CORS and no credentials', async () => {
    const base = fx.url.replace('/mcp', '');
    for (const [path, method] of [
      ['/.well-known/oauth-protected-resource/mcp', 'GET'],
      ['/.well-known/oauth-authorization-server', 'GET'],
      ['/register', 'POST'],
      ['/token', 'POST'],
      ['/revoke', 'POST'],
    ] as const) {
      const preflight = await raw(`${base}${path}`, {
        method: 'OPTIONS',
        headers: {
          Origin: INSPECTOR_PAGE,
          'Access-Control-Request-Method': method,
          'Access-Control-Request-Headers': method === 'GET' ? 'mcp-protocol-version' : 'content-type',
        },
      });
      assert.equal(preflight.status, 204, `${path}: ${preflight.body}`);
      assert.equal(preflight.headers['access-control-allow-origin'], '*', path);
      assert.match(String(preflight.headers['access-control-allow-methods']), new RegExp(method), path);
      assert.match(
        String(preflight.headers['access-control-allow-headers']),
        method === 'GET' ? /MCP-Protocol-Version/i : /Content-Type/i,
        path,
      );
      assert.equal(preflight.headers['access-control-allow-credentials'], undefined, path);
    }
    const document = await get(`${base}/.well-known/oauth-authorization-server`, {
      Origin: INSPECTOR_PAGE,
      'MCP-Protocol-Version': '2025-11-25',
    });
    assert.equal(document.status, 200);
    assert.equal(document.headers['access-control-allow-origin'], '*');
    const registered = await raw(`${base}/register`, {
      headers: { Origin: INSPECTOR_PAGE },
      body: JSON.stringify({ client_name: 'Inspector page', redirect_uris: [`${INSPECTOR_PAGE}/oauth/callback`] }),
    });
    assert.equal(registered.status, 201, registered.body);
    assert.equal(registered.headers['access-control-allow-origin'], '*');
  });

  it('keeps the MCP endpoint and the control plane to their own origin', async () => {
    assert.equal((await raw(fx.url, { headers: { Origin: INSPECTOR_PAGE }, body: '{}' })).status, 403);
    const control = await raw(`${controlUrl}/api/tokens`, {
      method: 'OPTIONS',
      headers: { Origin: INSPECTOR_PAGE, 'Access-Control-Request-Method': 'GET' },
    });
    assert.equal(control.status, 403);
    assert.equal(control.headers['access-control-allow-origin'], undefined);
    assert.equal((await get(`${controlUrl}/api/tokens`, { Origin: INSPECTOR_PAGE, Authorization: `Bearer ${adminToken}` })).status, 403);
  });
});
