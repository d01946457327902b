/**
 * The gateway benchmark (run by `npm run bench`, alone with `--only gateway`): what our host adds
 * when an agent calls a tool of one of its place's MCP connections.
 *
 * - Upstream: bench/upstream-server.ts in its own process, the end-to-end tests' fixture, a real
 *   Streamable HTTP MCP server with an `echo` tool that wants an API key header.
 * - Ours: the real host (`node dist/main/cli.js --port 0 --control-port 0`, auth on, an app token
 *   from `token create`), with the connection set up by the CLI as a user would (`secrets set`,
 *   then `connections add --url ... --header X-Api-Key --secret ...`). The agent's sessions are in
 *   that place (`/mcp?workspace_path=Crew/bench`) and call `<server name>__echo`.
 * - Direct: the same `echo` call made straight to the upstream (SDK client, API key header).
 *
 * Both are measured in the same run, alternating rounds, at concurrency 1 and 8 (8 sessions), as
 * the read benchmark is (bench/lib/rounds.ts). The breakdown adds a transparent HTTP relay (the
 * floor of any gateway: bench/relay-server.ts), three minimal gateways made of the bare SDK server
 * forwarding the call (bench/baseline-server.ts --tool proxy-raw | proxy-sdk | proxy) and ours with
 * --no-auth, and times the per-call pieces of ours in-process.
 */
import { spawnSync } from 'node:child_process';
import { cp } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuProfile, startServer, TSX_IMPORT, type ServerProcess } from './lib/child.js';
import { connectState, CONNECTION_ECHO, gatewayMicro, inBenchPlace, startHost } from './lib/connected-host.js';
import { closeSession, openSession, type Call, type Session, type Summary } from './lib/load.js';
import type { MicroResult } from './lib/micro.js';
import { CASES, pairedMedian, roundRatios, runRounds, type CaseFigures, type CaseName, type Plan } from './lib/rounds.js';
import { KEY_HEADER } from './lib/shared.js';
import { echoCall, startUpstream } from './lib/upstream.js';
import { log, median, signed } from './lib/util.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(REPO, 'dist', 'main', 'cli.js');
const BASELINE_SERVER = join(REPO, 'bench', 'baseline-server.ts');
const RELAY_SERVER = join(REPO, 'bench', 'relay-server.ts');

/** Whether socat is installed, for the breakdown's relay in C. */
const SOCAT = spawnSync('socat', ['-V']).status === 0;

/** Issue 28: at concurrency 1 at most 1.3x direct and +0.5 ms, at 8 at most 1.2x. */
export const GATEWAY_GOALS: Record<CaseName, { p50Ratio: number; p50AddedMs?: number }> = {
  c1: { p50Ratio: 1.3, p50AddedMs: 0.5 },
  c8: { p50Ratio: 1.2 },
};

const plans = (quick: boolean): { headline: Plan; breakdown: Plan } =>
  quick
    ? {
        headline: { rounds: 3, c1Calls: 150, c8CallsPerSession: 30, warmupC1: 150, warmupC8PerSession: 20 },
        breakdown: { rounds: 2, c1Calls: 60, c8CallsPerSession: 12, warmupC1: 60, warmupC8PerSession: 10 },
      }
    : {
        headline: { rounds: 16, c1Calls: 200, c8CallsPerSession: 40, warmupC1: 300, warmupC8PerSession: 40 },
        breakdown: { rounds: 10, c1Calls: 60, c8CallsPerSession: 12, warmupC1: 80, warmupC8PerSession: 12 },
      };

export interface GatewayBenchOptions {
  /** A fresh folder for this benchmark's state dir, working dir and temp dir (deleted by the caller). */
  root: string;
  quick: boolean;
  breakdown: boolean;
  /** When set, our host in the headline comparison runs with --cpu-prof into this folder. */
  profileDir: string | undefined;
  sessions: number;
  /** Registers a server process so that the caller can stop it on failure or Ctrl-C. */
  track: (server: ServerProcess) => ServerProcess;
  stop: (server: ServerProcess) => Promise<void>;
}

