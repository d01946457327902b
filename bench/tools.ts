/**
 * `npm run bench:tools`: the machine tools against the shell tools doing the same job, measured in
 * one run (see bench/README.md for the figures of a real run):
 *
 *   bash:  a command printing 1 GB through CommandRunner (what the bash tool runs) against the same
 *          command redirected to a file by bash (started in a session of its own, as the runner
 *          starts commands; also shown from this session), and this process's peak RSS growth;
 *   tail:  read with offset -10 on a 1 GB file of 120 million lines (against `tail -n 10`);
 *   scan:  a forward read of the file's last line (a scan of the whole file) against `wc -l`;
 *   head:  a forward read of the first 2,000 lines of the 1 GB file (no scan) against `head -n 2000`;
 *   edit:  edit of one unique line in a 50 MB file against `sed -i` on a copy of the same file, and
 *          edit of one line near the end of the 1 GB file, with this process's peak RSS growth;
 *   write: write of 10 MiB of text (the tool's string) against `cp` of a 10 MiB file.
 *
 * The core functions run in this process, as in the server. The bash case runs first, so that the
 * peak RSS it reports is its own. Everything it writes goes to one temp folder, deleted at the end
 * (also on failure or Ctrl-C).
 *
 * Flags (after `npm run bench:tools --`): --rounds N (default 5; each round runs each side once,
 * alternating which goes first, so drift in the machine's load hits both alike); --only write (the
 * write case alone).
 */
import { execFile, spawn } from 'node:child_process';
import { copyFile, mkdtemp, readFile as readRaw, rm, stat, writeFile as writeRaw } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CommandRunner } from '../main/machine/command-runner.js';
import { editFile } from '../main/machine/edit.js';
import { readFile, type TextReadResult } from '../main/machine/read.js';
import { writeFile } from '../main/machine/write.js';
import { log, median } from './lib/util.js';

