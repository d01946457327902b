import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdir, mkdtemp, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { KeychainSecretStore } from '../main/secrets/keychain-store.js';
import { startUpstream } from './fixtures/upstream-server.js';
import { processAlive, textOf, waitFor } from '../test/support/host-fixture.js';
import { KEYTAR_SKIP } from '../test/support/native-modules.js';
import { filesUnder } from '../test/support/secrets.js';

// The built bin, exactly as `npm start` and the package's bin run it (npm test builds first).
const CLI = fileURLToPath(new URL('../dist/main/cli.js', import.meta.url));
const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

let stateDir: string;
let workDir: string;

function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    // The test session's own keychain (scripts/test.sh), under a service of this test file's own.
    DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS,
    WORKSPACE_KEYCHAIN_SERVICE: `persona-cli-test-${process.pid}`,
    WORKSPACE_REGISTRY_URL: '',
    WORKSPACE_STATE_DIR: stateDir,
    WORKSPACE_CWD: workDir,
    // A config folder of the test's own: the settings file of whoever runs the tests never applies.
    XDG_CONFIG_HOME: join(stateDir, 'config'),
    ...extra,
  };
}

function run(
  args: string[],
  extra: Record<string, string> = {},
  stdin?: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: env(extra) });
    child.stdin.end(stdin ?? '');
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject).on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Starts the server and resolves with its MCP URL once the startup line is printed. */
async function serve(
  args: string[],
): Promise<{ child: ChildProcessWithoutNullStreams; url: string; line: string; out: () => string; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, [CLI, '--port', '0', '--control-port', '0', ...args], { env: env() });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let out = '';
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  const line = await new Promise<string>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (out.split('\n').length > 2) resolve(out.split('\n')[0]!);
    });
    child.on('exit', (code) => reject(new Error(`server exited with ${code}: ${err}`)));
  });
  const url = /(http:\/\/\S+\/mcp)/.exec(line)?.[1];
  assert.ok(url, `startup line names the URL: ${line}`);
  return { child, url, line, out: () => out, exited };
}

async function connect(url: string, token?: string): Promise<Client> {
  const client = new Client({ name: 'e2e', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: token ? { headers: { Authorization: `Bearer ${token}` } } : {} }),
  );
  return client;
}

