import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { open, readFile, stat, type FileHandle } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Launch } from '../command-runner.js';
import type { EnterMethod } from './bubblewrap-check.js';
import { joinCommand, type PlaceGroup } from './cgroups.js';

/** The namespaces bubblewrap makes, in nsenter's option names. */
const NAMESPACES = [
  ['user', 'user'],
  ['mnt', 'mount'],
  ['uts', 'uts'],
  ['ipc', 'ipc'],
  ['net', 'net'],
  ['pid', 'pid'],
  ['cgroup', 'cgroup'],
] as const;
const START_TIMEOUT_MS = 10_000;
const POLL_MS = 5;

/**
 * Drops whatever the entering process still holds before bash starts: capabilities (as root,
 * nsenter keeps them all), and any later gain through setuid programs or file capabilities.
 */
const DROP_PRIVILEGES = ['setpriv', '--no-new-privs', '--inh-caps=-all', '--ambient-caps=-all', '--bounding-set=-all', '--'];

/** The program a live sandbox runs: it must stay up; the sandbox ends with it. */
export interface SandboxProgram {
  readonly argv: readonly string[];
  /** Its name in /proc/PID/comm once started (before exec the forked process is still bubblewrap). */
  readonly comm: string;
  /** Whether it writes a line "ready" on its stdout once it serves (the network bridge). */
  readonly saysReady: boolean;
}

/** A program that only keeps the sandbox up. */
export const SLEEP: SandboxProgram = { argv: ['sleep', 'infinity'], comm: 'sleep', saysReady: false };

export class LiveSandboxError extends Error {
  override readonly name = 'LiveSandboxError';
}

/**
 * One bubblewrap sandbox kept running (its program sleeps), that commands are entered into: a
 * `bash` call then costs an exec or a few instead of building namespaces and mounts anew.
 *
 * The sandbox's namespaces, root and working folder are held open here as file descriptors and
 * handed to the command's process as its descriptors 3, 4, ..., never named by process id: a
 * process id can be reused by another process once the sandbox has ended, a descriptor cannot.
 * The launcher (sandbox-enter.c) joins the place's control group, enters them, changes root to the
 * sandbox's root and folder to the place's folder (both inside the sandbox's mounts), drops every
 * capability and closes every descriptor but stdio before bash starts; where it is not built,
 * /bin/sh joins the group, nsenter enters (given /proc/self/fd/N) and setpriv drops. A command
 * leads its own process group (the runner spawns it detached) that stopping it ends, as outside a
 * sandbox.
 */
export class LiveSandbox {
  private leases = 0;
  private ended = false;
  private retired = false;
  private handlesClosed = false;
  private readonly endedPromise: Promise<void>;
  private idleTimer: NodeJS.Timeout | undefined;

  private constructor(
    readonly fingerprint: string,
    private readonly child: ChildProcess,
    /** The namespaces to enter, then the root and the working folder: the command's descriptors 3, 4, ... */
    private readonly handles: readonly FileHandle[],
    /** Naming those descriptors: nsenter's options, and the launcher's. */
    private readonly enterArgs: { readonly nsenter: readonly string[]; readonly launcher: readonly string[] },
    private readonly idleMs: number,
    /** The place's control group, that each command joins before it enters. */
    private readonly group: PlaceGroup | undefined,
  ) {
    this.endedPromise = new Promise((resolve) => {
      const done = (): void => {
        this.ended = true;
        resolve();
      };
      if (child.exitCode !== null || child.signalCode !== null) done();
      else child.once('exit', done);
    });
    // A command launched but not yet spawned still needs the descriptors: closed at its release then.
    void this.endedPromise.then(async () => {
      if (this.leases === 0) await this.closeHandles();
    });
  }

