/**
 * Local MCP servers (`npm run bench:local-servers`), three measures of issue 29:
 *
 * - **Spawn**: the small stdio server of the tests (e2e/fixtures/local-server), packed and run with
 *   npx from its tarball (offline, warm npm cache), from spawn to its first listed tool: through
 *   the gateway (Gateway + localLaunch, machine policy: the process start, initialize, tools/list)
 *   against the same server's own spawn to tools/list with the SDK's StdioClientTransport, rounds
 *   interleaved. Goal: gateway median <= 1.3x the SDK's.
 * - **Idle**: this process's CPU over 10 s with no local server, then with 10 servers in 3 places
 *   started and left idle (their own CPU too, from /proc). Goal: no CPU beyond noise (< 1 % of a core).
 * - **Isolation**: one server's echo calls timed alone, then while a second server floods stderr
 *   (200 MB) and a third hangs on a call. Goal: p50 during / p50 alone <= 1.3.
 */
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Gateway } from '../main/connections/gateway/gateway.js';
import { localLaunch, localPolicyKey } from '../main/connections/local/local-launch.js';
import type { LocalConnection } from '../main/connections/store/connection-store.js';
import { storeIdOf, serverNameOf } from '../main/connections/store/naming.js';
import { AccessDirectory } from '../main/places/access-directory.js';
import { EncryptedFileSecretStore } from '../main/secrets/encrypted-file-store.js';
import { PlaceSecrets } from '../main/secrets/place-secrets.js';
import { LOCAL_SERVER_SCRIPT, npxArgs, packLocalServer } from '../e2e/fixtures/local-server.js';
import { log, median, sleep } from './lib/util.js';

const ROUNDS = 8;
const GOALS = { spawnRatio: 1.3, idleCpuShare: 0.01, isolationRatio: 1.3 };

const root = await mkdtemp(join(tmpdir(), 'pw-bench-local-'));
const stateDir = join(root, 'state');
const workspace = join(root, 'ws');
for (const place of ['Crew/a', 'Crew/b', 'Crew/c']) await mkdir(join(workspace, place), { recursive: true });
const npmCache = join(root, 'npm-cache');
const env = { ...process.env, npm_config_cache: npmCache, npm_config_update_notifier: 'false' };
const tarball = await packLocalServer(root);

const access = new AccessDirectory(stateDir);
const placeSecrets = new PlaceSecrets(new EncryptedFileSecretStore({ stateDir }), stateDir);
const host = { workspaceRoot: workspace, stateDir, skillsDir: join(root, 'skills'), env, appPorts: () => [] };
const gateway = new Gateway({
  timeoutMs: 60_000,
  allowPrivateNetwork: false,
  credentials: async () => ({}),
  signedFetch: (_c, base) => base,
  appPorts: () => [],
  local: {
    start: (c) => localLaunch(c, { access, placeSecrets, host, cacheRoot: join(root, 'cache') }),
    policyKey: (c) => localPolicyKey(c, { access }),
    logDir: join(stateDir, 'local-servers'),
    idleMs: 300_000,
  },
});

let made = 0;
function connection(root: string, command: string, args: string[]): LocalConnection {
  const storeId = storeIdOf('local', root);
  const catalogId = `local-bench-${(made += 1)}`;
  return {
    name: serverNameOf(storeId, catalogId),
    catalogId,
    displayName: `Bench ${made}`,
    transport: 'stdio',
    local: { command, args, env: [] },
    auth: { kind: 'none' },
    addedAt: new Date().toISOString(),
    owner: 'local',
    storeId,
    root,
  };
}

/** CPU seconds of a process and its descendants that are still running (utime + stime from /proc). */
function cpuOfTree(pid: number): number {
  let total = 0;
  const visit = (p: number) => {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      total += (Number(fields[11]) + Number(fields[12])) / 100;
      for (const child of readFileSync(`/proc/${p}/task/${p}/children`, 'utf8').trim().split(/\s+/).filter(Boolean)) visit(Number(child));
    } catch {
      // gone
    }
  };
  visit(pid);
  return total;
}

