import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { builtUrl } from '../../test/support/built.js';
import { NODE_PTY_SKIP } from '../../test/support/native-modules.js';
import { waitFor } from '../../test/support/wait.js';
import { BASH_KILL_GRACE_MS, BASH_OUTPUT_HEAD_BYTES, BASH_OUTPUT_TAIL_BYTES, CommandRunner } from './command-runner.js';
import type { MachineError } from './errors.js';

const execFileAsync = promisify(execFile);

let dir: string;
let runner: CommandRunner;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'machine-bash-'));
  runner = new CommandRunner({ maxTimeoutSeconds: 600, outputDir: join(dir, 'outputs') });
});
after(async () => {
  await runner.killAll();
  await rm(dir, { recursive: true, force: true });
});

/** Whether `pid` is a running process (a zombie, already dead but not reaped, is not). */
async function alive(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  return !/^\d+ \(.*\) [ZX] /.test(stat);
}

/** Waits for a file the command writes (e.g. a background job's pid) and returns its trimmed content. */
/** The text a command writes to `path`, once it has. */
function waitForFile(path: string): Promise<string> {
  return waitFor(async () => (await readFile(path, 'utf8').catch(() => '')).trim(), 10_000, `${path} to be written`);
}

let pidFiles = 0;
function pidFile(): string {
  pidFiles += 1;
  return join(dir, `job-${pidFiles}.pid`);
}

