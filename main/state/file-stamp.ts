import { statSync, type BigIntStats } from 'node:fs';
import { stat } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * A file changed within this long of a read may change again without changing its stat (coarse
 * timestamps, a reused inode, the same size), so such a read is not trusted to stand for the file.
 */
export const RACY_MS = 2_000;

/** A state file's identity: equal stamps mean the same content, when the file is settled. */
export function fileStamp(stats: BigIntStats): string {
  return `file:${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`;
}

/** While the file is absent, its folder's identity stands for it (an aside may appear or go). */
export function absentStamp(dirStats: BigIntStats | undefined): string {
  return dirStats ? `absent:${dirStats.dev}:${dirStats.ino}:${dirStats.mtimeNs}:${dirStats.ctimeNs}` : 'absent:no-folder';
}

/**
 * The stamp of the state file at `path` now, or of its folder while it is absent. Synchronous on
 * purpose: it is asked on every agent call, and a stat of a small file in the local state folder
 * takes microseconds, far less than a trip through the thread pool on a busy machine.
 */
export function currentStamp(path: string): string {
  const file = statSyncOrAbsent(path);
  if (file) return fileStamp(file);
  return absentStamp(statSyncOrAbsent(dirname(path)));
}

/**
 * The stamp of the state file at `path` now, given its `settled` stamp from the last read. While
 * the file stays absent, its folder's stamp alone says so: creating, linking or renaming anything
 * into a folder changes the folder's times, and a folder that had settled gets other times on any
 * later change, however coarse its timestamps. So an absent file costs one stat, not two.
 */
export function stampSince(path: string, settled: string): string {
  if (settled.startsWith('absent:')) {
    const folder = absentStamp(statSyncOrAbsent(dirname(path)));
    if (folder === settled) return folder;
  }
  return currentStamp(path);
}

export function statSyncOrAbsent(path: string): BigIntStats | undefined {
  try {
    return statSync(path, { bigint: true, throwIfNoEntry: false });
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

export function isSettled(stats: BigIntStats, now: number): boolean {
  const changedMs = Number((stats.mtimeNs > stats.ctimeNs ? stats.mtimeNs : stats.ctimeNs) / 1_000_000n);
  return now - changedMs >= RACY_MS;
}

export async function statOrAbsent(path: string): Promise<BigIntStats | undefined> {
  try {
    return await stat(path, { bigint: true });
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

export function emptyIfAbsent(error: unknown): string[] {
  if (isNotFound(error)) return [];
  throw error;
}

export function isNotFound(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