async function spawnRounds(): Promise<{ sdk: number[]; gateway: number[] }> {
  const sdk: number[] = [];
  const through: number[] = [];
  // Warm npm's cache once, so both sides install nothing.
  const warm = new Client({ name: 'warm', version: '1' });
  await warm.connect(new StdioClientTransport({ command: 'npx', args: npxArgs(tarball), env: { npm_config_cache: npmCache } }));
  await warm.close();
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const side of round % 2 ? (['gateway', 'sdk'] as const) : (['sdk', 'gateway'] as const)) {
      const started = performance.now();
      if (side === 'sdk') {
        const client = new Client({ name: 'bench', version: '1' });
        await client.connect(
          new StdioClientTransport({
            command: 'npx',
            args: npxArgs(tarball),
            env: { npm_config_cache: npmCache },
            cwd: join(workspace, 'Crew/a'),
          }),
        );
        const { tools } = await client.listTools();
        sdk.push(performance.now() - started);
        if (!tools.length) throw new Error('no tools');
        await client.close();
      } else {
        const c = connection('Crew/a', 'npx', npxArgs(tarball));
        const tools = await (await gateway.upstream(c)).tools();
        through.push(performance.now() - started);
        if (!tools.length) throw new Error('no tools');
        await gateway.drop(c);
      }
    }
    log(`spawn round ${round + 1}: sdk ${sdk.at(-1)!.toFixed(0)} ms, gateway ${through.at(-1)!.toFixed(0)} ms`);
  }
  return { sdk, gateway: through };
}

async function idleCpu(): Promise<{ none: number; ten: number; servers: number }> {
  const window = 10_000;
  const measure = async (pids: () => number[]) => {
    const before = process.cpuUsage();
    const childrenBefore = pids().reduce((sum, pid) => sum + cpuOfTree(pid), 0);
    await sleep(window);
    const used = process.cpuUsage(before);
    const childrenAfter = pids().reduce((sum, pid) => sum + cpuOfTree(pid), 0);
    return { self: (used.user + used.system) / 1e6 / (window / 1000), children: (childrenAfter - childrenBefore) / (window / 1000) };
  };
  const none = await measure(() => []);
  const started: LocalConnection[] = [];
  for (let i = 0; i < 10; i += 1) {
    const c = connection(['Crew/a', 'Crew/b', 'Crew/c'][i % 3]!, process.execPath, [LOCAL_SERVER_SCRIPT]);
    await (await gateway.upstream(c)).tools();
    started.push(c);
  }
  const pids = () => started.map((c) => gateway.localStatus(c)?.pid).filter((pid): pid is number => pid !== undefined);
  if (pids().length !== 10) throw new Error(`${pids().length} of 10 servers run`);
  const ten = await measure(pids);
  for (const c of started) await gateway.drop(c);
  return { none: none.self, ten: ten.self, servers: ten.children };
}

async function isolation(): Promise<{ alone: number; during: number }> {
  const healthy = connection('Crew/a', process.execPath, [LOCAL_SERVER_SCRIPT]);
  const flooding = connection('Crew/b', process.execPath, [LOCAL_SERVER_SCRIPT]);
  const hanging = connection('Crew/c', process.execPath, [LOCAL_SERVER_SCRIPT]);
  const upstream = await gateway.upstream(healthy);
  const echo = async (n: number) => {
    const times: number[] = [];
    for (let i = 0; i < n; i += 1) {
      const started = performance.now();
      await upstream.call('echo', { text: 'x' });
      times.push(performance.now() - started);
    }
    return median(times);
  };
  await echo(50);
  const alone = await echo(300);
  const flood = (await gateway.upstream(flooding)).call('flood', { mb: 200 }).catch(() => undefined);
  const hang = (await gateway.upstream(hanging)).call('hang', {}).catch(() => undefined);
  await sleep(200);
  const during = await echo(300);
  for (const c of [healthy, flooding, hanging]) await gateway.drop(c);
  await Promise.allSettled([flood, hang]);
  return { alone, during };
}

try {
  const spawn = await spawnRounds();
  const spawnRatio = median(spawn.gateway) / median(spawn.sdk);
  const idle = await idleCpu();
  const iso = await isolation();
  const isolationRatio = iso.during / iso.alone;
  const lines = [
    `spawn to first tool (npx, offline, ${ROUNDS} interleaved rounds): SDK client median ${median(spawn.sdk).toFixed(0)} ms, through the gateway ${median(spawn.gateway).toFixed(0)} ms: ${spawnRatio.toFixed(2)}x (goal <= ${GOALS.spawnRatio}x) ${spawnRatio <= GOALS.spawnRatio ? 'ok' : 'MISSED'}`,
    `idle CPU over 10 s: this process ${(idle.none * 100).toFixed(2)} % of a core with no local server, ${(idle.ten * 100).toFixed(2)} % with 10 servers in 3 places; the 10 servers ${(idle.servers * 100).toFixed(2)} % (goal < ${GOALS.idleCpuShare * 100} %) ${Math.max(idle.ten, idle.servers) < GOALS.idleCpuShare ? 'ok' : 'MISSED'}`,
    `isolation: echo p50 alone ${iso.alone.toFixed(2)} ms, while another server floods stderr and a third hangs ${iso.during.toFixed(2)} ms: ${isolationRatio.toFixed(2)}x (goal <= ${GOALS.isolationRatio}x) ${isolationRatio <= GOALS.isolationRatio ? 'ok' : 'MISSED'}`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
} finally {
  await gateway.closeAll();
  await rm(root, { recursive: true, force: true });
}
