import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ToolListChangedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { callApi } from '../test/support/control-api.js';
import { startHost, textOf, waitFor, type HostFixture } from '../test/support/host-fixture.js';
import { startUpstream, type UpstreamFixture } from './fixtures/upstream-server.js';

// Connections whose servers misbehave (the fault-injecting upstream fixture), next to a healthy
// one, through the real host: what every surface says, what agents get, and that one bad server
// never slows the others.

const TIMEOUT_S = 2;

interface View {
  name: string;
  secretName?: string;
  displayName: string;
  auth: string;
  state: string;
  reason?: string;
  tools?: number;
  checkedAt?: string;
}

describe('connection health, end to end', () => {
  let fx: HostFixture;
  let healthy: UpstreamFixture;
  let flaky: UpstreamFixture;
  let api: (method: string, path: string, body?: unknown) => Promise<{ status: number; json: any }>;
  let good: View;
  let bad: View;
  let agent: Client;
  let changes = 0;

  before(async () => {
    healthy = await startUpstream({ name: 'healthy' });
    flaky = await startUpstream({ name: 'flaky' });
    fx = await startHost({ auth: false }, { WORKSPACE_ALLOW_PRIVATE_NETWORK: '1', WORKSPACE_UPSTREAM_TIMEOUT: String(TIMEOUT_S) });
    const controlUrl = await fx.host.open();
    const token = await fx.host.adminToken();
    api = (method, path, body) => callApi(controlUrl, token, method, path, body);
    good = (await api('POST', '/mcp/place', { workspace_path: '', server: { url: healthy.url, name: 'Healthy' } })).json.connection;
    bad = (await api('POST', '/mcp/place', { workspace_path: '', server: { url: flaky.url, name: 'Flaky' } })).json.connection;
    agent = (await fx.connect()).client;
    agent.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changes += 1;
    });
  });

  after(async () => {
    await fx.close();
    await Promise.all([healthy.close(), flaky.close()]);
  });

  const view = async (name: string): Promise<View> =>
    (await api('GET', '/mcp/place?workspace_path=')).json.connections.find((c: View) => c.name === name);
  const test = async (name: string): Promise<View> => (await api('POST', `/mcp/place/${name}/test?workspace_path=`)).json.connection;
  const toolNames = async () => (await agent.listTools()).tools.map((t) => t.name);
  const call = async (name: string, args: Record<string, unknown> = {}) =>
    (await agent.callTool({ name, arguments: args })) as CallToolResult;

  async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
    const start = performance.now();
    const result = await fn();
    return [result, performance.now() - start];
  }

  it('says connected only after the server answered, with its tool count and the time of the check', async () => {
    assert.equal(good.state, 'connected');
    assert.equal(good.tools, 5);
    assert.ok(good.checkedAt && Date.parse(good.checkedAt) <= Date.now());
    const tools = await toolNames();
    assert.ok(tools.includes(`${good.name}__echo`) && tools.includes(`${bad.name}__echo`), tools.join(', '));
  });

  it("while one server hangs: the other's calls keep their latency, tools/list answers within 1 s, the hanging one's tools go away and come back", async () => {
    const baseline: number[] = [];
    for (let i = 0; i < 10; i += 1) baseline.push((await timed(() => call(`${good.name}__echo`, { text: 'a' })))[1]);

    flaky.setMode('hang');
    const before = changes;
    const hanging = call(`${bad.name}__echo`, { text: 'x' });
    const during: number[] = [];
    let slowestList = 0;
    const until = Date.now() + TIMEOUT_S * 1000 + 500;
    while (Date.now() < until) {
      const [result, ms] = await timed(() => call(`${good.name}__echo`, { text: 'b' }));
      assert.deepEqual(result.content, [{ type: 'text', text: 'echo: b' }]);
      during.push(ms);
      slowestList = Math.max(slowestList, (await timed(() => agent.listTools()))[1]);
    }
    assert.match(textOf(await hanging), /did not answer within 2 s \(timeout\)/);
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    // Generous bounds for a shared test machine; bench/ measures the ratio itself.
    assert.ok(
      median(during) < Math.max(50, median(baseline) * 3),
      `healthy p50 ${median(baseline).toFixed(1)} ms alone, ${median(during).toFixed(1)} ms while the other hangs`,
    );
    assert.ok(slowestList < 1000, `the place's tools/list took ${slowestList.toFixed(0)} ms`);

    // The failed call started one check; once it failed too, the tools are gone and sessions are told.
    await waitFor(async () => (await view(bad.name)).state === 'unreachable', 10_000, 'the hanging server to be found unreachable');
    await waitFor(() => changes > before, 5_000, 'notifications/tools/list_changed');
    assert.ok(!(await toolNames()).some((t) => t.startsWith(bad.name)));
    const stateNow = await view(bad.name);
    assert.match(stateNow.reason ?? '', /timeout/);

    // Calls to it are refused at once with the reason, without asking the server each time.
    const requestsBefore = flaky.requests.length;
    const [refused, refusedMs] = await timed(() => call(`${bad.name}__echo`, { text: 'x' }));
    assert.ok(refusedMs < 500, `refused in ${refusedMs.toFixed(0)} ms`);
    assert.match(textOf(refused), /errPlaceMCPUnavailable: .*"Flaky".*\(unreachable\).*timeout/);
    for (let i = 0; i < 5; i += 1) await call(`${bad.name}__echo`, { text: 'x' });
    assert.ok(
      flaky.requests.length - requestsBefore <= 2,
      `${flaky.requests.length - requestsBefore} requests reached the failing server for 6 calls`,
    );

    // Back up: a re-check with backoff finds it, and sessions hear that its tools are back.
    const beforeBack = changes;
    flaky.setMode('ok');
    await waitFor(async () => (await toolNames()).includes(`${bad.name}__echo`), 20_000, 'the tools to come back on a re-check');
    await waitFor(() => changes > beforeBack, 5_000, 'notifications/tools/list_changed when they came back');
    assert.equal((await view(bad.name)).state, 'connected');
  });

  it("while one server is slow (but within the timeout): its calls still work, the other's keep their latency, it stays connected", async () => {
    const DELAY_MS = 800;
    flaky.setDelay(DELAY_MS);
    flaky.setMode('slow');
    try {
      const [slowResult, slowMs] = await timed(async () => {
        const slowCall = timed(() => call(`${bad.name}__echo`, { text: 'late' }));
        // Meanwhile the healthy connection answers at once, and so does the place's tools/list.
        const [fast, fastMs] = await timed(() => call(`${good.name}__echo`, { text: 'now' }));
        assert.deepEqual(fast.content, [{ type: 'text', text: 'echo: now' }]);
        assert.ok(fastMs < DELAY_MS / 2, `the healthy call took ${fastMs.toFixed(0)} ms while the other was slow`);
        const [, listMs] = await timed(() => agent.listTools());
        assert.ok(listMs < DELAY_MS / 2, `the place's tools/list took ${listMs.toFixed(0)} ms`);
        return (await slowCall)[0];
      });
      assert.deepEqual(slowResult.content, [{ type: 'text', text: 'echo: late' }]);
      assert.ok(slowMs >= DELAY_MS, `the slow server's call took ${slowMs.toFixed(0)} ms`);
      const shown = await view(bad.name);
      assert.equal(shown.state, 'connected', shown.reason);
    } finally {
      flaky.setMode('ok');
    }
  });

  it('tells sessions when a server adds or removes a tool', async () => {
    const before = changes;
    flaky.addTool('fresh_tool');
    await waitFor(async () => (await toolNames()).includes(`${bad.name}__fresh_tool`), 5_000, 'the added tool');
    assert.ok(changes > before);
    const beforeRemoval = changes;
    flaky.removeTool('fresh_tool');
    await waitFor(async () => !(await toolNames()).includes(`${bad.name}__fresh_tool`), 5_000, 'the removed tool to go');
    assert.ok(changes > beforeRemoval);
    assert.equal((await view(bad.name)).tools, 5);
  });

  it('names each kind of failure on Test: not an MCP server, unreachable (server error, crash, refused)', async () => {
    flaky.setMode('garbage');
    const garbage = await test(bad.name);
    assert.equal(garbage.state, 'not-mcp');
    assert.match(garbage.reason ?? '', /not valid MCP/);
    flaky.setMode('http-500');
    const error = await test(bad.name);
    assert.equal(error.state, 'unreachable');
    assert.match(error.reason ?? '', /HTTP 500/);
    flaky.setMode('ok');
    assert.equal((await test(bad.name)).state, 'connected');

    flaky.setMode('crash');
    const crashed = await call(`${bad.name}__echo`, { text: 'x' });
    assert.equal(crashed.isError, true);
    assert.match(textOf(crashed), /unavailable/);
    assert.deepEqual((await call(`${good.name}__echo`, { text: 'still' })).content, [{ type: 'text', text: 'echo: still' }]);
    flaky.setMode('ok');
    assert.equal((await test(bad.name)).state, 'connected');

    await flaky.kill();
    const down = await test(bad.name);
    assert.equal(down.state, 'unreachable');
    assert.match(down.reason ?? '', /refused/);
    await flaky.start();
    assert.equal((await test(bad.name)).state, 'connected');
  });

  it('moves a server that starts answering 401 with a challenge to sign-in; Connect then signs in to it', async () => {
    flaky.setMode('sign-in');
    const wants = await test(bad.name);
    assert.equal(wants.state, 'sign-in');
    assert.match(wants.reason ?? '', /asks for a sign-in/);
    const agentSees = await call(`${bad.name}__echo`, { text: 'x' });
    assert.match(textOf(agentSees), /errPlaceMCPUnavailable: .*\(sign-in\)/);
    const manage = await call('manage_my_mcp_servers', { action: 'list' });
    assert.match(textOf(manage), new RegExp(`${bad.name}: Flaky, .*sign-in: .*asks for a sign-in`));

    // Connect switches it to OAuth and starts the sign-in (this fixture has no authorization server: the start says so).
    const connect = await api('POST', `/mcp/place/${bad.name}/connect?workspace_path=`, { open_browser: false });
    assert.notEqual(connect.status, 200, 'no sign-in can start without an authorization server');
    const after = await view(bad.name);
    assert.equal(after.auth, 'oauth');
    assert.equal(after.state, 'sign-in');
    flaky.setMode('ok');
  });

  it('finds a server that answers initialize without a token but wants one for tools/list: sign-in, not "no sign-in"', async () => {
    const picky = await startUpstream({ name: 'picky' });
    picky.setMode('sign-in-after-initialize');
    try {
      const added = await api('POST', '/mcp/place', { workspace_path: '', server: { url: picky.url, name: 'Picky' } });
      assert.equal(added.status, 201);
      assert.equal(added.json.connection.state, 'sign-in', JSON.stringify(added.json));
      assert.match(added.json.connection.reason, /asks for a sign-in/);
      await api('DELETE', `/mcp/place/${added.json.connection.name}?workspace_path=`);
    } finally {
      await picky.close();
    }
  });

  it('fixes a connection in place: a refused key, then another secret; a new URL; tools turned off and on; its details', async () => {
    const keyed = await startUpstream({ name: 'keyed', apiKey: { header: 'X-Api-Key', value: 'sk-right-77' } });
    try {
      assert.equal((await api('PUT', '/secrets/WRONG_KEY?workspace_path=', { value: 'sk-wrong' })).status, 204);
      assert.equal((await api('PUT', '/secrets/RIGHT_KEY?workspace_path=', { value: 'sk-right-77' })).status, 204);
      const added = await api('POST', '/mcp/place', {
        workspace_path: '',
        server: { url: keyed.url, name: 'Keyed', header: { name: 'X-Api-Key', secret: 'WRONG_KEY' } },
      });
      assert.equal(added.status, 201);
      const name = added.json.connection.name as string;
      assert.equal(added.json.connection.state, 'key-refused');
      assert.match(added.json.connection.reason, /refused the API key \(HTTP 401\)/);
      // A secret of that name exists: it is not replaced unless the person agreed to.
      const kept = await api('PUT', '/secrets/WRONG_KEY?workspace_path=', { value: 'sk-right-77' });
      assert.equal(kept.status, 409);
      assert.match(kept.json.error.message, /already has a secret named "WRONG_KEY"; it was not changed\. Keyed sends it\./);
      assert.equal((await test(name)).state, 'key-refused', 'the value was not changed');

      const fixed = await api('PATCH', `/mcp/place/${name}?workspace_path=`, { header: { name: 'X-Api-Key', secret: 'RIGHT_KEY' } });
      assert.equal(fixed.status, 200, JSON.stringify(fixed.json));
      assert.equal(fixed.json.connection.state, 'connected');
      assert.equal(fixed.json.connection.secretName, 'RIGHT_KEY');
      assert.equal(fixed.json.connection.name, name, 'the same connection, not a new one');

      const details = (await api('GET', `/mcp/place/${name}?workspace_path=`)).json.connection;
      assert.deepEqual(details.toolList.map((t: { name: string; enabled: boolean }) => `${t.name}:${t.enabled}`).sort(), [
        'add:true',
        'echo:true',
        'fail:true',
        'mixed_content:true',
        'slow:true',
      ]);
      assert.match(details.toolList.find((t: { name: string }) => t.name === 'echo').description, /Echo the text back/);
      assert.ok(
        details.errors.some((e: { message: string }) => /refused the API key/.test(e.message)),
        'the refused key is in its log',
      );

      await waitFor(async () => (await toolNames()).includes(`${name}__echo`), 5_000, 'its tools');
      const off = await api('PATCH', `/mcp/place/${name}?workspace_path=`, { tools: { echo: false } });
      assert.deepEqual(off.json.connection.disabledTools, ['echo']);
      assert.ok(!(await toolNames()).includes(`${name}__echo`), 'a tool turned off is hidden');
      assert.ok((await toolNames()).includes(`${name}__add`));
      const refused = await call(`${name}__echo`, { text: 'x' });
      assert.match(textOf(refused), /errPlaceMCPUnavailable: .*was turned off/);
      assert.equal(
        (await api('GET', `/mcp/place/${name}?workspace_path=`)).json.connection.toolList.find((t: { name: string }) => t.name === 'echo')
          .enabled,
        false,
      );
      await api('PATCH', `/mcp/place/${name}?workspace_path=`, { tools: { echo: true } });
      assert.deepEqual((await call(`${name}__echo`, { text: 'on' })).content, [{ type: 'text', text: 'echo: on' }]);

      const moved = await api('PATCH', `/mcp/place/${name}?workspace_path=`, {
        url: keyed.url.replace('/mcp', '/elsewhere'),
        name: 'Keyed elsewhere',
      });
      assert.equal(moved.json.connection.state, 'not-mcp');
      assert.equal(moved.json.connection.displayName, 'Keyed elsewhere');
      const back = await api('PATCH', `/mcp/place/${name}?workspace_path=`, { url: keyed.url });
      assert.equal(back.json.connection.state, 'connected');
      const bad = await api('PATCH', `/mcp/place/${name}?workspace_path=`, { header: { name: 'X-Api-Key', secret: 'NO_SUCH' } });
      assert.equal(bad.status, 404);
      assert.equal((await view(name)).secretName, 'RIGHT_KEY', 'a bad edit changes nothing');
      await api('DELETE', `/mcp/place/${name}?workspace_path=`);
    } finally {
      await keyed.close();
    }
  });

  it('passes a tool name its server lists twice on once: to agents, in the count and in the details', async () => {
    const twice = await startUpstream({ name: 'twice' });
    twice.setMode('duplicate-tools');
    try {
      const added = await api('POST', '/mcp/place', { workspace_path: '', server: { url: twice.url, name: 'Twice' } });
      assert.equal(added.status, 201, JSON.stringify(added.json));
      const name = added.json.connection.name as string;
      assert.equal(added.json.connection.state, 'connected');
      assert.equal(added.json.connection.tools, 2, 'echo and add');
      await waitFor(async () => (await toolNames()).includes(`${name}__add`), 5_000, 'its tools');
      const listed = (await agent.listTools()).tools.filter((t) => t.name.startsWith(`${name}__`));
      assert.deepEqual(listed.map((t) => t.name).sort(), [`${name}__add`, `${name}__echo`]);
      assert.match(
        listed.find((t) => t.name === `${name}__echo`)?.description ?? '',
        /Echo the text back \(twice\)/,
        'the first of the two is kept',
      );
      const details = (await api('GET', `/mcp/place/${name}?workspace_path=`)).json.connection;
      assert.deepEqual(
        details.toolList.map((t: { name: string }) => t.name),
        ['echo', 'add'],
      );
      assert.deepEqual((await call(`${name}__echo`, { text: 'once' })).content, [{ type: 'text', text: 'echo: once' }]);
      await api('DELETE', `/mcp/place/${name}?workspace_path=`);
    } finally {
      await twice.close();
    }
  });

  it('lets the agent test a connection with manage_my_mcp_servers', async () => {
    const tested = await call('manage_my_mcp_servers', { action: 'test', name: good.name });
    assert.match(textOf(tested), new RegExp(`${good.name}: Healthy, .*connected \\(5 tools, checked `));
  });
});
