import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { cliSandbox } from './fixtures/cli-process.js';
import { LOCAL_SERVER_SCRIPT } from './fixtures/local-server.js';

// Local servers and the MCP clients on this machine from the command line, with the built bin and
// a home folder of the test's own: a local server added by its command with its variable from a
// place secret; npx given the host it installs from when no --host is given; Claude Desktop's
// servers listed and imported, its file left as it was; Cursor's file written with this server.

const SECRET = 'cli-local-secret-51c0e2';
const IMPORTED = 'cli-imported-token-8f3a';

describe('local servers and the clients on this machine, from the command line', () => {
  const cli = cliSandbox('pw-cli-local-');
  after(() => cli.remove());
  // Where Claude Desktop and Cursor keep their servers on Linux, as the program finds them.
  const desktopFile = join(cli.root, 'config', 'Claude', 'claude_desktop_config.json');
  const desktopText = JSON.stringify(
    {
      mcpServers: { 'tiny-imported': { command: 'node', args: [LOCAL_SERVER_SCRIPT], env: { TINY_TOKEN: IMPORTED } } },
      globalShortcut: '',
    },
    null,
    2,
  );
  const cursorFile = join(cli.home, '.cursor', 'mcp.json');
  const cursorText = '{\n\t"mcpServers": {\n\t\t"docs": { "url": "https://docs.example.com/mcp" }\n\t}\n}\n';
  const connections = async () =>
    JSON.parse((await cli.run(['connections', 'list', '--workspace-path', 'Crew/alpha', '--json'])).stdout) as Array<{
      name: string;
      displayName: string;
      state: string;
      reason?: string;
      local?: { hosts: string[]; env: unknown[] };
    }>;

  before(async () => {
    await mkdir(join(cli.workDir, 'Crew', 'alpha'), { recursive: true });
    for (const [path, text] of [
      [desktopFile, desktopText],
      [cursorFile, cursorText],
    ] as const) {
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, text);
    }
  });

  it('adds a local server by its command, its variable from a place secret, and it works', async () => {
    const set = await cli.run(['secrets', 'set', 'TINY_KEY', '--workspace-path', 'Crew/alpha'], {}, SECRET);
    assert.equal(set.code, 0, set.stderr);
    const added = await cli.run([
      'connections',
      'add',
      '--workspace-path',
      'Crew/alpha',
      '--command',
      'node',
      '--name',
      'Tiny',
      '--env',
      'TINY_TOKEN=TINY_KEY',
      '--',
      LOCAL_SERVER_SCRIPT,
    ]);
    assert.equal(added.code, 0, added.stderr);
    assert.match(added.stdout, /^Added Tiny to Crew alpha as u[0-9a-f]{8}__local-tiny \(connected\)\.$/m);
    // node installs nothing: it is given no host.
    assert.doesNotMatch(added.stdout, /may also reach/);
    const tiny = (await connections()).find((c) => c.displayName === 'Tiny')!;
    assert.equal(tiny.state, 'connected', tiny.reason);
    assert.deepEqual(tiny.local!.hosts, []);
    assert.ok(
      !added.stdout.includes(SECRET) &&
        !(await readFile(join(cli.stateDir, 'personal-mcp', 'attachments.json'), 'utf8').catch(() => '')).includes(SECRET),
    );
  });

  it('gives npx the host it installs from when no --host is given, and only the hosts given otherwise', async () => {
    const registry = new URL((await promisify(execFile)('npm', ['config', 'get', 'registry'], { env: cli.env() })).stdout.trim()).hostname;
    const npx = await cli.run([
      'connections',
      'add',
      '--workspace-path',
      'Crew/alpha',
      '--command',
      'npx',
      '--name',
      'Nowhere',
      '--',
      '--yes',
      '--offline',
      '@acme/not-installed-mcp',
    ]);
    assert.equal(npx.code, 0, npx.stderr);
    assert.match(npx.stdout, new RegExp(`Under the place and strict policies it may also reach: ${registry.replace(/\./g, '\\.')}\\.`));
    const given = await cli.run([
      'connections',
      'add',
      '--workspace-path',
      'Crew/alpha',
      '--command',
      'npx',
      '--name',
      'Given',
      '--host',
      'api.example.com',
      '--',
      '--yes',
      '--offline',
      '@acme/not-installed-mcp',
    ]);
    assert.equal(given.code, 0, given.stderr);
    const list = await connections();
    assert.deepEqual(list.find((c) => c.displayName === 'Nowhere')!.local!.hosts, [registry]);
    assert.deepEqual(list.find((c) => c.displayName === 'Given')!.local!.hosts, ['api.example.com']);
    // A package npx cannot install offline says so, and fails alone.
    assert.notEqual(list.find((c) => c.displayName === 'Nowhere')!.state, 'connected');
  });

  it("lists Claude Desktop's servers, imports one with its literal token moved into a place secret, and writes nothing back", async () => {
    const listed = await cli.run(['connections', 'import', '--workspace-path', 'Crew/alpha']);
    assert.equal(listed.code, 0, listed.stderr);
    const line = listed.stdout.split('\n').find((l) => l.includes('tiny-imported'));
    assert.ok(line, listed.stdout);
    assert.match(line, /Claude Desktop \(user\)  local: runs node /);
    assert.match(listed.stdout, /new secret TINY_TOKEN of Crew alpha, from its variable TINY_TOKEN/);
    assert.ok(!listed.stdout.includes(IMPORTED));
    const id = line.split(/\s+/)[0]!;
    const imported = await cli.run(['connections', 'import', '--workspace-path', 'Crew/alpha', id]);
    assert.equal(imported.code, 0, imported.stdout + imported.stderr);
    assert.match(imported.stdout, /Added tiny-imported as u[0-9a-f]{8}__\S+: connected/);
    assert.deepEqual((await cli.run(['secrets', 'list', '--workspace-path', 'Crew/alpha'])).stdout.trim().split('\n'), [
      'TINY_KEY',
      'TINY_TOKEN',
    ]);
    assert.equal(await readFile(desktopFile, 'utf8'), desktopText);
  });

  it("writes this server into Cursor's configuration, keeping the rest of the file byte for byte, and says what it wrote", async () => {
    const written = await cli.run(['clients', 'connect', 'cursor', '--workspace-path', 'Crew/alpha']);
    assert.equal(written.code, 0, written.stderr);
    assert.match(
      written.stdout,
      new RegExp(
        `^Changed ${cursorFile.replace(/[.]/g, '\\.')}: added the server "persona-workspace" for Cursor, working in Crew alpha:`,
        'm',
      ),
    );
    assert.match(written.stdout, /"Authorization": "Bearer <token>"/);
    const text = await readFile(cursorFile, 'utf8');
    assert.ok(text.startsWith('{\n\t"mcpServers": {\n\t\t"docs": { "url": "https://docs.example.com/mcp" },\n'), text);
    const backup = /The file as it was is in (\S+)\.$/m.exec(written.stdout)?.[1];
    assert.ok(backup, written.stdout);
    assert.equal(await readFile(backup, 'utf8'), cursorText);
  });
});
