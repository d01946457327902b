import { randomBytes } from 'node:crypto';
import { closeSync, fstatSync, futimesSync, openSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { processAlive } from './process-alive.js';

export interface FileLockOptions {
  /**
   * A lock its holder has not refreshed for this long is taken over even if the holder seems alive
   * (its pid reused, or it hangs, or it is on another host); a holder refreshes it every third of
   * this while it holds it (default 10 s).
   */
  staleMs?: number;
  /** Give up waiting after this long (default 20 s; more than `staleMs`, so a hung holder is outwaited). */
  timeoutMs?: number;
}

/** Another process held the lock for longer than the caller would wait. */
export class FileLockTimeoutError extends Error {
  override readonly name = 'FileLockTimeoutError';

  constructor(
    message: string,
    readonly lockPath: string,
  ) {
    super(message);
  }
}

interface Holder {
  pid: number;
  host: string;
  token: string;
}

interface Seen {
  text: string;
  ino: bigint;
  ageMs: number;
  holder: Holder | undefined;
}

const DEFAULT_STALE_MS = 10_000;

/**
 * Runs `task` while holding `lockPath`: a file created exclusively (`wx`) holding the holder's pid,
 * host and a random token, its modification time refreshed while the task runs, removed afterwards.
 * A lock whose holder is a dead process on this host is taken over at once, and one not refreshed
 * for `staleMs` after that long: a crash never blocks writers for long, and a live holder, however
 * slow its task (a keychain that takes its time), keeps its lock.
 *
 * The lock file's own look-ups are synchronous: a few system calls on a small file in the state dir
 * take some 30 µs together, where each through the thread pool and a promise costs ten times the
 * CPU; a waiter makes them every few milliseconds while another process holds the lock.
 */
export async function withFileLock<T>(lockPath: string, task: () => Promise<T>, options: FileLockOptions = {}): Promise<T> {
  const staleMs = options.staleMs ?? DEFAULT_STALE_MS;
  const timeoutMs = options.timeoutMs ?? 20_000;
  const deadline = Date.now() + timeoutMs;
  const ahead = inProcess.get(lockPath);
  let done!: () => void;
  const mine = new Promise<void>((resolve) => (done = resolve));
  // The next task waits for those ahead and for this one, even if this one gives up waiting.
  const queued = (ahead ?? Promise.resolve()).then(() => mine);
  inProcess.set(lockPath, queued);
  try {
    if (ahead) await waitInProcess(ahead, deadline, lockPath, timeoutMs);
    return await holding(lockPath, staleMs, deadline, timeoutMs, task);
  } finally {
    done();
    if (inProcess.get(lockPath) === queued) inProcess.delete(lockPath);
  }
}

/**
 * This process's holders and waiters of each lock, in the order they asked: each waits for those
 * ahead, then for other processes through the file. Served first come, first served: polling the
 * file alone let a task lose to later ones until it timed out (seen with 14 sign-ins at once on a
 * loaded machine, each holding the secrets file's lock for half a second).
 */
const inProcess = new Map<string, Promise<void>>();

/** Waits for this process's tasks ahead in the queue, no later than `deadline`. */
async function waitInProcess(ahead: Promise<void>, deadline: number, lockPath: string, timeoutMs: number): Promise<void> {
  const timer = new AbortController();
  const late = sleep(Math.max(0, deadline - Date.now()), undefined, { signal: timer.signal }).then(
    () => 'late' as const,
    () => 'done' as const,
  );
  try {
    if ((await Promise.race([ahead.then(() => 'done' as const), late])) === 'late')
      throw new FileLockTimeoutError(
        `Waited ${timeoutMs} ms for the lock ${lockPath}, held by other tasks of this process (pid ${process.pid}). ` +
          'Try again once they are done.',
        lockPath,
      );
  } finally {
    timer.abort();
  }
}

async function holding<T>(lockPath: string, staleMs: number, deadline: number, timeoutMs: number, task: () => Promise<T>): Promise<T> {
  const { token, fd } = await acquire(lockPath, staleMs, deadline, timeoutMs);
  // Through the descriptor: refreshes this lock's file only, never a successor's at the same path.
  const refresh = setInterval(() => {
    const now = new Date();
    try {
      // Synchronous too, so that no refresh is still under way once the descriptor is closed.
      futimesSync(fd, now, now);
    } catch {
      // A failed refresh (the file system went away) only lets the lock age: nothing to do here.
    }
  }, staleMs / 3);
  try {
    return await task();
  } finally {
    clearInterval(refresh);
    closeSync(fd);
    release(lockPath, token);
  }
}

async function acquire(lockPath: string, staleMs: number, deadline: number, timeoutMs: number): Promise<{ token: string; fd: number }> {
  const token = randomBytes(12).toString('hex');
  const body = JSON.stringify({ pid: process.pid, host: hostname(), token } satisfies Holder);
  for (;;) {
    const fd = tryCreate(lockPath, body);
    if (fd !== undefined) return { token, fd };
    const seen = look(lockPath);
    if (!seen) continue; // released meanwhile
    if (isStale(seen, staleMs)) {
      takeAway(lockPath, seen);
      continue;
    }
    if (Date.now() >= deadline) {
      const who = seen.holder ? `process ${seen.holder.pid} on ${seen.holder.host}` : 'a process that did not finish writing it';
      throw new FileLockTimeoutError(
        `Waited ${timeoutMs} ms for the lock ${lockPath}, held by ${who} for ${Math.round(seen.ageMs)} ms. ` +
          'Try again; if no other copy of this app is running, delete that file.',
        lockPath,
      );
    }
    // Jittered, so that waiting processes do not retry in step.
    await sleep(5 + Math.random() * 20);
  }
}

/** The created lock file, open (for its refreshes), or undefined when it exists already. */
function tryCreate(lockPath: string, body: string): number | undefined {
  let fd;
  try {
    fd = openSync(lockPath, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
    throw error;
  }
  try {
    writeFileSync(fd, body);
  } catch (error) {
    closeSync(fd);
    unlinkIfThere(lockPath);
    throw error;
  }
  return fd;
}

/** The lock file as it is now, or undefined when there is none. */
function look(lockPath: string): Seen | undefined {
  let fd;
  try {
    fd = openSync(lockPath, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const stats = fstatSync(fd, { bigint: true });
    const text = readFileSync(fd, 'utf8');
    return { text, ino: stats.ino, ageMs: Date.now() - Number(stats.mtimeMs), holder: parseHolder(text) };
  } finally {
    closeSync(fd);
  }
}

function unlinkIfThere(lockPath: string): void {
  try {
    unlinkSync(lockPath);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

function isStale(seen: Seen, staleMs: number): boolean {
  if (seen.ageMs > staleMs) return true;
  // A pid only means something on its own host; an unfinished (empty) lock only ages out.
  return seen.holder !== undefined && seen.holder.host === hostname() && !processAlive(seen.holder.pid);
}

/**
 * Removes a stale lock, unless it was replaced since it was judged (same inode and content means
 * the same lock: the token is random). The check and the unlink are not one step, so a holder that
 * stopped refreshing for `staleMs` and let go in between could lose a successor's lock; that needs
 * a holder hung far longer than a write takes.
 */
function takeAway(lockPath: string, judged: Seen): void {
  const now = look(lockPath);
  if (!now || now.ino !== judged.ino || now.text !== judged.text) return;
  unlinkIfThere(lockPath);
}

/** Removes the lock only if it is still ours: a stale-judged lock may have gone to someone else. */
function release(lockPath: string, token: string): void {
  if (look(lockPath)?.holder?.token !== token) return;
  unlinkIfThere(lockPath);
}

function parseHolder(text: string): Holder | undefined {
  let value: Partial<Holder> | null;
  try {
    value = JSON.parse(text) as Partial<Holder> | null;
  } catch {
    // Empty (its creator has not written it yet, or died first): judged by age only.
    return undefined;
  }
  const { pid, host, token } = value ?? {};
  if (typeof pid !== 'number' || !Number.isInteger(pid) || pid <= 0) return undefined;
  if (typeof host !== 'string' || typeof token !== 'string') return undefined;
  return { pid, host, token };
}
