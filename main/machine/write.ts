import { accessSync, closeSync, constants } from 'node:fs';
import { resolve } from 'node:path';
import { MachineError, fileSystemError } from './errors.js';
import { openSpot, type FileRules } from './file-target.js';
import { replaceFile, writeAll, writeText } from './replace-file.js';

export interface WriteInput {
  path: string;
  content: string;
  /** "base64": `content` is base64 of the bytes to write (binary files). Default "text" (UTF-8). */
  encoding?: 'text' | 'base64' | undefined;
}

export interface WriteResult {
  /** The file written: the target of `path` when `path` is a symbolic link. */
  path: string;
  bytes: number;
  created: boolean;
}

/**
 * Writes `input.path` whole, atomically; under place or strict, `rules` are the policy's, applied
 * to the folder and file actually written (file-target.ts).
 */
export async function writeFile(input: WriteInput, rules?: FileRules): Promise<WriteResult> {
  const data = input.encoding === 'base64' ? decodeBase64(input.content) : undefined;
  const requested = resolve(input.path);
  const spot = openSpot(requested, { rules, create: true, action: 'write' });
  try {
    const existing = spot.file;
    if (existing) {
      // A rename would replace even a read-only file; respect its protection instead. Asked of the
      // open file where the system can name it (Linux), else of the path checked.
      try {
        accessSync(process.platform === 'linux' ? `/proc/self/fd/${existing.fd}` : spot.path, constants.W_OK);
      } finally {
        closeSync(existing.fd);
      }
    }
    // Keep an existing file's permissions (e.g. an executable script stays executable).
    let bytes = 0;
    await replaceFile(spot, existing ? existing.info.mode & 0o7777 : undefined, async (fd) => {
      if (!data) bytes = await writeText(fd, input.content);
      else {
        await writeAll(fd, data);
        bytes = data.length;
      }
    });
    return { path: spot.path, bytes, created: !existing };
  } catch (error) {
    throw fileSystemError(error, requested, 'write');
  } finally {
    spot.close();
  }
}

function decodeBase64(content: string): Buffer {
  const compact = content.replace(/\s+/g, '');
  // Buffer.from silently skips bad characters; refuse them so a corrupt upload is not written.
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(compact) || compact.replace(/=+$/, '').length % 4 === 1) {
    throw new MachineError(
      'invalid_input',
      "content is not valid base64. Encode the file's bytes as base64, or omit encoding to write text.",
    );
  }
  return Buffer.from(compact, 'base64');
}
