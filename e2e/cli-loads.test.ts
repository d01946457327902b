import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { build, type Metafile } from 'esbuild';
import { cliBundle } from '../scripts/bundle-cli.js';
import { startUpstream } from './fixtures/upstream-server.js';

// Each subcommand opens only what it uses (issue 12: they answer fast). The CLI is bundled as the
// build does, with esbuild's map of which source files went into which chunk; each command then runs
// with a module hook that records every file Node loads, and the sources behind those files are
// checked: no MCP SDK, no server parts, unless the command reaches an MCP server.

const REPO = fileURLToPath(new URL('..', import.meta.url));

/** The server's parts: no subcommand but the server itself loads them. */
const SERVER_PARTS = [
  'node_modules/express/',
  'node_modules/yaml/',
  'main/services.ts',
  'main/host.ts',
  'main/machine/skills-watch.ts',
  'main/machine/command-runner.ts',
  'main/machine/sandbox/sandbox-pool.ts',
  'main/audit/audit-log.ts',
];

/** What reaching an MCP server or signing in to one takes: the SDK's clients and the protocol's schemas. */
const REACHING_A_SERVER = [
  'node_modules/@modelcontextprotocol/sdk/dist/esm/client/',
  'node_modules/@modelcontextprotocol/sdk/dist/esm/types.js',
  'node_modules/ajv/',
  'node_modules/undici/',
  'main/connections/gateway/upstream-connection.ts',
  'main/connections/upstream-oauth/sign-in.ts',
];

/** Only issuing a token signs one. */
const SIGNING = ['node_modules/jose/'];

/** Commands that are not about connections load no connection code at all, not even the SDK's error classes. */
const CONNECTIONS = [
  'node_modules/@modelcontextprotocol/sdk/',
  'main/connections/place-connections.ts',
  'main/connections/gateway/',
  'main/connections/oauth/',
];

