import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { SignJWT } from 'jose';
import { nativeModules } from '../native-modules.js';
import { freePort, startHost, type HostFixture } from '../../test/support/host-fixture.js';

const JWT_SECRET = 'api-server-test-secret';

describe('the page API: the server', () => {
  let fx: HostFixture;
  let controlUrl: string;
  let adminToken: string;
  let port: number;
  const api = async (method: string, path: string, token = adminToken) => {
    const response = await fetch(`${controlUrl}/api${path}`, { method, headers: { Authorization: `Bearer ${token}` } });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };

  before(async () => {
    port = await freePort();
    fx = await startHost({ port }, { WORKSPACE_JWT_SECRET: JWT_SECRET });
    controlUrl = await fx.host.open();
    adminToken = await fx.host.adminToken();
  });
  after(() => fx.close());

  it('says where the endpoint listens, who can reach it and how agents sign in', async () => {
    const { status, json } = await api('GET', '/server');
    assert.equal(status, 200);
    assert.deepEqual(json, {
      state: 'running',
      url: `http://127.0.0.1:${port}/mcp`,
      auth: true,
      runningCommands: 0,
      agentSessions: 0,
      listen: { host: '127.0.0.1', port },
      reachable: 'this-machine',
      authMode: { required: true, external: ['secret'] },
      // The optional native modules, as this process's one check found them.
      nativeModules: await nativeModules(),
    });
  });

  it('stops and starts the endpoint, and says so while stopped', async () => {
    const stopped = await api('POST', '/server/stop');
    assert.equal(stopped.json.state, 'stopped');
    assert.deepEqual(stopped.json.listen, { host: '127.0.0.1', port }, 'the address is known while stopped');
    await assert.rejects(fetch(`http://127.0.0.1:${port}/mcp`), 'the port is closed');
    const started = await api('POST', '/server/start');
    assert.equal(started.json.state, 'running');
    assert.equal(started.json.url, `http://127.0.0.1:${port}/mcp`);
    assert.equal((await fetch(`http://127.0.0.1:${port}/mcp`, { method: 'POST' })).status, 401, 'listening again, asking for a token');
  });

  it('answers a start that fails with the failed state and why', async () => {
    await api('POST', '/server/stop');
    const squatter: Server = createServer().listen(port, '127.0.0.1');
    await once(squatter, 'listening');
    try {
      const { status, json } = await api('POST', '/server/start');
      assert.equal(status, 200);
      assert.equal(json.state, 'failed');
      assert.match(String(json.error), new RegExp(`Port ${port} on 127.0.0.1 is already in use`));
      assert.equal((await api('GET', '/server')).json.state, 'failed');
    } finally {
      squatter.close();
      await once(squatter, 'close');
    }
    assert.equal((await api('POST', '/server/start')).json.state, 'running', 'starts once the port is free');
  });

  it('lets only the person who runs the app start and stop it', async () => {
    const alice = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('alice')
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode(JWT_SECRET));
    for (const path of ['/server/stop', '/server/start']) assert.equal((await api('POST', path, alice)).status, 401, path);
    assert.equal((await api('GET', '/server')).json.state, 'running');
  });
});
