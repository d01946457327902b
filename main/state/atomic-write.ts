import { randomBytes } from 'node:crypto';
import { open, readdir, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { processAlive } from './process-alive.js';

/** `.<name>.<pid>-<random>.tmp`: the writer's pid tells whether a temp file was left by a crash. */
const TEMP_NAME = /^\..+\.([1-9][0-9]*)-[0-9a-f]{12}\.tmp$/;

/**
 * Replaces `path` with `data` so that a reader (or a crash) sees either the old file or the new
 * one, never a half-written one: write a temp file beside it, fsync, rename over, fsync the folder.
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: {
    mode?: number;
    /** false: not made to survive a power loss (no fsync), still atomic for readers; for records of a running process. */
    durable?: boolean;
  } = {},
): Promise<void> {
  const durable = options.durable ?? true;
  const dir = dirname(path);
  const temp = join(dir, `.${basename(path)}.${process.pid}-${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx', options.mode ?? 0o666);
  try {
    await handle.writeFile(data);
    // The umask may have narrowed the mode passed to open(); set it exactly.
    if (options.mode !== undefined) await handle.chmod(options.mode);
    if (durable) await handle.sync();
  } catch (error) {
    await handle.close();
    await unlink(temp).catch(() => {});
    throw error;
  }
  await handle.close();
  try {
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => {});
    throw error;
  }
  if (durable) await syncDir(dir);
}

async function syncDir(dir: string): Promise<void> {
  // Makes the rename itself durable; not every platform can open a folder for fsync.
  const handle = await open(dir, 'r').catch(() => undefined);
  if (!handle) return;
  try {
    await handle.sync();
  } catch {
    // Windows refuses fsync on directories; the rename is still atomic there.
  } finally {
    await handle.close();
  }
}

/**
 * Deletes the temp files in `dir` that writers which have died left behind (a crash between
 * writing and renaming); a live writer's temp file is left alone. Returns the names removed.
 */
export async function removeCrashTemps(dir: string): Promise<string[]> {
  const names = await readdir(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  const removed: string[] = [];
  for (const name of names) {
    const pid = TEMP_NAME.exec(name)?.[1];
    if (pid === undefined || processAlive(Number(pid))) continue;
    await unlink(join(dir, name)).then(
      () => removed.push(name),
      (error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error;
      },
    );
  }
  return removed;
}
