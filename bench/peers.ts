/**
 * `npm run bench:peers`: our gateway against mcp-hub (the peer gateway of issue 28) and a bare SDK
 * server, in one run:
 *
 * - **Overhead**: the upstream's `echo` called directly, through our host and through mcp-hub, at
 *   concurrency 1 and 8, in interleaved rounds (bench/lib/rounds.ts). Goals: ours at most 1.3x
 *   direct and +0.5 ms at c1, 1.2x at c8.
 * - **Idle sessions**: in a fresh process of each server (ours, the bare SDK server, mcp-hub),
 *   `--sessions` sessions opened one after another (initialize, initialized, the GET stream; as an
 *   agent does), the time that takes, and the RSS they add (median of 5 samples before and after,
 *   2 s after the last was opened). Goal: ours at most 100 KiB a session. Then the c1 p50 of a call
 *   on another session with and without them open ("without slowing the others").
 * - **Start**: spawn to the first listed upstream tool (ours: its URL printed, a session in the
 *   place, tools/list; mcp-hub: its SSE endpoint answering, tools/list until the tool is there),
 *   interleaved rounds, and the CPU the server's main thread used until then (Linux, /proc): on a
 *   loaded machine the wall times swing 2-3x, the CPU much less. Goal: ours no later than mcp-hub.
 *
 * mcp-hub is installed once, at the version of the issue, into node_modules/.cache/bench-peers
 * (npm, the ordinary client). It speaks only the SSE transport to clients.
 *
 * - **Read**: `read` of a 1 KiB file through ours against the raw JSON-RPC floor (bench/floor-server.ts:
 *   node:http answering a fixed body), the same client, interleaved rounds. Goal: 1.3x the floor.
 *
 * Flags: --rounds N (overhead and read, default 12), --sessions N (idle sessions, default 200),
 * --starts N (start and idle rounds, default 6), --no-build, --only overhead|read|sessions|start|micro|idle,
 * --cli PATH (another build of dist/main/cli.js as ours), --before PATH (another build measured
 * beside ours in overhead, read and idle: the idle memory of a host after one session, issue 29),
 * --profile DIR (our host, or the micro bench, under --cpu-prof).
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { cpuProfile, memoryOf, startServer, TSX_IMPORT, type ServerProcess } from './lib/child.js';
import { connectState, CONNECTION_ECHO, gatewayMicro, inBenchPlace, startHost } from './lib/connected-host.js';
import { callOnce, closeSession, openSession, openSseSession, runSegment, textOf, type Call, type Session } from './lib/load.js';
import { pairedMedian, roundRatios, runRounds, type Plan } from './lib/rounds.js';
import { BASELINE_TEXT, BASELINE_TOOL, FLOOR_TOOL, KEY_HEADER, TEXT_1K } from './lib/shared.js';
import { installMcpHub, MCP_HUB_VERSION, mcpHubServing } from './lib/mcp-hub.js';
import { echoCall, startUpstream } from './lib/upstream.js';
import { log, median, signed, sleep } from './lib/util.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const BASELINE_SERVER = join(REPO, 'bench', 'baseline-server.ts');
const FLOOR_SERVER = join(REPO, 'bench', 'floor-server.ts');
const HEAP_PROBE = ['--expose-gc', '--import', join(REPO, 'bench', 'lib', 'heap-probe.mjs')];

const argv = process.argv.slice(2);
const flag = (name: string, fallback: string): string => (argv.includes(name) ? argv[argv.indexOf(name) + 1]! : fallback);
const ROUNDS = Number(flag('--rounds', '12'));
const IDLE_SESSIONS = Number(flag('--sessions', '200'));
const STARTS = Number(flag('--starts', '6'));
const ONLY = flag('--only', '');
/** When set, our host runs with --cpu-prof into this folder (its profile is written when it stops). */
const PROFILE_DIR = argv.includes('--profile') ? resolve(flag('--profile', '')) : undefined;
/** Our host: this build, or another one's (`--cli PATH`, to compare builds in the same conditions). */
const CLI = resolve(flag('--cli', join(REPO, 'dist', 'main', 'cli.js')));
/** `--before PATH`: another build (its dist/main/cli.js) measured beside ours in the same run, with a state dir of its own. */
const BEFORE = argv.includes('--before') ? resolve(flag('--before', '')) : undefined;
/** One identity holds at most 64 sessions (main/mcp/agent-sessions.ts): idle sessions are spread over tokens. */
const SESSIONS_PER_TOKEN = 50;

