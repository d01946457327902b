import { randomBytes } from 'node:crypto';
import { link, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { SecretStoreError } from './secret-store.js';

export interface StateLockOptions {
  /** How long to wait for another holder before giving up (default 60 s). */
  timeoutMs?: number;
  /** How often to look again while waiting (default 25 ms). */
  pollMs?: number;
}

/**
 * Runs `task` while holding the lock file `path`, across processes (the server and the CLI share
 * a state dir) and within one. The file names its holder (`pid@host`), so a lock left by a process
 * that died on this machine is broken instead of waited for.
 */
export async function withStateLock<T>(path: string, task: () => Promise<T>, options: StateLockOptions = {}): Promise<T> {
  await acquire(path, options.timeoutMs ?? 60_000, options.pollMs ?? 25);
  try {
    return await task();
  } finally {
    await unlink(path).catch(() => {});
  }
}

async function acquire(path: string, timeoutMs: number, pollMs: number): Promise<void> {
  const me = `${process.pid}@${hostname()}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await tryCreate(path, me)) return;
    const holder = await readHolder(path);
    if (holder === undefined) continue;
    if (isDeadHere(holder)) {
      await breakStale(path, holder);
      continue;
    }
    if (Date.now() >= deadline) {
      throw new SecretStoreError(
        `Waited ${timeoutMs / 1000} s for the lock ${path}, held by process ${holder || '(unknown)'}. ` +
          `If no persona-mcp-workspace process is running there, delete ${path} and try again.`,
      );
    }
    await sleep(pollMs);
  }
}

/** Creates the lock with its content in one step (write aside, then link), so it is never seen empty. */
async function tryCreate(path: string, me: string): Promise<boolean> {
  const temp = `${path}.${randomBytes(6).toString('hex')}`;
  await writeFile(temp, `${me}\n`, { mode: 0o600 });
  try {
    await link(temp, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    await unlink(temp).catch(() => {});
  }
}

async function readHolder(path: string): Promise<string | undefined> {
  try {
    return (await readFile(path, 'utf8')).trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

function isDeadHere(holder: string): boolean {
  const match = /^(\d+)@(.*)$/.exec(holder);
  if (!match || match[2] !== hostname()) return false;
  try {
    process.kill(Number(match[1]), 0);
    return false;
  } catch (error) {
    // EPERM: alive, only owned by someone else.
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

async function breakStale(path: string, holder: string): Promise<void> {
  // Move it aside first and look at what was moved: another waiter may have broken the stale lock
  // and taken a new one in the meantime, and that one must be put back, not deleted.
  const aside = `${path}.stale-${randomBytes(6).toString('hex')}`;
  try {
    await rename(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  try {
    if ((await readHolder(aside)) !== holder) await link(aside, path).catch(() => {});
  } finally {
    await unlink(aside).catch(() => {});
  }
}