  /**
   * Starts bubblewrap with `args` (bwrap-args.ts, without `--` and a program) and `env`, running
   * `program`, in the place's control group `group` if any, and opens its namespaces. Ended after
   * `idleMs` without a command, or by stop().
   */
  static async start(
    args: readonly string[],
    env: NodeJS.ProcessEnv,
    fingerprint: string,
    idleMs: number,
    program: SandboxProgram = SLEEP,
    group?: PlaceGroup,
  ): Promise<LiveSandbox> {
    const bwrap = joinCommand(group, 'bwrap', [...args, '--info-fd', '3', '--', ...program.argv]);
    const child = spawn(bwrap.file, bwrap.args, { env, stdio: ['ignore', program.saysReady ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-2000)));
    const handles: FileHandle[] = [];
    try {
      await Promise.race([
        once(child, 'spawn'),
        once(child, 'exit').then(() => {
          throw new LiveSandboxError(`bubblewrap ended at once: ${stderr.trim() || 'no message'}`);
        }),
      ]);
      const info = await readInfo(child, () => stderr);
      const expected = info as unknown as Record<string, unknown>;
      if (program.saysReady) await readReady(child, () => stderr);
      // The sleeping program, not bubblewrap's own first process: as an unprivileged user that one
      // cannot be inspected (it is not dumpable), while a program it has started can be.
      const pid = await firstChildOf(info, child, program.comm);
      const enterArgs = { nsenter: [] as string[], launcher: [] as string[] };
      for (const [file, option] of NAMESPACES) {
        const [mine, theirs] = await Promise.all([stat(`/proc/self/ns/${file}`), stat(`/proc/${pid}/ns/${file}`)]);
        if (mine.ino === theirs.ino && mine.dev === theirs.dev) continue; // not a namespace of its own (no user namespace as root)
        const handle = await open(`/proc/${pid}/ns/${file}`, 'r');
        handles.push(handle);
        // What bubblewrap says it made, checked against what was opened: never another process's.
        const said = expected[`${file}-namespace`];
        if (typeof said === 'number' && (await handle.stat()).ino !== said)
          throw new LiveSandboxError(`The sandbox's ${file} namespace changed while starting.`);
        const fd = 2 + handles.length;
        enterArgs.nsenter.push(`--${option}=/proc/self/fd/${fd}`);
        if (option === 'user') enterArgs.nsenter.push('--preserve-credentials');
        enterArgs.launcher.push('--ns', `${file}:${fd}`);
      }
      for (const [what, option] of [
        ['root', '--root'],
        ['cwd', '--wd'],
      ] as const) {
        handles.push(await open(`/proc/${pid}/${what}`, 'r'));
        const fd = 2 + handles.length;
        enterArgs.nsenter.push(`${option}=/proc/self/fd/${fd}`);
        enterArgs.launcher.push(option, String(fd));
      }
      // The descriptors name the sandbox as it was when they were opened: check it still runs.
      if (child.exitCode !== null || child.signalCode !== null)
        throw new LiveSandboxError(`bubblewrap ended while starting: ${stderr.trim() || 'no message'}`);
      child.stderr!.resume();
      return new LiveSandbox(fingerprint, child, handles, enterArgs, idleMs, group);
    } catch (error) {
      child.kill('SIGKILL');
      await Promise.all(handles.map((handle) => handle.close().catch(() => {})));
      throw error instanceof LiveSandboxError
        ? error
        : new LiveSandboxError(`The sandbox could not be started: ${(error as Error).message}`);
    }
  }

  /** Whether commands can still be entered into it. */
  get alive(): boolean {
    return !this.ended;
  }

  /**
   * `bash -c command` entered into the sandbox `how` (bubblewrap-check.ts), with `env`. The sandbox
   * stays up (and its descriptors open) until release() is called, which the runner does once the
   * command has ended.
   */
  launch(command: string, env: NodeJS.ProcessEnv, how: EnterMethod): Launch {
    if (this.ended) throw new LiveSandboxError('The sandbox has ended.');
    this.leases++;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    let released = false;
    return {
      ...(how.kind === 'launcher'
        ? {
            file: how.path,
            args: [
              ...(this.group?.procs ?? []).flatMap((procs) => ['--cgroup-procs', procs]),
              ...this.enterArgs.launcher,
              '--',
              'bash',
              '-c',
              command,
            ],
          }
        : joinCommand(this.group, 'nsenter', [...this.enterArgs.nsenter, '--', ...DROP_PRIVILEGES, 'bash', '-c', command])),
      env,
      fds: this.handles.map((handle) => handle.fd),
      release: () => {
        if (released) return;
        released = true;
        if (--this.leases > 0) return;
        if (this.ended) void this.closeHandles();
        else if (this.retired) void this.stop();
        else {
          this.idleTimer = setTimeout(() => void this.stop(), this.idleMs);
          this.idleTimer.unref();
        }
      },
    };
  }

