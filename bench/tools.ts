/**
 * `npm run bench:tools`: the machine tools against the shell tools doing the same job, measured in
 * one run (see bench/README.md for the figures of a real run):
 *
 *   bash:  a command printing 1 GB through CommandRunner (what the bash tool runs) against the same
 *          command redirected to a file by bash (started in a session of its own, as the runner
 *          starts commands; also shown from this session), and this process's peak RSS growth;
 *   tail:  read with offset -10 on a 1 GB file of 120 million lines (against `tail -n 10`);
 *   scan:  a forward read of the file's last line (a scan of the whole file) against `wc -l`.
 *
 * The core functions run in this process, as in the server. The bash case runs first, so that the
 * peak RSS it reports is its own. Everything it writes goes to one temp folder, deleted at the end
 * (also on failure or Ctrl-C).
 *
 * Flags (after `npm run bench:tools --`): --rounds N (default 5; each round runs each side once,
 * alternating which goes first, so drift in the machine's load hits both alike).
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CommandRunner } from '../main/machine/command-runner.js';
import { readFile, type TextReadResult } from '../main/machine/read.js';
import { log, median } from './lib/util.js';

const run = promisify(execFile);
const argv = process.argv.slice(2);
const ROUNDS = argv.includes('--rounds') ? Number(argv[argv.indexOf('--rounds') + 1]) : 5;
const LINES = 120_000_000; // `seq 1 120000000`: 1.09 GB
const PRINT = "head -c 1000000000 /dev/zero | tr '\\0' x"; // prints 1 GB
const MiB = 1024 ** 2;

const dir = await mkdtemp(join(tmpdir(), 'bench-tools-'));
const cleanup = () => rm(dir, { recursive: true, force: true });
process.once('SIGINT', () => void cleanup().then(() => process.exit(130)));

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await fn();
  return { ms: performance.now() - started, value };
}

/** Runs each side once per round, rotating which goes first; returns each side's times. */
async function alternate(...sides: Array<() => Promise<unknown>>): Promise<number[][]> {
  const times = sides.map(() => [] as number[]);
  for (let round = 0; round < ROUNDS; round += 1) {
    for (let i = 0; i < sides.length; i += 1) {
      const side = (round + i) % sides.length;
      times[side]!.push((await timed(sides[side]!)).ms);
    }
  }
  return times;
}

/** Runs a bash command line; `ownSession` starts it in a session of its own, as CommandRunner does. */
function shell(command: string, ownSession = false): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', command], { stdio: 'ignore', detached: ownSession });
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${command} exited with ${code}`))));
  });
}

const figures: Record<string, string> = {};
try {
  log(`bench:tools, ${ROUNDS} rounds; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);

  // 1. bash: 1 GB of output, through the runner and redirected to a file by bash itself.
  const runner = new CommandRunner({ maxTimeoutSeconds: 600, outputDir: join(dir, 'outputs') });
  // RSS sampled while the runs go on (maxRSS is the process's lifetime peak, which loading may have set).
  const rssBefore = process.memoryUsage().rss;
  let rssPeak = rssBefore;
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 20);
  const redirect = (ownSession: boolean) => async () => {
    await shell(`${PRINT} > ${join(dir, 'redirect.out')}`, ownSession);
    if ((await stat(join(dir, 'redirect.out'))).size !== 1e9) throw new Error('the redirect wrote the wrong size');
    await rm(join(dir, 'redirect.out'));
  };
  // The runner starts each command in a session of its own (to stop its whole process group); with
  // the kernel's autogroup scheduling a new session also gets its own share of a loaded CPU, so the
  // baseline is the redirect started the same way. The redirect from this session is shown too.
  const [ours, baseline, sameSession] = await alternate(
    async () => {
      const result = await runner.run({ command: PRINT });
      if (result.exitCode !== 0 || result.stdout.totalBytes !== 1e9) throw new Error(`bash run failed: ${JSON.stringify(result.stdout)}`);
      await rm(result.stdout.fullOutputPath!);
    },
    redirect(true),
    redirect(false),
  );
  clearInterval(sampler);
  const rssGrowth = (rssPeak - rssBefore) / MiB;
  figures['bash 1 GB: through bash (ms, median)'] = median(ours!).toFixed(0);
  figures['bash 1 GB: redirected to a file, own session (ms, median)'] = median(baseline!).toFixed(0);
  figures['bash 1 GB: redirected to a file, this session (ms, median)'] = median(sameSession!).toFixed(0);
  figures['bash 1 GB: ratio to the redirect in its own session (goal <= 1.3)'] = (median(ours!) / median(baseline!)).toFixed(2);
  figures['bash 1 GB: peak RSS growth (MiB, goal < 64)'] = rssGrowth.toFixed(1);
  const list = (times: number[], digits = 0) => times.map((ms) => ms.toFixed(digits)).join(' ');
  log(`bash: ours ${list(ours!)}; redirect, own session ${list(baseline!)}; this session ${list(sameSession!)} ms`);

  // 2. The 1 GB file of 120 million lines.
  const path = join(dir, 'lines.txt');
  log('writing the 1 GB file');
  await shell(`seq 1 ${LINES} > ${path}`);
  const size = (await stat(path)).size;

  // 3. tail: the last 10 lines.
  const [tail, tailTool] = await alternate(
    async () => {
      const result = (await readFile({ path, offset: -10 })) as TextReadResult;
      if (!result.text.endsWith(`${LINES}\n`)) throw new Error('tail read the wrong lines');
    },
    () => run('tail', ['-n', '10', path]),
  );
  figures['tail of 1 GB: read offset -10 (ms, median)'] = median(tail!).toFixed(1);
  figures['tail of 1 GB: tail -n 10, process start included (ms, median)'] = median(tailTool!).toFixed(1);
  log(`tail: ${list(tail!, 1)} ms; tail -n 10 ${list(tailTool!, 1)} ms`);

  // 4. A forward scan: the last line by its number, against wc -l.
  const [scan, wc] = await alternate(
    async () => {
      const result = (await readFile({ path, offset: LINES, limit: 1 })) as TextReadResult;
      if (result.text !== `${LINES}\n` || result.totalLines !== LINES) throw new Error('the forward read found the wrong line');
    },
    () => run('wc', ['-l', path]),
  );
  figures['forward scan of 1 GB: read offset 120000000 (ms, median)'] = median(scan!).toFixed(0);
  figures['forward scan of 1 GB: wc -l (ms, median)'] = median(wc!).toFixed(0);
  figures['forward scan of 1 GB: ratio (goal <= 2)'] = (median(scan!) / median(wc!)).toFixed(2);
  log(`scan: ${list(scan!)} ms; wc -l ${list(wc!)} ms`);

  log(`done; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  process.stdout.write(`| figure (file of ${size} bytes, ${ROUNDS} rounds) | value |\n| --- | --- |\n`);
  for (const [name, value] of Object.entries(figures)) process.stdout.write(`| ${name} | ${value} |\n`);
} finally {
  await cleanup();
}