interface GatewayCase extends CaseFigures {
  /** Ours over direct. */
  ratio: { p50: number; p99: number; throughput: number; p50MedianOfRounds: number; p50PerRound: number[] };
  /** Ours minus direct, in ms: over all calls, and the median of the per-round differences. */
  p50AddedMs: number;
  p50AddedMsMedianOfRounds: number;
  goals: { p50Ratio: boolean; p50AddedMs: boolean };
}

interface GatewayDelta {
  what: string;
  of: [string, string];
  c1P50Ms: number;
  c8P50Ms: number;
  c1ServerCpuMsPerCall: number;
  c8ServerCpuMsPerCall: number;
}

export interface GatewayResults {
  goals: typeof GATEWAY_GOALS;
  setup: { commands: string[]; connectionAdded: string; toolName: string; upstreamTools: number };
  plans: { headline: Plan; breakdown: Plan };
  cases: Record<CaseName, GatewayCase>;
  breakdown?: { cases: Record<CaseName, CaseFigures>; deltas: GatewayDelta[]; micro: MicroResult[] };
}

interface TargetSpec {
  key: string;
  label: string;
  /** Starts its front server, if it has one (direct has none: the upstream is the server). */
  start?: () => Promise<ServerProcess>;
  /** Session URL and auth, from its front server (or the upstream). */
  session: (front: ServerProcess | undefined) => { url: string; auth: string | Record<string, string> };
}

