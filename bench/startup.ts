/**
 * `npm run bench:startup`: how fast the CLI starts, against a bare MCP SDK server in the same run
 * (see bench/README.md for what is measured and the figures of a real run).
 *
 *   serve:    spawn -> `initialize`, `notifications/initialized`, `tools/list` answered, for
 *             - ours: `node dist/main/cli.js --port 0 --control-port 0`, auth on, called with an
 *               app token made by `token create` before the rounds;
 *             - bare: bench/startup-baseline.ts (one tool), compiled to plain JS, run with `node`;
 *             - bare, bundled: the same file bundled as our CLI is (scripts/bundle-cli.ts).
 *   commands: spawn -> exit of `token list` and the other read-only subcommands, and of
 *             `node -e 0` (Node's own start: the floor of any command on this machine).
 *
 * Each round runs every side once, the order rotated round by round, so drift in the machine's
 * load hits all alike; one warm-up round is not counted. Everything lives in one temp folder,
 * deleted at the end (also on failure or Ctrl-C).
 *
 * Flags (after `npm run bench:startup --`): --rounds N (default 15), --no-build (use dist/ as it is).
 */
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build, transform } from 'esbuild';
import { NODE_BUNDLE } from '../scripts/bundle-cli.js';
import { runNode, startServer } from './lib/child.js';
import { hostEnv } from './lib/shared.js';
import { log, median } from './lib/util.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(REPO, 'dist', 'main', 'cli.js');
const OUT = join(REPO, 'bench', 'out');
const argv = process.argv.slice(2);
const ROUNDS = argv.includes('--rounds') ? Number(argv[argv.indexOf('--rounds') + 1]) : 15;
const PROTOCOL = '2025-06-18';

/** The read-only subcommands timed, each as a person would type it. */
const COMMANDS: Array<{ name: string; args: string[] }> = [
  { name: 'token list', args: ['token', 'list'] },
  { name: 'approve (list)', args: ['approve'] },
  { name: 'clients list', args: ['clients', 'list'] },
  { name: 'secrets list', args: ['secrets', 'list'] },
  { name: 'connections list', args: ['connections', 'list'] },
  { name: 'places policy .', args: ['places', 'policy', '.'] },
  { name: 'config', args: ['config'] },
  { name: '--version', args: ['--version'] },
];

const dir = await mkdtemp(join(tmpdir(), 'bench-startup-'));
const cleanup = () => rm(dir, { recursive: true, force: true });
process.once('SIGINT', () => void cleanup().then(() => process.exit(130)));

