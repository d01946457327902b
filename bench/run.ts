/**
 * `npm run bench`: two benchmarks, see bench/README.md for what is measured and the figures of a
 * real run. Raw results go to bench/out/.
 *
 *   read:     latency/throughput of our `read` tool against a bare MCP SDK server, a breakdown of
 *             where the difference goes, and the server's peak memory while reading the end of a
 *             1 GiB file and while bash prints 1 GiB (this file).
 *   gateway:  an upstream MCP server's `echo` called through our host's gateway against the same
 *             call made directly to the upstream, and a breakdown (bench/gateway.ts).
 *
 * Flags (after `npm run bench --`):
 *   --only read|gateway  run one of the two benchmarks (default: both)
 *   --no-build      use dist/ as it is instead of running `tsc -p tsconfig.build.json` first
 *   --quick         fewer rounds (a smoke run; figures are noisier)
 *   --no-breakdown  skip the cost breakdowns (variant servers and in-process timings)
 *   --no-memory     skip the 1 GiB memory benchmarks
 *   --profile       run our server and the baseline with --cpu-prof during the read headline
 *                   comparison, and our host during the gateway's; profiles and their summary
 *                   land in bench/out/prof/
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, open, readdir, readFile, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AgentTokenStore } from '../main/auth/agent-tokens.js';
import { gatewayBench, gatewayReport, type GatewayResults } from './gateway.js';
import { memoryOf, resetPeak, runNode, startServer, watchMemory, type ServerProcess } from './lib/child.js';
import { callOnce, closeSession, openSession, textOf, type Call, type Session, type Summary } from './lib/load.js';
import { microBench, type MicroResult } from './lib/micro.js';
import { CASES, pairedMedian, roundRatios, runRounds, type CaseFigures, type CaseName, type Plan } from './lib/rounds.js';
import { BASELINE_TEXT, BASELINE_TOOL, hostEnv, TEXT_1K } from './lib/shared.js';
import { log, median, signed, sleep } from './lib/util.js';
import { summarizeProfile } from './profile-summary.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(REPO, 'dist', 'main', 'cli.js');
const BASELINE_SERVER = join(REPO, 'bench', 'baseline-server.ts');
const OUT_DIR = join(REPO, 'bench', 'out');
const PROF_DIR = join(OUT_DIR, 'prof');

const argv = process.argv.slice(2);
const args = new Set(argv);
const QUICK = args.has('--quick');
const PROFILE = args.has('--profile');
const ONLY = argv.includes('--only') ? argv[argv.indexOf('--only') + 1] : undefined;
if (ONLY !== undefined && ONLY !== 'read' && ONLY !== 'gateway') {
  process.stderr.write(`bench: --only takes "read" or "gateway", not ${JSON.stringify(ONLY)}\n`);
  process.exit(2);
}
const RUN_READ = ONLY !== 'gateway';
const RUN_GATEWAY = ONLY !== 'read';

// Our server is started with `--port 0 --control-port 0`: free ports for the agent endpoint and the
// page's control endpoint, so that several can run side by side (and beside a real one).

// Latency: 8 sessions per server (8 agents); concurrency 1 uses the first of them.
const SESSIONS = 8;
const P50_GOAL_RATIO = 1.15;

const HEADLINE: Plan = QUICK
  ? { rounds: 3, c1Calls: 200, c8CallsPerSession: 40, warmupC1: 200, warmupC8PerSession: 30 }
  : { rounds: 12, c1Calls: 250, c8CallsPerSession: 60, warmupC1: 300, warmupC8PerSession: 50 };
const BREAKDOWN: Plan = QUICK
  ? { rounds: 2, c1Calls: 100, c8CallsPerSession: 20, warmupC1: 100, warmupC8PerSession: 15 }
  : { rounds: 12, c1Calls: 60, c8CallsPerSession: 12, warmupC1: 100, warmupC8PerSession: 20 };

// Memory: a 1 GiB text file of 64-byte lines, and bash printing 1 GiB.
const MiB = 1024 * 1024;
const BIG_FILE_MIB = 1024;
const LINE_BYTES = 64;
const BIG_FILE_LINES = (BIG_FILE_MIB * MiB) / LINE_BYTES;
const TAIL_LINES = 100;
const BASH_BYTES = 1024 * MiB;
const BASH_COMMAND = 'yes | head -c 1G';
const BASH_RUNS = 2;
const SAMPLE_EVERY_MS = 10;
const LONG_CALL_MS = 180_000;

// The whole run stops by itself past this, whatever happens.
const WATCHDOG_MS = 9 * 60_000;

const servers = new Set<ServerProcess>();
let root: string | undefined;

interface Context {
  /** Environment of our server: its state dir, working dir and temp dir, all under the run's temp root. */
  env: NodeJS.ProcessEnv;
  work: string;
  tmp: string;
  /** Our app token, from `token create`. */
  token: string;
  smallFile: string;
  /** For the bare server with our auth: its state dir and a token minted there. */
  bareAuth: { stateDir: string; token: string };
}