describe('the persona-mcp-workspace command', () => {
  before(async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'pw-cli-state-'));
    workDir = await realpath(await mkdtemp(join(tmpdir(), 'pw-cli-cwd-')));
  });
  after(async () => {
    // Where keytar cannot load, the program kept its secrets in the encrypted file in the state dir (removed below).
    if (!KEYTAR_SKIP) {
      const keychain = new KeychainSecretStore({ service: `persona-cli-test-${process.pid}` });
      for (const account of await keychain.accounts('')) await keychain.delete(account);
    }
    await rm(stateDir, { recursive: true, force: true });
    await rm(workDir, { recursive: true, force: true });
  });

  it('prints its version and its help with every flag and variable', async () => {
    const version = await run(['--version']);
    assert.equal(version.code, 0);
    assert.equal(version.stdout.trim(), pkg.version);

    const help = await run(['--help']);
    assert.equal(help.code, 0);
    for (const word of [
      '--port',
      '--host',
      '--no-auth',
      '--version',
      'token create',
      'WORKSPACE_CWD',
      'WORKSPACE_SKILLS_DIR',
      'WORKSPACE_SHELL_MAX_TIMEOUT',
      'WORKSPACE_STATE_DIR',
      'WORKSPACE_JWT_SECRET',
      'WORKSPACE_JWKS_URL',
    ]) {
      assert.ok(help.stdout.includes(word), `help mentions ${word}`);
    }
  });

  it('refuses --no-auth on a non-loopback address, and bad flags, with a clear message', async () => {
    const open = await run(['--no-auth', '--host', '0.0.0.0']);
    assert.equal(open.code, 2);
    assert.match(open.stderr, /--no-auth is only allowed on a loopback address/);
    assert.doesNotMatch(open.stderr, /at .*\.js:\d+/, 'no stack trace for a user error');

    const port = await run(['--port', 'abc']);
    assert.equal(port.code, 2);
    assert.match(port.stderr, /--port abc is not a port number/);

    const unknown = await run(['--frobnicate']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /--help/);

    const typo = await run(['tokn', 'list']);
    assert.equal(typo.code, 2);
    assert.equal(
      typo.stderr,
      'persona-mcp-workspace: Unknown command "tokn". Did you mean "token"? Run with --help to see the commands.\n',
    );
    const help = await run(['token', 'create', '--help']);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /^Usage:\n {2}persona-mcp-workspace token create --name NAME /);
    assert.doesNotMatch(help.stdout, /token list/, 'only the command asked about');
    assert.match((await run(['--help'])).stdout, /Exit status: 0 done, 1 failed .*\n.*3 not found/);
  });

  it('answers help as a command too', async () => {
    const help = await run(['help']);
    assert.equal(help.code, 0);
    assert.equal(help.stdout, (await run(['--help'])).stdout);
    assert.match(help.stdout, /--config FILE/);
  });

  it('reads the settings file, with flags and the environment on top, and config prints where each setting comes from', async () => {
    const configDir = join(stateDir, 'config', 'persona-mcp-workspace');
    await mkdir(configDir, { recursive: true });
    await writeFile(
      join(configDir, 'settings.json'),
      JSON.stringify({ port: 9700, controlPort: 9701, host: 'localhost', shellMaxTimeout: 77, jwtSecret: 'file-secret-4417' }),
    );
    try {
      await checkSettings(configDir);
    } finally {
      await rm(join(configDir, 'settings.json'));
    }
  });

  async function checkSettings(configDir: string): Promise<void> {
    const shown = await run(['config', '--port', '9800'], { WORKSPACE_CONTROL_PORT: '9901' });
    assert.equal(shown.code, 0, shown.stderr);
    const rows = Object.fromEntries(
      shown.stdout
        .trim()
        .split('\n')
        .slice(1)
        .map((line) => {
          const [name, value, ...source] = line.split(/\s{2,}/);
          return [name, { value, source: source.join(' ') }];
        }),
    );
    assert.match(shown.stdout, new RegExp(`^Settings file: ${join(configDir, 'settings.json')}\n`));
    assert.deepEqual(rows.port, { value: '9800', source: '--port' });
    assert.deepEqual(rows.controlPort, { value: '9901', source: 'WORKSPACE_CONTROL_PORT' });
    assert.deepEqual(rows.host, { value: 'localhost', source: join(configDir, 'settings.json') });
    assert.deepEqual(rows.shellMaxTimeout, { value: '77', source: join(configDir, 'settings.json') });
    assert.deepEqual(rows.sessionIdleTimeout, { value: '30', source: 'default' });
    assert.deepEqual(rows.jwtSecret, { value: '(set)', source: join(configDir, 'settings.json') });
    assert.doesNotMatch(shown.stdout, /file-secret-4417/, 'a secret is never printed');
    const asJson = await run(['config', '--json', '--port', '9800'], { WORKSPACE_CONTROL_PORT: '9901' });
    assert.equal(asJson.code, 0, asJson.stderr);
    const parsed = JSON.parse(asJson.stdout) as {
      settingsFile: { path: string; found: boolean };
      settings: Array<{ name: string; value: string; source: string }>;
    };
    assert.deepEqual(parsed.settingsFile, { path: join(configDir, 'settings.json'), found: true });
    const jsonRows = Object.fromEntries(parsed.settings.map(({ name, ...row }) => [name, row]));
    for (const name of ['port', 'controlPort', 'host', 'shellMaxTimeout', 'sessionIdleTimeout', 'jwtSecret'])
      assert.deepEqual(jsonRows[name], rows[name], name);
    assert.equal(parsed.settings.length, Object.keys(rows).length, 'every setting, as in the table');
    assert.doesNotMatch(asJson.stdout, /file-secret-4417/, 'a secret is never printed');

    // --config names another file; a bad one is a clear error naming the setting, and nothing starts.
    const other = join(stateDir, 'other-settings.json');
    await writeFile(other, '{"upstreamTimeout": "soon"}');
    for (const args of [
      ['config', '--config', other],
      ['--config', other],
      ['token', 'list', '--config', other],
    ]) {
      const bad = await run(args);
      assert.equal(bad.code, 2, args.join(' '));
      assert.equal(
        bad.stderr,
        `persona-mcp-workspace: The settings file ${other}: "upstreamTimeout" must be a number of seconds above 0.\n`,
      );
    }
    await writeFile(other, '{"skillsDir": "/srv/skills-from-other"}');
    const fromOther = await run(['config', `--config=${other}`]);
    assert.match(fromOther.stdout, new RegExp(`^Settings file: ${other}\n`));
    assert.match(fromOther.stdout, /\nskillsDir\s+\/srv\/skills-from-other\s+\S*other-settings\.json\n/);
    assert.match(fromOther.stdout, /\nport\s+9100\s+default\n/, 'the other file replaces the one in the config folder');
  }

  it('open prints a fresh one-time link for the running server, with its lifetime, and opens it with $BROWSER', async () => {
    const none = await run(['open']);
    assert.equal(none.code, 2);
    assert.equal(
      none.stderr,
      `persona-mcp-workspace: No persona-mcp-workspace server is running on the state dir ${stateDir}. Start it with: persona-mcp-workspace\n`,
    );

    const server = await serve([]);
    try {
      assert.match(server.out(), /this link signs you in once, within 10 minutes; "persona-mcp-workspace open" makes a new one\): http/);
      const browserLog = join(workDir, 'browser.log');
      const browser = join(workDir, 'browser.sh');
      await writeFile(browser, `#!/bin/sh\necho "$1" > ${browserLog}\n`, { mode: 0o755 });
      const opened = await run(['open'], { BROWSER: browser });
      assert.equal(opened.code, 0, opened.stderr);
      const link =
        /^Open this link in a browser on this machine; it signs you in once, within 10 minutes: (http:\/\/127\.0\.0\.1:\d+\/login\?token=\S+)\n$/.exec(
          opened.stdout,
        )?.[1];
      assert.ok(link, opened.stdout);
      await waitFor(async () => (await readFile(browserLog, 'utf8').catch(() => '')).trim() === link, 10_000, '$BROWSER to get the link');

      // The page's "Sign in first" says what to run.
      const controlUrl = new URL(link).origin;
      const signedOut = await fetch(`${controlUrl}/api/places`);
      assert.equal(signedOut.status, 401);
      assert.match(
        ((await signedOut.json()) as { error: { message: string } }).error.message,
        /^Sign in first: run "persona-mcp-workspace open" on this machine/,
      );

      const signedIn = await fetch(link, { redirect: 'manual' });
      assert.equal(signedIn.status, 303);
      const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!;
      assert.equal((await fetch(`${controlUrl}/api/places`, { headers: { cookie } })).status, 200);
      const again = await fetch(link, { redirect: 'manual' });
      assert.equal(again.status, 401, 'the link works once');
      assert.match(await again.text(), /For a fresh one, run "persona-mcp-workspace open" on this machine\./);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    await assert.rejects(readFile(join(stateDir, 'control.json')), /ENOENT/, 'a stopped server leaves no record');
  });

  it('says which control port is busy, with no stack trace', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as { port: number }).port;
    const result = await run(['--port', '0', '--control-port', String(port)]);
    blocker.close();
    assert.equal(result.code, 2);
    assert.match(
      result.stderr,
      new RegExp(
        `persona-mcp-workspace: Port ${port} on 127\\.0\\.0\\.1 is already in use\\. Stop the other program or choose another port with --control-port\\.\n$`,
      ),
    );
    assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
  });

  it('says which port is busy instead of crashing', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as { port: number }).port;
    const result = await run(['--port', String(port), '--control-port', '0']);
    blocker.close();
    assert.equal(result.code, 2);
    assert.match(result.stderr, new RegExp(`Port ${port} on 127.0.0.1 is already in use`));
  });

  it('serves /mcp from WORKSPACE_CWD, prints one startup line, and stops cleanly on SIGTERM', async () => {
    const token = (await run(['token', 'create', '--name', 'e2e'])).stdout.trim();
    const server = await serve([]);
    assert.match(server.line, /^persona-mcp-workspace listening on http:\/\/127\.0\.0\.1:\d+\/mcp \(auth: JWT; app tokens\)$/);
    const login = /(http:\/\/127\.0\.0\.1:\d+\/login\?token=\S+)/.exec(server.out())?.[1];
    assert.ok(login, 'a one-time login link for the page is printed');
    const signedIn = await fetch(login, { redirect: 'manual' });
    assert.equal(signedIn.status, 303);
    assert.match(signedIn.headers.get('set-cookie') ?? '', /HttpOnly; SameSite=Strict/);

    const client = await connect(server.url, token);
    const cwd = await client.readResource({ uri: 'resource://cwd' });
    assert.equal((cwd.contents[0] as { text: string }).text, workDir);
    const pwd = await client.callTool({ name: 'bash', arguments: { command: 'pwd' } });
    assert.equal((pwd.structuredContent as { stdout: string }).stdout, `${workDir}\n`);
    // A big output is saved to a file the agent is told about, with how long it is kept; it goes when the server stops.
    const big = await client.callTool({ name: 'bash', arguments: { command: 'seq 1 100000' } });
    const saved = (big.structuredContent as { stdoutFullOutputPath: string }).stdoutFullOutputPath;
    assert.equal((await readFile(saved, 'utf8')).split('\n').length, 100_001);
    assert.match(
      textOf(big),
      /the full stdout is in \S+ \(read it, or grep it with bash\), kept until \S+ at most: removed a day after it was saved, when this server stops/,
    );

    // A command with a grandchild still running when the signal comes.
    const pidFile = join(workDir, 'grandchild.pid');
    const running = client.callTool({ name: 'bash', arguments: { command: `sleep 300 & echo $! > ${pidFile}; wait` } }, undefined, {
      timeout: 20_000,
    });
    await waitFor(async () => (await readFile(pidFile, 'utf8').catch(() => '')).trim() !== '', 10_000, 'the grandchild');
    const pid = Number((await readFile(pidFile, 'utf8')).trim());

    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0);
    assert.match(textOf(await running), /shutting down/);
    await waitFor(() => !processAlive(pid), 10_000, 'the grandchild to die');
    await assert.rejects(stat(dirname(saved)), /ENOENT/, "the server's saved outputs are gone");
    const port = Number(new URL(server.url).port);
    await new Promise<void>((resolve, reject) => {
      const probe = createServer()
        .once('error', reject)
        .listen(port, '127.0.0.1', () => probe.close(() => resolve()));
    });
    await client.close();
  });

  it('creates, lists and revokes tokens; a running server refuses a revoked one at once', async () => {
    const created = await run(['token', 'create', '--name', 'ci-agent', '--expires', '12h', '--workspace-path', 'Crew/alpha']);
    assert.equal(created.code, 0);
    const token = created.stdout.trim();
    assert.match(token, /^[\w-]+\.[\w-]+\.[\w-]+$/, 'stdout is the token alone');
    const id = /Created token ([0-9a-f]{16})/.exec(created.stderr)?.[1];
    assert.ok(id, created.stderr);

    const list = await run(['token', 'list', '--json']);
    const entry = (JSON.parse(list.stdout) as Array<{ id: string; name: string; workspacePath?: string }>).find((t) => t.id === id);
    assert.deepEqual({ name: entry?.name, workspacePath: entry?.workspacePath }, { name: 'ci-agent', workspacePath: 'Crew/alpha' });
    assert.ok(!list.stdout.includes(token) && !(await run(['token', 'list'])).stdout.includes(token), 'list never shows the token');

    const server = await serve([]);
    try {
      const client = await connect(server.url, token);
      assert.equal((await client.listTools()).tools.length, 6);

      const revoked = await run(['token', 'revoke', id]);
      assert.equal(revoked.code, 0, revoked.stderr);
      const response = await fetch(server.url, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
        }),
      });
      assert.equal(response.status, 401);
      assert.match(response.headers.get('www-authenticate') ?? '', /invalid_token/);
      await client.close();
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }

    const again = await run(['token', 'revoke', 'ffffffffffffffff']);
    assert.equal(again.code, 3, 'not found');
    assert.match(again.stderr, /No agent token with id ffffffffffffffff/);
  });

  it("manages a place's secrets and connections from the command line", async () => {
    const value = 'sk-cli-2b9e71d0';
    const set = await run(['secrets', 'set', 'DOCS_KEY', '--workspace-path', 'Crew/alpha'], {}, `${value}\n`);
    assert.equal(set.code, 0, set.stderr);
    assert.match(set.stdout, /Saved the secret DOCS_KEY of Crew alpha/);
    const names = await run(['secrets', 'list', '--workspace-path', 'Crew/alpha']);
    assert.equal(names.stdout.trim(), 'DOCS_KEY');
    assert.ok(!names.stdout.includes(value) && !set.stdout.includes(value));
    const empty = await run(['secrets', 'set', 'EMPTY', '--workspace-path', 'Crew/alpha']);
    assert.equal(empty.code, 2);
    assert.match(empty.stderr, /reads the value from stdin/);

    const added = await run(['connections', 'add', '--workspace-path', 'Crew/alpha', '--catalog', 'context7', '--secret', 'DOCS_KEY']);
    assert.equal(added.code, 0, added.stderr);
    const name = /as (u[0-9a-f]{8}__context7)/.exec(added.stdout)?.[1];
    assert.ok(name, added.stdout);
    const list = await run(['connections', 'list', '--workspace-path', 'Crew/alpha', '--json']);
    const [connection] = JSON.parse(list.stdout) as Array<{
      name: string;
      owner: string;
      state: string;
      reason?: string;
      secretName: string;
    }>;
    assert.deepEqual(
      { name: connection?.name, owner: connection?.owner, secretName: connection?.secretName },
      { name, owner: 'local', secretName: 'DOCS_KEY' },
    );
    // Its server was asked with the key; from here it cannot be reached (no internet, or private targets refused), and says so.
    assert.notEqual(connection?.state, 'connected');
    assert.ok(connection?.reason, list.stdout);
    assert.ok(!list.stdout.includes(value));

    const http = await run(['connections', 'add', '--workspace-path', 'Crew/alpha', '--url', 'http://example.com/mcp']);
    assert.equal(http.code, 2);
    assert.match(http.stderr, /does not use https/);
    const metadata = await run(['connections', 'add', '--workspace-path', 'Crew/alpha', '--url', 'https://169.254.169.254/latest']);
    assert.equal(metadata.code, 2);
    assert.match(metadata.stderr, /169\.254\.169\.254.*(link-local|metadata)/);
    const removed = await run(['connections', 'remove', name, '--workspace-path', 'Crew/alpha']);
    assert.equal(removed.code, 0, removed.stderr);
    assert.match((await run(['connections', 'list', '--workspace-path', 'Crew/alpha'])).stdout, /has no MCP connections/);
    const gone = await run(['secrets', 'remove', 'DOCS_KEY', '--workspace-path', 'Crew/alpha']);
    assert.equal(gone.code, 0, gone.stderr);
  });

  it('refuses a place path with a bidi or invisible character, and an over-long server URL, saying why', async () => {
    for (const path of ['Crew/al\u202Etxt.ahp', 'Crew/alpha\u200B']) {
      for (const args of [
        ['connections', 'list'],
        ['secrets', 'list'],
        ['places', 'policy', path],
        ['token', 'create', '--name', 'hidden'],
      ]) {
        const answer = await run(args[0] === 'places' ? args : [...args, '--workspace-path', path]);
        assert.equal(answer.code, 2, `${args.join(' ')}: ${answer.stderr}`);
        assert.match(
          answer.stderr,
          /contains a control, bidi or invisible character|no control, bidi or invisible characters/,
          args.join(' '),
        );
      }
    }
    assert.doesNotMatch((await run(['token', 'list'])).stdout, /hidden/);
    const long = await run([
      'connections',
      'add',
      '--workspace-path',
      'Crew/alpha',
      '--url',
      `https://mcp.example.com/mcp?pad=${'a'.repeat(2048)}`,
    ]);
    assert.equal(long.code, 2, long.stderr);
    assert.match(long.stderr, /The URL is 2080 characters long; a server URL may have at most 2048/);
  });

  it("shows and sets a place's sandbox policy, which the access directory keeps", async () => {
    const shown = await run(['places', 'policy', 'Crew/alpha']);
    assert.equal(shown.code, 0, shown.stderr);
    assert.equal(shown.stdout, 'The policy of Crew alpha is machine.\n');
    const set = await run(['places', 'policy', 'Crew/alpha/runs', 'place', '--folder', 'data', '--folder', '/srv/shared']);
    assert.equal(set.code, 0, set.stderr);
    assert.equal(
      set.stdout,
      `The policy of Crew alpha is now place.\n  extra folder: ${join(workDir, 'data')}\n  extra folder: /srv/shared\n  network: any public host\n` +
        "  limits: the machine's defaults (no server runs on this state dir: what this machine enforces is found when one starts)\n",
    );
    const access = JSON.parse(await readFile(join(stateDir, 'access.json'), 'utf8'));
    assert.deepEqual(access.places['Crew/alpha'], { policy: { kind: 'place', folders: [join(workDir, 'data'), '/srv/shared'] } });
    const machine = await run(['places', 'policy', '.', 'strict']);
    assert.match(machine.stdout, /The policy of This machine is now strict/);
    const bad = await run(['places', 'policy', 'Crew/alpha', 'open']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /"open" is not a policy: use machine, place or strict/);
    await run(['places', 'policy', '.', 'machine']);
    await run(['places', 'policy', 'Crew/alpha', 'machine']);
  });

  it("shows and sets a place's limits; with a server running, what is in effect and what this machine cannot enforce", async () => {
    const refused = await run(['places', 'limits', 'Crew/alpha', 'processes=100']);
    assert.equal(refused.code, 2);
    assert.match(
      refused.stderr,
      /Crew alpha has the machine policy, whose commands run outside any sandbox: choose the place or strict policy first/,
    );
    await run(['places', 'policy', 'Crew/alpha', 'strict']);
    const set = await run(['places', 'limits', 'Crew/alpha', 'processes=200', 'memory=1G', 'tmp=64M']);
    assert.equal(set.code, 0, set.stderr);
    assert.match(
      set.stdout,
      /^Limits of Crew alpha's sandboxed commands \(strict policy\), now:\n  limits: 200 processes and threads at once, 1024 MiB of memory \(its \/tmp's files count\), a \/tmp of 64 MiB; the others the machine's defaults \(no server runs/,
    );
    assert.deepEqual(JSON.parse(await readFile(join(stateDir, 'access.json'), 'utf8')).places['Crew/alpha'].policy.limits, {
      processes: 200,
      memoryMb: 1024,
      tmpMb: 64,
    });
    await run(['places', 'limits', 'Crew/alpha', 'memory=default']);
    assert.deepEqual(
      JSON.parse(await readFile(join(stateDir, 'access.json'), 'utf8')).places['Crew/alpha'].policy.limits,
      { processes: 200, tmpMb: 64 },
      'one back to its default, the others kept',
    );
    const bad = await run(['places', 'limits', 'Crew/alpha', 'processes=2']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /The processes limit must be a whole number from 16 to/);

    const server = await serve([]);
    try {
      const shown = await run(['places', 'policy', 'Crew/alpha']);
      assert.equal(shown.code, 0, shown.stderr);
      const lines = shown.stdout.split('\n').filter((line) => line.startsWith('  limit: '));
      assert.equal(lines.length, 3, shown.stdout);
      assert.match(lines[0]!, /^  limit: 200 processes and threads at once(, not enforced on this machine: .{10,})?$/);
      assert.match(
        lines[1]!,
        /^  limit: \d+ MiB of memory \(its \/tmp's files count\) \(the machine's default\)(, not enforced on this machine: .{10,})?$/,
      );
      assert.match(lines[2]!, /^  limit: a \/tmp of 64 MiB(, not enforced on this machine: .{10,})?$/);
      // This machine (the tests' own) holds them: control groups for processes and memory, a sized tmpfs for /tmp.
      if (!/not enforced/.test(lines[0]!)) assert.match(shown.stdout, /\n  processes and memory held by cgroup v[12]/);
      const reset = await run(['places', 'limits', 'Crew/alpha', 'default']);
      assert.match(reset.stdout, /limit: 4096 processes and threads at once \(the machine's default\)/);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    await run(['places', 'policy', 'Crew/alpha', 'machine']);
  });

  it("shows and sets the hosts a place's sandboxed commands reach, beside its policy", async () => {
    const refused = await run(['places', 'network', 'Crew/alpha', 'example.com']);
    assert.equal(refused.code, 2);
    assert.match(
      refused.stderr,
      /Crew alpha has the machine policy, whose commands reach every host already: choose the place or strict policy first/,
    );
    await run(['places', 'policy', 'Crew/alpha', 'strict']);
    assert.equal(
      (await run(['places', 'network', 'Crew/alpha'])).stdout,
      'Sandboxed commands of Crew alpha (strict policy) reach: no network.\n',
    );
    const set = await run(['places', 'network', 'Crew/alpha', 'API.github.com', '*.npmjs.org']);
    assert.equal(set.code, 0, set.stderr);
    assert.equal(set.stdout, 'Sandboxed commands of Crew alpha (strict policy) now reach: only api.github.com, *.npmjs.org.\n');
    assert.deepEqual(JSON.parse(await readFile(join(stateDir, 'access.json'), 'utf8')).places['Crew/alpha'], {
      policy: { kind: 'strict', network: ['api.github.com', '*.npmjs.org'] },
    });
    assert.match((await run(['places', 'policy', 'Crew/alpha'])).stdout, /network: only api\.github\.com, \*\.npmjs\.org/);
    const bad = await run(['places', 'network', 'Crew/alpha', 'https://example.com/']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /is not a host name: write a name/);
    assert.match((await run(['places', 'network', 'Crew/alpha', 'off'])).stdout, /now reach: no network/);
    await run(['places', 'policy', 'Crew/alpha', 'machine']);
  });

  it("shows and sets tool search per place and per token; a running server follows the token's at its next tools/list", async () => {
    const shown = await run(['places', 'tool-search', 'Crew/alpha']);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /^Tool search in Crew alpha is auto \(on when it has more than 40 tools\)/);
    assert.match((await run(['places', 'tool-search', 'Crew/alpha', 'off'])).stdout, /is now off/);
    assert.equal(JSON.parse(await readFile(join(stateDir, 'access.json'), 'utf8')).places['Crew/alpha'].toolSearch, 'off');
    const bad = await run(['places', 'tool-search', 'Crew/alpha', 'always']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /must be on, off or auto/);
    await run(['places', 'tool-search', 'Crew/alpha', 'auto']);

    const created = await run(['token', 'create', '--name', 'searcher']);
    const token = created.stdout.trim();
    const id = /Created token ([0-9a-f]{16})/.exec(created.stderr)![1]!;
    const server = await serve([]);
    try {
      const client = await connect(server.url, token);
      assert.ok(!(await client.listTools()).tools.some((t) => t.name === 'search_tools'), 'six tools: off by default');
      const on = await run(['token', 'tool-search', id, 'on']);
      assert.equal(on.code, 0, on.stderr);
      assert.match(on.stdout, /is now on: an agent using it always gets search_tools and call_tool/);
      assert.ok((await client.listTools()).tools.some((t) => t.name === 'search_tools'));
      assert.match((await run(['token', 'list'])).stdout, /tool search on/);
      await client.close();
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    assert.match((await run(['token', 'tool-search', id])).stdout, /is on/);
    const unknown = await run(['token', 'tool-search', 'ffffffffffffffff', 'off']);
    assert.equal(unknown.code, 3, 'not found');
    assert.match(unknown.stderr, /No agent token with id ffffffffffffffff/);
  });

  it('measures a connection: a refused key says so, Test after fixing the secret says connected', async () => {
    const upstream = await startUpstream({ name: 'issues', apiKey: { header: 'X-Api-Key', value: 'sk-right-5e1f' } });
    const local = { WORKSPACE_ALLOW_PRIVATE_NETWORK: '1', WORKSPACE_UPSTREAM_TIMEOUT: '3' };
    try {
      assert.equal((await run(['secrets', 'set', 'ISSUES_KEY', '--workspace-path', 'Crew/alpha'], local, 'sk-wrong\n')).code, 0);
      const added = await run(
        [
          'connections',
          'add',
          '--workspace-path',
          'Crew/alpha',
          '--url',
          upstream.url,
          '--name',
          'Issues',
          '--header',
          'X-Api-Key',
          '--secret',
          'ISSUES_KEY',
        ],
        local,
      );
      assert.equal(added.code, 0, added.stderr);
      assert.match(added.stdout, /key-refused: .*refused the API key \(HTTP 401\)/);
      const name = /as (u[0-9a-f]{8}__[a-z0-9-]+)/.exec(added.stdout)?.[1];
      assert.ok(name, added.stdout);
      const list = await run(['connections', 'list', '--workspace-path', 'Crew/alpha'], local);
      assert.match(list.stdout, /Issues .*key-refused/);
      const refused = await run(['connections', 'test', name, '--workspace-path', 'Crew/alpha'], local);
      assert.equal(refused.code, 1);
      assert.match(refused.stdout, /key-refused/);

      // A secret the place has is not replaced without --replace.
      const kept = await run(['secrets', 'set', 'ISSUES_KEY', '--workspace-path', 'Crew/alpha'], local, 'sk-right-5e1f\n');
      assert.notEqual(kept.code, 0);
      assert.match(kept.stderr, /Crew alpha already has a secret named "ISSUES_KEY"; it was not changed\. Issues sends it\. .*--replace/);
      assert.match((await run(['connections', 'test', name, '--workspace-path', 'Crew/alpha'], local)).stdout, /key-refused/);
      assert.equal(
        (await run(['secrets', 'set', 'ISSUES_KEY', '--workspace-path', 'Crew/alpha', '--replace'], local, 'sk-right-5e1f\n')).code,
        0,
      );
      const fixed = await run(['connections', 'test', name, '--workspace-path', 'Crew/alpha'], local);
      assert.equal(fixed.code, 0, fixed.stdout + fixed.stderr);
      assert.match(fixed.stdout, /Issues \(u[0-9a-f]{8}__[a-z0-9-]+\): connected \(5 tools, checked /);
      assert.match((await run(['connections', 'list', '--workspace-path', 'Crew/alpha'], local)).stdout, /Issues .*connected \(5 tools/);
      const edited = await run(
        ['connections', 'edit', name, '--workspace-path', 'Crew/alpha', '--tool-off', 'echo', '--name', 'Issue tracker'],
        local,
      );
      assert.equal(edited.code, 0, edited.stderr);
      assert.match(edited.stdout, /Changed Issue tracker .*connected/);
      const shown = await run(['connections', 'show', name, '--workspace-path', 'Crew/alpha'], local);
      assert.match(shown.stdout, /^Issue tracker \(u[0-9a-f]{8}__[a-z0-9-]+\), .*login, http/);
      assert.match(shown.stdout, /\n {2}off {2}echo {2}Echo the text back/);
      assert.match(shown.stdout, /\n {2}on {3}add /);
      assert.equal((await run(['connections', 'remove', name, '--workspace-path', 'Crew/alpha'], local)).code, 0);
    } finally {
      await upstream.close();
    }
  });

  it('sets and drops the own OAuth app of a connection with connections edit, its secret from stdin and never in a file', async () => {
    const upstream = await startUpstream({ name: 'closed' });
    upstream.setMode('sign-in'); // it asks for an OAuth sign-in, so it is added as an OAuth connection
    const local = { WORKSPACE_ALLOW_PRIVATE_NETWORK: '1', WORKSPACE_UPSTREAM_TIMEOUT: '3' };
    try {
      const added = await run(['connections', 'add', '--workspace-path', 'Crew/alpha', '--url', upstream.url, '--name', 'Closed'], local);
      assert.equal(added.code, 0, added.stderr);
      const name = /as (u[0-9a-f]{8}__[a-z0-9-]+)/.exec(added.stdout)?.[1];
      assert.ok(name, added.stdout);
      const edited = await run(
        ['connections', 'edit', name, '--workspace-path', 'Crew/alpha', '--client-id', 'my-cli-app', '--client-secret-stdin'],
        local,
        'cli-own-secret-77\n',
      );
      assert.equal(edited.code, 0, edited.stderr);
      assert.match(edited.stdout, /Changed Closed .*sign-in/);
      assert.match(edited.stdout, /Sign in to it again from the page to use your OAuth app my-cli-app\./);
      const shown = await run(['connections', 'show', name, '--workspace-path', 'Crew/alpha'], local);
      assert.match(shown.stdout, /\n {2}signs in with your own OAuth app my-cli-app\n/);
      const json = JSON.parse((await run(['connections', 'show', name, '--workspace-path', 'Crew/alpha', '--json'], local)).stdout);
      assert.deepEqual(json.ownApp, { clientId: 'my-cli-app' });
      const files = await Promise.all((await filesUnder(stateDir)).map((f) => readFile(f, 'latin1')));
      assert.ok(!files.some((text) => text.includes('cli-own-secret-77')), 'the client secret is in the keychain only');
      const empty = await run(
        ['connections', 'edit', name, '--workspace-path', 'Crew/alpha', '--client-id', 'x', '--client-secret-stdin'],
        local,
      );
      assert.equal(empty.code, 2);
      assert.match(empty.stderr, /reads the secret from stdin, which was empty/);

      const dropped = await run(['connections', 'edit', name, '--workspace-path', 'Crew/alpha', '--no-own-app'], local);
      assert.equal(dropped.code, 0, dropped.stderr);
      assert.match(dropped.stdout, /to use it without your own OAuth app/);
      assert.doesNotMatch((await run(['connections', 'show', name, '--workspace-path', 'Crew/alpha'], local)).stdout, /own OAuth app/);
      assert.equal((await run(['connections', 'remove', name, '--workspace-path', 'Crew/alpha'], local)).code, 0);
    } finally {
      await upstream.close();
    }
  });

  it('serves without auth on loopback when asked', async () => {
    const server = await serve(['--no-auth']);
    try {
      assert.match(server.line, /auth: off/);
      const client = await connect(server.url);
      assert.equal((await client.listTools()).tools.length, 6);
      await client.close();
    } finally {
      server.child.kill('SIGINT');
      assert.equal(await server.exited, 0);
    }
  });
});
