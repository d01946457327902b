import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFile, writeFile } from 'node:fs/promises';

/** A server running in its own process, whose startup line gave its MCP URL. */
export interface ServerProcess {
  name: string;
  url: string;
  pid: number;
  child: ChildProcess;
  /** The last few KB the process wrote to stderr (for error messages). */
  stderr(): string;
  stop(): Promise<void>;
}

/** `--import` this to run a TypeScript file from any working directory (a bare `tsx` resolves from the cwd). */
export const TSX_IMPORT = import.meta.resolve('tsx');

/** Node's flags to write a CPU profile into `dir` when the process ends, or none without a `dir`. */
export const cpuProfile = (dir: string | undefined): string[] => (dir ? ['--cpu-prof', '--cpu-prof-dir', dir] : []);

const STARTUP_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 5_000;

/**
 * Spawns `process.execPath args...` and waits for a stdout line containing an http URL ending in
 * /mcp. The process is killed if it does not print one within 30 s.
 */
export async function startServer(name: string, args: string[], options: { env: NodeJS.ProcessEnv; cwd: string }): Promise<ServerProcess> {
  const child = spawn(process.execPath, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => {
    err = (err + chunk).slice(-8192);
  });
  let out = '';
  child.stdout!.setEncoding('utf8');
  const url = await new Promise<string>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => fail(new Error(`${name} printed no URL within ${STARTUP_TIMEOUT_MS / 1000}s`)), STARTUP_TIMEOUT_MS);
    const fail = (error: Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${error.message}\nstdout: ${out}\nstderr: ${err}`));
    };
    child.once('error', fail);
    child.once('exit', (code, signal) => fail(new Error(`${name} exited during startup (code ${code}, signal ${signal})`)));
    child.stdout!.on('data', (chunk: string) => {
      out += chunk;
      const match = /(http:\/\/\S+\/mcp)\b/.exec(out);
      if (match && !settled) {
        settled = true;
        clearTimeout(timer);
        child.removeAllListeners('exit');
        resolve(match[1]!);
      }
    });
  });
  child.stdout!.resume();
  let stopped: Promise<void> | undefined;
  return {
    name,
    url,
    pid: child.pid!,
    child,
    stderr: () => err,
    stop: () =>
      (stopped ??= (async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
        await exited;
        clearTimeout(timer);
      })()),
  };
}

/**
 * Runs `process.execPath args...` to completion and returns its stdout; throws on a non-zero exit.
 * `input`, when given, is written to its stdin (as `printf %s VALUE | node ...` would).
 */
export async function runNode(args: string[], options: { env: NodeJS.ProcessEnv; cwd: string; input?: string }): Promise<string> {
  const child = spawn(process.execPath, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (options.input !== undefined) child.stdin!.end(options.input);
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`node ${args.join(' ')} failed (exit ${code}):\n${err || out}`);
  return out;
}

/** Memory figures of a process from /proc/<pid>/status, in bytes. */
export async function memoryOf(pid: number): Promise<{ rss: number; hwm: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const field = (name: string): number => {
    const match = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status);
    if (!match) throw new Error(`/proc/${pid}/status has no ${name}`);
    return Number(match[1]) * 1024;
  };
  return { rss: field('VmRSS'), hwm: field('VmHWM') };
}

/**
 * Resets the peak RSS (VmHWM) to the current RSS (Linux >= 4.0: writing 5 to clear_refs).
 * Returns false when the kernel refuses; the caller then relies on sampling.
 */
export async function resetPeak(pid: number): Promise<boolean> {
  try {
    await writeFile(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/**
 * Samples VmRSS every `everyMs` while `work` runs; returns work's result, the highest sample and
 * VmHWM at the end (the kernel's own peak, which catches spikes between samples).
 */
export async function watchMemory<T>(
  pid: number,
  everyMs: number,
  work: () => Promise<T>,
): Promise<{ result: T; peakSampledRss: number; hwm: number; samples: number }> {
  let peak = 0;
  let samples = 0;
  let sampling = false;
  const sample = async (): Promise<void> => {
    if (sampling) return;
    sampling = true;
    try {
      const { rss } = await memoryOf(pid);
      samples += 1;
      if (rss > peak) peak = rss;
    } finally {
      sampling = false;
    }
  };
  await sample();
  const timer = setInterval(() => void sample().catch(() => {}), everyMs);
  try {
    const result = await work();
    await sample();
    return { result, peakSampledRss: peak, hwm: (await memoryOf(pid)).hwm, samples };
  } finally {
    clearInterval(timer);
  }
}
