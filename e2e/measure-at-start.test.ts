import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../main/config.js';
import { Host } from '../main/host.js';
import { callApi } from '../test/support/control-api.js';
import { waitFor } from '../test/support/host-fixture.js';
import { startUpstream, type UpstreamFixture } from './fixtures/upstream-server.js';

// A server that starts with connections already added measures them at once, before any agent
// connects: the first agent of a place finds its tools there, and the page shows a measured state.

describe('connections measured as the server starts', () => {
  let upstream: UpstreamFixture;
  let stateDir: string;
  const hosts: Host[] = [];
  const newHost = () => {
    const env = {
      WORKSPACE_REGISTRY_URL: '',
      WORKSPACE_SECRET_STORE: 'file',
      WORKSPACE_ALLOW_PRIVATE_NETWORK: '1',
      WORKSPACE_STATE_DIR: stateDir,
    };
    const host = new Host(loadConfig({ port: 0, controlPort: 0, auth: false }, env), { log: () => {}, env });
    hosts.push(host);
    return host;
  };
  const api = async (host: Host, method: string, path: string, body?: unknown) =>
    callApi(await host.open(), await host.adminToken(), method, path, body);

  before(async () => {
    upstream = await startUpstream({ name: 'at-start' });
    stateDir = await mkdtemp(join(tmpdir(), 'pw-at-start-'));
  });
  after(async () => {
    for (const host of hosts) await host.close();
    await upstream.close();
    await rm(stateDir, { recursive: true, force: true });
  });

  it("checks a place's remote connection on start, with no agent and no page asking", async () => {
    const first = newHost();
    await first.start();
    const added = await api(first, 'POST', '/mcp/place', { workspace_path: 'Crew/a', server: { url: upstream.url, name: 'Early' } });
    assert.equal(added.status, 201, JSON.stringify(added.json));
    await first.close();

    const seen = upstream.requests.length;
    const second = newHost();
    await second.start();
    await waitFor(() => upstream.requests.length > seen, 10_000, 'a request of the check at start');
    // The state the page shows is that check's, made before anyone asked for it.
    const connection = await waitFor(async () => {
      const listed = (await api(second, 'GET', '/mcp/place?workspace_path=Crew/a')).json.connections as Array<{
        state: string;
        tools?: number;
      }>;
      return listed.find((c) => c.state === 'connected');
    }, 10_000);
    assert.ok((connection.tools ?? 0) > 0);
  });
});