describe('CommandRunner', () => {
  it('runs real bash and returns exit code, stdout and stderr separately', async () => {
    const result = await runner.run({ command: 'if [[ -n "$BASH_VERSION" ]]; then echo "is bash"; fi; echo oops >&2; exit 3' });
    assert.equal(result.exitCode, 3);
    assert.equal(result.signal, null);
    assert.equal(result.stdout.text, 'is bash\n');
    assert.equal(result.stderr?.text, 'oops\n');
    assert.equal(result.timedOut, false);
    assert.equal(result.cancelled, false);
    assert.equal(result.tty, false);
    assert.ok(result.durationMs >= 0);
  });

  it("starts in the server process's working directory", async () => {
    const result = await runner.run({ command: 'pwd' });
    assert.equal(result.stdout.text, `${process.cwd()}\n`);
  });

  it('gives the command no stdin', async () => {
    const result = await runner.run({ command: 'cat; echo done', timeout: 5 });
    assert.equal(result.stdout.text, 'done\n');
    assert.equal(result.timedOut, false);
  });

  it('stops a command at its timeout, with every process it started', async () => {
    const pids = pidFile();
    const result = await runner.run({ command: `sleep 300 & echo $! > ${pids}; wait`, timeout: 1 });
    assert.equal(result.timedOut, true);
    assert.equal(result.exitCode, null);
    assert.equal(result.signal, 'SIGTERM');
    assert.ok(result.durationMs < 1000 + BASH_KILL_GRACE_MS, `took ${result.durationMs} ms`);
    assert.equal(await alive(Number(await waitForFile(pids))), false);
  });

  it('kills with SIGKILL what ignores SIGTERM, after the grace period', async () => {
    const pids = pidFile();
    // Ignored signals survive exec, so this sleep ignores SIGTERM.
    const result = await runner.run({ command: `(trap '' TERM; exec sleep 300) & echo $! > ${pids}; wait`, timeout: 0.5 });
    assert.equal(result.timedOut, true);
    assert.ok(result.durationMs >= 500 + BASH_KILL_GRACE_MS - 100, `took ${result.durationMs} ms`);
    assert.equal(await alive(Number(await waitForFile(pids))), false);
  });

  it('stops a command and its process group when the signal aborts', async () => {
    const pids = pidFile();
    const controller = new AbortController();
    const running = runner.run({ command: `sleep 300 & echo $! > ${pids}; wait` }, { signal: controller.signal });
    const pid = Number(await waitForFile(pids));
    controller.abort();
    const result = await running;
    assert.equal(result.cancelled, true);
    assert.equal(result.timedOut, false);
    assert.equal(await alive(pid), false);
  });

  it('does not start a command whose signal is already aborted', async () => {
    const marker = join(dir, 'never-created');
    await assert.rejects(runner.run({ command: `touch ${marker}` }, { signal: AbortSignal.abort() }), { code: 'cancelled' });
    await assert.rejects(stat(marker), { code: 'ENOENT' });
  });

  it('caps the timeout at the configured maximum', async () => {
    const strict = new CommandRunner({ maxTimeoutSeconds: 0.5 });
    const result = await strict.run({ command: 'sleep 30', timeout: 100 });
    assert.equal(result.timeoutSeconds, 0.5);
    assert.equal(result.timedOut, true);
  });

  it('refuses a maximum timeout a timer cannot hold', () => {
    assert.throws(
      () => new CommandRunner({ maxTimeoutSeconds: 30 * 24 * 3600 }),
      /between 0 and 2147483 seconds.*WORKSPACE_SHELL_MAX_TIMEOUT/,
    );
    assert.throws(() => new CommandRunner({ maxTimeoutSeconds: 0 }), { code: 'invalid_input' });
  });

  it('refuses a bad timeout or an empty command', async () => {
    await assert.rejects(runner.run({ command: 'true', timeout: -1 }), (error: MachineError) => {
      assert.equal(error.code, 'invalid_input');
      assert.match(error.message, /timeout must be a positive number of seconds \(got -1\); the maximum is 600/);
      return true;
    });
    await assert.rejects(runner.run({ command: '  ' }), { code: 'invalid_input' });
  });

  it('returns once bash exits even if a background job keeps its output open', async () => {
    const pids = pidFile();
    const result = await runner.run({ command: `sleep 300 & echo $! > ${pids}; echo started` });
    const pid = Number(await waitForFile(pids));
    try {
      assert.equal(result.exitCode, 0);
      assert.equal(result.stdout.text, 'started\n');
      assert.ok(result.durationMs < 3000, `took ${result.durationMs} ms`);
    } finally {
      process.kill(pid, 'SIGKILL');
    }
  });

  it('elides the middle of a long output and saves all of it to a file', async () => {
    const result = await runner.run({ command: 'for i in $(seq 1 20000); do echo "line $i"; done' });
    const expected = Array.from({ length: 20000 }, (_, i) => `line ${i + 1}\n`).join('');
    assert.equal(result.stdout.totalBytes, expected.length);
    assert.ok(result.stdout.text.startsWith('line 1\nline 2\n'));
    assert.ok(result.stdout.text.endsWith('line 19999\nline 20000\n'));
    assert.match(result.stdout.text, new RegExp(`\\n\\.\\.\\. ${result.stdout.elidedBytes} bytes elided \\.\\.\\.\\n`));
    assert.equal(result.stdout.elidedBytes, expected.length - BASH_OUTPUT_HEAD_BYTES - BASH_OUTPUT_TAIL_BYTES);
    assert.ok(result.stdout.fullOutputPath?.startsWith(join(dir, 'outputs')));
    assert.equal(await readFile(result.stdout.fullOutputPath!, 'utf8'), expected);
    assert.equal(result.stderr?.elidedBytes, 0);
  });

  it('saves full outputs again after its output folder was deleted', async () => {
    const long = 'for i in $(seq 1 10000); do echo "line $i"; done';
    const first = await runner.run({ command: long });
    await rm(join(dir, 'outputs'), { recursive: true, force: true });
    const second = await runner.run({ command: long });
    assert.ok(second.stdout.fullOutputPath, 'the full output was saved');
    assert.notEqual(second.stdout.fullOutputPath, first.stdout.fullOutputPath);
    assert.equal((await stat(second.stdout.fullOutputPath!)).size, second.stdout.totalBytes);
  });

  it('keeps memory bounded while a command floods its output', async () => {
    const bytes = 400 * 1024 ** 2;
    const rssBefore = process.memoryUsage().rss;
    const result = await runner.run({ command: `head -c ${bytes} /dev/zero | tr '\\0' x` });
    const peak = process.resourceUsage().maxRSS * 1024;
    assert.equal(result.stdout.totalBytes, bytes);
    assert.ok(result.stdout.text.length < BASH_OUTPUT_HEAD_BYTES + BASH_OUTPUT_TAIL_BYTES + 100);
    assert.equal((await stat(result.stdout.fullOutputPath!)).size, bytes);
    assert.ok(peak - rssBefore < 64 * 1024 ** 2, `peak RSS grew by ${Math.round((peak - rssBefore) / 1024 ** 2)} MiB`);
    await rm(result.stdout.fullOutputPath!);
  });

  it('lets the command write its output straight to a file, and keeps no file for a short output', async () => {
    const outputs = join(dir, 'outputs');
    const before = new Set(await readdir(outputs).catch(() => []));
    const result = await runner.run({ command: 'test -f /dev/stdout && test -f /dev/stderr && echo "regular files"; echo note >&2' });
    assert.equal(result.stdout.text, 'regular files\n');
    assert.equal(result.stderr?.text, 'note\n');
    assert.equal(result.stdout.fullOutputPath, undefined);
    assert.deepEqual(
      (await readdir(outputs)).filter((name) => !before.has(name)),
      [],
    );
  });

  it('stops a command whose output passes the saved-output limit, and keeps its head, tail and the first bytes', async () => {
    const limited = new CommandRunner({ maxTimeoutSeconds: 60, outputDir: join(dir, 'limited'), maxSavedOutputBytes: 1024 ** 2 });
    const result = await limited.run({ command: 'echo first; while :; do echo "more output"; done' });
    assert.equal(result.outputTooLarge, true);
    assert.equal(result.timedOut, false);
    assert.ok(result.stdout.text.startsWith('first\nmore output\n'));
    assert.ok(result.stdout.text.endsWith('output\n') || result.stdout.text.endsWith('more'), 'the tail is the end of the output');
    assert.ok(result.stdout.totalBytes > 1024 ** 2);
    assert.equal((await stat(result.stdout.fullOutputPath!)).size, 1024 ** 2);
    assert.match(result.stdout.fullOutputProblem!, /only the first 1048576 bytes of the output were saved/);
  });

  it('still returns the output through pipes when its output folder cannot be made', async () => {
    const blocked = join(dir, 'a-file');
    await writeFile(blocked, '');
    const piped = new CommandRunner({ maxTimeoutSeconds: 60, outputDir: join(blocked, 'outputs') });
    const result = await piped.run({ command: 'test -f /dev/stdout || echo "not a file"; seq 1 20000' });
    assert.ok(result.stdout.text.startsWith('not a file\n1\n2\n'));
    assert.ok(result.stdout.text.endsWith('19999\n20000\n'));
    assert.equal(result.stdout.fullOutputPath, undefined);
    assert.match(result.stdout.fullOutputProblem!, /the full output could not be saved/);
  });

  it('reports the latest line of whichever stream was written last', async () => {
    const messages: string[] = [];
    await runner.run(
      { command: 'echo "to stdout"; sleep 0.3; echo "to stderr" >&2; sleep 1.5' },
      { onProgress: (message) => messages.push(message) },
    );
    assert.match(messages[0] ?? '', /^running for 1s; last output: to stderr$/);
  });

  it('reports progress about once a second with the latest output line', async () => {
    const messages: Array<{ at: number; message: string }> = [];
    const result = await runner.run(
      { command: 'for i in 1 2 3 4 5; do echo "step $i"; sleep 0.5; done' },
      { onProgress: (message) => messages.push({ at: Date.now(), message }) },
    );
    assert.ok(messages.length >= 2 && messages.length <= Math.floor(result.durationMs / 1000), `${messages.length} progress messages`);
    assert.match(messages[0]!.message, /^running for 1s; last output: step [23]$/);
    for (let i = 1; i < messages.length; i += 1) assert.ok(messages[i]!.at - messages[i - 1]!.at >= 900);
  });

  it('runs under a pseudo-terminal with tty, stdout and stderr merged', { skip: NODE_PTY_SKIP }, async () => {
    const result = await runner.run({ command: 'test -t 1 && echo "on a terminal"; echo "to stderr" >&2; exit 4', tty: true });
    assert.equal(result.tty, true);
    assert.equal(result.exitCode, 4);
    assert.equal(result.stderr, null);
    assert.match(result.stdout.text, /on a terminal\r?\n/);
    assert.match(result.stdout.text, /to stderr/);
  });

  it('stops a tty command at its timeout with every process it started', { skip: NODE_PTY_SKIP }, async () => {
    const pids = pidFile();
    const result = await runner.run({ command: `sleep 300 & echo $! > ${pids}; wait`, timeout: 1, tty: true });
    assert.equal(result.timedOut, true);
    assert.equal(result.exitCode, null);
    assert.equal(await alive(Number(await waitForFile(pids))), false);
  });

  it('killAll stops every running command and waits until they are gone', async () => {
    const own = new CommandRunner({ maxTimeoutSeconds: 600 });
    const [first, second] = [pidFile(), pidFile()];
    const runs = [first, second].map((pids) => own.run({ command: `sleep 300 & echo $! > ${pids}; wait` }));
    const pids = await Promise.all([first, second].map(async (path) => Number(await waitForFile(path))));
    await own.killAll();
    for (const pid of pids) assert.equal(await alive(pid), false);
    for (const result of await Promise.all(runs)) assert.equal(result.serverStopped, true);
  });
});