export async function gatewayBench(o: GatewayBenchOptions): Promise<GatewayResults> {
  const { headline, breakdown } = plans(o.quick);
  log('  starting the upstream MCP server (e2e fixture, its own process)...');
  const upstream = await startUpstream();
  o.track(upstream);
  log(`    upstream   ${upstream.url} (pid ${upstream.pid})`);
  try {
    log('  setting up the connection with the CLI...');
    const dirs = { state: join(o.root, 'state'), work: join(o.root, 'work'), tmp: join(o.root, 'tmp') };
    const state = await connectState(CLI, dirs, upstream, ['bench-gateway']);
    const { env } = state;
    const token = state.tokens[0]!;
    log(`    ${state.connectionAdded}`);

    // One server per state dir (the host claims it): ours without auth runs on a copy of the one set up above.
    const noAuthState = join(o.root, 'state-no-auth');
    await cp(dirs.state, noAuthState, { recursive: true });
    const noAuth = { ...state, env: { ...env, WORKSPACE_STATE_DIR: noAuthState } };
    // The proxies get our host's environment too: `--tool proxy` opens our services on its state dir.
    const proxy = (key: string, kind: string) => () =>
      startServer(key, ['--import', TSX_IMPORT, BASELINE_SERVER, '--tool', kind, '--upstream', upstream.url], {
        env: { ...env, BENCH_UPSTREAM_KEY: upstream.apiKey },
        cwd: dirs.work,
      });

    const TARGETS = {
      direct: {
        key: 'direct',
        label: 'direct to the upstream (SDK client, API key header)',
        session: () => ({ url: upstream.url, auth: { [KEY_HEADER]: upstream.apiKey } }),
      },
      relay: {
        key: 'relay',
        label: 'a transparent HTTP relay (node:http + undici, no MCP): the least any gateway adds',
        start: () => startServer('relay', ['--import', TSX_IMPORT, RELAY_SERVER, '--upstream', upstream.url], { env, cwd: dirs.work }),
        session: (front) => ({ url: front!.url, auth: { [KEY_HEADER]: upstream.apiKey } }),
      },
      relayBytes: {
        key: 'relayBytes',
        label: 'a TCP relay in Node (net sockets piped, no HTTP parsed): one more process hop, nothing else',
        start: () =>
          startServer('relayBytes', ['--import', TSX_IMPORT, RELAY_SERVER, '--upstream', upstream.url, '--bytes'], { env, cwd: dirs.work }),
        session: (front) => ({ url: front!.url, auth: { [KEY_HEADER]: upstream.apiKey } }),
      },
      ...(SOCAT && {
        relaySocat: {
          key: 'relaySocat',
          label: 'a TCP relay in C (socat, forked per connection; its CPU is not counted)',
          start: () =>
            startServer('relaySocat', ['--import', TSX_IMPORT, RELAY_SERVER, '--upstream', upstream.url, '--socat'], {
              env,
              cwd: dirs.work,
            }),
          session: (front: ServerProcess | undefined) => ({ url: front!.url, auth: { [KEY_HEADER]: upstream.apiKey } }),
        },
      }),
      proxyRaw: {
        key: 'proxyRaw',
        label: 'bare SDK server forwarding with a raw JSON-RPC POST (node:http, keep-alive)',
        start: proxy('proxyRaw', 'proxy-raw'),
        session: (front) => ({ url: front!.url, auth: {} }),
      },
      proxySdk: {
        key: 'proxySdk',
        label: 'bare SDK server forwarding with a plain SDK client',
        start: proxy('proxySdk', 'proxy-sdk'),
        session: (front) => ({ url: front!.url, auth: {} }),
      },
      proxy: {
        key: 'proxy',
        label: "bare SDK server forwarding through our gateway's pooled client (Gateway.upstream(connection).call)",
        start: proxy('proxy', 'proxy'),
        session: (front) => ({ url: front!.url, auth: {} }),
      },
      oursNoAuth: {
        key: 'oursNoAuth',
        label: 'ours, --no-auth',
        start: () => startHost(noAuth, 'oursNoAuth', { flags: ['--no-auth'] }),
        session: (front) => ({ url: inBenchPlace(front!.url), auth: {} }),
      },
      ours: {
        key: 'ours',
        label: 'ours (auth on, app token)',
        start: () => startHost(state, 'ours'),
        session: (front) => ({ url: inBenchPlace(front!.url), auth: token }),
      },
    } satisfies Record<string, TargetSpec>;

    let toolName = '';
    let upstreamTools = 0;

    /** Starts the targets' servers, opens their sessions, runs the rounds, and stops what it started. */
    const measure = async (specs: TargetSpec[], plan: Plan, profileDir?: string): Promise<Record<CaseName, CaseFigures>> => {
      const running: Array<{ spec: TargetSpec; front?: ServerProcess; sessions: Session[] }> = [];
      try {
        for (const spec of specs) {
          const front = spec.start
            ? o.track(await (profileDir && spec.key === 'ours' ? startHost(state, 'ours', { node: cpuProfile(profileDir) }) : spec.start()))
            : undefined;
          const { url, auth } = spec.session(front);
          const sessions: Session[] = [];
          running.push({ spec, ...(front && { front }), sessions });
          for (let i = 0; i < o.sessions; i++) sessions.push(await openSession(url, auth));
          log(`    ${spec.key.padEnd(10)} ${url}${front ? ` (pid ${front.pid})` : ''}: ${spec.label}`);
        }
        // The agent finds the connection's tool by listing the tools, as any agent would.
        const ours = running.find((r) => r.spec.key === 'oursNoAuth' || r.spec.key === 'ours');
        if (ours) {
          const { tools } = await ours.sessions[0]!.client.listTools();
          const echo = tools.filter((t) => CONNECTION_ECHO.test(t.name));
          if (echo.length !== 1) throw new Error(`expected one <server>__echo tool, got: ${tools.map((t) => t.name).join(', ')}`);
          toolName = echo[0]!.name;
          upstreamTools = tools.filter((t) => t.name.startsWith(toolName.slice(0, -'echo'.length))).length;
        }
        const callOf = (key: string): Call => echoCall(key === 'ours' || key === 'oursNoAuth' ? toolName : 'echo');
        const figures = await runRounds(
          running.map((r) => ({
            key: r.spec.key,
            sessions: r.sessions,
            call: callOf(r.spec.key),
            pids: r.front ? [r.front.pid, upstream.pid] : [upstream.pid],
          })),
          plan,
        );
        await Promise.all(running.flatMap((r) => r.sessions.map(closeSession)));
        return figures;
      } finally {
        await Promise.all(running.map(async (r) => r.front && o.stop(r.front)));
      }
    };

    log('  headline: direct vs ours');
    const figures = await measure([TARGETS.direct, TARGETS.ours], headline, o.profileDir);
    const cases = {} as Record<CaseName, GatewayCase>;
    for (const name of CASES) {
      const c = figures[name];
      const ours = c.summaries['ours']!;
      const direct = c.summaries['direct']!;
      const perRound = roundRatios(c, 'ours', 'direct');
      const added = ours.p50 - direct.p50;
      cases[name] = {
        ...c,
        ratio: {
          p50: ours.p50 / direct.p50,
          p99: ours.p99 / direct.p99,
          throughput: ours.throughput / direct.throughput,
          p50MedianOfRounds: median(perRound),
          p50PerRound: perRound,
        },
        p50AddedMs: added,
        p50AddedMsMedianOfRounds: pairedMedian(c, 'ours', 'direct', 'p50'),
        goals: {
          p50Ratio: ours.p50 / direct.p50 <= GATEWAY_GOALS[name].p50Ratio,
          p50AddedMs: added <= (GATEWAY_GOALS[name].p50AddedMs ?? Infinity),
        },
      };
      log(
        `  ${name}: p50 direct ${direct.p50.toFixed(2)} ms, ours ${ours.p50.toFixed(2)} ms: ratio ${(ours.p50 / direct.p50).toFixed(2)}, added ${added.toFixed(2)} ms`,
      );
    }

    let breakdownResults: GatewayResults['breakdown'];
    if (o.breakdown) {
      log('  breakdown: direct, a transparent relay, three minimal gateways on the bare SDK server, ours without and with auth');
      const b = await measure(Object.values(TARGETS), breakdown);
      const rows: Array<[string, string, string]> = [
        ['a hop through a transparent HTTP relay, over direct: the least any gateway adds', 'relay', 'direct'],
        ['a hop through a TCP relay in Node (bytes piped), over direct: one more process on the path', 'relayBytes', 'direct'],
        ...(SOCAT
          ? [['a hop through socat (C), over direct: one more process on the path', 'relaySocat', 'direct'] as [string, string, string]]
          : []),
        ['ours over the relay: everything an MCP gateway does beyond relaying bytes', 'ours', 'relay'],
        [
          'a hop through the leanest gateway on the SDK server (bare SDK server + raw node:http forward), over direct',
          'proxyRaw',
          'direct',
        ],
        ['the SDK client (fetch, web streams, SSE parser, result schema check) instead of the raw forward', 'proxySdk', 'proxyRaw'],
        [
          "our gateway's pooled client (its own tools/call forwarder on the SSRF-guarded undici dispatcher) instead of the plain SDK client",
          'proxy',
          'proxySdk',
        ],
        ['the rest of ours without auth (guard, sessions, tool table lookup, place checks, audit)', 'oursNoAuth', 'proxy'],
        ['our auth (app token, already verified once)', 'ours', 'oursNoAuth'],
        ['everything (ours minus direct)', 'ours', 'direct'],
      ];
      const deltas = rows.map(([what, a, z]) => ({
        what,
        of: [a, z] as [string, string],
        c1P50Ms: pairedMedian(b.c1, a, z, 'p50'),
        c8P50Ms: pairedMedian(b.c8, a, z, 'p50'),
        c1ServerCpuMsPerCall: pairedMedian(b.c1, a, z, 'serverCpuPerCall'),
        c8ServerCpuMsPerCall: pairedMedian(b.c8, a, z, 'serverCpuPerCall'),
      }));
      log('  in-process timings of the per-call pieces of our gateway');
      const micro = await gatewayMicro(state, upstream);
      for (const m of micro)
        log(`    ${m.name}: ${m.wallUs.toFixed(0)} us wall, ${m.cpuUs.toFixed(0)} us CPU, ${m.threadPoolOps} thread-pool round trips`);
      breakdownResults = { cases: b, deltas, micro };
    }
    return {
      goals: GATEWAY_GOALS,
      setup: { commands: state.commands, connectionAdded: state.connectionAdded, toolName, upstreamTools },
      plans: { headline, breakdown },
      cases,
      ...(breakdownResults && { breakdown: breakdownResults }),
    };
  } finally {
    await o.stop(upstream);
  }
}

