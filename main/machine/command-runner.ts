import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { constants as osConstants } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { MachineError } from './errors.js';
import { OutputCapture, type CapturedOutput } from './output-capture.js';
import { OutputFile, type OutputFileLimits } from './output-file.js';
import { terminateProcessGroup } from './process-group.js';
import { loadTerminal } from './terminal-module.js';
import { RECENT_OUTPUT_BYTES, RecentOutput } from './recent-output.js';
import { DEFAULT_SAVED_OUTPUT_TOTAL_MB, outputFileName, SavedOutputs } from './saved-outputs.js';

export type { CapturedOutput } from './output-capture.js';

/** Timeout when the caller gives none (lowered to the configured maximum if that is smaller). */
export const BASH_DEFAULT_TIMEOUT_SECONDS = 120;
/** Per stream, the output returned is at most this head plus this tail; the middle is elided. */
export const BASH_OUTPUT_HEAD_BYTES = 16 * 1024;
export const BASH_OUTPUT_TAIL_BYTES = 16 * 1024;
/** Most bytes of one stream saved to its full-output file; a command (without tty) whose output passes it is stopped. */
export const BASH_SAVED_OUTPUT_MAX_BYTES = 1024 * 1024 * 1024;
/** Between SIGTERM and SIGKILL when a command is stopped. */
export const BASH_KILL_GRACE_MS = 2000;
/** Progress callbacks come at most this often. */
export const BASH_PROGRESS_INTERVAL_MS = 1000;

// How often the size of output files is checked against the saved-output limit.
const OUTPUT_WATCH_MS = 100;
// After bash exits, how long to wait for output still held open by a background job it started (output through pipes).
const PIPE_DRAIN_MS = 500;
const MAX_TIMER_SECONDS = Math.floor((2 ** 31 - 1) / 1000);
const TERMINAL_COLUMNS = 120;
const TERMINAL_ROWS = 40;

export interface BashInput {
  command: string;
  /** Seconds; capped by the runner's maxTimeoutSeconds. */
  timeout?: number | undefined;
  /** Run under a pseudo-terminal: stdout and stderr are then merged into `stdout`. */
  tty?: boolean | undefined;
}

export interface RunOptions {
  /** Aborting stops the command (its whole process group). */
  signal?: AbortSignal | undefined;
  /** Called at most every BASH_PROGRESS_INTERVAL_MS while the command runs, with its latest output line. */
  onProgress?: ((message: string) => void) | undefined;
  /** Runs the command inside this sandbox (a place's policy) instead of as the app's user. */
  sandbox?: { launch(command: string, tty: boolean): Promise<Launch> } | undefined;
  /** The root of the place the command runs for (`""`: This machine): its outputs are saved in that place's folder. */
  place?: string | undefined;
  /**
   * Why the policy the command started under no longer holds, if it changed while the command
   * started (before stopPlace could find it): asked once it is registered, and it is then stopped.
   */
  outdated?: () => string | undefined;
}

export interface BashResult {
  /** Null when the command was ended by a signal. */
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  cancelled: boolean;
  /** Stopped because the server is shutting down (killAll). */
  serverStopped: boolean;
  /** Stopped because its stdout or stderr passed the saved-output limit (BASH_SAVED_OUTPUT_MAX_BYTES). */
  outputTooLarge: boolean;
  /** Stopped because its place's sandbox changed (stopPlace): why, in words. */
  policyChanged?: string;
  durationMs: number;
  /** The timeout applied, after capping. */
  timeoutSeconds: number;
  tty: boolean;
  /** With tty: everything the terminal showed, stdout and stderr merged. */
  stdout: CapturedOutput;
  /** Null with tty (merged into stdout). */
  stderr: CapturedOutput | null;
}

export interface CommandRunnerOptions {
  maxTimeoutSeconds: number;
  /**
   * Where full outputs too big to return are saved, each server in a folder of its own; default a
   * private folder in the OS temp dir.
   */
  outputDir?: string;
  /** Most bytes of one stream saved; default BASH_SAVED_OUTPUT_MAX_BYTES (tests lower it). */
  maxSavedOutputBytes?: number;
  /** Most bytes of all saved outputs together, the oldest removed first (WORKSPACE_BASH_OUTPUT_MAX_MB). */
  maxSavedTotalBytes?: number;
  /** How long a saved output is kept at most; default a day (tests lower it). */
  savedOutputMaxAgeMs?: number;
}