  /** Replaced by a newer sandbox of the same place: ends once no command runs in it. */
  retire(): void {
    this.retired = true;
    if (this.leases === 0) void this.stop();
  }

  /**
   * Ends the sandbox and everything still running in it (its first process going takes the whole
   * PID namespace with it).
   */
  async stop(): Promise<void> {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    if (!this.ended) this.child.kill('SIGKILL');
    await this.endedPromise;
  }

  /** Resolves once the sandbox has ended. */
  get whenEnded(): Promise<void> {
    return this.endedPromise;
  }

  private async closeHandles(): Promise<void> {
    if (this.handlesClosed) return;
    this.handlesClosed = true;
    await Promise.all(this.handles.map((handle) => handle.close().catch(() => {})));
  }
}

async function readInfo(child: ChildProcess, stderr: () => string): Promise<{ 'child-pid': number }> {
  let text = '';
  const stream = child.stdio[3] as NodeJS.ReadableStream;
  stream.setEncoding('utf8');
  const timer = sleep(START_TIMEOUT_MS).then(() => {
    throw new LiveSandboxError('bubblewrap did not say within 10 s that the sandbox was ready.');
  });
  for (;;) {
    const chunk = (await Promise.race([
      once(stream, 'data').then(([data]) => data as string),
      once(stream, 'end').then(() => undefined),
      timer,
    ])) as string | undefined;
    if (chunk === undefined)
      throw new LiveSandboxError(`bubblewrap ended before the sandbox was ready: ${stderr().trim() || 'no message'}`);
    text += chunk;
    try {
      const info = JSON.parse(text) as { 'child-pid'?: unknown };
      if (typeof info['child-pid'] !== 'number') throw new LiveSandboxError("bubblewrap did not give the sandbox's process id.");
      return info as { 'child-pid': number };
    } catch (error) {
      if (error instanceof LiveSandboxError) throw error;
      // Not all of it yet.
    }
  }
}

/** Waits for the program's "ready" line (then lets the rest of its output go). */
async function readReady(child: ChildProcess, stderr: () => string): Promise<void> {
  const stream = child.stdout!;
  stream.setEncoding('utf8');
  let text = '';
  const timer = sleep(START_TIMEOUT_MS).then(() => {
    throw new LiveSandboxError("The sandbox's program did not say within 10 s that it was ready.");
  });
  while (!text.includes('ready\n')) {
    const chunk = (await Promise.race([
      once(stream, 'data').then(([data]) => data as string),
      once(stream, 'end').then(() => undefined),
      timer,
    ])) as string | undefined;
    if (chunk === undefined)
      throw new LiveSandboxError(`The sandbox's program ended before it was ready: ${stderr().trim() || 'no message'}`);
    text += chunk;
  }
  stream.resume();
}

async function firstChildOf(info: { 'child-pid': number }, child: ChildProcess, comm: string): Promise<number> {
  const pid = info['child-pid'];
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline && child.exitCode === null && child.signalCode === null) {
    const children = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
    const first = Number.parseInt(children.trim().split(' ')[0] ?? '', 10);
    if (Number.isInteger(first) && first > 0) {
      // Started, and no longer bubblewrap itself (before exec the forked process is still bwrap).
      const exe = await readFile(`/proc/${first}/comm`, 'utf8').catch(() => '');
      if (exe.trim() === comm) return first;
    }
    await sleep(POLL_MS);
  }
  throw new LiveSandboxError("The sandbox's program did not start.");
}
