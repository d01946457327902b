import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { parse } from 'jsonc-parser';
import { callApi } from '../test/support/control-api.js';
import { enterWorkspace, startHost, type HostFixture } from '../test/support/host-fixture.js';
import { LOCAL_SERVER_SCRIPT } from './fixtures/local-server.js';
import { startUpstream, type UpstreamFixture } from './fixtures/upstream-server.js';

// The MCP clients already on the machine: their configurations (sample files of Claude Desktop,
// Cursor, VS Code and Claude Code in a home folder of the test's own) imported into a place through
// the page's API, and this server's entry written back into one of them.

const TINY_TOKEN = 'literal-tiny-token-7d1e';
const DOCS_KEY = 'sk-docs-4b2f9a61c0';

describe('the MCP clients on this machine', () => {
  let fx: HostFixture;
  let workspace: Awaited<ReturnType<typeof enterWorkspace>>;
  let home: string;
  let upstream: UpstreamFixture;
  let api: (method: string, path: string, body?: unknown) => Promise<{ status: number; json: any; text: string }>;
  const files: Record<string, string> = {};
  const originals = new Map<string, string>();

  before(async () => {
    workspace = await enterWorkspace('pw-clients-', ['Crew/alpha']);
    home = await mkdtemp(join(tmpdir(), 'pw-clients-home-'));
    upstream = await startUpstream({ name: 'docs', apiKey: { header: 'X-Api-Key', value: DOCS_KEY } });
    const alpha = join(workspace.dir, 'Crew', 'alpha');
    files['claude-desktop'] = join(home, '.config', 'Claude', 'claude_desktop_config.json');
    files.cursor = join(home, '.cursor', 'mcp.json');
    files.vscode = join(home, '.config', 'Code', 'User', 'mcp.json');
    files.vscodeSettings = join(home, '.config', 'Code', 'User', 'settings.json');
    files['claude-code'] = join(home, '.claude.json');
    files.project = join(alpha, '.mcp.json');
    const contents: Record<string, string> = {
      'claude-desktop': JSON.stringify(
        {
          mcpServers: { tiny: { command: 'node', args: [LOCAL_SERVER_SCRIPT], env: { TINY_TOKEN } }, odd: { note: 'no command' } },
          globalShortcut: '',
        },
        null,
        2,
      ),
      cursor: JSON.stringify(
        { mcpServers: { docs: { url: upstream.url, headers: { 'X-Api-Key': DOCS_KEY, 'X-Trace': 'on' } } } },
        null,
        '\t',
      ),
      vscode: `{\n  // servers of this profile\n  "servers": {\n    "fetch": { "type": "stdio", "command": "uvx", "args": ["mcp-server-fetch"] },\n    "keyed": { "type": "sse", "url": "https://keyed.example.com/sse", "headers": { "Authorization": "Bearer \${input:key}" } },\n  },\n  "inputs": [],\n}\n`,
      // Where VS Code kept its servers before mcp.json, with an input it asks for.
      vscodeSettings: `{\n  "editor.fontSize": 14,\n  "mcp": {\n    "inputs": [{ "type": "promptString", "id": "gh", "description": "GitHub token", "password": true }],\n    "servers": {\n      "old-style": { "command": "node", "args": ["\${workspaceFolder}/server.js"] },\n      "gh": { "command": "gh-mcp", "env": { "GH_TOKEN": "\${input:gh}" } },\n    },\n  },\n}\n`,
      'claude-code': JSON.stringify(
        {
          numStartups: 3,
          mcpServers: { 'user-one': { type: 'http', url: 'https://user-one.example.com/mcp' } },
          projects: { [alpha]: { mcpServers: { 'alpha-local': { type: 'stdio', command: 'alpha-mcp', args: [] } } } },
        },
        null,
        2,
      ),
      project: JSON.stringify({ mcpServers: { proj: { command: 'npx', args: ['-y', '@acme/proj-mcp'] } } }),
    };
    for (const [key, path] of Object.entries(files)) {
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, contents[key]!);
      originals.set(path, contents[key]!);
    }
    fx = await startHost(
      {},
      { HOME: home, XDG_CACHE_HOME: join(home, '.cache'), WORKSPACE_ALLOW_PRIVATE_NETWORK: '1', WORKSPACE_UPSTREAM_TIMEOUT: '10' },
    );
    const controlUrl = await fx.host.open();
    const adminToken = await fx.host.adminToken();
    api = (method, path, body) => callApi(controlUrl, adminToken, method, path, body);
  });

  after(async () => {
    await fx.close();
    await upstream.close();
    await workspace.leave();
    await rm(home, { recursive: true, force: true });
  });

  it("shows what each client's servers would become in the place, with no secret value", async () => {
    const plan = await api('GET', '/import?workspace_path=Crew/alpha');
    assert.equal(plan.status, 200, plan.text);
    const byName = Object.fromEntries(plan.json.items.map((item: any) => [item.name, item]));
    assert.deepEqual(Object.keys(byName).sort(), [
      'alpha-local',
      'docs',
      'fetch',
      'gh',
      'keyed',
      'odd',
      'old-style',
      'proj',
      'tiny',
      'user-one',
    ]);
    assert.deepEqual([byName.tiny.clientName, byName.tiny.kind, byName.tiny.scope], ['Claude Desktop', 'local', 'user']);
    assert.deepEqual(byName.tiny.secrets, [{ name: 'TINY_TOKEN', from: 'variable TINY_TOKEN' }]);
    assert.equal(byName.tiny.adds.env.TINY_TOKEN, 'TINY_TOKEN');
    assert.deepEqual([byName.docs.clientName, byName.docs.kind], ['Cursor', 'remote']);
    assert.deepEqual(byName.docs.adds.header, { name: 'X-Api-Key', secret: 'DOCS_X_API_KEY' });
    assert.match(byName.docs.notes[0], /X-Trace is not sent/);
    assert.deepEqual([byName.fetch.clientName, byName.fetch.adds.commandLine], ['VS Code', 'uvx mcp-server-fetch']);
    assert.match(
      byName.keyed.problem,
      /Authorization header takes its value from what VS Code asks for when it starts the server \(\$\{input:key\}\)/,
    );
    assert.deepEqual([byName.gh.clientName, byName.gh.file], ['VS Code', files.vscodeSettings]);
    assert.match(
      byName.gh.problem,
      /variable GH_TOKEN takes its value from what VS Code asks for when it starts the server \(\$\{input:gh\}: “GitHub token”\)/,
    );
    assert.match(byName['old-style'].problem, /argument 1 takes its value from a variable of VS Code \(\$\{workspaceFolder\}\)/);
    assert.match(byName.odd.problem, /neither a command nor a URL/);
    assert.deepEqual([byName['alpha-local'].clientName, byName['alpha-local'].scope], ['Claude Code', 'project']);
    assert.deepEqual([byName.proj.clientName, byName.proj.scope, byName.proj.file], ['Claude Code', 'project', files.project]);
    // npx installs it: under strict it may reach the registry npm installs from here; node installs nothing.
    const registry = new URL(
      (await promisify(execFile)('npm', ['config', 'get', 'registry'], { env: { ...process.env, HOME: home } })).stdout.trim(),
    ).hostname;
    assert.deepEqual(byName.proj.adds.hosts, [registry]);
    assert.deepEqual(byName.tiny.adds.hosts, []);
    assert.deepEqual([byName['user-one'].kind, byName['user-one'].adds.url], ['remote', 'https://user-one.example.com/mcp']);
    for (const secret of [TINY_TOKEN, DOCS_KEY]) assert.ok(!plan.text.includes(secret));
  });

  it('adds what the person picks, its literal keys moved into place secrets, and writes nothing back', async () => {
    const plan = (await api('GET', '/import?workspace_path=Crew/alpha')).json;
    const ids = plan.items.filter((item: any) => ['tiny', 'docs', 'keyed'].includes(item.name)).map((item: any) => item.id);
    const run = await api('POST', '/import', { workspace_path: 'Crew/alpha', items: ids });
    assert.equal(run.status, 200, run.text);
    const results = Object.fromEntries(run.json.results.map((r: any) => [r.name, r]));
    assert.equal(results.tiny.added.state, 'connected', results.tiny.added.reason);
    assert.equal(results.tiny.added.transport, 'stdio');
    assert.equal(results.docs.added.state, 'connected', results.docs.added.reason);
    assert.equal(results.docs.added.secretName, 'DOCS_X_API_KEY');
    assert.match(results.keyed.error, /input:key/);
    assert.deepEqual((await api('GET', '/secrets?workspace_path=Crew/alpha')).json.names, ['DOCS_X_API_KEY', 'TINY_TOKEN']);
    for (const secret of [TINY_TOKEN, DOCS_KEY]) assert.ok(!run.text.includes(secret));
    for (const [path, text] of originals) assert.equal(await readFile(path, 'utf8'), text, `${path} was changed`);
  });

  it("writes this server into a client's configuration, keeping the rest, and the client gets in with what was written", async () => {
    const before = await readFile(files.cursor!, 'utf8');
    const answer = await api('POST', '/client-configs', { workspace_path: 'Crew/alpha', client: 'cursor', auth: 'token' });
    assert.equal(answer.status, 201, answer.text);
    const { written, token } = answer.json;
    assert.equal(written.file, files.cursor);
    assert.equal(written.entry.headers.Authorization, 'Bearer <token>');
    assert.ok(written.backup.startsWith(`${files.cursor}.bak-`));
    assert.equal(await readFile(written.backup, 'utf8'), before);
    assert.ok(
      (await api('GET', '/tokens')).json.tokens.some(
        (t: { id: string; workspacePath?: string }) => t.id === token.id && t.workspacePath === 'Crew/alpha',
      ),
    );
    const after = parse(await readFile(files.cursor!, 'utf8'));
    assert.deepEqual(after.mcpServers.docs, JSON.parse(before).mcpServers.docs, 'the other servers stay');
    const entry = after.mcpServers['persona-workspace'];
    const client = new Client({ name: 'cursor-stand-in', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(entry.url), { requestInit: { headers: entry.headers } }));
    const { tools } = await client.listTools();
    assert.ok(tools.some((t) => t.name === 'bash'));
    await client.close();
    // A second time: the entry is there, and is replaced only when asked.
    const again = await api('POST', '/client-configs', { workspace_path: 'Crew/alpha', client: 'cursor', auth: 'oauth' });
    assert.equal(again.status, 409);
    assert.match(again.json.error.message, /already has a server named "persona-workspace"/);
    const oauth = await api('POST', '/client-configs', { workspace_path: 'Crew/alpha', client: 'vscode', auth: 'oauth' });
    assert.equal(oauth.status, 201, oauth.text);
    assert.match(oauth.json.written.entry.url, /\/mcp\?workspace_path=Crew%2Falpha$/);
    assert.match(await readFile(files.vscode!, 'utf8'), /^\{\n {2}\/\/ servers of this profile\n/);
    assert.equal((await readdir(dirname(files.vscode!))).filter((f) => f.includes('.bak-')).length, 1);
  });
});
