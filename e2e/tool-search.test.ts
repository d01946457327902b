import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { callApi, type ApiAnswer } from '../test/support/control-api.js';
import { enterWorkspace, startHost, textOf, waitFor, type HostFixture } from '../test/support/host-fixture.js';
import { SAAS_SERVICES } from './fixtures/saas-tools.js';
import { saasCatalog, startSaasUpstream, type SaasUpstream } from './fixtures/saas-upstream.js';

// A place with the five SaaS fixture servers (150 tools), another with Linear only (30 tools), the
// real host, real HTTP and the SDK's client: what tools/list gives with and without tool search,
// the hints clients read, and search_tools/call_tool keeping every check of a direct call.

const MACHINE_TOOLS = ['read', 'write', 'edit', 'bash', 'skill'];

describe('tool search, end to end', () => {
  let fx: HostFixture;
  let workspace: Awaited<ReturnType<typeof enterWorkspace>>;
  let upstreams: SaasUpstream[];
  let api: (method: string, path: string, body?: unknown) => Promise<ApiAnswer>;
  let token: { id: string; token: string };
  const clients: Client[] = [];
  const linear = () => upstreams.find((u) => u.service.id === 'linear')!;

  before(async () => {
    workspace = await enterWorkspace('pw-tool-search-', ['Crew/small']);
    upstreams = await Promise.all(SAAS_SERVICES.map(startSaasUpstream));
    const catalogFile = join(workspace.dir, 'connectors.json');
    await writeFile(catalogFile, saasCatalog(upstreams));
    fx = await startHost({}, { WORKSPACE_ALLOW_PRIVATE_NETWORK: '1', WORKSPACE_CATALOG_FILE: catalogFile });
    const controlUrl = await fx.host.open();
    const adminToken = await fx.host.adminToken();
    api = (method, path, body) => callApi(controlUrl, adminToken, method, path, body);
    for (const u of upstreams) {
      const added = await api('POST', '/mcp/place', { catalog: `fx-${u.service.id}` });
      assert.equal(added.status, 201, added.text);
      assert.equal(added.json.connection.state, 'connected');
    }
    assert.equal((await api('POST', '/mcp/place', { workspace_path: 'Crew/small', catalog: 'fx-linear' })).status, 201);
    token = await (await fx.host.tokens()).create({ name: 'tool-search' });
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await fx.close();
    await Promise.all(upstreams.map((u) => u.close()));
    await workspace.leave();
  });

  async function agent(workspacePath?: string, bearer = token.token): Promise<Client> {
    const url = new URL(fx.url);
    if (workspacePath !== undefined) url.searchParams.set('workspace_path', workspacePath);
    const client = new Client({ name: 'agent', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${bearer}` } } }));
    clients.push(client);
    return client;
  }

  const names = (tools: Tool[]) => tools.map((t) => t.name);
  const bytes = (tools: Tool[]) => Buffer.byteLength(JSON.stringify({ tools }));
  const call = async (client: Client, name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as CallToolResult;

  it('gives a place with more tools than the threshold the machine tools plus search_tools and call_tool, under 10 KB', async () => {
    const { tools } = await (await agent()).listTools();
    assert.deepEqual(names(tools).sort(), [...MACHINE_TOOLS, 'manage_my_mcp_servers', 'search_tools', 'call_tool'].sort());
    assert.ok(bytes(tools) <= 10 * 1024, `${bytes(tools)} bytes`);
    for (const name of [...MACHINE_TOOLS, 'manage_my_mcp_servers', 'search_tools', 'call_tool']) {
      assert.equal(tools.find((t) => t.name === name)?._meta?.['anthropic/alwaysLoad'], true, name);
    }
  });

  it('says how many tools the place has and why tool search is on or off', async () => {
    const big = await api('GET', '/tool-search?workspace_path=');
    assert.equal(big.status, 200, big.text);
    assert.deepEqual(
      { ...big.json, label: undefined },
      { workspace_path: '', label: undefined, mode: 'auto', toolCount: 156, threshold: 40, on: true, by: 'automatic' },
    );
    const small = await api('GET', '/tool-search?workspace_path=Crew/small');
    assert.deepEqual([small.json.toolCount, small.json.on, small.json.by], [36, false, 'automatic']);
  });

  it('lists every tool, each connection tool with its search hint, when the place turns tool search off, and tells open sessions', async () => {
    const client = await agent();
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void (changed += 1));
    const on = await client.listTools();
    const off = await api('PUT', '/access/places/tool-search', { workspace_path: '', mode: 'off' });
    assert.equal(off.status, 200, off.text);
    assert.deepEqual([off.json.mode, off.json.on, off.json.by], ['off', false, 'place']);
    await waitFor(() => changed > 0, 5_000, 'notifications/tools/list_changed');
    const { tools } = await client.listTools();
    assert.equal(tools.length, 156);
    console.log(`tools/list: ${bytes(on.tools)} bytes with tool search, ${bytes(tools)} bytes without (${tools.length} tools)`);
    assert.ok(bytes(tools) > 5 * bytes(on.tools));
    for (const service of SAAS_SERVICES) {
      const tool = tools.find((t) => t.name.includes(`__fx-${service.id}__`));
      const hint = tool?._meta?.['anthropic/searchHint'];
      assert.equal(typeof hint, 'string', service.id);
      assert.ok((hint as string).startsWith(`${service.name}: `), `${hint}`);
      assert.ok((hint as string).length <= 100);
      assert.equal(
        tool?.title,
        `${service.name}: ${tool!.name.slice(tool!.name.lastIndexOf('__') + 2)}`,
        "the connection's name and the upstream's own",
      );
    }
    assert.equal((await api('PUT', '/access/places/tool-search', { workspace_path: '', mode: 'auto' })).json.on, true);
  });

  it("keeps the place's access lists when its tool search changes, and refuses a mode that is not on, off or auto", async () => {
    assert.equal((await api('PUT', '/access/places', { workspace_path: 'Crew/small', readers: ['bob'] })).status, 200);
    const bad = await api('PUT', '/access/places/tool-search', { workspace_path: 'Crew/small', mode: 'always' });
    assert.equal(bad.status, 400);
    assert.match(bad.json.error.message, /must be on, off or auto/);
    assert.equal((await api('PUT', '/access/places/tool-search', { workspace_path: 'Crew/small', mode: 'on' })).status, 200);
    assert.deepEqual((await api('GET', '/access')).json.places['Crew/small'], { readers: ['bob'], toolSearch: 'on' });
    assert.equal((await api('PUT', '/access/places', { workspace_path: 'Crew/small', readers: [] })).status, 200);
    assert.deepEqual((await api('GET', '/access')).json.places['Crew/small'], { toolSearch: 'on' });
    const { tools } = await (await agent('Crew/small')).listTools();
    assert.ok(names(tools).includes('search_tools'), 'the place setting turns it on below the threshold');
    assert.equal((await api('PUT', '/access/places/tool-search', { workspace_path: 'Crew/small', mode: 'auto' })).status, 200);
    assert.equal((await api('GET', '/access')).json.places['Crew/small'], undefined);
  });

  it("lets a token's own setting win over the place's", async () => {
    assert.equal((await api('PUT', `/tokens/${token.id}/tool-search`, { mode: 'off' })).json.token.toolSearch, 'off');
    assert.equal((await (await agent()).listTools()).tools.length, 156);
    assert.equal((await api('PUT', `/tokens/${token.id}/tool-search`, { mode: 'on' })).json.token.toolSearch, 'on');
    assert.ok(names((await (await agent('Crew/small')).listTools()).tools).includes('call_tool'));
    const auto = await api('PUT', `/tokens/${token.id}/tool-search`, { mode: 'auto' });
    assert.equal(auto.json.token.toolSearch, undefined);
    assert.equal((await api('PUT', '/tokens/0123456789abcdef/tool-search', { mode: 'on' })).status, 404);
  });

  it("tells the agent at initialize the place's connections by name", async () => {
    const instructions = (await agent()).getInstructions() ?? '';
    for (const service of SAAS_SERVICES) assert.ok(instructions.includes(service.name), `${service.name} in:\n${instructions}`);
    assert.ok(Buffer.byteLength(instructions) < 1024);
  });

  it("finds a tool by a task's words, with its input schema, and runs it with call_tool like a direct call, audited under its own name", async () => {
    const client = await agent();
    const found = await call(client, 'search_tools', { query: 'create a Linear issue for the login bug', limit: 3 });
    assert.equal(found.isError, undefined, textOf(found));
    const matches = (
      found.structuredContent as { tools: Array<{ name: string; server: string; tool: string; inputSchema: { required?: string[] } }> }
    ).tools;
    const createIssue = matches.find((m) => m.name.endsWith('__fx-linear__create_issue'));
    assert.ok(createIssue, JSON.stringify(matches.map((m) => m.name)));
    assert.deepEqual([createIssue.server, createIssue.tool], ['Linear', 'create_issue'], "the connection's name and the upstream's own");
    assert.deepEqual(createIssue.inputSchema.required, ['title', 'team']);
    assert.ok(textOf(found).includes(createIssue.name));

    const result = await call(client, 'call_tool', { name: createIssue.name, arguments: { title: 'Login fails', team: 'ENG' } });
    assert.equal(textOf(result), 'Linear create_issue: {"title":"Login fails","team":"ENG"}');
    assert.deepEqual(linear().calls.at(-1), { tool: 'create_issue', arguments: { title: 'Login fails', team: 'ENG' } });

    const direct = await call(client, createIssue.name, { title: 'Direct', team: 'ENG' });
    assert.equal(textOf(direct), 'Linear create_issue: {"title":"Direct","team":"ENG"}', 'the direct name still works');

    await waitFor(
      async () =>
        (await api('GET', '/activity?limit=10')).json.records.filter((r: { tool: string }) => r.tool === createIssue.name).length === 2,
      5_000,
      'both calls in the activity',
    );
    const tools = (await api('GET', '/activity?limit=10')).json.records.map((r: { tool: string }) => r.tool);
    assert.ok(!tools.includes('call_tool'), 'call_tool is recorded as the tool it ran');
  });

  it("refuses through call_tool what a direct call refuses: another place's connection, an unknown tool, itself", async () => {
    const client = await agent();
    const small = (await api('GET', '/mcp/place?workspace_path=Crew/small')).json.connections[0].name as string;
    const elsewhere = await call(client, 'call_tool', { name: `${small}__create_issue`, arguments: { title: 'x', team: 'y' } });
    assert.equal(elsewhere.isError, true);
    assert.match(textOf(elsewhere), /^errPlaceMCPUnavailable/);
    const directly = await call(client, `${small}__create_issue`, { title: 'x', team: 'y' });
    assert.equal(textOf(directly), textOf(elsewhere));

    const unknown = await call(client, 'call_tool', { name: 'no_such_tool', arguments: {} });
    assert.match(textOf(unknown), /There is no tool named "no_such_tool"/);
    const itself = await call(client, 'call_tool', { name: 'call_tool', arguments: {} });
    assert.equal(itself.isError, true);
    const badArgs = await call(client, 'call_tool', { name: 'read', arguments: 'path' });
    assert.match(textOf(badArgs), /arguments as an object/);
    const machine = await call(client, 'call_tool', { name: 'read', arguments: { path: 'connectors.json' } });
    assert.match(textOf(machine), /fx-linear/);
    assert.equal(linear().calls.filter((c) => (c.arguments as { title?: string }).title === 'x').length, 0);
  });

  it('keeps a tool turned off out of search_tools, and call_tool refuses it as a direct call does', async () => {
    const client = await agent();
    const connection = (await api('GET', '/mcp/place?workspace_path=')).json.connections.find(
      (c: { catalogId: string }) => c.catalogId === 'fx-linear',
    ).name as string;
    const name = `${connection}__create_issue`;
    const found = async () =>
      (
        (await call(client, 'search_tools', { query: 'create a Linear issue', limit: 5 })).structuredContent as {
          tools: Array<{ name: string }>;
        }
      ).tools.map((t) => t.name);
    assert.ok((await found()).includes(name));
    const off = await api('PATCH', `/mcp/place/${connection}?workspace_path=`, { tools: { create_issue: false } });
    assert.equal(off.status, 200, off.text);
    try {
      assert.ok(!(await found()).includes(name), 'a tool turned off is not found');
      const before = linear().calls.length;
      const viaSearch = await call(client, 'call_tool', { name, arguments: { title: 'off', team: 'ENG' } });
      assert.equal(viaSearch.isError, true);
      assert.match(textOf(viaSearch), /errPlaceMCPUnavailable: .*was turned off/);
      assert.equal(textOf(await call(client, name, { title: 'off', team: 'ENG' })), textOf(viaSearch));
      assert.equal(linear().calls.length, before, 'the upstream never saw the call');
    } finally {
      assert.equal((await api('PATCH', `/mcp/place/${connection}?workspace_path=`, { tools: { create_issue: true } })).status, 200);
    }
    assert.ok((await found()).includes(name), 'turned on, it is found again');
  });

  it('answers arguments that do not fit the input schema with what is wrong and the schema, through call_tool and directly, sending nothing upstream', async () => {
    const client = await agent();
    const connection = (await api('GET', '/mcp/place?workspace_path=')).json.connections.find(
      (c: { catalogId: string }) => c.catalogId === 'fx-linear',
    ).name as string;
    const name = `${connection}__create_issue`;
    const before = linear().calls.length;
    const viaSearch = await call(client, 'call_tool', { name, arguments: { title: 42, labels: 'bug' } });
    assert.equal(viaSearch.isError, true);
    const text = textOf(viaSearch);
    assert.match(text, /^The arguments for create_issue \(Linear\) do not fit its input schema, so it was not called: /);
    assert.match(text, /arguments lacks "team", which is required/);
    assert.match(text, /arguments\.title must be string/);
    assert.match(text, /arguments\.labels must be array/);
    const schema = JSON.parse(text.slice(text.lastIndexOf('\n') + 1)) as { required: string[] };
    assert.deepEqual(schema.required, ['title', 'team'], 'the schema to follow, whole');
    const direct = await call(client, name, { title: 42, labels: 'bug' });
    assert.equal(textOf(direct), text, 'a direct call is answered the same');
    assert.equal(linear().calls.length, before, 'the upstream never saw either');
    const right = await call(client, 'call_tool', { name, arguments: { title: 'Fixed', team: 'ENG' } });
    assert.equal(textOf(right), 'Linear create_issue: {"title":"Fixed","team":"ENG"}');
  });

  it("answers an upstream's bare tool name with the full names that carry it", async () => {
    const client = await agent();
    const connections = (await api('GET', '/mcp/place?workspace_path=')).json.connections as Array<{ name: string; catalogId: string }>;
    const full = (catalogId: string) => `${connections.find((c) => c.catalogId === catalogId)!.name}__create_issue`;
    for (const answer of [
      await call(client, 'call_tool', { name: 'create_issue', arguments: {} }),
      await call(client, 'create_issue', {}),
    ]) {
      assert.equal(answer.isError, true);
      const text = textOf(answer);
      assert.match(text, /^There is no tool named "create_issue"\. Tools of this place's connections go by their full names: /);
      for (const service of SAAS_SERVICES.filter((s) => s.tools.some((t) => t.name === 'create_issue'))) {
        assert.ok(text.includes(`${full(`fx-${service.id}`)} (${service.name})`), `${service.id} in: ${text}`);
      }
    }
    const none = await call(client, 'call_tool', { name: 'no_such_tool' });
    assert.equal(textOf(none), 'There is no tool named "no_such_tool". Find tools with search_tools.');
  });

  it('audits every refusal: arguments that are not an object, call_tool naming search_tools, a schema mismatch, an unknown name', async () => {
    const client = await agent();
    const connection = (await api('GET', '/mcp/place?workspace_path=')).json.connections.find(
      (c: { catalogId: string }) => c.catalogId === 'fx-linear',
    ).name as string;
    const tag = `audit-${Date.now()}`;
    const refusals: Array<[tool: string, args: Record<string, unknown>, audited: string, error: RegExp]> = [
      ['call_tool', { name: `${connection}__create_issue`, arguments: '{"title":"x"}' }, 'call_tool', /arguments as an object/],
      ['call_tool', { name: 'search_tools', arguments: { query: 'x' } }, 'call_tool', /call search_tools directly/],
      [`${connection}__create_issue`, { title: tag }, `${connection}__create_issue`, /do not fit its input schema/],
      ['call_tool', { name: `${tag}_tool` }, `${tag}_tool`, /There is no tool named/],
    ];
    for (const [tool, args] of refusals) assert.equal((await call(client, tool, args)).isError, true, tool);
    // Newest last, each call's line written before its answer went out.
    const lines = (await api('GET', `/activity?limit=${refusals.length}`)).json.records as Array<{
      tool: string;
      outcome: string;
      error?: string;
    }>;
    for (const [i, [, , audited, error]] of refusals.entries()) {
      assert.equal(lines[i]?.tool, audited, JSON.stringify(lines));
      assert.equal(lines[i]?.outcome, 'error');
      assert.match(lines[i]?.error ?? '', error);
    }
  });

  it('says so when no tool matches', async () => {
    const none = await call(await agent(), 'search_tools', { query: 'zzzz qqqq' });
    assert.match(textOf(none), /No connection tool matches "zzzz qqqq"/);
  });
});
