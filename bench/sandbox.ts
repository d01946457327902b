import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommandRunner } from '../main/machine/command-runner.js';
import { AccessDirectory } from '../main/places/access-directory.js';
import { placeFromRoot } from '../main/places/place-root.js';
import { PlacePolicy } from '../main/mcp/place-policy.js';
import { SandboxPool } from '../main/machine/sandbox/sandbox-pool.js';
import { percentile } from './lib/load.js';
import { log } from './lib/util.js';

/*
 * The cost of the sandbox per bash call: `bash -c true` as the machine policy runs it, against the
 * same command under the place and strict policies (the policy read from the access directory, the
 * plan's paths resolved, the command entered into the place's live sandbox as the server does; and
 * for comparison a bubblewrap started per call, as a terminal command is), in one process, one
 * call at a time, rounds alternating so that the machine's load hits all alike.
 *   node --import tsx bench/sandbox.ts [--quick]
 */

const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 4 : 12;
const CALLS = quick ? 20 : 40;
const WARMUP = 20;

const top = await realpath(await mkdtemp(join(tmpdir(), 'pw-bench-sandbox-')));
const pool = new SandboxPool();
try {
  const ws = join(top, 'ws');
  await mkdir(join(ws, 'Crew', 'alpha'), { recursive: true });
  await mkdir(join(ws, 'Crew', 'beta'), { recursive: true });
  const stateDir = join(top, 'state');
  const runner = new CommandRunner({ maxTimeoutSeconds: 60 });
  const host = { workspaceRoot: ws, stateDir, skillsDir: join(ws, '.agents', 'skills'), env: process.env };

  // One access directory per target, so that each reads its policy as a real call does. "live":
  // entered into the place's running sandbox (as the server does); "per call": a bubblewrap each.
  const target = async (kind: 'machine' | 'place' | 'strict', live: boolean, name: string): Promise<() => Promise<void>> => {
    const access = new AccessDirectory(join(stateDir, name));
    await access.setPlacePolicy('Crew/alpha', kind);
    const policy = new PlacePolicy(placeFromRoot('Crew/alpha'), access, { ...host, stateDir: join(stateDir, name), ...(live && { sandboxes: pool }) });
    return async () => {
      const sandbox = await policy.sandbox();
      const result = await runner.run({ command: 'true' }, sandbox ? { sandbox } : {});
      if (result.exitCode !== 0) throw new Error(`${kind}: exit ${result.exitCode}: ${result.stderr?.text}`);
    };
  };
  const targets = {
    machine: await target('machine', false, 'machine'),
    place: await target('place', true, 'place'),
    strict: await target('strict', true, 'strict'),
    'place, per call': await target('place', false, 'place-per-call'),
    'strict, per call': await target('strict', false, 'strict-per-call'),
  };
  const times = Object.fromEntries(Object.keys(targets).map((name) => [name, [] as number[]])) as Record<keyof typeof targets, number[]>;
  const loadAtStart = loadavg()[0]!;

  for (const run of Object.values(targets)) for (let i = 0; i < WARMUP; i++) await run();
  const names = Object.keys(targets) as (keyof typeof targets)[];
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? names : [...names].reverse();
    for (const name of order) {
      for (let i = 0; i < CALLS; i++) {
        const started = performance.now();
        await targets[name]();
        times[name].push(performance.now() - started);
      }
    }
    log(`round ${round + 1}/${ROUNDS}`);
  }

  const stats = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return { p50: percentile(sorted, 50), p90: percentile(sorted, 90), n: sorted.length };
  };
  const machine = stats(times.machine);
  const lines = [
    `load average ${loadAtStart.toFixed(1)} at start, ${loadavg()[0]!.toFixed(1)} at the end (${cpus().length} cores)`,
    '',
    `| policy | calls | p50 (ms) | p90 (ms) | added p50 vs machine (ms) | p50 ratio |`,
    `|---|---|---|---|---|---|`,
    ...names.map((name) => {
      const s = stats(times[name]);
      const added = name === 'machine' ? '—' : (s.p50 - machine.p50).toFixed(2);
      return `| ${name} | ${s.n} | ${s.p50.toFixed(2)} | ${s.p90.toFixed(2)} | ${added} | ${(s.p50 / machine.p50).toFixed(2)} |`;
    }),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
} finally {
  await pool.closeAll();
  await rm(top, { recursive: true, force: true });
}