// ---------------------------------------------------------------------------------------------
// Report.

export function gatewayReport(g: GatewayResults): string[] {
  const lines: string[] = [];
  lines.push(
    `connection: ${g.setup.connectionAdded}; tool called: \`${g.setup.toolName}\` (the upstream offers ${g.setup.upstreamTools} tools)`,
  );
  lines.push(
    '',
    '| case | path | p50 ms | p99 ms | calls/s | server CPU ms/call: ours | upstream | calls |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  );
  const cpu = (x: Summary, front: boolean) => (front ? [x.cpuPerCallByPid[0]!, x.cpuPerCallByPid[1]!] : [NaN, x.cpuPerCallByPid[0]!]);
  for (const c of Object.values(g.cases)) {
    const label = `concurrency ${c.concurrency}`;
    const row = (who: string, x: Summary, front: boolean) => {
      const [ours, up] = cpu(x, front);
      return `| ${label} | ${who} | ${x.p50.toFixed(2)} | ${x.p99.toFixed(2)} | ${x.throughput.toFixed(0)} | ${Number.isNaN(ours) ? '' : ours.toFixed(3)} | ${up.toFixed(3)} | ${x.calls} |`;
    };
    lines.push(row('direct to the upstream', c.summaries['direct']!, false), row('through our gateway', c.summaries['ours']!, true));
    lines.push(
      `| ${label} | **ours / direct** | **${c.ratio.p50.toFixed(2)}** | ${c.ratio.p99.toFixed(2)} | ${c.ratio.throughput.toFixed(2)} | | | |`,
    );
    lines.push(
      `| ${label} | **ours - direct, ms** | **${signed(c.p50AddedMs)}** | ${signed(c.summaries['ours']!.p99 - c.summaries['direct']!.p99)} | | | | |`,
    );
  }
  lines.push('');
  for (const [name, c] of Object.entries(g.cases) as Array<[CaseName, GatewayCase]>) {
    const goal = g.goals[name];
    lines.push(
      `concurrency ${c.concurrency}: p50 ratio ${c.ratio.p50.toFixed(2)} (median of the per-round ratios ${c.ratio.p50MedianOfRounds.toFixed(2)}, ` +
        `range ${Math.min(...c.ratio.p50PerRound).toFixed(2)}-${Math.max(...c.ratio.p50PerRound).toFixed(2)}), goal <= ${goal.p50Ratio}: ${c.goals.p50Ratio ? 'met' : 'NOT met'}; ` +
        `p50 added ${c.p50AddedMs.toFixed(2)} ms (median of the per-round differences ${c.p50AddedMsMedianOfRounds.toFixed(2)})` +
        (goal.p50AddedMs === undefined ? '' : `, goal <= ${goal.p50AddedMs} ms: ${c.goals.p50AddedMs ? 'met' : 'NOT met'}`),
    );
  }
  if (g.breakdown) {
    const { c1, c8 } = g.breakdown.cases;
    lines.push(
      '',
      '| path | c1 p50 ms | c1 server CPU ms/call (all processes) | c8 p50 ms | c8 calls/s | c8 server CPU ms/call | c8 client CPU ms/call |',
      '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    );
    for (const key of Object.keys(c1.summaries)) {
      const a = c1.summaries[key]!;
      const b = c8.summaries[key]!;
      lines.push(
        `| ${key} | ${a.p50.toFixed(2)} | ${a.serverCpuPerCall.toFixed(3)} | ${b.p50.toFixed(2)} | ${b.throughput.toFixed(0)} | ${b.serverCpuPerCall.toFixed(3)} | ${b.clientCpuPerCall.toFixed(3)} |`,
      );
    }
    lines.push('', "Differences, each the median over the rounds of the two paths' difference in that round:");
    lines.push(
      '',
      '| added cost | c1 p50 ms | c8 p50 ms | c1 server CPU ms/call | c8 server CPU ms/call |',
      '| --- | ---: | ---: | ---: | ---: |',
    );
    for (const x of g.breakdown.deltas) {
      lines.push(
        `| ${x.what} | ${signed(x.c1P50Ms)} | ${signed(x.c8P50Ms)} | ${signed(x.c1ServerCpuMsPerCall)} | ${signed(x.c8ServerCpuMsPerCall)} |`,
      );
    }
    lines.push(
      '',
      '| per-call piece of our gateway, in-process, one at a time | wall us | CPU us | thread-pool round trips |',
      '| --- | ---: | ---: | ---: |',
    );
    for (const x of g.breakdown.micro) lines.push(`| ${x.name} | ${x.wallUs.toFixed(0)} | ${x.cpuUs.toFixed(0)} | ${x.threadPoolOps} |`);
  }
  return lines;
}
