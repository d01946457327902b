import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Router } from 'express';
import { SignJWT } from 'jose';
import { startHost, type HostFixture } from '../../test/support/host-fixture.js';
import { INITIALIZE_BODY } from '../../test/support/raw-http.js';
import type { Services } from '../services.js';
import { apiRoutes } from './api-routes.js';

const JWT_SECRET = 'control-plane-owner-test-secret';

/** Every route of the page's API as [method, path], read from the router itself so that new routes are covered too. */
function everyApiRoute(): Array<[string, string]> {
  const services = { config: { workspaceRoot: '/', skillsDir: '/' }, connections: {}, env: {} } as unknown as Services;
  const host = {
    status: () => ({ state: 'stopped' as const }),
    agentSessions: () => 0,
    start: async () => undefined,
    stop: async () => {},
  };
  const routes: Array<[string, string]> = [];
  const walk = (router: Router, prefix: string): void => {
    for (const layer of router.stack as unknown as Array<{
      route?: { path: string; methods: Record<string, boolean> };
      rawPath?: string;
      handle: unknown;
    }>) {
      if (layer.route) {
        for (const method of Object.keys(layer.route.methods))
          routes.push([method.toUpperCase(), `${prefix}${layer.route.path}`.replace(/:\w+/g, 'x')]);
      } else if (typeof layer.rawPath === 'string' && (layer.handle as { stack?: unknown }).stack) {
        walk(layer.handle as Router, `${prefix}${layer.rawPath}`);
      }
    }
  };
  walk(apiRoutes(services, host), '/api');
  return routes;
}

describe('the control plane takes only the owner', () => {
  let fx: HostFixture;
  let controlUrl: string;
  let adminToken: string;
  const jwt = (sub: string) =>
    new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(sub).setExpirationTime('5m').sign(new TextEncoder().encode(JWT_SECRET));

  before(async () => {
    fx = await startHost({}, { WORKSPACE_JWT_SECRET: JWT_SECRET });
    controlUrl = await fx.host.open();
    adminToken = await fx.host.adminToken();
  });
  after(() => fx.close());

  it('refuses agent tokens and JWTs, whatever their subject, on every API route', async () => {
    const tokens = await fx.host.tokens();
    const credentials: Record<string, string> = {
      'an agent token': await fx.token('agent'),
      'a place-scoped agent token': (await tokens.create({ name: 'alpha agent', workspacePath: 'Crew/alpha' })).token,
      'a JWT with sub "local"': await jwt('local'),
      'a JWT with another sub': await jwt('alice'),
    };
    const before = await fetch(`${controlUrl}/api/tokens`, { headers: { Authorization: `Bearer ${adminToken}` } }).then((r) => r.json());
    const routes = everyApiRoute();
    assert.ok(routes.length >= 25, `found only ${routes.length} routes`);
    for (const [what, credential] of Object.entries(credentials)) {
      for (const [method, path] of routes) {
        const response = await fetch(`${controlUrl}${path}`, {
          method,
          headers: { Authorization: `Bearer ${credential}`, 'Content-Type': 'application/json' },
          ...(method !== 'GET' && { body: JSON.stringify({ name: 'minted', workspace_path: 'Crew/beta' }) }),
        });
        const text = await response.text();
        assert.equal(response.status, 401, `${what} on ${method} ${path}: ${text}`);
        assert.match(JSON.parse(text).error.message, /agent tokens and JWTs work on the MCP endpoint only/);
      }
    }
    // Nothing was done on their behalf: no token minted, the server still running.
    const afterList = await fetch(`${controlUrl}/api/tokens`, { headers: { Authorization: `Bearer ${adminToken}` } }).then((r) => r.json());
    assert.deepEqual(afterList, before);
    assert.equal(fx.host.status.state, 'running');
  });

  it('lets no token claim the name "local" on the MCP endpoint either', async () => {
    const response = await fetch(fx.url, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${await jwt('local')}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
      body: INITIALIZE_BODY,
    });
    assert.equal(response.status, 401);
    assert.match(await response.text(), /reserved for the person who runs this app/);
  });

  it('takes a change by session cookie only with a JSON Content-Type, which no page of another site can send', async () => {
    const login = await fetch(await fx.host.loginUrl(), { redirect: 'manual' });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
    // No Origin header: a browser that leaves it out of a form POST still cannot pass.
    for (const contentType of [undefined, 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const response = await fetch(`${controlUrl}/api/server/stop`, {
        method: 'POST',
        headers: { Cookie: cookie, ...(contentType && { 'Content-Type': contentType }) },
      });
      assert.equal(response.status, 403, String(contentType));
      assert.match(((await response.json()) as { error: { message: string } }).error.message, /Content-Type: application\/json/);
    }
    assert.equal(fx.host.status.state, 'running');
    const refresh = await fetch(`${controlUrl}/api/catalog/refresh`, {
      method: 'POST',
      headers: { Cookie: cookie, 'Content-Type': 'application/json' },
    });
    assert.equal(refresh.status, 200, 'a body-less change with the JSON type is taken');
    assert.equal((await fetch(`${controlUrl}/api/places`, { headers: { Cookie: cookie } })).status, 200, 'reads need no proof');
  });

  it("still takes the desktop app's own token", async () => {
    const response = await fetch(`${controlUrl}/api/places`, { headers: { Authorization: `Bearer ${adminToken}` } });
    assert.equal(response.status, 200);
  });
});
