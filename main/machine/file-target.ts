import type { Stats } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { MachineError, isDirectoryError } from './errors.js';

/**
 * The regular file that `path` names now, following symbolic links so that writing through a link
 * updates its target instead of replacing the link; undefined when there is none yet.
 */
export async function existingFile(path: string, action: string): Promise<{ path: string; info: Stats } | undefined> {
  let target: string;
  try {
    target = await realpath(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const info = await stat(target);
  if (info.isDirectory()) throw isDirectoryError(path, action);
  if (!info.isFile()) throw new MachineError('not_a_file', `Cannot ${action} ${path}: it is not a regular file (a device, socket or pipe).`);
  return { path: target, info };
}
