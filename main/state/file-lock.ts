import { randomBytes } from 'node:crypto';
import { open, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { processAlive } from './process-alive.js';

export interface FileLockOptions {
  /** A lock older than this is taken over even if its holder seems alive (default 10 s). */
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

/**
 * Runs `task` while holding `lockPath`: a file created exclusively (`wx`) holding the holder's pid,
 * host and a random token, removed afterwards. A lock whose holder is a dead process on this host,
 * or that is older than `staleMs`, is taken over, so a crash never blocks writers for long.
 */
export async function withFileLock<T>(lockPath: string, task: () => Promise<T>, options: FileLockOptions = {}): Promise<T> {
  const token = await acquire(lockPath, options);
  try {
    return await task();
  } finally {
    await release(lockPath, token);
  }
}

async function acquire(lockPath: string, { staleMs = 10_000, timeoutMs = 20_000 }: FileLockOptions): Promise<string> {
  const token = randomBytes(12).toString('hex');
  const body = JSON.stringify({ pid: process.pid, host: hostname(), token } satisfies Holder);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await tryCreate(lockPath, body)) return token;
    const seen = await look(lockPath);
    if (!seen) continue; // released meanwhile
    if (isStale(seen, staleMs)) {
      await takeAway(lockPath, seen);
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

async function tryCreate(lockPath: string, body: string): Promise<boolean> {
  let handle;
  try {
    handle = await open(lockPath, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    await handle.writeFile(body);
  } catch (error) {
    await handle.close();
    await unlink(lockPath).catch(() => {});
    throw error;
  }
  await handle.close();
  return true;
}

/** The lock file as it is now, or undefined when there is none. */
async function look(lockPath: string): Promise<Seen | undefined> {
  let handle;
  try {
    handle = await open(lockPath, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const stats = await handle.stat({ bigint: true });
    const text = await handle.readFile('utf8');
    return { text, ino: stats.ino, ageMs: Date.now() - Number(stats.mtimeMs), holder: parseHolder(text) };
  } finally {
    await handle.close();
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
 * outlived `staleMs` and let go in between could lose a successor's lock; that needs a holder hung
 * far longer than a write takes.
 */
async function takeAway(lockPath: string, judged: Seen): Promise<void> {
  const now = await look(lockPath);
  if (!now || now.ino !== judged.ino || now.text !== judged.text) return;
  await unlink(lockPath).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
  });
}

/** Removes the lock only if it is still ours: a stale-judged lock may have gone to someone else. */
async function release(lockPath: string, token: string): Promise<void> {
  const seen = await look(lockPath);
  if (seen?.holder?.token !== token) return;
  await unlink(lockPath).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
  });
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
