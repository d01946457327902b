import assert from 'node:assert/strict';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { SignJWT } from 'jose';
import { KeychainSecretStore } from '../main/secrets/keychain-store.js';
import { enterWorkspace, startHost, textOf, waitFor, type HostFixture } from '../test/support/host-fixture.js';
import { callApi } from '../test/support/control-api.js';
import { KEYTAR_SKIP } from '../test/support/native-modules.js';
import { filesUnder } from '../test/support/secrets.js';
import { startRegistryFixture, type RegistryFixture } from './fixtures/registry-server.js';
import { startUpstream, type UpstreamFixture } from './fixtures/upstream-server.js';

// The whole place-connections flow on loopback, with a real upstream MCP server that checks an
// API key, a registry fixture, and the real OS keychain (gnome-keyring on the test's own D-Bus).
// The owner uses the page's API; other people (alice, bob) act through their agents'
// manage_my_mcp_servers, since the control plane takes no one but the owner.

const JWT_SECRET = 'place-connections-test-signing-secret';
const API_KEY = 'sk-live-7f3a9c2e41d84b6f';
const OTHER_KEY = 'sk-other-c0ffee5eed';
const now = () => Math.floor(Date.now() / 1000);

function jwt(sub: string): Promise<string> {
  return new SignJWT({})
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime(now() + 3600)
    .sign(new TextEncoder().encode(JWT_SECRET));
}