const run = promisify(execFile);
const argv = process.argv.slice(2);
const ROUNDS = argv.includes('--rounds') ? Number(argv[argv.indexOf('--rounds') + 1]) : 5;
const ONLY_WRITE = argv.includes('--only') && argv[argv.indexOf('--only') + 1] === 'write';
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
/** 1-7: bash, then the 1 GB file's reads and edits, and the 50 MB edit; returns the 1 GB file's size. */
async function toolCases(): Promise<number> {
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

  // 5. head: the first 2,000 lines, which a read reads and no more.
  const [head, headTool] = await alternate(
    async () => {
      const result = (await readFile({ path, limit: 2000 })) as TextReadResult;
      if (result.endLine !== 2000 || !result.text.endsWith('\n2000\n') || result.totalLines !== undefined)
        throw new Error('the head read went wrong');
    },
    () => run('head', ['-n', '2000', path]),
  );
  figures['first 2000 lines of 1 GB: read limit 2000 (ms, median)'] = median(head!).toFixed(1);
  figures['first 2000 lines of 1 GB: head -n 2000, process start included (ms, median)'] = median(headTool!).toFixed(1);
  figures['first 2000 lines of 1 GB: ratio (goal <= 2)'] = (median(head!) / median(headTool!)).toFixed(2);
  log(`head: ${list(head!, 1)} ms; head -n 2000 ${list(headTool!, 1)} ms`);

  // 6. edit of the 1 GB file near its end: memory stays bounded (one round; it rewrites 1 GB).
  const rssBeforeEdit = process.memoryUsage().rss;
  let rssPeakEdit = rssBeforeEdit;
  const editSampler = setInterval(() => (rssPeakEdit = Math.max(rssPeakEdit, process.memoryUsage().rss)), 20);
  const bigEdit = await timed(() => editFile({ path, edits: [{ old_string: `\n${LINES - 1}\n`, new_string: '\nedited\n' }] }));
  clearInterval(editSampler);
  if (bigEdit.value.replacements !== 1) throw new Error('the 1 GB edit went wrong');
  figures['edit of 1 GB, one line near the end (ms)'] = bigEdit.ms.toFixed(0);
  figures['edit of 1 GB: peak RSS growth (MiB)'] = ((rssPeakEdit - rssBeforeEdit) / MiB).toFixed(1);
  log(`edit 1 GB: ${bigEdit.ms.toFixed(0)} ms, RSS growth ${((rssPeakEdit - rssBeforeEdit) / MiB).toFixed(1)} MiB`);
  await rm(path);

  // 7. edit of a 50 MB file: one unique line, back and forth, against sed -i on a copy.
  const ours50 = join(dir, 'edit-ours.txt');
  const sed50 = join(dir, 'edit-sed.txt');
  await shell(`seq 1 6500000 > ${ours50}`);
  await copyFile(ours50, sed50);
  const size50 = (await stat(ours50)).size;
  let oursRound = 0;
  let sedRound = 0;
  const [edit50, sed] = await alternate(
    async () => {
      const [from, to] = oursRound++ % 2 === 0 ? ['\n3250000\n', '\nedited\n'] : ['\nedited\n', '\n3250000\n'];
      const result = await editFile({ path: ours50, edits: [{ old_string: from, new_string: to }] });
      if (result.replacements !== 1) throw new Error('the 50 MB edit went wrong');
    },
    () => (sedRound++ % 2 === 0 ? run('sed', ['-i', 's/^3250000$/edited/', sed50]) : run('sed', ['-i', 's/^edited$/3250000/', sed50])),
  );
  if (!(await readRaw(ours50)).equals(await readRaw(sed50))) throw new Error('edit and sed -i made different files');
  figures[`edit of ${(size50 / 1e6).toFixed(0)} MB, one unique line (ms, median)`] = median(edit50!).toFixed(1);
  figures[`edit of ${(size50 / 1e6).toFixed(0)} MB: sed -i (ms, median)`] = median(sed!).toFixed(1);
  figures[`edit of ${(size50 / 1e6).toFixed(0)} MB: ratio (goal <= 1.5)`] = (median(edit50!) / median(sed!)).toFixed(2);
  log(`edit 50 MB: ${list(edit50!, 1)} ms; sed -i ${list(sed!, 1)} ms`);
  return size;
}

/** 8. write of 10 MiB, against cp of a 10 MiB file (alone with --only write). */
async function writeCase(): Promise<void> {
  // Flat, as JSON.parse makes the tool's arguments (a repeated string is a rope, slower to encode).
  const content = Buffer.from(
    'x'
      .repeat(63)
      .concat('\n')
      .repeat((10 * MiB) / 64),
  ).toString('utf8');
  const source = join(dir, 'source.txt');
  await writeRaw(source, content);
  const [write10, cp] = await alternate(
    async () => {
      const result = await writeFile({ path: join(dir, 'written.txt'), content });
      if (result.bytes !== 10 * MiB) throw new Error('the write went wrong');
    },
    () => run('cp', [source, join(dir, 'copied.txt')]),
  );
  figures['write of 10 MiB (ms, median)'] = median(write10!).toFixed(1);
  figures['write of 10 MiB: cp, process start included (ms, median)'] = median(cp!).toFixed(1);
  figures['write of 10 MiB: ratio (goal <= 2)'] = (median(write10!) / median(cp!)).toFixed(2);
  log(`write 10 MiB: ${write10!.map((ms) => ms.toFixed(1)).join(' ')} ms; cp ${cp!.map((ms) => ms.toFixed(1)).join(' ')} ms`);
}

try {
  log(
    `bench:tools, ${ROUNDS} rounds; load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );

  const size = ONLY_WRITE ? undefined : await toolCases();
  await writeCase();

  log(
    `done; load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  process.stdout.write(`| figure (${size === undefined ? '' : `file of ${size} bytes, `}${ROUNDS} rounds) | value |\n| --- | --- |\n`);
  for (const [name, value] of Object.entries(figures)) process.stdout.write(`| ${name} | ${value} |\n`);
} finally {
  await cleanup();
}
