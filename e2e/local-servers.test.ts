import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ToolListChangedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { callApi } from '../test/support/control-api.js';
import { enterWorkspace, startHost, textOf, waitFor, type HostFixture } from '../test/support/host-fixture.js';
import { KEYTAR_SKIP } from '../test/support/native-modules.js';
import { filesUnder } from '../test/support/secrets.js';
import { LOCAL_SERVER_SCRIPT, npxArgs, packLocalServer } from './fixtures/local-server.js';

// Local MCP servers as connections: a real stdio server (a package packed in the test and run
// with npx from its tarball, offline), added through the page's API, used by an agent of its
// place over /mcp, under the machine, place and strict policies, with its secret from the real
// keychain in its environment and nowhere on disk.

const SECRET = 'tiny-token-5e1f0c2a9b7d4e63';

describe('local MCP servers', { skip: KEYTAR_SKIP }, () => {
  let fx: HostFixture;
  let workspace: Awaited<ReturnType<typeof enterWorkspace>>;
  let cacheHome: string;
  let api: (method: string, path: string, body?: unknown) => Promise<{ status: number; json: any; text: string }>;
  let agent: Client;
  let tarball: string;
  let name: string;
  let web: Server;
  let webPort: number;
  let sealedDir: string;
  const seen: string[] = [];

  const tool = (t: string) => `${name}__${t}`;
  const call = (t: string, args: Record<string, unknown> = {}) =>
    agent.callTool({ name: tool(t), arguments: args }) as Promise<CallToolResult>;
  const setPolicy = async (policy: string) =>
    assert.equal((await api('PUT', '/places/policy', { workspace_path: 'Crew/alpha', policy })).status, 200);
  const details = async () => (await api('GET', `/mcp/place/${name}?workspace_path=Crew/alpha`)).json.connection;

  before(async () => {
    workspace = await enterWorkspace('pw-local-', ['Crew/alpha', 'Crew/beta']);
    await writeFile(join(workspace.dir, 'Crew', 'beta', 'notes.txt'), 'beta notes\n');
    sealedDir = join(workspace.dir, 'Crew', 'alpha', 'keys');
    await mkdir(sealedDir);
    await writeFile(join(sealedDir, 'id_key'), 'a private key\n');
    // In the place's folder, so that a strict sandbox (which sees only the place) can install it.
    tarball = await packLocalServer(join(workspace.dir, 'Crew', 'alpha'));
    cacheHome = await mkdtemp(join(tmpdir(), 'pw-local-cache-'));
    web = createServer((_req, res) => res.end('hello from the web'));
    web.listen(0, '127.0.0.1');
    await once(web, 'listening');
    webPort = (web.address() as { port: number }).port;
    // The person's own catalog offers the same server as a local entry that declares its variable.
    const catalogFile = join(cacheHome, 'connectors.json');
    const entry = {
      id: 'tiny-cat',
      name: 'Tiny from the catalog',
      description: 'The tiny server, offered by the catalog.',
      transport: 'stdio',
      auth: 'none',
    };
    const local = {
      command: 'npx',
      args: npxArgs(tarball),
      env: [{ name: 'TINY_TOKEN', description: 'The token', required: true, secret: true }],
    };
    await writeFile(catalogFile, JSON.stringify({ version: 1, groups: [], entries: [{ ...entry, local }] }));
    fx = await startHost(
      {},
      {
        WORKSPACE_SECRET_STORE: 'keychain',
        WORKSPACE_KEYCHAIN_SERVICE: `persona-local-${process.pid}`,
        WORKSPACE_UPSTREAM_TIMEOUT: '60',
        XDG_CACHE_HOME: cacheHome,
        WORKSPACE_CATALOG_FILE: catalogFile,
      },
    );
    const controlUrl = await fx.host.open();
    const adminToken = await fx.host.adminToken();
    api = async (method, path, body) => {
      const answer = await callApi(controlUrl, adminToken, method, path, body);
      seen.push(answer.text);
      return answer;
    };
    const { token } = await (await fx.host.tokens()).create({ name: 'alpha agent', workspacePath: 'Crew/alpha' });
    ({ client: agent } = await fx.connect(token));
    assert.equal((await api('PUT', '/secrets/TINY_KEY?workspace_path=Crew/alpha', { value: SECRET })).status, 204);
  });

  after(async () => {
    await api('DELETE', `/mcp/place/${name}?workspace_path=Crew/alpha`).catch(() => {});
    await api('DELETE', '/secrets/TINY_KEY?workspace_path=Crew/alpha').catch(() => {});
    await fx.close();
    web.close();
    await workspace.leave();
    await rm(cacheHome, { recursive: true, force: true });
  });

  it("adds a local server with a command, measures it, and lists its tools to the place's agents", async () => {
    const added = await api('POST', '/mcp/place', {
      workspace_path: 'Crew/alpha',
      name: 'Tiny',
      command: 'npx',
      args: npxArgs(tarball),
      env: { TINY_TOKEN: 'TINY_KEY' },
    });
    assert.equal(added.status, 201, added.text);
    const connection = added.json.connection;
    name = connection.name;
    assert.match(name, /^u[0-9a-f]{8}__local-tiny$/);
    assert.equal(connection.transport, 'stdio');
    assert.equal(connection.state, 'connected', connection.reason);
    assert.equal(connection.tools, 10);
    assert.deepEqual(connection.local.env, [{ name: 'TINY_TOKEN', secret: 'TINY_KEY' }]);
    assert.equal(connection.local.process.state, 'running');
    const { tools } = await agent.listTools();
    assert.ok(tools.some((t) => t.name === tool('echo')));
    assert.equal(textOf(await call('echo', { text: 'hi' })), 'hi');
  });

  it('gives the server its secret in its environment, and keeps it off the disk and out of every answer', async () => {
    assert.equal(textOf(await call('env', { name: 'TINY_TOKEN' })), SECRET);
    // The app's own variables stay with the app.
    assert.equal(textOf(await call('env', { name: 'WORKSPACE_STATE_DIR' })), '(unset)');
    for (const file of [...(await filesUnder(fx.stateDir)), ...(await filesUnder(cacheHome)), ...(await filesUnder(workspace.dir))]) {
      if (file.endsWith('.tgz')) continue;
      assert.ok(!(await readFile(file)).includes(SECRET), `${file} holds the secret`);
    }
    for (const text of seen) assert.ok(!text.includes(SECRET));
  });

  it('keeps its stderr: the last lines on its details, the whole in a log file in the state dir', async () => {
    const connection = await details();
    assert.ok(
      connection.local.process.stderr.some((line: string) => line.startsWith('tiny-stdio-mcp ready')),
      JSON.stringify(connection.local.process),
    );
    assert.ok(connection.local.process.logFile.startsWith(fx.stateDir));
    assert.match(await readFile(connection.local.process.logFile, 'utf8'), /tiny-stdio-mcp ready/);
  });

  it('turns a tool off for the place: not listed, refused', async () => {
    const edited = await api('PATCH', `/mcp/place/${name}?workspace_path=Crew/alpha`, { tools: { echo: false } });
    assert.equal(edited.status, 200, edited.text);
    await waitFor(async () => !(await agent.listTools()).tools.some((t) => t.name === tool('echo')), 5_000, 'echo to go');
    const refused = await call('echo', { text: 'hi' });
    assert.equal(refused.isError, true);
    assert.match(textOf(refused), /turned off/);
    await api('PATCH', `/mcp/place/${name}?workspace_path=Crew/alpha`, { tools: { echo: true } });
  });

  it('tells sessions when the server says its tools changed', async () => {
    let changed = false;
    agent.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed = true;
    });
    await call('grow');
    await waitFor(() => changed, 10_000, 'tools/list_changed');
    await waitFor(async () => (await agent.listTools()).tools.some((t) => t.name === tool('grown_1')), 10_000, 'the new tool');
  });

  it('restarts a server that was killed, with the same connection', async () => {
    const pid = Number(textOf(await call('pid')));
    process.kill(pid, 'SIGKILL');
    await waitFor(
      async () =>
        (await details()).local.process?.pid !== undefined &&
        (await details()).state === 'connected' &&
        Number(textOf(await call('pid'))) !== pid,
      60_000,
      'a new process',
    );
    const connection = await details();
    assert.ok(
      connection.errors.some((e: { message: string }) => /was ended by SIGKILL|exited with code/.test(e.message)),
      JSON.stringify(connection.errors),
    );
    assert.equal(textOf(await call('echo', { text: 'again' })), 'again');
  });

  it('restarts a server that crashed on a call, and the call says why', async () => {
    const crashed = await call('crash');
    assert.equal(crashed.isError, true);
    assert.match(textOf(crashed), /exited with code 3/);
    await waitFor(
      async () => (await details()).state === 'connected' && !(await call('echo', { text: 'x' })).isError,
      60_000,
      'the restart',
    );
  });

  it('lets agents add catalog entries only, never a command', async () => {
    const answer = (await agent.callTool({
      name: 'manage_my_mcp_servers',
      arguments: { action: 'connect', command: 'npx', args: ['-y', 'anything'] },
    })) as CallToolResult;
    assert.equal(answer.isError, true);
    assert.match(textOf(answer), /connect needs catalog/);
    assert.equal((await api('GET', '/mcp/place?workspace_path=Crew/alpha')).json.connections.length, 1);
  });

  it('adds a local server of the catalog with its declared variables only, and the host npm installs from', async () => {
    const listed = (await api('GET', '/catalog?search=tiny')).json.entries.find((e: { id: string }) => e.id === 'tiny-cat');
    assert.equal(listed.transport, 'stdio');
    const without = await api('POST', '/mcp/place', { workspace_path: 'Crew/alpha', catalog: 'tiny-cat' });
    assert.equal(without.status, 400);
    assert.match(without.json.error.message, /needs the variable TINY_TOKEN/);
    const other = await api('POST', '/mcp/place', {
      workspace_path: 'Crew/alpha',
      catalog: 'tiny-cat',
      env: { TINY_TOKEN: 'TINY_KEY', NODE_OPTIONS: 'TINY_KEY' },
    });
    assert.equal(other.status, 400);
    assert.match(other.json.error.message, /reads no variable NODE_OPTIONS/);
    // An agent adds it as an editor would, naming the secret for its variable.
    const answer = (await agent.callTool({
      name: 'manage_my_mcp_servers',
      arguments: { action: 'connect', catalog: 'tiny-cat', env: { TINY_TOKEN: 'TINY_KEY' } },
    })) as CallToolResult;
    assert.match(textOf(answer), /Added and connected Tiny from the catalog/);
    const added = (await api('GET', '/mcp/place?workspace_path=Crew/alpha')).json.connections.find(
      (c: { catalogId: string }) => c.catalogId === 'tiny-cat',
    );
    const registry = new URL((await promisify(execFile)('npm', ['config', 'get', 'registry'])).stdout.trim()).hostname;
    assert.deepEqual(added.local.hosts, [registry], 'installing needs the registry npm is configured with');
    assert.equal((await api('DELETE', `/mcp/place/${added.name}?workspace_path=Crew/alpha`)).status, 200);
  });

  describe('under the place and strict policies', () => {
    after(() => setPolicy('machine'));

    it("under machine, runs it as the app's user: it reads what the app reads", async () => {
      assert.equal(textOf(await call('read_file', { path: join(workspace.dir, 'Crew', 'beta', 'notes.txt') })), 'beta notes\n');
      assert.equal(textOf(await call('read_file', { path: join(sealedDir, 'id_key') })), 'a private key\n');
    });

    for (const policy of ['place', 'strict'] as const) {
      it(`runs it in the place's sandbox under ${policy}: its secret is there, the app's, other places' and sealed files are not, and killed it starts again there`, async () => {
        const before = Number(textOf(await call('pid')));
        await setPolicy(policy);
        // A sealed path of the place's own folder, as a credential store is sealed (kept when the kind changes).
        if (policy === 'place')
          assert.equal((await api('PUT', '/places/seals', { workspace_path: 'Crew/alpha', seal: [sealedDir], unseal: [] })).status, 200);
        // A policy change ends the process; the next call starts it in the sandbox.
        assert.equal(textOf(await call('env', { name: 'TINY_TOKEN' })), SECRET);
        const pid = Number(textOf(await call('pid')));
        assert.notEqual(pid, before);
        assert.equal(textOf(await call('env', { name: 'DBUS_SESSION_BUS_ADDRESS' })), '(unset)');
        for (const path of [
          join(fx.stateDir, 'access.json'),
          join(fx.stateDir, 'personal-mcp', 'attachments.json'),
          join(workspace.dir, 'Crew', 'beta', 'notes.txt'),
          join(sealedDir, 'id_key'),
          `/proc/${process.pid}/environ`,
        ]) {
          const read = await call('read_file', { path });
          assert.equal(read.isError, true, `${policy} let it read ${path}`);
          assert.match(textOf(read), /refused/);
        }
        const written = await call('write_file', { path: join(fx.stateDir, 'planted'), text: 'x' });
        assert.equal(written.isError, true);
        await assert.rejects(stat(join(fx.stateDir, 'planted')));
        assert.equal(textOf(await call('write_file', { path: join(workspace.dir, 'Crew', 'alpha', 'out.txt'), text: 'ok' })), 'written');
        assert.equal(textOf(await call('echo', { text: policy })), policy);
        // Killed from outside (its sandbox's process as the host sees it): started again, in the sandbox.
        const hostPid = (await details()).local.process.pid;
        process.kill(hostPid, 'SIGKILL');
        await waitFor(
          async () => (await details()).local.process?.pid !== hostPid && (await details()).state === 'connected',
          60_000,
          'a new process',
        );
        assert.equal(textOf(await call('env', { name: 'TINY_TOKEN' })), SECRET);
        assert.equal((await call('read_file', { path: join(fx.stateDir, 'access.json') })).isError, true);
      });
    }

    it('under strict reaches no host but those of the place and the ones the connection declares', async () => {
      await setPolicy('strict');
      const refused = await call('get', { url: `http://localhost:${webPort}/` });
      assert.ok(refused.isError || !textOf(refused).startsWith('200'), textOf(refused));
      const local = (await details()).local;
      const edited = await api('PATCH', `/mcp/place/${name}?workspace_path=Crew/alpha`, {
        local: { command: local.command, args: local.args, env: { TINY_TOKEN: 'TINY_KEY' }, hosts: ['localhost'] },
      });
      assert.equal(edited.status, 200, edited.text);
      assert.deepEqual(edited.json.connection.local.hosts, ['localhost']);
      assert.equal(textOf(await call('get', { url: `http://localhost:${webPort}/` })), '200 hello from the web');
    });
  });
});