/** One JSON-RPC POST; answers the parsed message (JSON or the first SSE event) and the session id. */
async function rpc(url: string, body: object, headers: Record<string, string>): Promise<{ message: unknown; session: string | null }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${url} answered ${response.status}: ${text.slice(0, 300)}`);
  const data = response.headers.get('content-type')?.startsWith('text/event-stream') ? /^data: (.*)$/m.exec(text)?.[1] : text;
  return { message: data ? JSON.parse(data) : undefined, session: response.headers.get('mcp-session-id') };
}

/** Spawn to the first answered tools/list, in ms; checks that the list has `expectTool`. */
async function startup(name: string, args: string[], env: NodeJS.ProcessEnv, expectTool: string, token?: string): Promise<number> {
  const started = performance.now();
  const server = await startServer(name, args, { env, cwd: dir });
  try {
    const auth: Record<string, string> = token ? { Authorization: `Bearer ${token}` } : {};
    const init = await rpc(
      server.url,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
      },
      auth,
    );
    const session = { ...auth, 'Mcp-Session-Id': init.session ?? '', 'Mcp-Protocol-Version': PROTOCOL };
    await fetch(server.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...session },
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    }).then((r) => r.text());
    const list = await rpc(server.url, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, session);
    const elapsed = performance.now() - started;
    const tools = (list.message as { result?: { tools?: Array<{ name: string }> } }).result?.tools ?? [];
    if (!tools.some((tool) => tool.name === expectTool))
      throw new Error(`${name}: tools/list has no ${expectTool}: ${JSON.stringify(list.message).slice(0, 300)}`);
    return elapsed;
  } finally {
    await server.stop();
  }
}

/** Spawn to exit of `node args`, in ms; fails on a non-zero exit. */
async function command(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, args, { cwd: dir, env, stdio: 'ignore' });
  const [code] = (await once(child, 'exit')) as [number | null];
  const elapsed = performance.now() - started;
  if (code !== 0) throw new Error(`node ${args.join(' ')} exited with ${code}`);
  return elapsed;
}

/** Runs every side once per round, rotating which goes first; round 0 is a warm-up. */
async function rounds(sides: Array<{ name: string; run: () => Promise<number> }>): Promise<Map<string, number[]>> {
  const times = new Map(sides.map((side) => [side.name, [] as number[]]));
  for (let round = 0; round <= ROUNDS; round += 1) {
    for (let i = 0; i < sides.length; i += 1) {
      const side = sides[(round + i) % sides.length]!;
      const ms = await side.run();
      if (round > 0) times.get(side.name)!.push(ms);
    }
    if (round > 0 && round % 5 === 0) log(`round ${round}/${ROUNDS}`);
  }
  return times;
}

const fmt = (ms: number) => `${ms.toFixed(0)} ms`;
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

try {
  const loadBefore = load();
  log(`bench:startup, ${ROUNDS} rounds; ${cpus().length} cores; load average ${loadBefore}`);
  if (!argv.includes('--no-build')) {
    log('building (npm run build)...');
    await promisify(execFile)('npm', ['run', '--silent', 'build'], { cwd: REPO, maxBuffer: 64 * 1024 * 1024 });
  }

  // The baseline as plain JS beside node_modules (so that its imports resolve as in any app), and bundled.
  await mkdir(OUT, { recursive: true });
  const source = await readFile(join(REPO, 'bench', 'startup-baseline.ts'), 'utf8');
  const plain = join(OUT, 'startup-baseline.mjs');
  await writeFile(plain, (await transform(source, { loader: 'ts', format: 'esm', target: 'node20' })).code);
  const bundled = join(OUT, 'startup-baseline.bundle.mjs');
  await build({ ...NODE_BUNDLE, absWorkingDir: REPO, entryPoints: [join(REPO, 'bench', 'startup-baseline.ts')], outfile: bundled });

  const dirs = { state: join(dir, 'state'), work: join(dir, 'work'), tmp: join(dir, 'tmp') };
  for (const folder of Object.values(dirs)) await mkdir(folder, { recursive: true });
  const env = hostEnv(dirs);
  const token = (await runNode([CLI, 'token', 'create', '--name', 'bench-startup'], { env, cwd: dir })).trim();

  log('serve: spawn -> first answered tools/list');
  const serve = await rounds([
    { name: 'bare SDK server', run: () => startup('bare', [plain], process.env, 'fixed') },
    { name: 'bare SDK server, bundled', run: () => startup('bare bundled', [bundled], process.env, 'fixed') },
    { name: 'ours', run: () => startup('ours', [CLI, '--port', '0', '--control-port', '0'], env, 'read', token) },
  ]);
  log('commands: spawn -> exit');
  const commands = await rounds([
    { name: 'node -e 0', run: () => command(['-e', '0'], env) },
    ...COMMANDS.map((c) => ({ name: c.name, run: () => command([CLI, ...c.args], env) })),
  ]);

  const p50 = (times: Map<string, number[]>, name: string) => median(times.get(name)!);
  const bare = p50(serve, 'bare SDK server');
  const bareBundled = p50(serve, 'bare SDK server, bundled');
  const ours = p50(serve, 'ours');
  const floor = p50(commands, 'node -e 0');
  const loadAfter = load();
  const lines = [
    `load average before ${loadBefore}, after ${loadAfter}; ${cpus().length} cores; ${ROUNDS} rounds (+1 warm-up); Node ${process.version}`,
    '',
    '| spawn -> first tools/list answered | p50 | ours / this |',
    '|---|---|---|',
    `| bare SDK server (plain node) | ${fmt(bare)} | **${(ours / bare).toFixed(2)}** |`,
    `| bare SDK server, bundled | ${fmt(bareBundled)} | ${(ours / bareBundled).toFixed(2)} |`,
    `| ours (bundled CLI, auth on) | ${fmt(ours)} | |`,
    '',
    '| command: spawn -> exit | p50 | minus node -e 0 | / node -e 0 |',
    '|---|---|---|---|',
    `| node -e 0 | ${fmt(floor)} | | |`,
    ...COMMANDS.map(
      (c) =>
        `| ${c.name} | ${fmt(p50(commands, c.name))} | ${fmt(p50(commands, c.name) - floor)} | ${(p50(commands, c.name) / floor).toFixed(2)} |`,
    ),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  const results = {
    at: new Date().toISOString(),
    node: process.version,
    cores: cpus().length,
    load: { before: loadBefore, after: loadAfter },
    rounds: ROUNDS,
    serve: Object.fromEntries(serve),
    commands: Object.fromEntries(commands),
    ratio: { bare: ours / bare, bareBundled: ours / bareBundled },
    // Each command's p50 over Node's own start in the same rounds: what carries over to another machine's load.
    commandRatio: Object.fromEntries(COMMANDS.map((c) => [c.name, p50(commands, c.name) / floor])),
  };
  await writeFile(join(OUT, 'startup-latest.json'), JSON.stringify(results, null, 2));
} finally {
  await cleanup();
}