const GOALS = { c1Ratio: 1.3, c1AddedMs: 0.5, c8Ratio: 1.2, sessionKiB: 100, readRatio: 1.3 };
const PLAN: Plan = { rounds: ROUNDS, c1Calls: 200, c8CallsPerSession: 40, warmupC1: 300, warmupC8PerSession: 40 };

/** Samples RSS 5 times, 100 ms apart; the median, in bytes. */
async function rssOf(pid: number): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < 5; i++) {
    samples.push((await memoryOf(pid)).rss);
    await sleep(100);
  }
  return median(samples);
}

/** The V8 heap in use after a full GC, from bench/lib/heap-probe.mjs in the server (SIGUSR2, answer on its stderr). */
async function heapOf(pid: number, stderr: () => string): Promise<number> {
  const last = () => [...stderr().matchAll(/heap-probe (\d+) (\d+)\n/g)].at(-1);
  const seen = Number(last()?.[1] ?? 0);
  process.kill(pid, 'SIGUSR2');
  for (let waited = 0; waited < 10_000; waited += 20) {
    await sleep(20);
    const now = last();
    if (now && Number(now[1]) > seen) return Number(now[2]);
  }
  throw new Error(`pid ${pid} gave no heap figure within 10 s`);
}

/** The CPU time a process's main thread has used (Linux: its schedstat), in ms. */
async function mainThreadCpuMs(pid: number): Promise<number> {
  return Number((await readFile(`/proc/${pid}/task/${pid}/schedstat`, 'utf8')).split(' ')[0]) / 1e6;
}

