import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { callApi, type ApiAnswer } from '../test/support/control-api.js';
import { startHost, type HostFixture } from '../test/support/host-fixture.js';
import { startUpstream, type UpstreamFixture } from './fixtures/upstream-server.js';

// WORKSPACE_ALLOW_PRIVATE_NETWORK=1 lets connections reach loopback and private networks (a local
// MCP server), and nothing more: cloud metadata, link-local and unspecified addresses, and this
// app's own agent endpoint and control plane stay refused, through the real host's API.

describe('the private-network switch, through the host', () => {
  let fx: HostFixture;
  let local: UpstreamFixture;
  let api: (method: string, path: string, body?: unknown) => Promise<ApiAnswer>;
  let agentPort: number;
  let controlPort: number;

  before(async () => {
    local = await startUpstream({ name: 'local', apiKey: { header: 'X-Key', value: 'the-secret-value' } });
    fx = await startHost({ auth: false }, { WORKSPACE_ALLOW_PRIVATE_NETWORK: '1' });
    const controlUrl = await fx.host.open();
    const token = await fx.host.adminToken();
    api = (method, path, body) => callApi(controlUrl, token, method, path, body);
    agentPort = Number(new URL(fx.url).port);
    controlPort = Number(new URL(controlUrl).port);
    assert.equal((await api('PUT', '/secrets/KEY?workspace_path=', { value: 'the-secret-value' })).status, 204);
  });

  after(async () => {
    await fx.close();
    await local.close();
  });

  const add = (url: string) => api('POST', '/mcp/place', { workspace_path: '', server: { url, header: { name: 'X-Key', secret: 'KEY' } } });

  it('lets in a local MCP server on loopback', async () => {
    const added = await add(local.url);
    assert.equal(added.status, 201, added.text);
    assert.equal(added.json.connection.state, 'connected');
  });

  const metadata = [
    'http://169.254.169.254/mcp',
    'http://169.254.169.254/latest/meta-data/',
    'http://100.100.100.200/mcp',
    'http://169.254.0.23/mcp',
    'http://[fd00:ec2::254]/mcp',
    'http://[fe80::1]/mcp',
    'http://[::ffff:169.254.169.254]/mcp',
    'http://[::ffff:a9fe:a9fe]/mcp',
    'http://2852039166/mcp',
    'http://0.0.0.0:9/mcp',
    'http://[::]:9/mcp',
  ];
  for (const url of metadata) {
    it(`refuses ${url} (link-local, metadata or unspecified)`, async () => {
      const added = await add(url);
      assert.equal(added.status, 400, added.text);
      assert.match(added.json.error?.message ?? added.text, /link-local|metadata|unspecified/);
    });
  }

  it("refuses the app's own agent endpoint and control plane on any loopback spelling, sending nothing", async () => {
    const before = local.requests.length;
    for (const port of [agentPort, controlPort]) {
      for (const host of ['127.0.0.1', '127.0.0.2', '[::1]', '[::ffff:127.0.0.1]', 'localhost', '2130706433']) {
        for (const path of ['/mcp', '/api/tokens']) {
          const url = `http://${host}:${port}${path}`;
          const added = await add(url);
          assert.equal(added.status, 400, `${url}: ${added.text}`);
          assert.match(added.text, /a port of this app/, url);
        }
      }
    }
    const listed = (await api('GET', '/mcp/place?workspace_path=')).json.connections as Array<{ url: string }>;
    assert.deepEqual(
      listed.map((c) => c.url),
      [local.url],
      'nothing refused was stored',
    );
    assert.equal(local.requests.length, before);
  });

  it("refuses an edit that points a connection at the app's own port, keeping its old URL", async () => {
    const [connection] = (await api('GET', '/mcp/place?workspace_path=')).json.connections as Array<{ name: string }>;
    const edited = await api('PATCH', `/mcp/place/${connection!.name}?workspace_path=`, {
      url: `http://127.0.0.1:${controlPort}/api/tokens`,
    });
    assert.equal(edited.status, 400, edited.text);
    assert.equal((await api('GET', `/mcp/place/${connection!.name}?workspace_path=`)).json.connection.url, local.url);
  });
});
