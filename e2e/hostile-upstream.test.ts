import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { callApi } from '../test/support/control-api.js';
import { enterWorkspace, startHost, textOf, waitFor, type HostFixture } from '../test/support/host-fixture.js';
import { HOSTILE_TOOLS, OVERSIZED_TOOLS, startHostileUpstream, type HostileUpstream } from './fixtures/hostile-upstream.js';

// A hostile upstream (real MCP server on loopback) lists names, titles and descriptions with escape
// sequences, CR/LF, bidi overrides, a 5,000-character name and a 200,000-character description; another
// lists 1.6 MB of tools. What agents, the page's API and the CLI get must be inert and bounded.

const CLI = fileURLToPath(new URL('../dist/main/cli.js', import.meta.url));
/** What a terminal or model would act on: C0 controls (but LF and tab in descriptions), DEL, C1, bidi controls. */
const ACTED_ON = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;
const ACTED_ON_IN_LINE = /[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;
const CUT_NOTE = /\n\[Cut: the server's description is 200,000 characters long; the first 8,000 are shown\.\]$/;

interface Listed {
  name: string;
  description?: string;
}

describe("a hostile upstream's text", () => {
  let workspace: Awaited<ReturnType<typeof enterWorkspace>>;
  let fx: HostFixture;
  let hostile: HostileUpstream;
  let oversized: HostileUpstream;
  let api: (method: string, path: string, body?: unknown) => Promise<{ status: number; json: any; text: string }>;
  let agent: Client;
  let name: string;
  let bigName: string;

  before(async () => {
    workspace = await enterWorkspace('pw-hostile-');
    hostile = await startHostileUpstream(HOSTILE_TOOLS);
    oversized = await startHostileUpstream(OVERSIZED_TOOLS);
    fx = await startHost({ auth: false }, { WORKSPACE_ALLOW_PRIVATE_NETWORK: '1' });
    const controlUrl = await fx.host.open();
    const token = await fx.host.adminToken();
    api = (method, path, body) => callApi(controlUrl, token, method, path, body);
    const added = await api('POST', '/mcp/place', {
      workspace_path: '',
      server: { url: hostile.url, name: 'Hostile\x1b]0;owner typed this\x07' },
    });
    assert.equal(added.status, 201, added.text);
    name = added.json.connection.name;
    bigName = (await api('POST', '/mcp/place', { workspace_path: '', server: { url: oversized.url, name: 'Oversized' } })).json.connection
      .name;
    agent = (await fx.connect()).client;
  });

  after(async () => {
    await fx.close();
    await Promise.all([hostile.close(), oversized.close()]);
    await workspace.leave();
  });

  function assertInert(tools: readonly Listed[]): void {
    assert.equal(tools.length, HOSTILE_TOOLS.length, JSON.stringify(tools.map((t) => t.name)));
    for (const tool of tools) {
      assert.doesNotMatch(tool.name, ACTED_ON_IN_LINE, JSON.stringify(tool.name));
      assert.ok(tool.name.length <= 128, `${tool.name.length} characters`);
      assert.doesNotMatch(tool.description ?? '', ACTED_ON, JSON.stringify(tool.description?.slice(0, 200)));
      assert.ok((tool.description ?? '').length < 8_200, `${tool.description?.length} characters`);
    }
    const descriptions = tools.map((t) => t.description ?? '');
    assert.ok(
      descriptions.some((d) => CUT_NOTE.test(d)),
      'the long description says it was cut',
    );
    assert.ok(descriptions.includes('Clears the screen.\nSecond line\tand a tab.'), 'lines and tabs kept, escapes gone whole');
  }

  it('reaches agents inert and capped, and a tool listed under a cleaned name is called upstream by its own', async () => {
    // The gateway's names may shorten the connection's part: its tools are known by their titles.
    const listed = (await agent.listTools()).tools.filter((t) => t.title?.startsWith('Hostile: '));
    assertInert(listed.map((t) => ({ name: t.name, ...(t.description !== undefined && { description: t.description }) })));
    for (const tool of listed) {
      assert.doesNotMatch(JSON.stringify(tool), /\\u00(?:1b|0d|9b)|\\r|\u202e/i, 'nothing inside the tool (title, schema) acts either');
      assert.match(tool.name, /^[A-Za-z0-9_-]{1,64}$/);
    }
    assert.ok(Buffer.byteLength(JSON.stringify(listed)) < 20_000, `${Buffer.byteLength(JSON.stringify(listed))} bytes`);
    const red = listed.find((t) => t.description?.startsWith('Clears the screen.'));
    assert.equal(red?.title, 'Hostile: Red title second line (ansi)');
    const result = (await agent.callTool({ name: red!.name, arguments: {} })) as CallToolResult;
    assert.equal(textOf(result), `called ${JSON.stringify('ansi\x1b[31m')}`);
    assert.deepEqual(hostile.called, ['ansi\x1b[31m']);
  });

  it("reaches the page's API inert and capped", async () => {
    const details = await api('GET', `/mcp/place/${name}?workspace_path=`);
    assert.equal(details.json.connection.state, 'connected');
    const toolList = details.json.connection.toolList as Listed[];
    assertInert(toolList);
    assert.ok(
      toolList.some((t) => t.name === 'ansi' && t.description?.startsWith('Clears the screen.')),
      JSON.stringify(toolList.map((t) => t.name)),
    );
    assert.ok(toolList.some((t) => t.name === 'line break'));
  });

  it('says why a connection whose tools take more than a place can carry offers none', async () => {
    // It is checked again with backoff, like any failing server: read it between checks.
    let view: { state: string; reason?: string } = { state: 'checking' };
    await waitFor(
      async () => (view = (await api('GET', `/mcp/place/${bigName}?workspace_path=`)).json.connection).state !== 'checking',
      10_000,
      'a state between checks',
    );
    assert.equal(view.state, 'too-large');
    assert.match(view.reason ?? '', /its tools take more than 512 KB \(\d+ tools listed by then\)/);
    const listed: Tool[] = (await agent.listTools()).tools;
    assert.ok(!listed.some((t) => t.title?.startsWith('Oversized: ')), 'none of its tools reaches agents');
  });

  it('reaches the terminal through `connections show` and `connections list` as text only', async () => {
    const env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      WORKSPACE_STATE_DIR: fx.stateDir,
      WORKSPACE_CWD: workspace.dir,
      WORKSPACE_SECRET_STORE: 'file',
      WORKSPACE_REGISTRY_URL: '',
      WORKSPACE_ALLOW_PRIVATE_NETWORK: '1',
      XDG_CONFIG_HOME: join(fx.stateDir, 'config'),
    };
    const run = async (...args: string[]) =>
      (await promisify(execFile)(process.execPath, [CLI, 'connections', ...args], { env, maxBuffer: 1 << 24 })).stdout;
    for (const out of [await run('show', name), await run('show', name, '--json'), await run('list')]) {
      assert.doesNotMatch(out, /[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/, JSON.stringify(out.slice(0, 500)));
    }
    const shown = await run('show', name);
    assert.match(shown, /^Hostile \(/, 'the name the owner gave, inert too');
    assert.match(shown, /on {3}ansi {2}Clears the screen\. Second line and a tab\./);
    assert.ok(shown.length < 5_000, `${shown.length} characters`);
  });
});
