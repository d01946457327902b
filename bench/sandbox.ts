import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommandRunner } from '../main/machine/command-runner.js';
import { AccessDirectory } from '../main/places/access-directory.js';
import { placeFromRoot } from '../main/places/place-root.js';
import { PlacePolicy } from '../main/mcp/place-policy.js';
import { defaultLimitValues, SandboxLimits } from '../main/machine/sandbox/sandbox-limits.js';
import { SandboxPool } from '../main/machine/sandbox/sandbox-pool.js';
import { howToEnter } from '../main/machine/sandbox/bubblewrap-check.js';
import { percentile } from './lib/load.js';
import { log } from './lib/util.js';

/*
 * The cost of the sandbox per bash call: `bash -c true` as the machine policy runs it, against the
 * same command under the place and strict policies (the policy read from the access directory, the
 * plan's paths resolved, the place's limits applied, the command entered into the place's live
 * sandbox as the server does, by the launcher sandbox-enter where it is built, else nsenter and
 * setpriv; and for comparison a bubblewrap started per call, as a terminal command is), in one process, one call at a time, interleaved call by call (the order rotating)
 * so that the machine's load hits all alike. Goal (issue 23): place and strict at most 15 ms over
 * machine at p50 and at p95.
 *   node --import tsx bench/sandbox.ts [--quick] [--no-per-call]
 */

const quick = process.argv.includes('--quick');
const perCall = !process.argv.includes('--no-per-call');
const ROUNDS = quick ? 4 : 12;
const CALLS = quick ? 20 : 40;
const WARMUP = 20;
const GOAL_MS = 15;

const top = await realpath(await mkdtemp(join(tmpdir(), 'pw-bench-sandbox-')));
// A pool per target: a pool keeps one live sandbox per place, and the targets are one place under different policies.
const pools: SandboxPool[] = [];
// The server's limits (its defaults, control groups where the machine has them): part of a sandboxed call's cost.
const limits = await SandboxLimits.open(defaultLimitValues());
try {
  const ws = join(top, 'ws');
  await mkdir(join(ws, 'Crew', 'alpha'), { recursive: true });
  await mkdir(join(ws, 'Crew', 'beta'), { recursive: true });
  const stateDir = join(top, 'state');
  const runner = new CommandRunner({ maxTimeoutSeconds: 60 });
  const host = { workspaceRoot: ws, stateDir, skillsDir: join(ws, '.agents', 'skills'), env: process.env };

  // One access directory per target, so that each reads its policy as a real call does. "live":
  // entered into the place's running sandbox (as the server does); "per call": a bubblewrap each.
  const target = async (
    kind: 'machine' | 'place' | 'strict',
    live: boolean,
    name: string,
    withLimits = true,
  ): Promise<() => Promise<void>> => {
    const access = new AccessDirectory(join(stateDir, name));
    await access.setPlacePolicy('Crew/alpha', kind);
    const policy = new PlacePolicy(placeFromRoot('Crew/alpha'), access, {
      ...host,
      stateDir: join(stateDir, name),
      ...(live && { sandboxes: pools[pools.push(new SandboxPool()) - 1] }),
      ...(withLimits && { limits }),
    });
    return async () => {
      const sandbox = await policy.sandbox();
      const result = await runner.run({ command: 'true' }, sandbox ? { sandbox } : {});
      if (result.exitCode !== 0) throw new Error(`${kind}: exit ${result.exitCode}: ${result.stderr?.text}`);
    };
  };
  const targets: Record<string, () => Promise<void>> = {
    machine: await target('machine', false, 'machine'),
    place: await target('place', true, 'place'),
    strict: await target('strict', true, 'strict'),
    // What the place's control group costs: the same call outside it.
    'place, no limits': await target('place', true, 'place-no-limits', false),
    ...(perCall && {
      'place, per call': await target('place', false, 'place-per-call'),
      'strict, per call': await target('strict', false, 'strict-per-call'),
    }),
  };
  const names = Object.keys(targets);
  const times = Object.fromEntries(names.map((name) => [name, [] as number[]]));
  const loadAtStart = loadavg()[0]!;

  for (const run of Object.values(targets)) for (let i = 0; i < WARMUP; i++) await run();
  // One call of each target in turn, the order rotated every call: a burst of load lands on all alike.
  let turn = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < CALLS; i++, turn++) {
      for (let k = 0; k < names.length; k++) {
        const name = names[(turn + k) % names.length]!;
        const started = performance.now();
        await targets[name]!();
        times[name]!.push(performance.now() - started);
      }
    }
    log(`round ${round + 1}/${ROUNDS}`);
  }

  const stats = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return { p50: percentile(sorted, 50), p95: percentile(sorted, 95), n: sorted.length };
  };
  const machine = stats(times.machine!);
  const enforced =
    Object.keys(limits.support.unenforced).length === 0
      ? 'all enforced'
      : `not enforced: ${Object.entries(limits.support.unenforced)
          .map(([name, why]) => `${name} (${why})`)
          .join('; ')}`;
  const verdicts = ['place', 'strict'].map((name) => {
    const s = stats(times[name]!);
    const [p50, p95] = [s.p50 - machine.p50, s.p95 - machine.p95];
    return `${name}: +${p50.toFixed(2)} ms at p50, +${p95.toFixed(2)} ms at p95: ${p50 <= GOAL_MS && p95 <= GOAL_MS ? 'met' : 'NOT met'}`;
  });
  const enter = await howToEnter();
  const entered = enter?.kind === 'launcher' ? 'the launcher sandbox-enter' : enter ? 'nsenter and setpriv' : 'a bubblewrap per call';
  const lines = [
    `load average ${loadAtStart.toFixed(1)} at start, ${loadavg()[0]!.toFixed(1)} at the end (${cpus().length} cores); limits: ${enforced}; live sandboxes entered by ${entered}`,
    '',
    `| policy | calls | p50 (ms) | p95 (ms) | added p50 vs machine (ms) | added p95 vs machine (ms) |`,
    `|---|---|---|---|---|---|`,
    ...names.map((name) => {
      const s = stats(times[name]!);
      const added = (a: number, b: number) => (name === 'machine' ? '—' : (a - b).toFixed(2));
      return `| ${name} | ${s.n} | ${s.p50.toFixed(2)} | ${s.p95.toFixed(2)} | ${added(s.p50, machine.p50)} | ${added(s.p95, machine.p95)} |`;
    }),
    '',
    `Goal (at most ${GOAL_MS} ms added at p50 and p95): ${verdicts.join('; ')}`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
} finally {
  await Promise.all(pools.map((pool) => pool.closeAll()));
  await limits.close();
  await rm(top, { recursive: true, force: true });
}