async function main(): Promise<void> {
  const startedAt = new Date();
  const load: { start: number[]; end?: number[] } = { start: loadavg() };
  root = await mkdtemp(join(tmpdir(), 'persona-bench-'));
  const dirs = { state: join(root, 'state'), work: join(root, 'work'), tmp: join(root, 'tmp'), bareAuth: join(root, 'bare-auth-state') };
  await Promise.all(Object.values(dirs).map((d) => mkdir(d, { recursive: true, mode: 0o700 })));
  const env = hostEnv(dirs);

  let build = 'skipped (--no-build)';
  if (!args.has('--no-build')) {
    log('building (tsc -p tsconfig.build.json)...');
    try {
      await runNode([join(REPO, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(REPO, 'tsconfig.build.json')], {
        env: process.env,
        cwd: REPO,
      });
      build = 'ok';
    } catch (error) {
      // tsc still emits JavaScript when only types are wrong (others may be mid-edit): go on, and say so.
      await stat(CLI);
      build = `type errors, dist/ emitted anyway: ${(error as Error).message.split('\n').slice(1).filter(Boolean).slice(0, 3).join(' | ')}`;
      log(`WARNING: the build reported ${build}`);
    }
  }
  // The code measured is what was just built: read the commit now (others may commit during the run).
  const commit = await gitCommit();
  if (PROFILE) await rm(PROF_DIR, { recursive: true, force: true });

  let latency: Results['latency'];
  let breakdown: Results['breakdown'];
  let memory: Results['memory'];
  if (RUN_READ) {
    const token = (await runNode([CLI, 'token', 'create', '--name', 'bench', '--expires', '1d'], { env, cwd: dirs.work })).trim();
    const smallFile = join(dirs.work, 'small-1k.txt');
    await writeFile(smallFile, TEXT_1K);
    if (Buffer.byteLength(TEXT_1K) !== 1024) throw new Error('the small file must be 1 KiB');
    const bareAuthToken = (await new AgentTokenStore({ stateDir: dirs.bareAuth }).create({ name: 'bench', expiresIn: '1d' })).token;
    const ctx: Context = {
      env,
      work: dirs.work,
      tmp: dirs.tmp,
      token,
      smallFile,
      bareAuth: { stateDir: dirs.bareAuth, token: bareAuthToken },
    };

    log('\n1. latency: our read vs the bare SDK server');
    const headline = await compare(ctx, [TARGETS.baseline, TARGETS.ours], HEADLINE, PROFILE);
    latency = { goalP50Ratio: P50_GOAL_RATIO, cases: headline.cases, serverRss: headline.serverRss };

    if (!args.has('--no-breakdown')) {
      log('\n1b. breakdown: the bare server with one piece of ours added at a time');
      const variants = await compare(ctx, Object.values(TARGETS), BREAKDOWN, false);
      log('\n1c. in-process timings of the per-request pieces');
      const micro = await microBench(root, smallFile);
      for (const m of micro)
        log(`  ${m.name}: ${m.wallUs.toFixed(0)} us wall, ${m.cpuUs.toFixed(0)} us CPU, ${m.threadPoolOps} thread-pool round trips`);
      breakdown = { cases: variants.cases, deltas: breakdownDeltas(variants.cases), micro };
    }

    memory = args.has('--no-memory') ? undefined : await memoryBench(ctx);
  }

  let gateway: GatewayResults | undefined;
  if (RUN_GATEWAY) {
    log('\n3. gateway: an upstream tool called through our host vs directly');
    gateway = await gatewayBench({
      root: join(root, 'gateway'),
      quick: QUICK,
      breakdown: !args.has('--no-breakdown'),
      profileDir: PROFILE ? join(PROF_DIR, 'gateway-ours') : undefined,
      sessions: SESSIONS,
      track,
      stop: stopServer,
    });
  }
  const profiles = PROFILE ? await profileSummaries() : undefined;
  load.end = loadavg();

  const results: Results = {
    startedAt: startedAt.toISOString(),
    durationS: Math.round((Date.now() - startedAt.getTime()) / 100) / 10,
    machine: machine(),
    loadavg: load,
    build,
    commit,
    settings: {
      only: ONLY ?? 'read and gateway',
      sessions: SESSIONS,
      headline: HEADLINE,
      breakdown: BREAKDOWN,
      quick: QUICK,
      profile: PROFILE,
    },
    latency,
    breakdown,
    memory,
    gateway,
    profiles,
  };
  await mkdir(OUT_DIR, { recursive: true });
  const stamp = startedAt.toISOString().replace(/[:.]/g, '-');
  const json = `${JSON.stringify(results, null, 2)}\n`;
  await writeFile(join(OUT_DIR, `results-${stamp}.json`), json);
  await writeFile(join(OUT_DIR, 'latest.json'), json);
  const text = report(results);
  await writeFile(join(OUT_DIR, 'latest.md'), text);
  log(`\nraw results: bench/out/results-${stamp}.json (and bench/out/latest.json; this table: bench/out/latest.md)\n`);
  process.stdout.write(text);
}

// ---------------------------------------------------------------------------------------------
// 1. Latency and throughput: servers in their own processes, the SDK client here as the load.

interface TargetSpec {
  key: string;
  label: string;
  /** Node arguments of the server process. */
  args: (profileDir?: string) => string[];
  /** The server's environment and working directory. */
  env: (ctx: Context) => NodeJS.ProcessEnv;
  cwd: (ctx: Context) => string;
  /** The bearer token its sessions send, if any. */
  token: (ctx: Context) => string | undefined;
  call: (ctx: Context) => Call;
}

const readCall = (ctx: Context): Call => ({
  name: 'read',
  arguments: { path: ctx.smallFile },
  check: (r) => expectText(r, TEXT_1K, 'read of the 1 KiB file'),
});
// The same arguments as the read call, so that requests are the same size.
const fixedCall =
  (expected: string) =>
  (ctx: Context): Call => ({
    name: BASELINE_TOOL,
    arguments: { path: ctx.smallFile },
    check: (r) => expectText(r, expected, 'baseline tool'),
  });
const profiled = (dir: string | undefined, rest: string[]): string[] => (dir ? ['--cpu-prof', '--cpu-prof-dir', dir, ...rest] : rest);

/** A variant of the bare server (bench/baseline-server.ts), plain environment, no auth. */
const bare = (key: string, label: string, flags: string[], answer: string): TargetSpec => ({
  key,
  label,
  args: () => ['--import', 'tsx', BASELINE_SERVER, ...flags],
  env: () => process.env,
  cwd: () => REPO,
  token: () => undefined,
  call: fixedCall(answer),
});

const TARGETS = {
  baseline: {
    ...bare('baseline', 'bare SDK server, fixed short text', [], BASELINE_TEXT),
    args: (prof) => profiled(prof, ['--import', 'tsx', BASELINE_SERVER]),
  },
  text1k: bare('text1k', 'bare + 1 KiB fixed answer', ['--tool', 'text1k'], TEXT_1K),
  bareRead: bare('bareRead', 'bare + our read function', ['--tool', 'read'], TEXT_1K),
  stat4: bare('stat4', 'bare + 1 KiB fixed answer after 4 awaited fs stat calls', ['--tool', 'stat4'], TEXT_1K),
  fsread: bare('fsread', 'bare + fs.promises.readFile of the 1 KiB file', ['--tool', 'fsread'], TEXT_1K),
  readsync: bare('readsync', 'bare + fs.readFileSync of the 1 KiB file', ['--tool', 'readsync'], TEXT_1K),
  bareAuth: {
    ...bare('bareAuth', 'bare + our JWT auth', ['--auth'], BASELINE_TEXT),
    // A state dir of its own, whose token list and signing key (a file) the bench made with main/auth.
    env: (ctx) => ({ ...process.env, WORKSPACE_STATE_DIR: ctx.bareAuth.stateDir }),
    token: (ctx) => ctx.bareAuth.token,
  },
  oursNoAuth: {
    key: 'oursNoAuth',
    label: 'ours, --no-auth',
    args: () => [CLI, '--port', '0', '--control-port', '0', '--no-auth'],
    env: (ctx) => ctx.env,
    cwd: (ctx) => ctx.work,
    token: () => undefined,
    call: readCall,
  },
  ours: {
    key: 'ours',
    label: 'ours (auth on, app token)',
    args: (prof) => profiled(prof, [CLI, '--port', '0', '--control-port', '0']),
    env: (ctx) => ctx.env,
    cwd: (ctx) => ctx.work,
    token: (ctx) => ctx.token,
    call: readCall,
  },
} satisfies Record<string, TargetSpec>;

/** Each row: what it measures, then the two servers whose difference measures it. */
const BREAKDOWN_ROWS: Array<[string, keyof typeof TARGETS, keyof typeof TARGETS]> = [
  ['a 1 KiB answer instead of a short one', 'text1k', 'baseline'],
  ['our read function instead of a fixed 1 KiB text', 'bareRead', 'text1k'],
  ['  reference: 4 thread-pool round trips (fs stat x 4; our read of a small local file makes 1, the open)', 'stat4', 'text1k'],
  ['  reference: fs.promises.readFile instead', 'fsread', 'text1k'],
  ['  reference: fs.readFileSync instead', 'readsync', 'text1k'],
  ['our JWT auth (app token), on the bare server', 'bareAuth', 'baseline'],
  [
    'the rest of ours without auth (our McpServer and tool adapter, audit log, Host/Origin guard, sessions layer)',
    'oursNoAuth',
    'bareRead',
  ],
  ['our JWT auth, on ours (ours minus ours --no-auth)', 'ours', 'oursNoAuth'],
  ['everything (ours minus bare)', 'ours', 'baseline'],
];

interface Delta {
  what: string;
  /** Minuend and subtrahend: target keys. */
  of: [string, string];
  c1P50Ms: number;
  c1ServerCpuMsPerCall: number;
  c8ServerCpuMsPerCall: number;
}

/**
 * Each difference is taken round by round (the two servers ran back to back) and the median of
 * those is kept: a burst of noise from other processes spoils a round, not the figure.
 */
function breakdownDeltas(cases: Record<CaseName, CaseResult>): Delta[] {
  return BREAKDOWN_ROWS.map(([what, a, b]) => ({
    what,
    of: [a, b],
    c1P50Ms: pairedMedian(cases.c1, a, b, 'p50'),
    c1ServerCpuMsPerCall: pairedMedian(cases.c1, a, b, 'serverCpuPerCall'),
    c8ServerCpuMsPerCall: pairedMedian(cases.c8, a, b, 'serverCpuPerCall'),
  }));
}

interface CaseResult extends CaseFigures {
  /** Ours over the baseline (headline only). */
  ratio?: { p50: number; p99: number; throughput: number; p50MedianOfRounds: number; p50PerRound: number[] };
  p50GoalMet?: boolean;
}

async function compare(ctx: Context, targets: TargetSpec[], plan: Plan, profile: boolean) {
  log('  starting servers (each in its own process)...');
  const running: Array<{ spec: TargetSpec; server: ServerProcess; sessions: Session[]; call: Call }> = [];
  try {
    for (const spec of targets) {
      const profDir = profile ? join(PROF_DIR, spec.key) : undefined;
      if (profDir) await rm(profDir, { recursive: true, force: true });
      const server = track(await startServer(spec.key, spec.args(profDir), { env: spec.env(ctx), cwd: spec.cwd(ctx) }));
      const sessions: Session[] = [];
      for (let i = 0; i < SESSIONS; i++) sessions.push(await openSession(server.url, spec.token(ctx)));
      running.push({ spec, server, sessions, call: spec.call(ctx) });
      log(`    ${spec.key.padEnd(10)} ${server.url} (pid ${server.pid}): ${spec.label}`);
    }
    const idleRss = Object.fromEntries(
      await Promise.all(running.map(async (r) => [r.spec.key, (await memoryOf(r.server.pid)).rss] as const)),
    );

    const figures = await runRounds(
      running.map((r) => ({ key: r.spec.key, sessions: r.sessions, call: r.call, pids: [r.server.pid] })),
      plan,
    );

    const peakRss = Object.fromEntries(
      await Promise.all(running.map(async (r) => [r.spec.key, (await memoryOf(r.server.pid)).hwm] as const)),
    );
    await Promise.all(running.flatMap((r) => r.sessions.map(closeSession)));

    const cases = {} as Record<CaseName, CaseResult>;
    for (const name of CASES) {
      const result: CaseResult = figures[name];
      const ours = result.summaries['ours'];
      const base = result.summaries['baseline'];
      if (ours && base) {
        const perRound = roundRatios(result, 'ours', 'baseline');
        result.ratio = {
          p50: ours.p50 / base.p50,
          p99: ours.p99 / base.p99,
          throughput: ours.throughput / base.throughput,
          p50MedianOfRounds: median(perRound),
          p50PerRound: perRound,
        };
        result.p50GoalMet = result.ratio.p50 <= P50_GOAL_RATIO;
      }
      cases[name] = result;
    }
    return { cases, serverRss: { idleWithSessions: idleRss, peak: peakRss } };
  } finally {
    await Promise.all(running.map((r) => stopServer(r.server)));
  }
}

async function profileSummaries(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  // The read headline's two servers, and our host in the gateway headline.
  for (const key of ['baseline', 'ours', 'gateway-ours']) {
    const dir = join(PROF_DIR, key);
    const files = (await readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith('.cpuprofile'));
    if (files.length === 0) continue;
    out[key] = await summarizeProfile(join(dir, files[0]!));
  }
  const text = Object.entries(out)
    .map(([key, summary]) => `== ${key} ==\n${summary}`)
    .join('\n');
  await mkdir(PROF_DIR, { recursive: true });
  await writeFile(join(PROF_DIR, 'summary.txt'), text);
  log(`  profile summaries: bench/out/prof/summary.txt`);
  return out;
}

// ---------------------------------------------------------------------------------------------
// 2. Peak RSS of our server: read the last 100 lines of a 1 GiB file; bash printing 1 GiB.

async function memoryBench(ctx: Context) {
  log('\n2. memory: a fresh server of ours...');
  const server = track(await startServer('ours', [CLI, '--port', '0', '--control-port', '0'], { env: ctx.env, cwd: ctx.work }));
  const outputFolders = new Set<string>();
  let figuresSoFar;
  try {
    const session = await openSession(server.url, ctx.token);
    // One session and a few calls, so "idle" includes what any used server holds.
    for (let i = 0; i < 20; i++) await callOnce(session, readCall(ctx));
    await sleep(1000);
    const idle = await idleRss(server.pid);
    log(`  idle server RSS ${mb(idle)} MiB`);
    const peakResettable = await resetPeak(server.pid);

    // (a) read: the last 100 lines of a 1 GiB text file.
    const bigFile = join(ctx.work, 'big-1g.txt');
    let read;
    try {
      log(`  writing a ${BIG_FILE_MIB} MiB file (${BIG_FILE_LINES} lines of ${LINE_BYTES} bytes)...`);
      await writeBigFile(bigFile);
      const first = BIG_FILE_LINES - TAIL_LINES + 1;
      const call: Call = {
        name: 'read',
        arguments: { path: bigFile, offset: first, limit: TAIL_LINES },
        check: (r) => {
          const note = `[lines ${first}-${BIG_FILE_LINES} of ${BIG_FILE_LINES}]`;
          if (!textOf(r).includes(note))
            throw new Error(`read of the 1 GiB file: expected the note ${note}, got: ${textOf(r).slice(-300)}`);
          const lines = (r.content[0] as { text: string }).text.split('\n').length - 1;
          if (lines !== TAIL_LINES) throw new Error(`read of the 1 GiB file returned ${lines} lines, expected ${TAIL_LINES}`);
        },
      };
      if (peakResettable) await resetPeak(server.pid);
      const before = await memoryOf(server.pid);
      const t0 = performance.now();
      const watched = await watchMemory(server.pid, SAMPLE_EVERY_MS, () => callOnce(session, call, LONG_CALL_MS));
      read = figures(before.rss, watched, performance.now() - t0, peakResettable);
      log(
        `  read last ${TAIL_LINES} lines of 1 GiB: peak ${mb(read.peakRss)} MiB (+${mb(read.peakRss - idle)} over idle), ${(read.durationMs / 1000).toFixed(1)} s`,
      );
    } finally {
      await rm(bigFile, { force: true });
    }

    // (b) bash printing 1 GiB, twice: a second peak above the first would mean memory kept per command.
    const bash = [];
    for (let run = 1; run <= BASH_RUNS; run++) {
      if (peakResettable) await resetPeak(server.pid);
      const before = await memoryOf(server.pid);
      const t0 = performance.now();
      const saved: string[] = [];
      try {
        const watched = await watchMemory(server.pid, SAMPLE_EVERY_MS, () =>
          callOnce(session, { name: 'bash', arguments: { command: BASH_COMMAND, timeout: 170 }, check: () => {} }, LONG_CALL_MS),
        );
        const result: CallToolResult = watched.result;
        const structured = (result.structuredContent ?? {}) as {
          exitCode?: number;
          stdoutFullOutputPath?: string;
          stderrFullOutputPath?: string;
        };
        for (const path of [structured.stdoutFullOutputPath, structured.stderrFullOutputPath]) if (path) saved.push(path);
        const savedPath = structured.stdoutFullOutputPath;
        const savedFile = savedPath ? { path: savedPath, bytes: (await stat(savedPath)).size } : undefined;
        const text = textOf(result);
        if (structured.exitCode !== 0) throw new Error(`bash exited with ${structured.exitCode}: ${text.slice(0, 500)}`);
        if (!text.includes(`[${BASH_BYTES} bytes in all;`))
          throw new Error(`the bash answer does not report ${BASH_BYTES} bytes: ${text.slice(-500)}`);
        if (!savedFile || !text.includes(savedFile.path))
          throw new Error(`the bash answer names no saved full-output file: ${text.slice(-500)}`);
        const figs = {
          run,
          command: BASH_COMMAND,
          ...figures(before.rss, watched, performance.now() - t0, peakResettable),
          answerBytes: Buffer.byteLength(text),
          savedFile,
        };
        bash.push(figs);
        log(
          `  bash printing 1 GiB (run ${run}): peak ${mb(figs.peakRss)} MiB (+${mb(figs.peakRss - idle)} over idle), ${(figs.durationMs / 1000).toFixed(1)} s; ` +
            `full output saved to ${savedFile.path} (${savedFile.bytes} bytes, deleted now)`,
        );
      } finally {
        for (const path of saved) await removeSaved(path, outputFolders);
      }
    }
    await sleep(1000);
    const after = (await memoryOf(server.pid)).rss;
    await closeSession(session);
    figuresSoFar = { idleRss: idle, afterRss: after, peakResettable, read, bash };
  } finally {
    await stopServer(server);
    for (const folder of outputFolders) await rmdir(folder).catch(() => {});
  }
  // Whatever is left in our server's temp dir once it stopped and the saved output was deleted: should be nothing.
  return { ...figuresSoFar, leftoversInServerTmp: await leftoverFiles(ctx.tmp) };
}

function figures(
  startRss: number,
  watched: { peakSampledRss: number; hwm: number; samples: number },
  durationMs: number,
  resettable: boolean,
) {
  return {
    startRss,
    // With VmHWM reset just before, the kernel's peak is exact; otherwise only the samples are about this call.
    peakRss: resettable ? Math.max(watched.hwm, watched.peakSampledRss) : watched.peakSampledRss,
    peakSampledRss: watched.peakSampledRss,
    hwm: watched.hwm,
    samples: watched.samples,
    durationMs,
  };
}

/** The median of a few VmRSS samples a quarter second apart. */
async function idleRss(pid: number): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < 5; i++) {
    samples.push((await memoryOf(pid)).rss);
    await sleep(250);
  }
  return median(samples);
}