/** How often saved outputs older than their maximum age are looked for. */
const SWEEP_INTERVAL_MS = 60 * 60 * 1000;

interface Exit {
  exitCode: number | null;
  signal: string | null;
}

interface Started {
  pid: number;
  /** Resolves once the process has exited and its output has been taken in. */
  exited: Promise<Exit>;
  /** The latest line of output, for progress messages. */
  lastLine(): Promise<string | undefined>;
  /** Bytes in the larger output file so far, when the command writes its output files itself. */
  largestOutput?: () => Promise<number>;
  /** What the command printed; once it has exited. */
  output(): Promise<{ stdout: CapturedOutput; stderr: CapturedOutput | null }>;
}

interface Running {
  /** The root of the place it runs for. */
  place: string;
  stop(): void;
  /** Stops it at once (SIGKILL): its place's policy changed. */
  stopForPolicy(why: string): void;
  settled: Promise<unknown>;
}

/** Runs bash commands, each in its own process group so that stopping one stops all it started. */
export class CommandRunner {
  private readonly running = new Set<Running>();
  /** The output files of the commands running now: never removed by a sweep or the size limit. */
  private readonly writing = new Set<string>();
  private readonly saved: SavedOutputs;
  private sweeper: NodeJS.Timeout | undefined;
  /** The longest timeout a command may have, in seconds. */
  readonly maxTimeoutSeconds: number;

  constructor(private readonly options: CommandRunnerOptions) {
    // Node timers overflow (and fire at once) past 2^31-1 ms, about 24 days.
    if (!(options.maxTimeoutSeconds > 0 && options.maxTimeoutSeconds <= MAX_TIMER_SECONDS)) {
      throw new MachineError(
        'invalid_input',
        `The maximum command timeout must be between 0 and ${MAX_TIMER_SECONDS} seconds (got ${options.maxTimeoutSeconds}); check WORKSPACE_SHELL_MAX_TIMEOUT.`,
      );
    }
    this.maxTimeoutSeconds = options.maxTimeoutSeconds;
    this.saved = new SavedOutputs({
      ...(options.outputDir !== undefined && { base: options.outputDir }),
      maxTotalBytes: options.maxSavedTotalBytes ?? DEFAULT_SAVED_OUTPUT_TOTAL_MB * 1024 ** 2,
      ...(options.savedOutputMaxAgeMs !== undefined && { maxAgeMs: options.savedOutputMaxAgeMs }),
    });
  }

  /**
   * Removes saved outputs left by servers that stopped without cleaning up and those past their
   * age, now and then every hour, until stopSweeping(). Failures are reported, never thrown.
   */
  startSweeping(report: (line: string) => void): void {
    const sweep = () =>
      void this.saved.sweep(this.writing).then(
        (left) => left.forEach((line) => report(`Saved bash outputs: ${line}`)),
        (error: unknown) => report(`Could not remove old bash outputs in ${this.saved.base}: ${(error as Error).message}`),
      );
    sweep();
    this.sweeper ??= setInterval(sweep, SWEEP_INTERVAL_MS).unref();
  }

