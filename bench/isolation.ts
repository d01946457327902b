/**
 * The isolation benchmark (`npm run bench:isolation`, `--no-build` to use dist/ as it is): does one
 * connection whose server hangs slow down the place's other connections?
 *
 * - Two upstreams, each bench/upstream-server.ts in its own process (the e2e fixture); SIGUSR2
 *   makes the second one hang (it reads requests and never answers) and, sent again, answer again.
 * - Our host: the real CLI server (`--no-auth`, upstream timeout 5 s so the hanging server's
 *   calls time out and get re-checked during the run), both connections added by the CLI.
 * - One agent session calls the healthy connection's echo, one call at a time: first alone
 *   (phase "alone"), then while the other server hangs and a second session keeps calling the
 *   hanging connection every 200 ms, as an agent retrying would ("hanging", at least 15 s, to
 *   cover the first timeout, the check it starts and its re-checks). Every 25 calls it also times
 *   the place's tools/list. Then the hanging server answers again and "alone" is measured once more.
 *
 * Goal (issue 11): healthy p50 while the other hangs / p50 alone <= 1.2, and tools/list <= 1 s.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { runNode, startServer, TSX_IMPORT, type ServerProcess } from './lib/child.js';
import { BENCH_PLACE as PLACE, hostEnv, KEY_HEADER } from './lib/shared.js';
import { log, median, sleep } from './lib/util.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(REPO, 'dist', 'main', 'cli.js');
const UPSTREAM_SERVER = join(REPO, 'bench', 'upstream-server.ts');
const SECRET_NAME = 'BENCH_KEY';
const CALLS = 300;
const HANG_PHASE_MS = 15_000;
const GOALS = { p50Ratio: 1.2, toolsListMs: 1000 };

const args = process.argv.slice(2);
const root = await mkdtemp(join(tmpdir(), 'pw-bench-isolation-'));
const servers: ServerProcess[] = [];
const watchdog = setTimeout(() => {
  process.stderr.write('isolation bench: watchdog after 5 minutes\n');
  void cleanup().then(() => process.exit(3));
}, 300_000);

async function cleanup(): Promise<void> {
  await Promise.all(servers.map((s) => s.stop()));
  await rm(root, { recursive: true, force: true });
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function session(url: string): Promise<Client> {
  const client = new Client({ name: 'bench-isolation', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

async function timedCall(client: Client, name: string): Promise<number> {
  const start = performance.now();
  const result = (await client.callTool({ name, arguments: { text: 'x' } })) as CallToolResult;
  const ms = performance.now() - start;
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
  return ms;
}

try {
  if (!args.includes('--no-build')) {
    log('building dist/ ...');
    execFileSync('npm', ['run', '--silent', 'build'], { cwd: REPO, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  const dirs = { state: join(root, 'state'), work: join(root, 'work'), tmp: join(root, 'tmp') };
  await Promise.all(Object.values(dirs).map((d) => mkdir(d, { recursive: true, mode: 0o700 })));
  const apiKey = `sk-bench-${randomBytes(12).toString('hex')}`;
  const upstreamArgs = ['--import', TSX_IMPORT, UPSTREAM_SERVER, '--header', KEY_HEADER, '--hang-on-signal'];
  const upstreamEnv = { env: { ...process.env, BENCH_UPSTREAM_KEY: apiKey }, cwd: REPO };
  const healthy = await startServer('healthy upstream', upstreamArgs, upstreamEnv);
  servers.push(healthy);
  const hanging = await startServer('hanging upstream', upstreamArgs, upstreamEnv);
  servers.push(hanging);

  const env = hostEnv(dirs, { WORKSPACE_ALLOW_PRIVATE_NETWORK: '1', WORKSPACE_UPSTREAM_TIMEOUT: '5' });
  const cli = (a: string[], input?: string) => runNode([CLI, ...a], { env, cwd: dirs.work, ...(input !== undefined && { input }) });
  await cli(['secrets', 'set', SECRET_NAME, '--workspace-path', PLACE], apiKey);
  const nameOf = async (url: string, name: string) => {
    const out = await cli([
      'connections',
      'add',
      '--workspace-path',
      PLACE,
      '--url',
      url,
      '--name',
      name,
      '--header',
      KEY_HEADER,
      '--secret',
      SECRET_NAME,
    ]);
    const server = /as (u[0-9a-f]{8}__[a-z0-9-]+)/.exec(out)?.[1];
    if (!server || !/connected/.test(out)) throw new Error(`connections add: ${out}`);
    return server;
  };
  const healthyTool = `${await nameOf(healthy.url, 'Healthy')}__echo`;
  const hangingTool = `${await nameOf(hanging.url, 'Hanging')}__echo`;

  const host = await startServer('host', [CLI, '--port', '0', '--control-port', '0', '--no-auth'], { env, cwd: dirs.work });
  servers.push(host);
  const url = new URL(host.url);
  url.searchParams.set('workspace_path', PLACE);
  const agent = await session(url.href);
  const other = await session(url.href);

  // A new host checks each connection on first use; tools/list answers without one still being checked.
  let listed: string[] = [];
  for (let tries = 0; tries < 100 && !(listed.includes(healthyTool) && listed.includes(hangingTool)); tries += 1) {
    if (tries) await sleep(200);
    listed = (await agent.listTools()).tools.map((t) => t.name);
  }
  if (!listed.includes(healthyTool) || !listed.includes(hangingTool))
    throw new Error(`tools/list lacks a connection: ${listed.join(', ')}`);
  log('warming up ...');
  for (let i = 0; i < 200; i += 1) await timedCall(agent, healthyTool);

  const phase = async (label: string, minMs: number): Promise<{ calls: number[]; lists: number[] }> => {
    const calls: number[] = [];
    const lists: number[] = [];
    const start = performance.now();
    while (calls.length < CALLS || performance.now() - start < minMs) {
      calls.push(await timedCall(agent, healthyTool));
      if (calls.length % 25 === 0) {
        const t = performance.now();
        await agent.listTools();
        lists.push(performance.now() - t);
      }
    }
    log(
      `${label}: ${calls.length} calls, p50 ${median(calls).toFixed(2)} ms, p95 ${percentile(calls, 95).toFixed(2)} ms; tools/list max ${Math.max(...lists).toFixed(1)} ms`,
    );
    return { calls, lists };
  };

  log('phase alone ...');
  const alone = await phase('alone', 0);

  log('phase hanging: the second server stops answering ...');
  hanging.child.kill('SIGUSR2');
  let retrying = true;
  let refused = 0;
  let timedOut = 0;
  const retries = (async () => {
    while (retrying) {
      const result = (await other
        .callTool({ name: hangingTool, arguments: { text: 'x' } })
        .catch((e: Error) => ({ isError: true, content: [{ type: 'text', text: e.message }] }))) as CallToolResult;
      const text = JSON.stringify(result.content);
      if (/errPlaceMCPUnavailable/.test(text)) refused += 1;
      else if (/did not answer/.test(text)) timedOut += 1;
      await sleep(200);
    }
  })();
  const during = await phase('hanging', HANG_PHASE_MS);
  retrying = false;

  hanging.child.kill('SIGUSR2');
  await retries;
  log('phase alone again: the second server answers again ...');
  const again = await phase('alone again', 0);

  const ratio = median(during.calls) / median(alone.calls);
  const listMax = Math.max(...during.lists);
  const lines = [
    `| phase | calls | healthy call p50 | p95 | place tools/list max |`,
    `|---|---|---|---|---|`,
    ...[
      ['alone', alone],
      ['while the other hangs', during],
      ['alone again', again],
    ].map(([label, p]) => {
      const { calls, lists } = p as { calls: number[]; lists: number[] };
      return `| ${label as string} | ${calls.length} | ${median(calls).toFixed(2)} ms | ${percentile(calls, 95).toFixed(2)} ms | ${Math.max(...lists).toFixed(1)} ms |`;
    }),
    '',
    `ratio (hanging / alone) p50: ${ratio.toFixed(3)} (goal <= ${GOALS.p50Ratio}) · place tools/list max while hanging: ${listMax.toFixed(1)} ms (goal <= ${GOALS.toolsListMs} ms)`,
    `calls to the hanging connection during the phase: ${timedOut} timed out, ${refused} refused at once with the reason`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  await agent.close();
  await other.close();
  const met = ratio <= GOALS.p50Ratio && listMax <= GOALS.toolsListMs;
  await cleanup();
  clearTimeout(watchdog);
  process.exit(met ? 0 : 1);
} catch (error) {
  process.stderr.write(`isolation bench failed: ${(error as Error).stack ?? String(error)}\n`);
  await cleanup();
  clearTimeout(watchdog);
  process.exit(2);
}