describe('local MCP servers that do not work', () => {
  let fx: HostFixture;
  let workspace: Awaited<ReturnType<typeof enterWorkspace>>;
  let api: (method: string, path: string, body?: unknown) => Promise<{ status: number; json: any; text: string }>;

  before(async () => {
    workspace = await enterWorkspace('pw-local-bad-', ['Crew/alpha']);
    fx = await startHost({}, { WORKSPACE_UPSTREAM_TIMEOUT: '2' });
    const controlUrl = await fx.host.open();
    const adminToken = await fx.host.adminToken();
    api = (method, path, body) => callApi(controlUrl, adminToken, method, path, body);
  });
  after(async () => {
    await fx.close();
    await workspace.leave();
  });

  const add = async (name: string, command: string, args: string[], env?: Record<string, string>) => {
    const answer = await api('POST', '/mcp/place', { workspace_path: 'Crew/alpha', name, command, args, ...(env && { env }) });
    assert.equal(answer.status, 201, answer.text);
    return answer.json.connection;
  };

  it('says that a command is missing', async () => {
    const added = await add('missing', 'no-such-program-here', []);
    assert.equal(added.state, 'unreachable');
    assert.match(added.reason, /command was not found/);
  });

  it('says that it exited, with its last line', async () => {
    await writeFile(join(workspace.dir, 'Crew', 'alpha', 'exit.sh'), `TINY_MODE=exit exec node ${LOCAL_SERVER_SCRIPT}\n`);
    const added = await add('exits', 'bash', ['exit.sh']);
    assert.equal(added.state, 'unreachable');
    assert.match(added.reason, /exited with code 2 before answering initialize/);
    assert.match(added.reason, /cannot start: missing configuration/);
  });

  it('says that it never answered initialize, and ends it', async () => {
    await writeFile(join(workspace.dir, 'Crew', 'alpha', 'mute.sh'), `TINY_MODE=mute exec node ${LOCAL_SERVER_SCRIPT}\n`);
    const added = await add('mute', 'bash', ['mute.sh']);
    assert.equal(added.state, 'unreachable');
    assert.match(added.reason, /did not answer initialize within 2 s/);
    assert.equal(added.local.process.state, 'stopped');
  });

  it('refuses a variable whose secret the place does not have', async () => {
    const refused = await api('POST', '/mcp/place', {
      workspace_path: 'Crew/alpha',
      command: 'node',
      args: [LOCAL_SERVER_SCRIPT],
      env: { TOKEN: 'NOPE' },
    });
    assert.equal(refused.status, 404);
    assert.match(refused.json.error.message, /no secret named "NOPE"/);
  });
});
