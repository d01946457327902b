import assert from 'node:assert/strict';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { KeychainSecretStore } from '../main/secrets/keychain-store.js';
import { enterWorkspace, startHost, textOf, waitFor, type HostFixture } from '../test/support/host-fixture.js';
import { callApi } from '../test/support/control-api.js';
import { KEYTAR_SKIP } from '../test/support/native-modules.js';
import { filesUnder } from '../test/support/secrets.js';
import { startOAuthFixture, type OAuthFixture } from './fixtures/oauth-server.js';

// Sign-in to an OAuth-protected MCP server through the app, as a person would: add, Connect, the
// system browser ($BROWSER: a script that follows the provider's redirects), the callback, then an
// agent uses the tools, the login is refreshed, revoked, signed in again and removed. Real
// authorization server (oidc-provider), real MCP server behind it, real keychain.

const BROWSER = fileURLToPath(new URL('./fixtures/oauth-browser.sh', import.meta.url));

describe('OAuth connections, end to end', { skip: KEYTAR_SKIP }, () => {
  let fx: HostFixture;
  let provider: OAuthFixture;
  let workspace: Awaited<ReturnType<typeof enterWorkspace>>;
  let controlUrl: string;
  let adminToken: string;
  const keychainService = `persona-oauth-e2e-${process.pid}`;
  const answers: string[] = [];
  let name: string;

  const api = async (method: string, path: string, body?: unknown) => {
    const answer = await callApi(controlUrl, adminToken, method, path, body);
    answers.push(answer.text);
    return answer;
  };
  const connection = async () =>
    (await api('GET', '/mcp/place?workspace_path=Crew/ops')).json.connections.find((c: { name: string }) => c.name === name);

  before(async () => {
    workspace = await enterWorkspace('pw-oauth-', ['Crew/ops']);
    process.env.BROWSER = BROWSER;
    provider = await startOAuthFixture({ accessTokenTtlSeconds: 3 });
    fx = await startHost(
      {},
      { WORKSPACE_SECRET_STORE: 'keychain', WORKSPACE_KEYCHAIN_SERVICE: keychainService, WORKSPACE_ALLOW_PRIVATE_NETWORK: '1' },
    );
    controlUrl = await fx.host.open();
    adminToken = await fx.host.adminToken();
  });

  after(async () => {
    delete process.env.BROWSER;
    await fx.close();
    await provider.close();
    const keychain = new KeychainSecretStore({ service: keychainService });
    for (const account of await keychain.accounts('')) await keychain.delete(account);
    await workspace.leave();
  });

  async function agent(): Promise<Client> {
    const url = new URL(fx.url);
    url.searchParams.set('workspace_path', 'Crew/ops');
    const client = new Client({ name: 'agent', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${await fx.token()}` } } }),
    );
    return client;
  }

  async function signIn(): Promise<void> {
    const connected = await api('POST', `/mcp/place/${name}/connect?workspace_path=Crew/ops`, {});
    assert.equal(connected.status, 200, JSON.stringify(connected.json));
    assert.match(connected.json.authorizationUrl, new RegExp(`^${provider.issuer}`));
    // $BROWSER opened it: the script walks the provider's pages and lands on /oauth/callback.
    await waitFor(async () => (await connection()).state === 'connected', 20_000, 'the sign-in to finish');
  }

  it('adds a server that asks for sign-in and signs in through the browser', async () => {
    const added = await api('POST', '/mcp/place', { workspace_path: 'Crew/ops', server: { url: provider.mcpUrl, name: 'Tracker' } });
    assert.equal(added.status, 201, JSON.stringify(added.json));
    name = added.json.connection.name;
    assert.equal(added.json.connection.auth, 'oauth');
    assert.equal(added.json.connection.state, 'sign-in');
    await signIn();
    assert.equal(provider.counters.registrations, 1, 'registered itself dynamically');
  });

  it("gives the place's agents the tools, refreshing the login once under 20 concurrent calls", async () => {
    const client = await agent();
    const tools = (await client.listTools()).tools.filter((t) => t.name.startsWith(`${name}__`));
    assert.ok(tools.length > 0, 'the upstream tools are listed');
    const tool = tools[0]!;
    const first = (await client.callTool({ name: tool.name, arguments: {} })) as CallToolResult;
    assert.notEqual(first.isError, true, JSON.stringify(first));

    await new Promise((r) => setTimeout(r, 3_500)); // the access token expires
    const refreshesBefore = provider.counters.refreshes;
    const started = Date.now();
    const results = (await Promise.all(
      Array.from({ length: 20 }, () => client.callTool({ name: tool.name, arguments: {} })),
    )) as CallToolResult[];
    for (const r of results) assert.notEqual(r.isError, true, JSON.stringify(r));
    // A fresh token is refreshed again once half its 3 s life is gone: on a loaded machine the 20 calls
    // may outlast that, and each such window allows one more refresh, never one per call.
    const windows = Math.floor((Date.now() - started) / 1_500);
    const refreshes = provider.counters.refreshes - refreshesBefore;
    assert.ok(refreshes >= 1 && refreshes <= 1 + windows, `one refresh for all of them (${refreshes} in ${windows + 1} refresh windows)`);
    await client.close();
  });

  it('turns to "Sign in" when the provider revokes the login, without retrying in a loop, and signs in again', async () => {
    provider.revokeAllRefreshTokens();
    await new Promise((r) => setTimeout(r, 3_500)); // the access token expires: the next call needs the refresh token
    const client = await agent();
    const tool = `${name}__${(await client.listTools()).tools.find((t) => t.name.startsWith(`${name}__`))?.name.slice(name.length + 2) ?? 'echo'}`;
    const tokenRequests = provider.counters.tokenRequests;
    const refused = (await client.callTool({ name: tool, arguments: {} })) as CallToolResult;
    assert.equal(refused.isError, true);
    await waitFor(async () => (await connection()).state === 'sign-in', 10_000, 'the connection to need a sign-in');
    assert.ok(provider.counters.tokenRequests - tokenRequests <= 1, 'at most one refresh attempt');
    const again = (await client.callTool({ name: tool, arguments: {} })) as CallToolResult;
    assert.equal(again.isError, true);
    assert.match(textOf(again), /errPlaceMCPUnavailable|sign in/i);
    assert.ok(provider.counters.tokenRequests - tokenRequests <= 1, 'no retry loop');
    await client.close();

    await signIn();
    const back = await agent();
    const ok = (await back.callTool({ name: tool, arguments: {} })) as CallToolResult;
    assert.notEqual(ok.isError, true, JSON.stringify(ok));
    await back.close();
  });

  it('refuses a callback with an unknown state, and changes nothing', async () => {
    const response = await fetch(`${controlUrl}/oauth/callback?code=forged&state=not-a-real-state`);
    assert.equal(response.status, 400);
    assert.match(await response.text(), /Sign-in failed/);
    assert.equal((await connection()).state, 'connected');
  });

  it('removes the connection: revoked at the provider and gone from the keychain', async () => {
    const revocations = provider.counters.revocations;
    const removed = await api('DELETE', `/mcp/place/${name}?workspace_path=Crew/ops`);
    assert.equal(removed.status, 200, JSON.stringify(removed.json));
    assert.ok(provider.counters.revocations > revocations, 'revoked at the provider');
    const keychain = new KeychainSecretStore({ service: keychainService });
    assert.deepEqual(
      (await keychain.accounts('connection:')).filter((a) => a.includes(name)),
      [],
    );
  });

  it('says how a denied sign-in ended: pending while the browser is out, then failed with why, until a sign-in works', async () => {
    const added = await api('POST', '/mcp/place', { workspace_path: 'Crew/ops', server: { url: provider.mcpUrl, name: 'Denied' } });
    assert.equal(added.status, 201, JSON.stringify(added.json));
    const denied = added.json.connection.name as string;
    const view = async () =>
      (await api('GET', '/mcp/place?workspace_path=Crew/ops')).json.connections.find((c: { name: string }) => c.name === denied);
    provider.setConsent('deny');
    try {
      const started = await api('POST', `/mcp/place/${denied}/connect?workspace_path=Crew/ops`, {});
      assert.equal(started.status, 200, JSON.stringify(started.json));
      assert.equal(started.json.connection.signIn.state, 'pending');
      await waitFor(async () => (await view()).signIn?.state === 'failed', 20_000, 'the denied sign-in to show as failed');
      const failed = await view();
      assert.equal(failed.state, 'sign-in');
      assert.match(failed.signIn.reason, /The sign-in to Denied was declined/);
      assert.match(failed.reason, /^The last sign-in failed: The sign-in to Denied was declined/);
      // The agent's tool says the same.
      const client = await agent();
      const listed = (await client.callTool({ name: 'manage_my_mcp_servers', arguments: { action: 'list' } })) as CallToolResult;
      assert.match(textOf(listed), new RegExp(`${denied}: Denied, .*sign-in: The last sign-in failed: .*declined`));
      await client.close();
    } finally {
      provider.setConsent('approve');
    }
    // A new sign-in is pending again, and once it works nothing of the failure is left.
    const again = await api('POST', `/mcp/place/${denied}/connect?workspace_path=Crew/ops`, {});
    assert.equal(again.json.connection.signIn.state, 'pending');
    await waitFor(async () => (await view()).state === 'connected', 20_000, 'the second sign-in');
    assert.equal((await view()).signIn, undefined);
    assert.equal((await api('DELETE', `/mcp/place/${denied}?workspace_path=Crew/ops`)).status, 200);
  });

  it('signs in to two places at once without mixing them', async () => {
    await mkdir(join(workspace.dir, 'Crew/dev'), { recursive: true });
    const places = ['Crew/dev', 'Workflow/nightly'];
    const names: string[] = [];
    for (const place of places) {
      const added = await api('POST', '/mcp/place', { workspace_path: place, server: { url: provider.mcpUrl, name: `Tracker ${place}` } });
      assert.equal(added.status, 201, JSON.stringify(added.json));
      names.push(added.json.connection.name);
    }
    const started = await Promise.all(places.map((place, i) => api('POST', `/mcp/place/${names[i]}/connect?workspace_path=${place}`, {})));
    for (const s of started) assert.equal(s.status, 200, JSON.stringify(s.json));
    for (const [i, place] of places.entries()) {
      await waitFor(
        async () =>
          (await api('GET', `/mcp/place?workspace_path=${place}`)).json.connections.find((c: { name: string }) => c.name === names[i])
            ?.state === 'connected',
        20_000,
        `the sign-in in ${place}`,
      );
    }
    for (const [i, place] of places.entries())
      assert.equal((await api('DELETE', `/mcp/place/${names[i]}?workspace_path=${place}`)).status, 200);
  });

  it('refuses a provider that does not offer PKCE S256, saying so', async () => {
    const added = await api('POST', '/mcp/place', { workspace_path: 'Crew/ops', server: { url: provider.mcpUrl, name: 'Weak' } });
    assert.equal(added.status, 201, JSON.stringify(added.json));
    provider.setS256(false);
    try {
      const refused = await api('POST', `/mcp/place/${added.json.connection.name}/connect?workspace_path=Crew/ops`, {});
      assert.equal(refused.status, 502);
      assert.match(refused.json.error.message, /S256|PKCE/);
    } finally {
      provider.setS256(true);
    }
    assert.equal((await api('DELETE', `/mcp/place/${added.json.connection.name}?workspace_path=Crew/ops`)).status, 200);
  });

  it("asks for the person's own OAuth app when the provider lets no app register, then signs in with it", async () => {
    const closed = await startOAuthFixture({ registration: false });
    try {
      const added = await api('POST', '/mcp/place', { workspace_path: 'Crew/ops', server: { url: closed.mcpUrl, name: 'Closed' } });
      assert.equal(added.status, 201, JSON.stringify(added.json));
      const closedName = added.json.connection.name;
      const asked = await api('POST', `/mcp/place/${closedName}/connect?workspace_path=Crew/ops`, {});
      assert.equal(asked.status, 409);
      assert.equal(asked.json.error.code, 'own_app_required');
      assert.equal(asked.json.error.redirect_url, `${controlUrl}/oauth/callback`);
      // The person registers their own app at the provider with that redirect URL, then enters it in the panel.
      await closed.addClient({
        clientId: 'my-own-app',
        clientSecret: 'own-app-secret-5d1e',
        redirectUris: [asked.json.error.redirect_url],
      });
      const connected = await api('POST', `/mcp/place/${closedName}/connect?workspace_path=Crew/ops`, {
        own_app: { client_id: 'my-own-app', client_secret: 'own-app-secret-5d1e' },
      });
      assert.equal(connected.status, 200, JSON.stringify(connected.json));
      const closedView = async () =>
        (await api('GET', '/mcp/place?workspace_path=Crew/ops')).json.connections.find((c: { name: string }) => c.name === closedName);
      await waitFor(async () => (await closedView())?.state === 'connected', 20_000, 'the own-app sign-in');
      assert.equal(closed.counters.registrations, 0);
      assert.deepEqual((await closedView()).ownApp, { clientId: 'my-own-app' });

      // Fix in place: another own app, without removing the connection. The login made with the old one ends.
      await closed.addClient({ clientId: 'second-app', clientSecret: 'second-secret-91c4', redirectUris: [asked.json.error.redirect_url] });
      const edited = await api('PATCH', `/mcp/place/${closedName}?workspace_path=Crew/ops`, {
        own_app: { client_id: 'second-app', client_secret: 'second-secret-91c4' },
      });
      assert.equal(edited.status, 200, JSON.stringify(edited.json));
      assert.equal(edited.json.connection.name, closedName, 'the same connection');
      assert.equal(edited.json.connection.state, 'sign-in');
      assert.deepEqual(edited.json.connection.ownApp, { clientId: 'second-app' });
      // The next sign-in uses the app it keeps, with no panel to fill in again.
      const again = await api('POST', `/mcp/place/${closedName}/connect?workspace_path=Crew/ops`, {});
      assert.equal(again.status, 200, JSON.stringify(again.json));
      assert.equal(new URL(again.json.authorizationUrl).searchParams.get('client_id'), 'second-app');
      await waitFor(async () => (await closedView())?.state === 'connected', 20_000, 'the sign-in with the second app');
      assert.equal(closed.counters.registrations, 0);
      assert.equal((await api('DELETE', `/mcp/place/${closedName}?workspace_path=Crew/ops`)).status, 200);
    } finally {
      await closed.close();
    }
  });

  it('keeps every OAuth artefact out of answers, logs and state files', async () => {
    const files = await filesUnder(fx.stateDir);
    const haystack = [...answers, fx.logs.join('\n'), ...(await Promise.all(files.map((f) => readFile(f, 'latin1'))))].join('\n');
    assert.ok(provider.acceptedAccessTokens.length > 0);
    for (const token of provider.acceptedAccessTokens) assert.ok(!haystack.includes(token), 'an access token leaked');
    for (const secret of ['own-app-secret-5d1e', 'second-secret-91c4'])
      assert.ok(!haystack.includes(secret), "an own app's client secret leaked");
    for (const clientId of provider.registeredClientIds())
      assert.ok(!haystack.includes(`"client_secret"`) || !haystack.includes(clientId), 'a client registration leaked');
  });
});
