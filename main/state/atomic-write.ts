import { randomBytes } from 'node:crypto';
import { open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Replaces `path` with `data` so that a reader (or a crash) sees either the old file or the new
 * one, never a half-written one: write a temp file beside it, fsync, rename over, fsync the folder.
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array, options: { mode?: number } = {}): Promise<void> {
  const dir = dirname(path);
  const temp = join(dir, `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx', options.mode ?? 0o666);
  try {
    await handle.writeFile(data);
    // The umask may have narrowed the mode passed to open(); set it exactly.
    if (options.mode !== undefined) await handle.chmod(options.mode);
    await handle.sync();
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
  await syncDir(dir);
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