describe('CommandRunner where node-pty cannot load', () => {
  it('runs plain commands, and a tty command gets tty_unavailable with what to do', async () => {
    // A resolve hook makes `import('node-pty')` fail as a native module that was never built would.
    const code = `import { register } from 'node:module';
      register('data:text/javascript,' + encodeURIComponent(
        'export async function resolve(specifier, context, next) { if (specifier === "node-pty") throw new Error("pty.node: cannot open shared object file"); return next(specifier, context); }'));
      const { CommandRunner } = await import(${JSON.stringify(builtUrl(new URL('./command-runner.ts', import.meta.url)))});
      const runner = new CommandRunner({ maxTimeoutSeconds: 10 });
      const plain = await runner.run({ command: 'echo plain' });
      let tty;
      try { await runner.run({ command: 'echo tty', tty: true }); tty = 'succeeded'; } catch (error) { tty = { code: error.code, message: error.message }; }
      console.log(JSON.stringify({ plain: plain.stdout.text, tty }));`;
    const { stdout, stderr } = await execFileAsync(process.execPath, ['--input-type=module', '-e', code]).catch(
      (error: { stdout: string; stderr: string }) => error,
    );
    const outcome = JSON.parse(stdout.trim().split('\n').at(-1) ?? 'null', undefined) as {
      plain: string;
      tty: { code: string; message: string };
    } | null;
    assert.ok(outcome, stderr);
    assert.equal(outcome.plain, 'plain\n');
    assert.equal(outcome.tty.code, 'tty_unavailable');
    assert.match(
      outcome.tty.message,
      /tty: true is unavailable on this machine: .*node-pty\) could not be loaded \(pty\.node: cannot open shared object file\)\. Run the command without tty/,
    );
  });
});