describe('what each subcommand loads', () => {
  let dir: string;
  let outdir: string;
  let metafile: Metafile;
  let register: string;
  let stateDir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pw-cli-loads-'));
    // Where the build puts it, under a package.json: the program finds its version there.
    outdir = join(dir, 'app', 'dist', 'main');
    metafile = (await build({ ...cliBundle(outdir), metafile: true })).metafile;
    await writeFile(join(dir, 'app', 'package.json'), JSON.stringify({ name: 'persona-mcp-workspace', version: '0.0.0', type: 'module' }));
    // Hooks run on their own thread: each loaded file goes to the file named by LOADS_FILE.
    await writeFile(
      join(dir, 'hooks.mjs'),
      "import { appendFileSync } from 'node:fs';\nexport async function load(url, context, next) {\n  if (url.startsWith('file:')) appendFileSync(process.env.LOADS_FILE, url + '\\n');\n  return next(url, context);\n}\n",
    );
    register = join(dir, 'register.mjs');
    await writeFile(register, "import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n");
    stateDir = join(dir, 'state');
  });
  after(() => rm(dir, { recursive: true, force: true }));

  /** What the bundled CLI runs with here, and `env`. */
  function envWith(env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
    return {
      PATH: process.env.PATH,
      HOME: dir,
      WORKSPACE_STATE_DIR: stateDir,
      WORKSPACE_CWD: dir,
      WORKSPACE_SECRET_STORE: 'file',
      WORKSPACE_REGISTRY_URL: '',
      ...env,
    };
  }

  /** Runs the bundled CLI; answers the source files (repo-relative) behind every bundle file it loaded. */
  async function sourcesLoadedBy(
    args: string[],
    options: { stdin?: string; env?: NodeJS.ProcessEnv; stopAt?: RegExp; untilLoaded?: RegExp } = {},
  ): Promise<Set<string>> {
    const loads = join(dir, `loads-${Math.random().toString(36).slice(2)}.txt`);
    await writeFile(loads, '');
    const child = spawn(process.execPath, ['--import', register, join(outdir, 'cli.js'), ...args], {
      env: { ...envWith(options.env), LOADS_FILE: loads },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    let stopping: NodeJS.Timeout | undefined;
    const stopSoon = () => child.kill('SIGTERM');
    const collect = (d: string) => {
      output += d;
      // A server runs until told to stop: a little after it has said this (what it loads then counts too),
      // or once it has loaded a file named by `untilLoaded` (at most 20 s later).
      if (options.stopAt?.test(output)) stopping ??= options.untilLoaded ? waitForLoad(options.untilLoaded) : setTimeout(stopSoon, 500);
    };
    const waitForLoad = (pattern: RegExp): NodeJS.Timeout => {
      const deadline = Date.now() + 20_000;
      const look = async (): Promise<void> => {
        if (pattern.test(await readFile(loads, 'utf8')) || Date.now() > deadline) stopSoon();
        else stopping = setTimeout(() => void look(), 50);
      };
      return setTimeout(() => void look(), 50);
    };
    child.stdout.setEncoding('utf8').on('data', collect);
    child.stderr.setEncoding('utf8').on('data', collect);
    child.stdin.end(options.stdin ?? '');
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    assert.equal(code, 0, `${args.join(' ')}: ${output}`);
    clearTimeout(stopping);
    const sources = new Set<string>();
    for (const url of (await readFile(loads, 'utf8')).split('\n').filter(Boolean)) {
      const file = relative(REPO, fileURLToPath(url));
      const inputs = metafile.outputs[file]?.inputs;
      if (!inputs) continue; // the hook and register files themselves
      for (const input of Object.keys(inputs)) sources.add(input);
    }
    return sources;
  }

  function assertOnlyItsOwn(
    command: string,
    sources: Set<string>,
    expected: string,
    unused = [...SERVER_PARTS, ...REACHING_A_SERVER, ...CONNECTIONS],
  ): void {
    // The positive side, so that a hook that saw nothing could not pass.
    assert.ok(sources.has(expected), `${command} did not load ${expected}; it loaded ${[...sources].join(', ')}`);
    const loaded = [...sources].filter((source) => unused.some((prefix) => source.startsWith(prefix)));
    assert.deepEqual(loaded, [], `${command} loaded what it does not use`);
  }

  it('token, approve, clients, places and config load none of the server, the MCP SDK or the connections; only token create signs', async () => {
    const created = await sourcesLoadedBy(['token', 'create', '--name', 'loads']);
    assertOnlyItsOwn('token create', created, 'main/cli-tokens.ts');
    assert.ok(
      [...created].some((source) => source.startsWith('node_modules/jose/')),
      'token create signed without the JWT library?',
    );
    for (const [args, expected] of [
      [['token', 'list'], 'main/auth/token-file.ts'],
      [['approve'], 'main/auth/agent-oauth/approvals.ts'],
      [['clients', 'list'], 'main/auth/agent-oauth/approvals.ts'],
      [['places', 'policy', '.'], 'main/places/access-directory.ts'],
      [['config'], 'main/cli-config.ts'],
    ] as const) {
      assertOnlyItsOwn(args.join(' '), await sourcesLoadedBy([...args]), expected, [
        ...SERVER_PARTS,
        ...REACHING_A_SERVER,
        ...CONNECTIONS,
        ...SIGNING,
      ]);
    }
  });

  it('secrets open the secret store and the state files only', async () => {
    assertOnlyItsOwn(
      'secrets set',
      await sourcesLoadedBy(['secrets', 'set', 'KEY'], { stdin: 'value' }),
      'main/connections/place-secrets-access.ts',
    );
    assertOnlyItsOwn('secrets list', await sourcesLoadedBy(['secrets', 'list']), 'main/secrets/place-secrets.ts', [
      ...SERVER_PARTS,
      ...REACHING_A_SERVER,
      ...CONNECTIONS,
      ...SIGNING,
    ]);
  });

  it('the server starts without what its first requests do not use', async () => {
    const skills = join(dir, 'skills');
    const serve = () =>
      sourcesLoadedBy(['--port', '0', '--control-port', '0'], { env: { WORKSPACE_SKILLS_DIR: skills }, stopAt: /listening on http/ });
    assertOnlyItsOwn('the server', await serve(), 'main/mcp/agent-sessions.ts', [
      // No skill: no SKILL.md to parse.
      'node_modules/yaml/',
      // Agents' configuration files: only commands and the page read them.
      'node_modules/jsonc-parser/',
      // Zod 3, which the MCP SDK's server imports for schemas this program does not have (scripts/bundle-cli.ts).
      'node_modules/zod/v3/',
      'node_modules/zod-to-json-schema/',
      // No connection yet: nothing to reach.
      ...REACHING_A_SERVER.filter((part) => !part.startsWith('node_modules/ajv/') && !part.endsWith('/types.js')),
      // The page and its API: loaded by the page's first request.
      'node_modules/express/',
      'main/http/control-plane.ts',
    ]);
    // A skill is read at start, with the YAML parser.
    await mkdir(join(skills, 'hello'), { recursive: true });
    await writeFile(join(skills, 'hello', 'SKILL.md'), '---\nname: hello\ndescription: Says hello.\n---\nHello.\n');
    assert.ok(
      [...(await serve())].some((source) => source.startsWith('node_modules/yaml/')),
      'the server read a skill without the YAML parser?',
    );
  });

  it('a server with a remote connection loads its client while the first agent connects, reaching no server, and only the parts of undici it uses', async () => {
    // An "upstream" that counts who connects, and ends each connection at once (unreachable, quickly).
    let connects = 0;
    const upstream = createServer((socket) => {
      connects += 1;
      socket.destroy();
    }).listen(0, '127.0.0.1');
    await once(upstream, 'listening');
    try {
      const env = { WORKSPACE_STATE_DIR: join(dir, 'state-remote'), WORKSPACE_ALLOW_PRIVATE_NETWORK: '1' };
      const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/mcp`;
      await sourcesLoadedBy(['connections', 'add', '--url', url, '--name', 'Counted'], { env });
      connects = 0;
      const served = await sourcesLoadedBy(['--port', '0', '--control-port', '0'], {
        env,
        stopAt: /listening on http/,
        untilLoaded: /\/chunks\/undici-[^/]*\.js$/m,
      });
      assert.ok(served.has('main/connections/gateway/upstream-connection.ts'), 'the server did not load the upstream client');
      assert.ok(served.has('node_modules/undici/lib/dispatcher/agent.js'), "the server did not load undici's Agent");
      assert.ok(served.has('node_modules/undici/lib/web/fetch/index.js'), "the server did not load undici's fetch");
      // scripts/bundle-cli.ts: undici's index and what only it loads stay out.
      const unused = [...served].filter(
        (source) =>
          source === 'node_modules/undici/index.js' ||
          ['mock/', 'cache/', 'web/websocket/', 'web/eventsource/', 'interceptor/'].some((part) =>
            source.startsWith(`node_modules/undici/lib/${part}`),
          ),
      );
      assert.deepEqual(unused, [], 'the server loaded parts of undici it does not use');
      assert.equal(connects, 0, 'the server reached the upstream before any agent asked for it');
    } finally {
      upstream.close();
    }
  });

  it("the bundled server lists and calls an upstream's tool with the parts of undici it has", async () => {
    const upstream = await startUpstream({ name: 'bundled' });
    const env = { WORKSPACE_STATE_DIR: join(dir, 'state-call'), WORKSPACE_ALLOW_PRIVATE_NETWORK: '1' };
    await sourcesLoadedBy(['connections', 'add', '--url', upstream.url, '--name', 'Echo'], { env });
    const server = spawn(process.execPath, [join(outdir, 'cli.js'), '--no-auth', '--port', '0', '--control-port', '0'], {
      env: envWith(env),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const client = new Client({ name: 'cli-loads', version: '1.0.0' });
    try {
      let printed = '';
      const url = await new Promise<string>((resolve, reject) => {
        server.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          const found = /listening on (http:\/\/\S+\/mcp)/.exec((printed += chunk));
          if (found) resolve(found[1]!);
        });
        server.once('exit', (code) => reject(new Error(`the server exited (${code}): ${printed}`)));
      });
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      let echo: string | undefined;
      for (const deadline = Date.now() + 20_000; !echo && Date.now() < deadline;) {
        echo = (await client.listTools()).tools.find((tool) => tool.name.endsWith('__echo'))?.name;
      }
      assert.ok(echo, "the upstream's echo was never listed");
      // Calls go out on undici's request API (main/connections/gateway/upstream-post.ts), listings on its fetch.
      const result = await client.callTool({ name: echo, arguments: { text: 'through the bundle' } });
      assert.deepEqual(result.content, [{ type: 'text', text: 'echo: through the bundle' }]);
      assert.equal(upstream.calls.get('echo'), 1);
    } finally {
      await client.close();
      server.kill('SIGTERM');
      if (server.exitCode === null) await once(server, 'exit');
      await upstream.close();
    }
  });

  it('connections load the MCP SDK only to reach a server', async () => {
    assertOnlyItsOwn('connections list', await sourcesLoadedBy(['connections', 'list']), 'main/connections/place-connections.ts', [
      ...SERVER_PARTS,
      ...REACHING_A_SERVER,
    ]);
    // Adding one checks its server at once (nothing listens on port 1: unreachable), so the client is loaded then.
    const added = await sourcesLoadedBy(['connections', 'add', '--url', 'http://127.0.0.1:1/mcp', '--name', 'Nowhere'], {
      env: { WORKSPACE_ALLOW_PRIVATE_NETWORK: '1' },
    });
    assert.ok(added.has('main/connections/gateway/upstream-connection.ts'), 'connections add did not load the upstream client');
    assert.ok(
      [...added].some((source) => source.startsWith('node_modules/@modelcontextprotocol/sdk/dist/esm/client/')),
      'connections add did not load the SDK client',
    );
  });
});
