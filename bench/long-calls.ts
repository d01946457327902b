/**
 * `npm run bench:long-calls`: no request lost. Many agents call our host the way agents do: a
 * pause of 0-10 s (the model thinking), then a call that takes 0-5 s (`bash sleep`), over and
 * over, each on its own MCP session with the SDK client (global fetch: undici's keep-alive pool,
 * shared by all sessions as one client process would). Every call must come back with its answer;
 * any "fetch failed" or other failure is counted and printed with what preceded it.
 *
 * Flags: --calls N (default 10000), --sessions N (default 60: as many as this 2-core machine serves
 * at 7.5 s a call under its usual load), --cli PATH (another build of dist/main/cli.js, to run the
 * same load against it), --seed N, --no-build.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { runNode, startServer } from './lib/child.js';
import { closeSession, openSession, textOf, type Session } from './lib/load.js';
import { hostEnv } from './lib/shared.js';
import { log, median, sleep } from './lib/util.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const flag = (name: string, fallback: string): string => (argv.includes(name) ? argv[argv.indexOf(name) + 1]! : fallback);
const CALLS = Number(flag('--calls', '10000'));
const SESSIONS = Number(flag('--sessions', '60'));
const CLI = resolve(flag('--cli', join(REPO, 'dist', 'main', 'cli.js')));
let seed = Number(flag('--seed', '1'));
const BUILD = !argv.includes('--no-build') && !argv.includes('--cli');

/** One identity holds at most 64 sessions: the sessions are spread over this many app tokens. */
const SESSIONS_PER_TOKEN = 50;
const GAP_MAX_MS = 10_000;
const CALL_MAX_MS = 5_000;

/** A small deterministic generator (mulberry32), so a run can be repeated call for call. */
function random(): number {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

interface Failure {
  session: number;
  call: number;
  gapMs: number;
  sleepMs: number;
  progress: boolean;
  afterMs: number;
  error: string;
}

async function main(): Promise<void> {
  if (BUILD) {
    log('building (npm run build)');
    await promisify(execFile)('npm', ['run', 'build'], { cwd: REPO, maxBuffer: 64 * 2 ** 20 });
  }
  const root = await mkdtemp(join(tmpdir(), 'persona-long-calls-'));
  const dirs = { state: join(root, 'state'), work: join(root, 'work'), tmp: join(root, 'tmp') };
  await Promise.all(Object.values(dirs).map((dir) => mkdir(dir, { recursive: true })));
  const env = hostEnv(dirs);
  const load = [loadavg()[0]!];
  try {
    const tokens: string[] = [];
    for (let i = 0; i < Math.ceil(SESSIONS / SESSIONS_PER_TOKEN); i++) {
      tokens.push(
        (await runNode([CLI, 'token', 'create', '--name', `long-calls-${i}`, '--expires', '1d'], { env, cwd: dirs.work })).trim(),
      );
    }
    const server = await startServer('ours', [CLI, '--port', '0', '--control-port', '0'], { env, cwd: dirs.work });
    log(`${CLI} at ${server.url}; opening ${SESSIONS} sessions`);
    const sessions: Session[] = [];
    for (let i = 0; i < SESSIONS; i++) sessions.push(await openSession(server.url, tokens[Math.floor(i / SESSIONS_PER_TOKEN)]!));
    const failures: Failure[] = [];
    const latenciesOver: number[] = [];
    let done = 0;
    let next = 0;
    const started = performance.now();
    const progress = setInterval(() => log(`${done}/${CALLS} calls, ${failures.length} failed, load ${loadavg()[0]!.toFixed(1)}`), 30_000);
    const worker = async (index: number): Promise<void> => {
      const session = sessions[index]!;
      for (let call = next++; call < CALLS; call = next++) {
        const gapMs = Math.round(random() * GAP_MAX_MS);
        const sleepMs = Math.round(random() * CALL_MAX_MS);
        // Half the calls ask for progress, so their answers come as event streams, as with clients that show progress.
        const withProgress = random() < 0.5;
        await sleep(gapMs);
        const sent = performance.now();
        try {
          const result = (await session.client.callTool(
            { name: 'bash', arguments: { command: `sleep ${(sleepMs / 1000).toFixed(3)}; echo done ${call}` } },
            undefined,
            { timeout: 60_000, ...(withProgress && { onprogress: () => {} }) },
          )) as CallToolResult;
          if (!textOf(result).includes(`done ${call}`)) throw new Error(`unexpected answer: ${textOf(result).slice(0, 200)}`);
          latenciesOver.push(performance.now() - sent - sleepMs);
        } catch (error) {
          const cause = (error as { cause?: { code?: string; message?: string } }).cause;
          const text = `${(error as Error).message}${cause ? ` (cause: ${cause.code ?? ''} ${cause.message ?? ''})` : ''}`;
          failures.push({
            session: index,
            call,
            gapMs,
            sleepMs,
            progress: withProgress,
            afterMs: Math.round(performance.now() - sent),
            error: text,
          });
          log(
            `call ${call} (session ${index}, after a ${gapMs} ms pause, sleep ${sleepMs} ms${withProgress ? ', with progress' : ''}) failed after ${Math.round(performance.now() - sent)} ms: ${text}`,
          );
        }
        done += 1;
        load.push(loadavg()[0]!);
      }
    };
    await Promise.all(sessions.map((_, i) => worker(i)));
    clearInterval(progress);
    const wallS = (performance.now() - started) / 1000;
    await Promise.all(sessions.map(closeSession));
    await server.stop();
    const lines = [
      `## No request lost: ${CALLS} calls, ${SESSIONS} sessions, pauses 0-${GAP_MAX_MS / 1000} s, calls 0-${CALL_MAX_MS / 1000} s`,
      '',
      `server: ${CLI}; ${new Date().toISOString()}; Node ${process.version}; load average ${Math.min(...load).toFixed(1)}-${Math.max(...load).toFixed(1)} (2 cores)`,
      '',
      `| calls | failed | wall (s) | time beyond the sleep, p50 (ms) | max (ms) |`,
      `|---:|---:|---:|---:|---:|`,
      `| ${done} | ${failures.length} | ${wallS.toFixed(0)} | ${median(latenciesOver).toFixed(1)} | ${Math.max(...latenciesOver).toFixed(0)} |`,
      '',
      ...failures.map(
        (f) =>
          `- call ${f.call}, session ${f.session}: pause ${f.gapMs} ms, sleep ${f.sleepMs} ms${f.progress ? ', progress' : ''}, failed after ${f.afterMs} ms: ${f.error}`,
      ),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    if (failures.length > 0) process.stderr.write(`the server's last words on stderr:\n${server.stderr()}\n`);
    process.exitCode = failures.length === 0 ? 0 : 1;
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

await main();