/** 1 GiB of 64-byte numbered lines: one 1 MiB block written 1024 times. */
async function writeBigFile(path: string): Promise<void> {
  const line = (n: number) => `line ${n}`.padEnd(LINE_BYTES - 1, ' the quick brown fox jumps over the lazy dog') + '\n';
  const block = Buffer.from(Array.from({ length: MiB / LINE_BYTES }, (_, i) => line(i)).join(''));
  if (block.length !== MiB) throw new Error('block size');
  const handle = await open(path, 'w');
  try {
    for (let i = 0; i < BIG_FILE_MIB; i++) await handle.write(block);
  } finally {
    await handle.close();
  }
}

/**
 * Deletes a saved output file. Its folder (one per server) stays while the server runs and goes when
 * it stops; the per-user folder above it is noted, to be removed once the server stopped.
 */
async function removeSaved(path: string, folders: Set<string>): Promise<void> {
  await rm(path, { force: true });
  const base = dirname(dirname(path));
  if (basename(base).startsWith('persona-workspace-output-')) folders.add(base);
}

async function leftoverFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  return entries.map((e) => join(dir, e));
}

// ---------------------------------------------------------------------------------------------
// Output.

interface Results {
  startedAt: string;
  durationS: number;
  build: string;
  commit: string;
  machine: ReturnType<typeof machine>;
  loadavg: { start: number[]; end?: number[] };
  settings: Record<string, unknown>;
  /** The read benchmark (absent with --only gateway). */
  latency: { goalP50Ratio: number; cases: Record<CaseName, CaseResult>; serverRss: unknown } | undefined;
  breakdown: { cases: Record<CaseName, CaseResult>; deltas: Delta[]; micro: MicroResult[] } | undefined;
  memory: Awaited<ReturnType<typeof memoryBench>> | undefined;
  /** The gateway benchmark (absent with --only read). */
  gateway: GatewayResults | undefined;
  profiles: Record<string, string> | undefined;
}