async function main(): Promise<void> {
  if (!argv.includes('--no-build') && !argv.includes('--cli')) {
    log('building (npm run build)');
    await promisify(execFile)('npm', ['run', 'build'], { cwd: REPO, maxBuffer: 64 * 2 ** 20 });
  }
  await installMcpHub();
  const root = await mkdtemp(join(tmpdir(), 'persona-peers-'));
  const dirs = { work: join(root, 'work') };
  await mkdir(dirs.work, { recursive: true, mode: 0o700 });
  const running = new Set<ServerProcess>();
  const track = <S extends ServerProcess>(s: S) => (running.add(s), s);
  const stop = async (s: ServerProcess) => (running.delete(s), s.stop());
  const load = [loadavg()[0]!];
  const out: string[] = [];
  try {
    const upstream = track(await startUpstream());
    /** A build's own state, set up with its own CLI as a user would: app tokens, the key as a place secret, the connection. */
    const setUp = (cliPath: string, name: string, tokenCount: number) =>
      connectState(
        cliPath,
        { state: join(root, `${name}-state`), work: dirs.work, tmp: join(root, `${name}-tmp`) },
        upstream,
        Array.from({ length: tokenCount }, (_, i) => `bench-peers-${i}`),
      );
    const ourState = await setUp(CLI, 'ours', Math.ceil((IDLE_SESSIONS + 1) / SESSIONS_PER_TOKEN));
    const { env, tokens } = ourState;
    const before = BEFORE ? await setUp(BEFORE, 'before', 1) : undefined;
    const echoTool = async (session: Session, pattern: RegExp): Promise<string | undefined> =>
      (await session.client.listTools()).tools.find((t) => pattern.test(t.name))?.name;
    const HUB_ECHO = /echo$/;

    const startHub = await mcpHubServing(root, upstream);
    const startOurs = (probe: string[] = []) => startHost(ourState, 'ours', { node: [...probe, ...cpuProfile(PROFILE_DIR)] });
    const startBefore = (probe: string[] = []) => startHost(before!, 'before', { node: probe });
    /** tools/list until `pattern` is listed (a gateway may list its upstreams' tools only once connected). */
    const waitForTool = async (session: Session, pattern: RegExp): Promise<string> => {
      const until = Date.now() + 30_000;
      for (;;) {
        const name = await echoTool(session, pattern);
        if (name) return name;
        if (Date.now() > until) throw new Error(`no tool matching ${pattern} within 30 s`);
        await sleep(10);
      }
    };

    // -------------------------------------------------------------------------------------------
    if (!ONLY || ONLY === 'overhead') {
      log(`overhead: direct, ours, mcp-hub; ${ROUNDS} interleaved rounds`);
      const ours = track(await startOurs());
      const previous = BEFORE ? track(await startBefore()) : undefined;
      const hub = await startHub();
      try {
        const sessions: Record<string, Session[]> = { direct: [], ours: [], ...(previous && { before: [] }), hub: [hub.first] };
        for (let i = 0; i < 8; i++) {
          sessions.direct!.push(await openSession(upstream.url, { [KEY_HEADER]: upstream.apiKey }));
          sessions.ours!.push(await openSession(inBenchPlace(ours.url), tokens[0]!));
          if (previous) sessions.before!.push(await openSession(inBenchPlace(previous.url), before!.tokens[0]!));
          if (i > 0) sessions.hub!.push(await openSseSession(hub.url));
        }
        const runners = [
          { key: 'direct', sessions: sessions.direct!, call: echoCall('echo'), pids: [upstream.pid] },
          {
            key: 'ours',
            sessions: sessions.ours!,
            call: echoCall(await waitForTool(sessions.ours![0]!, CONNECTION_ECHO)),
            pids: [ours.pid, upstream.pid],
          },
          ...(previous
            ? [
                {
                  key: 'before',
                  sessions: sessions.before!,
                  call: echoCall(await waitForTool(sessions.before![0]!, CONNECTION_ECHO)),
                  pids: [previous.pid, upstream.pid],
                },
              ]
            : []),
          {
            key: 'hub',
            sessions: sessions.hub!,
            call: echoCall(await waitForTool(sessions.hub![0]!, HUB_ECHO)),
            pids: [hub.pid, upstream.pid],
          },
        ];
        const figures = await runRounds(runners, PLAN);
        load.push(loadavg()[0]!);
        await Promise.all(Object.values(sessions).flat().map(closeSession));
        out.push(
          `### Overhead: \`echo\` direct, through ours${previous ? `, through the build before (${BEFORE})` : ''} and through mcp-hub ${MCP_HUB_VERSION} (${ROUNDS} rounds of ${PLAN.c1Calls} calls at c1 and 8 x ${PLAN.c8CallsPerSession} at c8)`,
          '',
          '| case | path | p50 ms | p99 ms | calls/s | gateway CPU ms/call | p50 / direct | p50 - direct ms | median of per-round ratios |',
          '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
        );
        for (const [name, c] of Object.entries(figures)) {
          const direct = c.summaries['direct']!;
          for (const { key } of runners) {
            const x = c.summaries[key]!;
            const front = key === 'direct' ? '' : x.cpuPerCallByPid[0]!.toFixed(3);
            const ratio = key === 'direct' ? '' : (x.p50 / direct.p50).toFixed(2);
            const added = key === 'direct' ? '' : signed(pairedMedian(c, key, 'direct', 'p50'));
            const perRound = key === 'direct' ? '' : median(roundRatios(c, key, 'direct')).toFixed(2);
            out.push(
              `| ${name} | ${key} | ${x.p50.toFixed(2)} | ${x.p99.toFixed(2)} | ${x.throughput.toFixed(0)} | ${front} | ${ratio} | ${added} | ${perRound} |`,
            );
          }
        }
        const c1 = figures.c1.summaries;
        const c8 = figures.c8.summaries;
        out.push(
          '',
          `Goals: c1 ratio ${(c1['ours']!.p50 / c1['direct']!.p50).toFixed(2)} (<= ${GOALS.c1Ratio}), c1 added ${signed(pairedMedian(figures.c1, 'ours', 'direct', 'p50'))} ms (<= +${GOALS.c1AddedMs}), ` +
            `c8 ratio ${(c8['ours']!.p50 / c8['direct']!.p50).toFixed(2)} (<= ${GOALS.c8Ratio}); ours - mcp-hub at c1 ${signed(pairedMedian(figures.c1, 'ours', 'hub', 'p50'))} ms, at c8 ${signed(pairedMedian(figures.c8, 'ours', 'hub', 'p50'))} ms` +
            (previous
              ? `; ours - before at c1 ${signed(pairedMedian(figures.c1, 'ours', 'before', 'p50'))} ms p50, ${signed(pairedMedian(figures.c1, 'ours', 'before', 'serverCpuPerCall'))} ms CPU a call (both processes), at c8 ${signed(pairedMedian(figures.c8, 'ours', 'before', 'p50'))} ms p50.`
              : '.'),
          '',
        );
      } finally {
        await stop(ours);
        if (previous) await stop(previous);
        await hub.stop();
      }
    }

    // -------------------------------------------------------------------------------------------
    if (!ONLY || ONLY === 'read') {
      log(`read of 1 KiB: ours against the raw JSON-RPC floor; ${ROUNDS} interleaved rounds`);
      const file = join(dirs.work, 'text-1k.txt');
      await writeFile(file, TEXT_1K);
      const ours = track(await startOurs());
      const previous = BEFORE ? track(await startBefore()) : undefined;
      const floor = track(await startServer('floor', ['--import', TSX_IMPORT, FLOOR_SERVER], { env: process.env, cwd: REPO }));
      try {
        const sessions: Record<string, Session[]> = { floor: [], ours: [], ...(previous && { before: [] }) };
        for (let i = 0; i < 8; i++) {
          sessions.floor!.push(await openSession(floor.url));
          sessions.ours!.push(await openSession(inBenchPlace(ours.url), tokens[0]!));
          if (previous) sessions.before!.push(await openSession(inBenchPlace(previous.url), before!.tokens[0]!));
        }
        const read = (name: string): Call => ({
          name,
          arguments: { path: file },
          check: (r) => {
            if (r.isError || textOf(r) !== TEXT_1K) throw new Error(`read: unexpected answer ${JSON.stringify(r).slice(0, 300)}`);
          },
        });
        const runners = [
          { key: 'floor', sessions: sessions.floor!, call: read(FLOOR_TOOL), pids: [floor.pid] },
          { key: 'ours', sessions: sessions.ours!, call: read('read'), pids: [ours.pid] },
          ...(previous ? [{ key: 'before', sessions: sessions.before!, call: read('read'), pids: [previous.pid] }] : []),
        ];
        const figures = await runRounds(runners, PLAN);
        load.push(loadavg()[0]!);
        await Promise.all(Object.values(sessions).flat().map(closeSession));
        out.push(
          `### \`read\` of 1 KiB: ours${previous ? ', the build before' : ''} and the raw JSON-RPC floor (bench/floor-server.ts) (${ROUNDS} rounds of ${PLAN.c1Calls} calls at c1 and 8 x ${PLAN.c8CallsPerSession} at c8)`,
          '',
          '| case | server | p50 ms | p99 ms | calls/s | server CPU ms/call | p50 / floor | p50 - floor ms | median of per-round ratios |',
          '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
        );
        for (const [name, c] of Object.entries(figures)) {
          const base = c.summaries['floor']!;
          for (const { key } of runners) {
            const x = c.summaries[key]!;
            const of = key === 'floor';
            out.push(
              `| ${name} | ${key} | ${x.p50.toFixed(2)} | ${x.p99.toFixed(2)} | ${x.throughput.toFixed(0)} | ${x.serverCpuPerCall.toFixed(3)} | ${of ? '' : (x.p50 / base.p50).toFixed(2)} | ${of ? '' : signed(pairedMedian(c, key, 'floor', 'p50'))} | ${of ? '' : median(roundRatios(c, key, 'floor')).toFixed(2)} |`,
            );
          }
        }
        out.push(
          '',
          `Goal: ours within ${GOALS.readRatio}x the floor (c1 ratio ${(figures.c1.summaries['ours']!.p50 / figures.c1.summaries['floor']!.p50).toFixed(2)})` +
            // A change is judged by the rounds it ran in beside the build before it: each round's difference, their median.
            (previous
              ? `; ours - before, median of the per-round differences: ${Object.entries(figures)
                  .map(
                    ([name, c]) =>
                      `${name} ${signed(pairedMedian(c, 'ours', 'before', 'p50'))} ms p50 (ours slower in ${c.perRound['ours']!.filter((o, i) => o.p50 > c.perRound['before']![i]!.p50).length} of ${ROUNDS} rounds), ${signed(pairedMedian(c, 'ours', 'before', 'serverCpuPerCall'), 3)} ms CPU a call`,
                  )
                  .join('; ')}.`
              : '.'),
          '',
        );
      } finally {
        await stop(ours);
        if (previous) await stop(previous);
        await stop(floor);
      }
    }

    // -------------------------------------------------------------------------------------------
    if (ONLY === 'idle' && BEFORE) {
      log(`idle memory: ours and the build before, ${STARTS} interleaved starts`);
      const figures: Record<'ours' | 'before', { rss: number[]; heap: number[] }> = {
        ours: { rss: [], heap: [] },
        before: { rss: [], heap: [] },
      };
      for (let round = 0; round < STARTS; round++) {
        for (const key of round % 2 ? (['before', 'ours'] as const) : (['ours', 'before'] as const)) {
          const s = track(await (key === 'ours' ? startOurs(HEAP_PROBE) : startBefore(HEAP_PROBE)));
          // As a host that served a little and then sat: one session, its tools listed and one call, then closed.
          const session = await openSession(inBenchPlace(s.url), (key === 'ours' ? tokens : before!.tokens)[0]!);
          await callOnce(session, echoCall(await waitForTool(session, CONNECTION_ECHO)));
          await closeSession(session);
          await sleep(3000);
          figures[key].rss.push(await rssOf(s.pid));
          figures[key].heap.push(await heapOf(s.pid, s.stderr));
          await stop(s);
        }
        log(
          `  round ${round + 1}: RSS ours ${(figures.ours.rss.at(-1)! / 2 ** 20).toFixed(1)} MiB, before ${(figures.before.rss.at(-1)! / 2 ** 20).toFixed(1)} MiB`,
        );
      }
      load.push(loadavg()[0]!);
      const mib = (values: number[]) =>
        `${(median(values) / 2 ** 20).toFixed(1)} (${(Math.min(...values) / 2 ** 20).toFixed(1)}-${(Math.max(...values) / 2 ** 20).toFixed(1)})`;
      out.push(
        `### Idle memory: ours and the build before (${BEFORE}), ${STARTS} interleaved starts, after one session (tools listed, one call, closed) and 3 s idle`,
        '',
        '| build | RSS MiB, median (range) | V8 heap after GC MiB, median (range) |',
        '| --- | ---: | ---: |',
        `| ours | ${mib(figures.ours.rss)} | ${mib(figures.ours.heap)} |`,
        `| before | ${mib(figures.before.rss)} | ${mib(figures.before.heap)} |`,
        '',
      );
    }

    // -------------------------------------------------------------------------------------------
    if (ONLY === 'micro') {
      log('in-process timings of the steps of a forwarded call (bench/gateway-micro.ts)');
      const micro = await gatewayMicro(ourState, upstream, { token: tokens[0]!, node: cpuProfile(PROFILE_DIR) });
      load.push(loadavg()[0]!);
      out.push(
        '### Steps of a forwarded call, in-process (bench/gateway-micro.ts; median of 7 batches)',
        '',
        '| step | wall us | CPU us | thread-pool round trips |',
        '| --- | ---: | ---: | ---: |',
        ...micro.map((m) => `| ${m.name} | ${m.wallUs.toFixed(1)} | ${m.cpuUs.toFixed(1)} | ${m.threadPoolOps} |`),
        '',
      );
    }

    // -------------------------------------------------------------------------------------------
    if (!ONLY || ONLY === 'sessions') {
      log(`idle sessions: ${IDLE_SESSIONS} per server`);
      out.push(`### Idle sessions: ${IDLE_SESSIONS} opened one after another in a fresh server`, '');
      out.push(
        '| server | RSS before MiB | RSS after MiB | KiB per session (RSS) | KiB per session (V8 heap after GC) | open all s | ms per session | c1 p50 of another session, none idle / all idle ms |',
        '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
      );
      type Target = {
        key: string;
        start: () => Promise<{
          pid: number;
          stderr(): string;
          stop(): Promise<void>;
          open: (i: number) => Promise<Session>;
          call: Call;
          first?: Session;
        }>;
      };
      const targets: Target[] = [
        {
          key: 'ours',
          start: async () => {
            const s = track(await startOurs(HEAP_PROBE));
            const probe = await openSession(inBenchPlace(s.url), tokens[0]!);
            const name = await waitForTool(probe, CONNECTION_ECHO);
            return {
              pid: s.pid,
              stderr: s.stderr,
              stop: () => stop(s),
              open: (i) => openSession(inBenchPlace(s.url), tokens[Math.floor((i + 1) / SESSIONS_PER_TOKEN)]!),
              call: echoCall(name),
              first: probe,
            };
          },
        },
        {
          key: 'bare SDK server',
          start: async () => {
            const s = track(await startServer('bare', [...HEAP_PROBE, '--import', TSX_IMPORT, BASELINE_SERVER], { env, cwd: dirs.work }));
            const check = (r: CallToolResult) => {
              if (textOf(r) !== BASELINE_TEXT) throw new Error(`bare: unexpected answer ${JSON.stringify(r).slice(0, 200)}`);
            };
            return {
              pid: s.pid,
              stderr: s.stderr,
              stop: () => stop(s),
              open: () => openSession(s.url),
              call: { name: BASELINE_TOOL, arguments: { path: '/dev/null' }, check },
            };
          },
        },
        {
          key: `mcp-hub ${MCP_HUB_VERSION}`,
          start: async () => {
            const hub = await startHub(HEAP_PROBE);
            const name = await waitForTool(hub.first, HUB_ECHO);
            return { ...hub, open: () => openSseSession(hub.url), call: echoCall(name) };
          },
        },
      ];
      for (const t of targets) {
        const server = await t.start();
        const sessions: Session[] = [];
        try {
          const probe = server.first ?? (await server.open(-1));
          const p50 = async () => median((await runSegment(server.pid, [probe], server.call, 300)).latencies);
          await p50();
          const quiet = await p50();
          await sleep(1000);
          const before = await rssOf(server.pid);
          const heapBefore = await heapOf(server.pid, server.stderr);
          const started = performance.now();
          for (let i = 0; i < IDLE_SESSIONS; i++) sessions.push(await server.open(i));
          const openMs = performance.now() - started;
          await sleep(2000);
          const after = await rssOf(server.pid);
          const heapAfter = await heapOf(server.pid, server.stderr);
          const busy = await p50();
          load.push(loadavg()[0]!);
          const mib = (b: number) => (b / 2 ** 20).toFixed(1);
          out.push(
            `| ${t.key} | ${mib(before)} | ${mib(after)} | ${((after - before) / 1024 / IDLE_SESSIONS).toFixed(0)} | ${((heapAfter - heapBefore) / 1024 / IDLE_SESSIONS).toFixed(0)} | ${(openMs / 1000).toFixed(2)} | ${(openMs / IDLE_SESSIONS).toFixed(1)} | ${quiet.toFixed(2)} / ${busy.toFixed(2)} |`,
          );
          log(
            `  ${t.key}: ${((after - before) / 1024 / IDLE_SESSIONS).toFixed(0)} KiB a session (RSS), ${((heapAfter - heapBefore) / 1024 / IDLE_SESSIONS).toFixed(0)} KiB (heap), ${(openMs / 1000).toFixed(2)} s to open ${IDLE_SESSIONS}`,
          );
          await Promise.all([probe, ...sessions].map(closeSession));
        } finally {
          await server.stop();
        }
      }
      out.push('');
    }

    // -------------------------------------------------------------------------------------------
    if (!ONLY || ONLY === 'start') {
      log(`start: spawn to the first listed upstream tool, ${STARTS} interleaved rounds`);
      type Key = 'ours' | 'before' | 'hub';
      const keys: Key[] = BEFORE ? ['ours', 'before', 'hub'] : ['ours', 'hub'];
      const times: Record<Key, number[]> = { ours: [], before: [], hub: [] };
      // The server's main thread's CPU up to the listed tool: what the start costs, apart from waiting for a core.
      const cpu: Record<Key, number[]> = { ours: [], before: [], hub: [] };
      for (let round = 0; round < STARTS; round++) {
        // Rotated every round, reversed every other one.
        const rotated = keys.map((_, i) => keys[(i + Math.floor(round / 2)) % keys.length]!);
        for (const key of round % 2 ? rotated.reverse() : rotated) {
          const t0 = performance.now();
          if (key === 'hub') {
            const hub = await startHub();
            await waitForTool(hub.first, HUB_ECHO);
            times.hub.push(performance.now() - t0);
            cpu.hub.push(await mainThreadCpuMs(hub.pid));
            await closeSession(hub.first);
            await hub.stop();
          } else {
            const s = track(await (key === 'ours' ? startOurs() : startBefore()));
            const session = await openSession(inBenchPlace(s.url), (key === 'ours' ? tokens : before!.tokens)[0]!);
            await waitForTool(session, CONNECTION_ECHO);
            times[key].push(performance.now() - t0);
            cpu[key].push(await mainThreadCpuMs(s.pid));
            await closeSession(session);
            await stop(s);
          }
        }
        log(
          `  round ${round + 1}: ${keys.map((k) => `${k} ${times[k].at(-1)!.toFixed(0)} ms`).join(', ')}, load ${loadavg()[0]!.toFixed(1)}`,
        );
      }
      load.push(loadavg()[0]!);
      // Each round's own ratio: the load moves between rounds more than within one.
      const paired = (k: Key) => median(times[k].map((t, i) => t / times.hub[i]!)).toFixed(2);
      const label = (k: Key) => (k === 'hub' ? `mcp-hub ${MCP_HUB_VERSION}` : k === 'before' ? `before (${BEFORE})` : 'ours');
      out.push(
        `### Start: spawn to the first listed upstream tool (${STARTS} interleaved rounds)`,
        '',
        '| server | median ms | min ms | max ms | main-thread CPU median ms | min ms |',
        '| --- | ---: | ---: | ---: | ---: | ---: |',
        ...keys.map(
          (k) =>
            `| ${label(k)} | ${median(times[k]).toFixed(0)} | ${Math.min(...times[k]).toFixed(0)} | ${Math.max(...times[k]).toFixed(0)} | ${median(cpu[k]).toFixed(0)} | ${Math.min(...cpu[k]).toFixed(0)} |`,
        ),
        '',
        `ours / mcp-hub: ${(median(times.ours) / median(times.hub)).toFixed(2)} (goal <= 1), median of the rounds' ratios ${paired('ours')}${BEFORE ? `; before / mcp-hub: ${(median(times.before) / median(times.hub)).toFixed(2)}, ${paired('before')}` : ''}`,
        `main-thread CPU, ours / mcp-hub: ${(median(cpu.ours) / median(cpu.hub)).toFixed(2)}${BEFORE ? `; before / mcp-hub: ${(median(cpu.before) / median(cpu.hub)).toFixed(2)}` : ''}`,
        '',
      );
    }
    await stop(upstream);
    process.stdout.write(
      `## Peers (ours: ${CLI}; ${new Date().toISOString()}, Node ${process.version}, load average ${Math.min(...load).toFixed(1)}-${Math.max(...load).toFixed(1)} on 2 cores)\n\n${out.join('\n')}\n`,
    );
  } finally {
    await Promise.all([...running].map((s) => s.stop()));
    await rm(root, { recursive: true, force: true });
  }
}

await main();
// Sessions to stopped servers may keep a socket or a reconnect timer alive; the run is over.
process.exit();