  stopSweeping(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  /** Removes this server's saved outputs (the agent endpoint stops: no agent can read them any more); returns what it left alone. */
  async removeSavedOutputs(): Promise<string[]> {
    return this.saved.removeOwn();
  }

  /** The folder where the commands of the place whose root is `placeRoot` save their outputs (made now if need be). */
  outputFolder(placeRoot: string): Promise<string> {
    return this.saved.dir(placeRoot);
  }

  async run(input: BashInput, { signal, onProgress, sandbox, place = '', outdated }: RunOptions = {}): Promise<BashResult> {
    if (typeof input.command !== 'string' || input.command.trim() === '') {
      throw new MachineError('invalid_input', 'command is empty: give the bash command to run.');
    }
    const timeoutSeconds = this.timeoutFor(input.timeout);
    if (signal?.aborted) throw new MachineError('cancelled', 'The command was cancelled before it started; nothing ran.');

    const tty = input.tty === true;
    const startedAt = Date.now();
    const id = `${new Date(startedAt).toISOString().replace(/[:.]/g, '-')}-${randomBytes(4).toString('hex')}`;
    const limits: OutputFileLimits = {
      headBytes: BASH_OUTPUT_HEAD_BYTES,
      tailBytes: BASH_OUTPUT_TAIL_BYTES,
      maxSavedBytes: this.options.maxSavedOutputBytes ?? BASH_SAVED_OUTPUT_MAX_BYTES,
    };
    // The one place where output files are named.
    const paths: string[] = [];
    const outputPath = async (stream: 'stdout' | 'stderr' | 'output'): Promise<string> => {
      const path = join(await this.saved.dir(place), outputFileName(id, stream));
      paths.push(path);
      this.writing.add(path);
      return path;
    };
    const capture = (stream: 'stdout' | 'stderr' | 'output'): OutputCapture =>
      new OutputCapture({ ...limits, savePath: () => outputPath(stream) });
    const launch: Launch = sandbox ? await sandbox.launch(input.command, tty) : { file: 'bash', args: ['-c', input.command] };
    let child: Started;
    try {
      if (tty) {
        child = await startInTerminal(launch, capture('output'));
      } else {
        const files = await Promise.all(
          [outputPath('stdout'), outputPath('stderr')].map(async (path) => OutputFile.create(await path)),
        ).catch(() => undefined);
        // Without output files (the folder cannot be written), the output still comes back through pipes.
        child = files ? await startWritingToFiles(launch, files, limits) : await startPiped(launch, capture('stdout'), capture('stderr'));
      }
    } catch (error) {
      launch.release?.();
      throw error;
    }

    let stopReason: 'timeout' | 'cancel' | 'shutdown' | 'output-limit' | 'policy' | undefined;
    let policyChanged: string | undefined;
    let stopping: Promise<void> | undefined;
    const stop = (reason: NonNullable<typeof stopReason>): void => {
      if (stopping) return;
      stopReason = reason;
      // What ran under a policy that no longer holds gets no grace to keep working.
      stopping = terminateProcessGroup(child.pid, reason === 'policy' ? 0 : BASH_KILL_GRACE_MS);
    };
    const timer = setTimeout(() => stop('timeout'), timeoutSeconds * 1000);
    const onAbort = (): void => stop('cancel');
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort();
    let running = true;
    let reporting = false;
    const ticker = onProgress
      ? setInterval(() => {
          if (reporting) return;
          reporting = true;
          child
            .lastLine()
            .then((line) => {
              if (running) onProgress(progressMessage(startedAt, line));
            })
            // A failing listener (or a file read racing the end) must not take the command down with it.
            .catch(() => {})
            .finally(() => (reporting = false));
        }, BASH_PROGRESS_INTERVAL_MS)
      : undefined;
    // A command that writes its output files itself is not held back by this process: stop it
    // when it prints more than the files may keep, before it fills the disk.
    const watcher = child.largestOutput
      ? setInterval(() => {
          child.largestOutput!().then(
            (bytes) => bytes > limits.maxSavedBytes && stop('output-limit'),
            () => {},
          );
        }, OUTPUT_WATCH_MS)
      : undefined;

    // Done when the process has exited and, if it was stopped, its whole group is gone.
    const done = child.exited.then(async (exit) => {
      await stopping;
      return exit;
    });
    const entry: Running = {
      place,
      stop: () => stop('shutdown'),
      stopForPolicy: (why) => {
        policyChanged ??= why;
        stop('policy');
      },
      settled: done.catch(() => {}),
    };
    this.running.add(entry);
    const changed = outdated?.();
    if (changed) entry.stopForPolicy(changed);
    try {
      const exit = await done;
      running = false;
      const output = await this.kept(await child.output());
      return {
        exitCode: exit.exitCode,
        signal: exit.signal,
        timedOut: stopReason === 'timeout',
        cancelled: stopReason === 'cancel',
        serverStopped: stopReason === 'shutdown',
        outputTooLarge: stopReason === 'output-limit',
        ...(stopReason === 'policy' && policyChanged !== undefined && { policyChanged }),
        durationMs: Date.now() - startedAt,
        timeoutSeconds,
        tty,
        stdout: output.stdout,
        stderr: output.stderr,
      };
    } finally {
      running = false;
      clearTimeout(timer);
      if (ticker) clearInterval(ticker);
      if (watcher) clearInterval(watcher);
      signal?.removeEventListener('abort', onAbort);
      this.running.delete(entry);
      for (const path of paths) this.writing.delete(path);
      launch.release?.();
    }
  }

  /** Notes how long the files just saved are kept, and makes room for them under the total size limit. */
  private async kept<T extends { stdout: CapturedOutput; stderr: CapturedOutput | null }>(output: T): Promise<T> {
    const saved = [output.stdout, output.stderr].filter((o): o is CapturedOutput => o?.fullOutputPath !== undefined);
    if (saved.length === 0) return output;
    for (const o of saved) o.fullOutputKept = this.saved.retention();
    await this.saved.trim(new Set([...this.writing, ...saved.map((o) => o.fullOutputPath!)])).catch(() => {});
    return output;
  }

  /** How many commands run now: Stop on the page asks first when agents have some. */
  get runningCount(): number {
    return this.running.size;
  }

  /**
   * Stops at once every command of the place whose root is `placeRoot` (its policy changed: what
   * ran under the old one must not go on), saying `why` in their answers; resolves once they are gone.
   */
  async stopPlace(placeRoot: string, why: string): Promise<void> {
    const all = [...this.running].filter((entry) => entry.place === placeRoot);
    for (const entry of all) entry.stopForPolicy(why);
    await Promise.all(all.map((entry) => entry.settled));
  }

  /** Stops every running command's process group and waits until they are gone (for shutdown). */
  async killAll(): Promise<void> {
    const all = [...this.running];
    for (const entry of all) entry.stop();
    await Promise.all(all.map((entry) => entry.settled));
  }

  private timeoutFor(requested: number | undefined): number {
    const max = this.maxTimeoutSeconds;
    if (requested === undefined) return Math.min(BASH_DEFAULT_TIMEOUT_SECONDS, max);
    if (typeof requested !== 'number' || !Number.isFinite(requested) || requested <= 0) {
      throw new MachineError('invalid_input', `timeout must be a positive number of seconds (got ${requested}); the maximum is ${max}.`);
    }
    return Math.min(requested, max);
  }
}

/** What to start: bash itself, or a sandbox with bash inside (and the environment it gets). */
export interface Launch {
  file: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  /** Where it starts; the app's own folder when absent (bubblewrap changes folder itself). */
  cwd?: string;
  /** Open descriptors the process gets as its fds 3, 4, ... (not with a terminal). */
  fds?: number[];
  /** Called once the process has ended (or could not start): what it used may be let go. */
  release?: () => void;
}

/** Starts bash with its stdout and stderr going straight into the two files, at the speed of a redirect. */
async function startWritingToFiles(launch: Launch, files: OutputFile[], limits: OutputFileLimits): Promise<Started> {
  const [stdout, stderr] = files as [OutputFile, OutputFile];
  let child: ChildProcess;
  let exit: Promise<Exit>;
  try {
    ({ child, exit } = await spawnBash(launch, ['ignore', stdout.fd, stderr.fd, ...(launch.fds ?? [])]));
  } catch (error) {
    await Promise.all(files.map((file) => file.discard()));
    throw error;
  }
  const written = () => Promise.all(files.map((file) => file.written()));
  return {
    pid: child.pid!,
    exited: exit,
    lastLine: async () => {
      // The stream written to last has the latest line.
      const [out, err] = await written();
      const latest = err!.bytes > 0 && (out!.bytes === 0 || err!.modifiedNs > out!.modifiedNs) ? stderr : stdout;
      const recent = new RecentOutput();
      recent.add(await latest.lastBytes(RECENT_OUTPUT_BYTES));
      return recent.lastLine();
    },
    largestOutput: async () => Math.max(...(await written()).map((file) => file.bytes)),
    output: async () => {
      const [out, err] = await Promise.all(files.map((file) => file.finish(limits)));
      return { stdout: out!, stderr: err! };
    },
  };
}

/** Starts bash with its output read through pipes into the captures (when no output file could be made). */
async function startPiped(launch: Launch, stdout: OutputCapture, stderr: OutputCapture): Promise<Started> {
  const { child, exit } = await spawnBash(launch, ['ignore', 'pipe', 'pipe', ...(launch.fds ?? [])]);
  const recent = new RecentOutput();
  const streams: Array<[Readable, OutputCapture]> = [
    [child.stdout!, stdout],
    [child.stderr!, stderr],
  ];
  for (const [from, to] of streams) {
    from.on('data', (chunk: Buffer) => recent.add(chunk));
    from.pipe(to);
  }
  const exited = exit.then(async (status) => {
    // A background job (`cmd &`) may keep the pipes open after bash exits; stop reading them soon after.
    const timer = setTimeout(() => {
      for (const [from, to] of streams) {
        from.unpipe(to);
        from.destroy();
        if (!to.writableEnded) to.end();
      }
    }, PIPE_DRAIN_MS);
    try {
      await Promise.all([finished(stdout), finished(stderr)]);
    } finally {
      clearTimeout(timer);
    }
    return status;
  });
  return {
    pid: child.pid!,
    exited,
    lastLine: async () => recent.lastLine(),
    output: async () => ({ stdout: stdout.result(), stderr: stderr.result() }),
  };
}

async function spawnBash(launch: Launch, stdio: StdioOptions): Promise<{ child: ChildProcess; exit: Promise<Exit> }> {
  // detached: the child leads a new process group, which is what gets signalled when it is stopped.
  // A sandboxed command dies with bubblewrap (--die-with-parent), so stopping the group stops it too.
  const child = spawn(launch.file, launch.args, {
    env: launch.env ?? process.env,
    ...(launch.cwd !== undefined && { cwd: launch.cwd }),
    detached: process.platform !== 'win32',
    stdio,
    windowsHide: true,
  });
  const exit = new Promise<Exit>((resolve) => child.once('exit', (exitCode, signal) => resolve({ exitCode, signal })));
  try {
    await once(child, 'spawn');
  } catch (error) {
    throw bashUnavailable(launch.file, error);
  }
  return { child, exit };
}

async function startInTerminal(launch: Launch, output: OutputCapture): Promise<Started> {
  const spawnTerminal = await loadTerminal();
  let terminal: ReturnType<typeof spawnTerminal>;
  try {
    terminal = spawnTerminal(launch.file, launch.args, {
      name: 'xterm-256color',
      cols: TERMINAL_COLUMNS,
      rows: TERMINAL_ROWS,
      cwd: launch.cwd ?? process.cwd(),
      env: launch.env ?? process.env,
    });
  } catch (error) {
    throw bashUnavailable(launch.file, error);
  }
  const recent = new RecentOutput();
  let paused = false;
  terminal.onData((data) => {
    if (output.writableEnded) return;
    const chunk = Buffer.from(data, 'utf8');
    recent.add(chunk);
    // Backpressure: stop reading the terminal while the capture's file catches up.
    if (!output.write(chunk) && !paused) {
      paused = true;
      terminal.pause();
      output.once('drain', () => {
        paused = false;
        terminal.resume();
      });
    }
  });
  const exited = new Promise<Exit>((resolve) => {
    // node-pty reports the exit once the terminal's output has been read to the end, or 200 ms after
    // the exit when it has not (its issues 72 and 726): on a very busy machine the end can be lost.
    terminal.onExit(({ exitCode, signal }) => {
      output.end();
      resolve(signal ? { exitCode: null, signal: signalName(signal) } : { exitCode, signal: null });
    });
  }).then(async (status) => {
    await finished(output);
    return status;
  });
  // node-pty starts the child in a new session, so its pid is also its process group id.
  return {
    pid: terminal.pid,
    exited,
    lastLine: async () => recent.lastLine(),
    output: async () => ({ stdout: output.result(), stderr: null }),
  };
}

function signalName(signal: number): string {
  return Object.entries(osConstants.signals).find(([, number]) => number === signal)?.[0] ?? `signal ${signal}`;
}

function bashUnavailable(file: string, error: unknown): MachineError {
  if (file !== 'bash') {
    const install = file === 'bwrap' ? 'Install bubblewrap, or ask' : 'Ask';
    return new MachineError(
      'sandbox_unavailable',
      `Could not start the sandbox (${file}): ${(error as Error).message}. ${install} the person who runs this app to change the place's policy.`,
      { cause: error },
    );
  }
  return new MachineError(
    'bash_unavailable',
    `Could not start bash: ${(error as Error).message}. Commands run with bash only; install it and put it on PATH (on Windows: Git for Windows or WSL), then retry.`,
    { cause: error },
  );
}

function progressMessage(startedAt: number, line: string | undefined): string {
  const seconds = Math.round((Date.now() - startedAt) / 1000);
  return line === undefined ? `running for ${seconds}s, no output yet` : `running for ${seconds}s; last output: ${line}`;
}