function report(r: Results): string {
  const lines: string[] = [];
  const m = r.machine;
  const loads = [r.loadavg.start[0]!, r.loadavg.end?.[0] ?? 0];
  lines.push(`code: ${r.commit}; build: ${r.build}`);
  lines.push(
    `machine: ${m.nproc} CPUs (${m.cpu}), ${m.memoryGB} GB, node ${m.node}, SDK ${m.sdk}; ` +
      `1-minute load average ${loads.map((l) => l.toFixed(2)).join(' at start, ')} at the end; run took ${r.durationS}s`,
  );
  // The bench itself keeps about 2 CPUs busy (load generator + server), so only load beyond that is others'.
  if (loads[0]! > m.nproc / 2 || loads[1]! > m.nproc + 1) {
    lines.push(
      `WARNING: other processes were using the CPUs (load average above ${m.nproc / 2} at start or ${m.nproc + 1} at the end): these figures are noisier than usual.`,
    );
  }
  if (r.latency) lines.push('', '## read', ...readReport(r, r.latency));
  if (r.gateway) lines.push('', '## gateway', '', ...gatewayReport(r.gateway));
  return `${lines.join('\n')}\n`;
}

function readReport(r: Results, latency: NonNullable<Results['latency']>): string[] {
  const lines: string[] = [];
  lines.push(
    '',
    '| case | server | p50 ms | p99 ms | calls/s | server CPU ms/call | calls |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: |',
  );
  for (const c of Object.values(latency.cases)) {
    const label = `concurrency ${c.concurrency}`;
    const base = c.summaries['baseline']!;
    const ours = c.summaries['ours']!;
    const row = (who: string, x: Summary) =>
      `| ${label} | ${who} | ${x.p50.toFixed(2)} | ${x.p99.toFixed(2)} | ${x.throughput.toFixed(0)} | ${x.serverCpuPerCall.toFixed(3)} | ${x.calls} |`;
    lines.push(row('bare SDK, fixed text', base), row('ours, read 1 KiB', ours));
    lines.push(
      `| ${label} | **ours / bare** | **${c.ratio!.p50.toFixed(2)}** | ${c.ratio!.p99.toFixed(2)} | ${c.ratio!.throughput.toFixed(2)} | ${(ours.serverCpuPerCall / base.serverCpuPerCall).toFixed(2)} | |`,
    );
  }
  lines.push('');
  for (const c of Object.values(latency.cases)) {
    lines.push(
      `concurrency ${c.concurrency}: p50 ratio ${c.ratio!.p50.toFixed(2)} (median of the per-round ratios ${c.ratio!.p50MedianOfRounds.toFixed(2)}, ` +
        `range ${Math.min(...c.ratio!.p50PerRound).toFixed(2)}-${Math.max(...c.ratio!.p50PerRound).toFixed(2)}); goal <= ${latency.goalP50Ratio}: ${c.p50GoalMet ? 'met' : 'NOT met'}`,
    );
  }

  if (r.breakdown) {
    const { c1, c8 } = r.breakdown.cases;
    lines.push(
      '',
      '| server | c1 p50 ms | c1 server CPU ms/call | c8 p50 ms | c8 calls/s | c8 server CPU ms/call | c8 client CPU ms/call |',
      '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    );
    for (const spec of Object.values(TARGETS)) {
      const a = c1.summaries[spec.key]!;
      const b = c8.summaries[spec.key]!;
      lines.push(
        `| ${spec.label} | ${a.p50.toFixed(2)} | ${a.serverCpuPerCall.toFixed(3)} | ${b.p50.toFixed(2)} | ${b.throughput.toFixed(0)} | ${b.serverCpuPerCall.toFixed(3)} | ${b.clientCpuPerCall.toFixed(3)} |`,
      );
    }
    lines.push('', "Differences, each the median over the rounds of the two servers' difference in that round:");
    lines.push('', '| added cost | c1 p50 ms | c1 server CPU ms/call | c8 server CPU ms/call |', '| --- | ---: | ---: | ---: |');
    for (const x of r.breakdown.deltas)
      lines.push(`| ${x.what} | ${signed(x.c1P50Ms)} | ${signed(x.c1ServerCpuMsPerCall)} | ${signed(x.c8ServerCpuMsPerCall)} |`);
    lines.push(
      '',
      '| per-request piece, in-process, one at a time | wall us | CPU us | thread-pool round trips |',
      '| --- | ---: | ---: | ---: |',
    );
    for (const x of r.breakdown.micro) lines.push(`| ${x.name} | ${x.wallUs.toFixed(0)} | ${x.cpuUs.toFixed(0)} | ${x.threadPoolOps} |`);
  }

  if (r.memory) {
    const mem = r.memory;
    lines.push('', '| our server | RSS MiB | over idle MiB | duration s |', '| --- | ---: | ---: | ---: |');
    lines.push(`| idle (one session, after 20 reads) | ${mb(mem.idleRss)} | | |`);
    if (mem.read)
      lines.push(
        `| peak: read last ${TAIL_LINES} lines of a 1 GiB file | ${mb(mem.read.peakRss)} | ${mb(mem.read.peakRss - mem.idleRss)} | ${(mem.read.durationMs / 1000).toFixed(1)} |`,
      );
    for (const b of mem.bash) {
      lines.push(
        `| peak: bash \`${b.command}\` (1 GiB), run ${b.run} | ${mb(b.peakRss)} | ${mb(b.peakRss - mem.idleRss)} | ${(b.durationMs / 1000).toFixed(1)} |`,
      );
    }
    lines.push(`| 1 s after the last | ${mb(mem.afterRss)} | ${mb(mem.afterRss - mem.idleRss)} | |`);
    lines.push(
      '',
      `VmHWM reset before each case: ${mem.peakResettable ? "yes (peaks are the kernel's VmHWM)" : 'no (peaks are 10 ms VmRSS samples)'}; ` +
        `left in the server's temp dir after deleting the saved output: ${mem.leftoversInServerTmp.length === 0 ? 'nothing' : mem.leftoversInServerTmp.join(', ')}`,
    );
  }
  return lines;
}

// ---------------------------------------------------------------------------------------------
// Helpers.

let sdkVersion = 'unknown';

/** HEAD's short hash, and whether main/ has uncommitted changes (figures are of the working tree). */
async function gitCommit(): Promise<string> {
  const git = (gitArgs: string[]) =>
    new Promise<string>((resolve) => execFile('git', gitArgs, { cwd: REPO }, (error, stdout) => resolve(error ? '' : stdout.trim())));
  const head = await git(['rev-parse', '--short', 'HEAD']);
  const dirty = await git(['status', '--porcelain', '--', 'main']);
  return head ? `${head}${dirty ? ' + uncommitted changes in main/' : ''}` : 'unknown';
}

function machine() {
  return {
    nproc: availableParallelism(),
    cpu: cpus()[0]?.model ?? 'unknown',
    memoryGB: Math.round(totalmem() / 1024 ** 3),
    node: process.version,
    sdk: sdkVersion,
    platform: `${process.platform} ${process.arch}`,
  };
}

function expectText(result: CallToolResult, expected: string, what: string): void {
  if (result.isError || textOf(result) !== expected) throw new Error(`${what}: unexpected answer ${JSON.stringify(result).slice(0, 300)}`);
}

function mb(bytes: number): string {
  return (bytes / MiB).toFixed(1);
}

function track(server: ServerProcess): ServerProcess {
  servers.add(server);
  return server;
}

async function stopServer(server: ServerProcess): Promise<void> {
  await server.stop();
  servers.delete(server);
}

async function cleanup(): Promise<void> {
  await Promise.all([...servers].map((s) => s.stop().catch(() => s.child.kill('SIGKILL'))));
  if (root) await rm(root, { recursive: true, force: true });
}

const watchdog = setTimeout(() => {
  log(`bench: still running after ${WATCHDOG_MS / 60_000} minutes; stopping.`);
  void cleanup().finally(() => process.exit(3));
}, WATCHDOG_MS);
process.once('SIGINT', () => {
  log('bench: interrupted; cleaning up.');
  void cleanup().finally(() => process.exit(130));
});

sdkVersion = (
  JSON.parse(await readFile(join(REPO, 'node_modules', '@modelcontextprotocol', 'sdk', 'package.json'), 'utf8')) as { version: string }
).version;
try {
  await main();
} catch (error) {
  process.stderr.write(`bench failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
} finally {
  clearTimeout(watchdog);
  await cleanup();
}