describe('place connections, end to end', { skip: KEYTAR_SKIP }, () => {
  let fx: HostFixture;
  let workspace: Awaited<ReturnType<typeof enterWorkspace>>;
  let upstream: UpstreamFixture;
  let second: UpstreamFixture;
  let registry: RegistryFixture;
  let api: (method: string, path: string, body?: unknown) => Promise<{ status: number; json: any }>;
  let adminToken: string;
  let controlUrl: string;
  /** Every API and tool answer, searched for secrets at the end. */
  const seen: string[] = [];
  const keychainService = `persona-test-${process.pid}`;
  let alice: string;
  let bob: string;

  before(async () => {
    workspace = await enterWorkspace('pw-places-', ['Crew/alpha/runs/7', 'Crew/beta', 'Workflow/release']);
    upstream = await startUpstream({ name: 'issues', apiKey: { header: 'X-Api-Key', value: API_KEY } });
    second = await startUpstream({ name: 'docs', apiKey: { header: 'Authorization', value: `Bearer ${OTHER_KEY}` } });
    registry = await startRegistryFixture();
    const catalogFile = join(workspace.dir, 'connectors.json');
    const apiKeyEntry = (id: string, name: string, url: string, apiKey: { header: string; prefix?: string }) => ({
      id,
      name,
      description: `${name} on loopback.`,
      url,
      transport: 'streamable-http',
      auth: 'api-key',
      apiKey,
    });
    await writeFile(
      catalogFile,
      JSON.stringify({
        version: 1,
        groups: [],
        entries: [
          apiKeyEntry('issues', 'Issues', upstream.url, { header: 'X-Api-Key' }),
          apiKeyEntry('docs', 'Docs', second.url, { header: 'Authorization', prefix: 'Bearer ' }),
        ],
      }),
    );
    fx = await startHost(
      {},
      {
        WORKSPACE_JWT_SECRET: JWT_SECRET,
        WORKSPACE_SECRET_STORE: 'keychain',
        WORKSPACE_KEYCHAIN_SERVICE: keychainService,
        WORKSPACE_REGISTRY_URL: registry.url,
        WORKSPACE_ALLOW_PRIVATE_NETWORK: '1',
        WORKSPACE_UPSTREAM_TIMEOUT: '2',
        WORKSPACE_CATALOG_FILE: catalogFile,
      },
    );
    adminToken = await fx.host.adminToken();
    controlUrl = await fx.host.open();
    api = async (method, path, body) => {
      const answer = await callApi(controlUrl, adminToken, method, path, body);
      seen.push(answer.text);
      return answer;
    };
    // The directory: alice edits Crew alpha, bob reads it.
    await api('PUT', '/access/people/alice', { name: 'Alice' });
    await api('PUT', '/access/people/bob', { name: 'Bob' });
    assert.equal((await api('PUT', '/access/places', { workspace_path: 'Crew/alpha', editors: ['alice'], readers: ['bob'] })).status, 200);
    assert.equal((await api('PUT', '/access/places', { workspace_path: 'Crew/beta', editors: ['alice'] })).status, 200);
    alice = await jwt('alice');
    bob = await jwt('bob');
  });

  after(async () => {
    await fx.close();
    await Promise.all([upstream.close(), second.close(), registry.close()]);
    const keychain = new KeychainSecretStore({ service: keychainService });
    for (const account of await keychain.accounts('')) await keychain.delete(account);
    await workspace.leave();
  });

  async function agent(token: string, workspacePath?: string): Promise<Client> {
    const url = new URL(fx.url);
    if (workspacePath !== undefined) url.searchParams.set('workspace_path', workspacePath);
    const client = new Client({ name: 'agent', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    return client;
  }

  async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
    const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
    seen.push(JSON.stringify(result));
    return result;
  }

  let issues: { name: string };

  it("lets an editor's agent add an API-key connector with a secret of the place, as its caller", async () => {
    const client = await agent(alice, 'Crew/alpha/runs/7');
    const noSecret = await call(client, 'manage_my_mcp_servers', { action: 'connect', catalog: 'issues', secret: 'ISSUES_KEY' });
    assert.equal(noSecret.isError, true);
    assert.match(textOf(noSecret), /no secret named "ISSUES_KEY"/);

    assert.equal((await api('PUT', '/secrets/ISSUES_KEY?workspace_path=Crew/alpha', { value: API_KEY })).status, 204);
    assert.deepEqual((await api('GET', '/secrets?workspace_path=Crew/alpha')).json, { names: ['ISSUES_KEY'] });

    const added = await call(client, 'manage_my_mcp_servers', { action: 'connect', catalog: 'issues', secret: 'ISSUES_KEY' });
    assert.match(textOf(added), /^Added and connected Issues as u[0-9a-f]{8}__issues: \d+ tools/);
    await client.close();
    const list = await api('GET', '/mcp/place?workspace_path=Crew/alpha');
    issues = list.json.connections.find((c: { catalogId: string }) => c.catalogId === 'issues');
    assert.match(issues.name, /^u[0-9a-f]{8}__issues$/);
    assert.equal((issues as unknown as { state: string }).state, 'connected');
    assert.equal((issues as unknown as { ownerName: string }).ownerName, 'Alice');
  });

  it("gives an agent in that place the upstream tools, called with the adder's key", async () => {
    const client = await agent(alice, 'Crew/alpha');
    const { tools } = await client.listTools();
    const echo = tools.find((t) => t.name === `${issues.name}__echo`);
    assert.ok(echo, `tools: ${tools.map((t) => t.name).join(', ')}`);
    assert.deepEqual(echo.inputSchema.required, ['text']);
    assert.equal(
      echo._meta?.['anthropic/searchHint'],
      'Issues: Issues on loopback.',
      "the connection's name, then what the catalog says it does",
    );
    assert.ok(
      tools.some((t) => t.name === 'bash'),
      'the machine tools are still there',
    );
    for (const t of tools) assert.match(t.name, /^[A-Za-z0-9_-]{1,64}$/);

    const result = await call(client, `${issues.name}__echo`, { text: 'hello' });
    assert.deepEqual(result.content, [{ type: 'text', text: 'echo: hello' }]);
    assert.equal(upstream.requests.at(-1)?.['x-api-key'], API_KEY);
    const sum = await call(client, `${issues.name}__add`, { a: 1, b: 2 });
    assert.deepEqual(sum.structuredContent, { sum: 3 });
    const mixed = await call(client, `${issues.name}__mixed_content`);
    assert.equal(mixed.content.length, 5);
    const failing = await call(client, `${issues.name}__fail`);
    assert.equal(failing.isError, true);
    await client.close();
  });

  it('relays progress from the upstream to the agent', async () => {
    const client = await agent(alice, 'Crew/alpha');
    const messages: string[] = [];
    await client.callTool({ name: `${issues.name}__slow`, arguments: { seconds: 0.3 } }, undefined, {
      onprogress: (p) => messages.push(p.message ?? ''),
    });
    assert.ok(messages.includes('step 3'), JSON.stringify(messages));
    await client.close();
  });

  it("carries the agent's cancellation through to the upstream tool", async () => {
    const client = await agent(alice, 'Crew/alpha');
    const controller = new AbortController();
    const started = upstream.calls.get('slow') ?? 0;
    const cancelled = upstream.cancelled.length;
    const call = client.callTool({ name: `${issues.name}__slow`, arguments: { seconds: 30 } }, undefined, { signal: controller.signal });
    // Cancelled once the upstream tool runs: earlier, there would be nothing upstream to cancel.
    await waitFor(() => (upstream.calls.get('slow') ?? 0) > started, 10_000, 'the upstream tool to start');
    controller.abort();
    await assert.rejects(call);
    await waitFor(() => upstream.cancelled.slice(cancelled).includes('slow'), 10_000, 'the upstream tool to see the cancellation');
    await client.close();
  });

  it("keeps the place's connections out of other places, and refuses their names there", async () => {
    const client = await agent(alice, 'Crew/beta');
    const { tools } = await client.listTools();
    assert.ok(!tools.some((t) => t.name.startsWith(issues.name)));
    const refused = await call(client, `${issues.name}__echo`, { text: 'x' });
    assert.equal(refused.isError, true);
    assert.match(textOf(refused), /^errPlaceMCPUnavailable: .*Crew beta/);
    await client.close();
  });

  it("lets a reader's agent see the list, whose login each uses, but not add or remove", async () => {
    const reader = await agent(bob, 'Crew/alpha');
    const list = await call(reader, 'manage_my_mcp_servers', { action: 'list' });
    assert.match(textOf(list), new RegExp(`${issues.name}: Issues, Alice's login, connected`));
    const add = await call(reader, 'manage_my_mcp_servers', { action: 'connect', catalog: 'linear' });
    assert.equal(add.isError, true);
    assert.match(textOf(add), /Bob cannot add connections to Crew alpha/);
    const remove = await call(reader, 'manage_my_mcp_servers', { action: 'remove', name: issues.name });
    assert.equal(remove.isError, true);
    await reader.close();
    await assert.rejects(agent(await jwt('mallory'), 'Crew/alpha'), /mallory cannot work in Crew alpha/);
  });

  it("tells open sessions when the place's connections change", async () => {
    const client = await agent(alice, 'Crew/alpha');
    let changes = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changes += 1;
    });
    await api('PUT', '/secrets/DOCS_KEY?workspace_path=Crew/alpha', { value: OTHER_KEY });
    const adder = await agent(alice, 'Crew/alpha');
    assert.match(
      textOf(await call(adder, 'manage_my_mcp_servers', { action: 'connect', catalog: 'docs', secret: 'DOCS_KEY' })),
      /^Added and connected Docs/,
    );
    await adder.close();
    await waitFor(() => changes > 0, 5_000, 'notifications/tools/list_changed');
    const docsName = (await api('GET', '/mcp/place?workspace_path=Crew/alpha')).json.connections.find(
      (c: { catalogId: string }) => c.catalogId === 'docs',
    ).name;
    const { tools } = await client.listTools();
    assert.ok(tools.some((t) => t.name === `${docsName}__echo`));
    const docs = await call(client, `${docsName}__echo`, { text: 'docs' });
    assert.deepEqual(docs.content, [{ type: 'text', text: 'echo: docs' }]);
    await client.close();
  });

  it('pauses a connection whose adder lost edit access, skips it at run time, and resumes it', async () => {
    const client = await agent(bob, 'Crew/alpha');
    assert.ok(
      (await client.listTools()).tools.some((t) => t.name === `${issues.name}__echo`),
      "a reader's agent uses the adder's login",
    );

    await api('PUT', '/access/places', { workspace_path: 'Crew/alpha', editors: [], readers: ['bob', 'alice'] });
    const list = await api('GET', '/mcp/place?workspace_path=Crew/alpha');
    const paused = list.json.connections.find((c: { name: string }) => c.name === issues.name);
    assert.equal(paused.state, 'paused');
    assert.match(paused.reason, /Alice can no longer edit Crew alpha/);
    assert.ok(!(await client.listTools()).tools.some((t) => t.name.startsWith(issues.name)));
    const refused = await call(client, `${issues.name}__echo`, { text: 'x' });
    assert.match(textOf(refused), /errPlaceMCPUnavailable/);

    await api('PUT', '/access/people/alice', { name: 'Alice', disabled: true });
    await api('PUT', '/access/places', { workspace_path: 'Crew/alpha', editors: ['alice'], readers: ['bob'] });
    const disabled = (await api('GET', '/mcp/place?workspace_path=Crew/alpha')).json.connections.find(
      (c: { name: string }) => c.name === issues.name,
    );
    assert.match(disabled.reason, /Alice was disabled/);

    await api('PUT', '/access/people/alice', { name: 'Alice', disabled: false });
    const echo = await call(client, `${issues.name}__echo`, { text: 'back' });
    assert.deepEqual(echo.content, [{ type: 'text', text: 'echo: back' }]);
    await client.close();
  });

  it('fails only the tools of an upstream that is down, slow or broken, naming it', async () => {
    const client = await agent(alice, 'Crew/alpha');
    const docsName = (await api('GET', '/mcp/place?workspace_path=Crew/alpha')).json.connections.find(
      (c: { displayName: string }) => c.displayName === 'Docs',
    ).name;
    await call(client, `${issues.name}__echo`, { text: 'warm' });

    await upstream.kill();
    const down = await call(client, `${issues.name}__echo`, { text: 'x' });
    assert.equal(down.isError, true);
    assert.match(textOf(down), /The connection "Issues" is unavailable/);
    assert.deepEqual((await call(client, `${docsName}__echo`, { text: 'still' })).content, [{ type: 'text', text: 'echo: still' }]);
    assert.equal((await call(client, 'bash', { command: 'echo ok' })).isError, undefined);
    // Checked once after the failed call, it is now known to be down: refused at once, with why.
    await waitFor(
      async () =>
        (await api('GET', '/mcp/place?workspace_path=Crew/alpha')).json.connections.find((c: { name: string }) => c.name === issues.name)
          .state === 'unreachable',
      5_000,
      'the failed call to be checked',
    );
    const known = await call(client, `${issues.name}__echo`, { text: 'x' });
    assert.match(textOf(known), /errPlaceMCPUnavailable: .*"Issues".*\(unreachable\).*refused/);
    await upstream.start();
    // Test asks the server now instead of waiting for the next re-check.
    assert.equal((await api('POST', `/mcp/place/${issues.name}/test?workspace_path=Crew/alpha`)).json.connection.state, 'connected');
    assert.deepEqual((await call(client, `${issues.name}__echo`, { text: 'up' })).content, [{ type: 'text', text: 'echo: up' }]);

    upstream.setMode('hang');
    const slow = await call(client, `${issues.name}__echo`, { text: 'x' });
    assert.match(textOf(slow), /did not answer within 2 s/);
    upstream.setMode('ok');
    assert.equal((await api('POST', `/mcp/place/${issues.name}/test?workspace_path=Crew/alpha`)).json.connection.state, 'connected');
    upstream.setMode('garbage');
    const garbage = await call(client, `${issues.name}__echo`, { text: 'x' });
    assert.match(textOf(garbage), /not valid MCP/);
    upstream.setMode('ok');
    assert.equal((await api('POST', `/mcp/place/${issues.name}/test?workspace_path=Crew/alpha`)).json.connection.state, 'connected');
    assert.deepEqual((await call(client, `${docsName}__echo`, { text: 'fine' })).content, [{ type: 'text', text: 'echo: fine' }]);
    await client.close();
  });

  it("lets the agent manage its place's connections with manage_my_mcp_servers, as its caller", async () => {
    const client = await agent(alice, 'Crew/alpha');
    const list = await call(client, 'manage_my_mcp_servers', { action: 'list' });
    assert.match(textOf(list), new RegExp(`${issues.name}: Issues, Alice's login, connected \\(5 tools, checked `));

    const entry = (await api('GET', '/catalog?search=registry')).json.entries.find(
      (e: { source: string; auth: string }) => e.source === 'registry' && e.auth === 'none',
    );
    assert.ok(entry, 'the registry fixture feeds the catalog');
    const connect = await call(client, 'manage_my_mcp_servers', { action: 'connect', catalog: entry.id });
    assert.match(textOf(connect), new RegExp(`Added ${entry.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    const added = (await api('GET', '/mcp/place?workspace_path=Crew/alpha')).json.connections.find(
      (c: { catalogId: string }) => c.catalogId === entry.id,
    );
    assert.equal(added.owner, 'alice');

    const readerAgent = await agent(bob, 'Crew/alpha');
    const refused = await call(readerAgent, 'manage_my_mcp_servers', { action: 'connect', catalog: 'deepwiki' });
    assert.equal(refused.isError, true);
    assert.match(textOf(refused), /Bob cannot add connections/);
    await readerAgent.close();

    const removed = await call(client, 'manage_my_mcp_servers', { action: 'remove', name: added.name });
    assert.match(textOf(removed), /Removed/);
    await client.close();
  });

  it('serializes concurrent adds: none is lost', async () => {
    const ids = ['deepwiki', 'exa', 'linear', 'notion', 'sentry', 'stripe', 'vercel', 'intercom', 'neon', 'supabase'];
    const results = await Promise.all(ids.map((catalog) => api('POST', '/mcp/place', { workspace_path: 'Workflow/release', catalog })));
    for (const r of results) assert.equal(r.status, 201, JSON.stringify(r.json));
    const list = (await api('GET', '/mcp/place?workspace_path=Workflow/release')).json.connections;
    assert.deepEqual(list.map((c: { catalogId: string }) => c.catalogId).sort(), [...ids].sort());
    const signIn = list.find((c: { catalogId: string }) => c.catalogId === 'linear');
    assert.equal(signIn.state, 'sign-in');
  });

  it('removes a connection with its keychain items, by the adder or an editor only', async () => {
    const keychain = new KeychainSecretStore({ service: keychainService });
    const [connection] = (await api('GET', '/mcp/place?workspace_path=Crew/alpha')).json.connections.filter(
      (c: { name: string }) => c.name === issues.name,
    );
    assert.ok((await keychain.accounts('place-secret:')).length >= 2, 'the place secrets are in the keychain');
    const adder = await agent(alice, 'Crew/alpha');
    const removed = await call(adder, 'manage_my_mcp_servers', { action: 'remove', name: issues.name, owner: 'alice' });
    assert.match(textOf(removed), new RegExp(`^Removed Issues \\(${connection.name}, Alice's login\\)`));
    const storeId = (await readFile(join(fx.stateDir, 'personal-mcp', 'attachments.json'), 'utf8')).match(/"([0-9a-f]{64})"/)?.[1];
    assert.ok(storeId);
    assert.deepEqual(await keychain.accounts(`connection:${storeId}:${issues.name}:`), []);
    assert.ok(!(await adder.listTools()).tools.some((t) => t.name.startsWith(issues.name)));
    const again = await call(adder, 'manage_my_mcp_servers', { action: 'remove', name: issues.name });
    assert.equal(again.isError, true);
    await adder.close();
  });

  it('reports the registry failing, still serving the built-in catalog, and recovers on Retry', async () => {
    registry.setMode('http-500');
    const refreshed = await api('POST', '/catalog/refresh');
    assert.equal(refreshed.json.registry.state, 'failed');
    assert.match(refreshed.json.registry.error, /built-in connectors are still listed/);
    assert.ok(refreshed.json.entries.some((e: { id: string }) => e.id === 'linear'));
    registry.setMode('ok');
    const retried = await api('POST', '/catalog/refresh');
    assert.equal(retried.json.registry.state, 'ok');
    const search = await api('GET', '/catalog?search=linear');
    assert.equal(search.json.entries[0].id, 'linear');
    assert.ok(!JSON.stringify((await api('GET', '/catalog')).json).match(/"id":"(gmail|google|github)/i));
  });

  it('keeps a corrupt connections file aside and reports it, without emptying it', async () => {
    const path = join(fx.stateDir, 'personal-mcp', 'attachments.json');
    const original = await readFile(path, 'utf8');
    await writeFile(path, '{"version": 1, "stores": ');
    const list = await api('GET', '/mcp/place?workspace_path=Crew/alpha');
    assert.equal(list.status, 500);
    assert.match(list.json.error.message, /attachments\.json/);
    const aside = (await readdir(join(fx.stateDir, 'personal-mcp'))).filter((f) => f.includes('corrupt'));
    assert.equal(aside.length, 1);
    assert.equal(await readFile(join(fx.stateDir, 'personal-mcp', aside[0]!), 'utf8'), '{"version": 1, "stores": ');
    await writeFile(path, original, { mode: 0o600 });
    assert.equal((await api('GET', '/mcp/place?workspace_path=Crew/alpha')).status, 200);
  });

  it('signs a browser in with a one-time link, as an HttpOnly SameSite=Strict cookie', async () => {
    const link = await fx.host.loginUrl();
    const first = await fetch(link, { redirect: 'manual' });
    assert.equal(first.status, 303);
    assert.equal(first.headers.get('location'), '/');
    const cookie = first.headers.get('set-cookie') ?? '';
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Strict/);
    const session = cookie.split(';')[0]!;
    assert.equal((await fetch(`${controlUrl}/api/places`, { headers: { Cookie: session } })).status, 200);
    assert.equal((await fetch(link, { redirect: 'manual' })).status, 401, 'the link works once');
    assert.equal((await fetch(`${controlUrl}/api/places`)).status, 401);
    const foreign = await fetch(`${controlUrl}/api/places`, { headers: { Cookie: session, Origin: 'https://evil.example' } });
    assert.equal(foreign.status, 403);
  });

  it('never shows a secret in any answer, log or state file', async () => {
    const secrets = [API_KEY, OTHER_KEY];
    const files = await filesUnder(fx.stateDir);
    assert.ok(files.some((f) => f.endsWith('audit.log')));
    const haystacks = [...seen, fx.logs.join('\n'), ...(await Promise.all(files.map((f) => readFile(f, 'utf8'))))];
    for (const secret of secrets) {
      for (const text of haystacks) assert.ok(!text.includes(secret), `a secret leaked into: ${text.slice(0, 200)}`);
    }
    assert.equal((await stat(join(fx.stateDir, 'personal-mcp', 'attachments.json'))).mode & 0o777, 0o600);
  });
});
