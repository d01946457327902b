import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { callApi } from '../test/support/control-api.js';
import { enterWorkspace, startHost, textOf, waitFor, type HostFixture } from '../test/support/host-fixture.js';
import { startUpstream, type UpstreamFixture } from './fixtures/upstream-server.js';

// Step-up authorization through a real host, against the fault-injecting upstream in OAuth mode:
// a real authorization server grants exactly the scopes asked for, and the upstream refuses one
// tool (403 insufficient_scope) unless the token has a wider scope; later it refuses the login
// altogether (401 once its tokens are revoked). The official conformance
// suite checks the protocol (e2e/conformance-auth.test.ts); this checks what each surface says
// and what the agent gets along the way.

const BROWSER = fileURLToPath(new URL('./fixtures/oauth-browser.sh', import.meta.url));
// The built bin (npm test builds first): `connections list` runs in its own process on the host's state.
const CLI = fileURLToPath(new URL('../dist/main/cli.js', import.meta.url));
const PLACE = 'Crew/ops';

interface View {
  name: string;
  auth: string;
  state: string;
  reason?: string;
}

describe('an OAuth-protected upstream that misbehaves (step-up, 401 later), end to end', () => {
  let fx: HostFixture;
  let upstream: UpstreamFixture;
  let workspace: Awaited<ReturnType<typeof enterWorkspace>>;
  let api: (method: string, path: string, body?: unknown) => Promise<{ status: number; json: any }>;
  let agent: Client;
  let name: string;

  before(async () => {
    workspace = await enterWorkspace('pw-step-up-', [PLACE]);
    process.env.BROWSER = BROWSER;
    upstream = await startUpstream({ name: 'Publisher', oauth: { scopes: ['tools:read', 'tools:write'], challengeScope: 'tools:read' } });
    upstream.requireScope('add', 'tools:write');
    fx = await startHost({}, { WORKSPACE_ALLOW_PRIVATE_NETWORK: '1' });
    const controlUrl = await fx.host.open();
    const token = await fx.host.adminToken();
    api = (method, path, body) => callApi(controlUrl, token, method, path, body);
    const url = new URL(fx.url);
    url.searchParams.set('workspace_path', PLACE);
    agent = new Client({ name: 'agent', version: '1.0.0' });
    await agent.connect(
      new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${await fx.token()}` } } }),
    );
  });

  after(async () => {
    delete process.env.BROWSER;
    await agent.close();
    await fx.close();
    await upstream.close();
    await workspace.leave();
  });

  const view = async (): Promise<View> =>
    (await api('GET', `/mcp/place?workspace_path=${PLACE}`)).json.connections.find((c: View) => c.name === name);
  const call = async (tool: string, args: Record<string, unknown> = {}) =>
    (await agent.callTool({ name: tool, arguments: args })) as CallToolResult;
  /** The provider revokes every token; the agent's next call meets it, and the connection needs a sign-in. */
  const endLoginAtProvider = async (): Promise<void> => {
    upstream.oauth!.revokeAllRefreshTokens();
    upstream.oauth!.revokeAllAccessTokens();
    const refused = await call(`${name}__echo`, { text: 'x' });
    assert.equal(refused.isError, true);
    await waitFor(async () => (await view()).state === 'sign-in', 10_000, 'the connection to need a sign-in');
  };
  /** `connections list` of the place, as the person running the app types it. */
  const cliList = async () =>
    (
      await promisify(execFile)(process.execPath, [CLI, 'connections', 'list', '--workspace-path', PLACE], {
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          WORKSPACE_STATE_DIR: fx.stateDir,
          WORKSPACE_SECRET_STORE: 'file',
          WORKSPACE_CWD: workspace.dir,
          WORKSPACE_REGISTRY_URL: '',
          WORKSPACE_ALLOW_PRIVATE_NETWORK: '1',
          XDG_CONFIG_HOME: join(fx.stateDir, 'config'),
        },
      })
    ).stdout;
  const scopesAsked = () => new Set(upstream.oauth!.authorizationRequests.at(-1)?.get('scope')?.split(' '));

  /** The owner's Connect: the host opens the sign-in in $BROWSER (a script that follows the redirects); resolves once connected. */
  async function connect(): Promise<void> {
    const before = upstream.oauth!.authorizationRequests.length;
    const started = await api('POST', `/mcp/place/${name}/connect?workspace_path=${PLACE}`, {});
    assert.equal(started.status, 200, JSON.stringify(started.json));
    await waitFor(
      async () => upstream.oauth!.authorizationRequests.length > before && (await view()).state === 'connected',
      20_000,
      'the sign-in to finish',
    );
  }

  it("signs in with the scope the server's challenge names, and the agent gets the tools that need no more", async () => {
    const added = await api('POST', '/mcp/place', { workspace_path: PLACE, server: { url: upstream.url, name: 'Publisher' } });
    assert.equal(added.status, 201, JSON.stringify(added.json));
    name = added.json.connection.name;
    assert.equal(added.json.connection.auth, 'oauth');
    await connect();
    assert.ok(scopesAsked().has('tools:read') && !scopesAsked().has('tools:write'), [...scopesAsked()].join(' '));
    assert.deepEqual((await call(`${name}__echo`, { text: 'hi' })).content, [{ type: 'text', text: 'echo: hi' }]);
  });

  it('a server that starts refusing the login (401 later): sign-in needed with why; Connect signs in again and the calls work', async () => {
    await endLoginAtProvider();
    assert.match((await view()).reason ?? '', /sign in/i);
    assert.match(await cliList(), /Publisher .*sign-in \(/);
    await connect();
    assert.deepEqual((await call(`${name}__echo`, { text: 'back' })).content, [{ type: 'text', text: 'echo: back' }]);
  });

  it('a tool that needs wider access: the agent is told the owner must approve it, every surface says sign-in with that reason', async () => {
    const refused = await call(`${name}__add`, { a: 1, b: 2 });
    assert.equal(refused.isError, true);
    assert.match(textOf(refused), /Publisher.* asks for more access \(tools:write\).*owner must approve the wider access/);

    const shown = await view();
    assert.equal(shown.state, 'sign-in');
    assert.match(shown.reason ?? '', /asks for more access \(tools:write\) to do this\. Its owner must approve the wider access/);
    const manage = textOf(await call('manage_my_mcp_servers', { action: 'list' }));
    assert.match(manage, new RegExp(`${name}: Publisher, .*sign-in: .*asks for more access \\(tools:write\\)`));
    assert.match(await cliList(), /Publisher .*sign-in \(Publisher asks for more access \(tools:write\)/);
    // Tools of the connection go from the place until the owner approves: the refusal is not retried.
    const requests = upstream.requests.length;
    assert.match(textOf(await call(`${name}__add`, { a: 1, b: 2 })), /asks for more access \(tools:write\)/);
    assert.equal(upstream.requests.length, requests, 'no request reached the server while it waits for the owner');
  });

  it("the owner's Connect asks for the wider scope with the one already granted; then the call succeeds", async () => {
    const { registrations, revocations } = upstream.oauth!.counters;
    await connect();
    // The provider holds a registration to the scope it was registered with: the app registers anew, and the old login ends.
    assert.equal(upstream.oauth!.counters.registrations, registrations + 1);
    assert.ok(upstream.oauth!.counters.revocations > revocations, "the replaced registration's login was revoked");
    assert.deepEqual([...scopesAsked()].filter((s) => s.startsWith('tools:')).sort(), ['tools:read', 'tools:write']);
    assert.deepEqual(
      [...scopesAsked()].filter((s) => !s.startsWith('tools:')),
      ['offline_access'],
      'nothing else but a refresh token',
    );
    const added = await call(`${name}__add`, { a: 1, b: 2 });
    assert.notEqual(added.isError, true, JSON.stringify(added));
    assert.deepEqual(added.structuredContent, { sum: 3 });
    assert.equal((await view()).state, 'connected');
  });

  it('a login the provider ends after the step-up: Connect asks for the wider scope again, and the call that needs it works without another step-up', async () => {
    await endLoginAtProvider();
    // The row says what happened, not "not signed in yet".
    assert.equal((await view()).reason, 'The login ended at the provider (revoked there, or expired): sign in again.');
    // Connect's own 401 challenge names tools:read only; the wider scope comes from the ended login.
    await connect();
    assert.deepEqual([...scopesAsked()].sort(), ['offline_access', 'tools:read', 'tools:write']);
    const added = await call(`${name}__add`, { a: 2, b: 3 });
    assert.notEqual(added.isError, true, JSON.stringify(added));
    assert.deepEqual(added.structuredContent, { sum: 5 });
    assert.equal((await view()).state, 'connected');
  });

  it("Connect while signed in asks for the scope the current login has, not only the challenge's", async () => {
    const login = upstream.requests.at(-1)?.authorization;
    await connect();
    assert.deepEqual([...scopesAsked()].sort(), ['offline_access', 'tools:read', 'tools:write']);
    // The connection stays connected throughout: the new login is known by its token reaching the server.
    await waitFor(
      async () => (await call(`${name}__echo`, { text: 'new' })).isError !== true && upstream.requests.at(-1)?.authorization !== login,
      10_000,
      'the new login to be used',
    );
    const added = await call(`${name}__add`, { a: 3, b: 4 });
    assert.notEqual(added.isError, true, JSON.stringify(added));
    assert.deepEqual(added.structuredContent, { sum: 7 });
  });

  it('a server that keeps refusing a scope the login has: one more sign-in, then key refused with the reason', async () => {
    upstream.setScope('tools:write');
    upstream.setMode('insufficient-scope');
    try {
      const first = await call(`${name}__add`, { a: 1, b: 2 });
      assert.match(textOf(first), /Publisher asks for access it did not get at the last sign-in \(.*tools:write.*\)/);
      assert.equal((await view()).state, 'sign-in');
      await connect();
      const codeExchanges = upstream.oauth!.counters.codeExchanges;
      const last = await call(`${name}__add`, { a: 1, b: 2 });
      assert.match(textOf(last), /Publisher still refuses this login the access it asks for \(.*tools:write.*\) after 2 sign-ins/);
      const shown = await view();
      assert.equal(shown.state, 'key-refused');
      assert.match(shown.reason ?? '', /still refuses this login .* signing in again does not help/);
      assert.match(
        textOf(await call('manage_my_mcp_servers', { action: 'list' })),
        new RegExp(`${name}: Publisher, .*key-refused: .*still refuses this login`),
      );
      assert.match(await cliList(), /Publisher .*key-refused \(Publisher still refuses this login/);
      // Bounded: no sign-in starts by itself.
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(upstream.oauth!.counters.codeExchanges, codeExchanges);
    } finally {
      upstream.setMode('ok');
    }
  });
});
