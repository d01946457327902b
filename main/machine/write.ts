import { access, constants, mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { writeFileAtomic } from '../state/atomic-write.js';
import { MachineError, fileSystemError } from './errors.js';
import { existingFile } from './file-target.js';

export interface WriteInput {
  path: string;
  content: string;
  /** "base64": `content` is base64 of the bytes to write (binary files). Default "text" (UTF-8). */
  encoding?: 'text' | 'base64';
}

export interface WriteResult {
  /** The file written: the target of `path` when `path` is a symbolic link. */
  path: string;
  bytes: number;
  created: boolean;
}

export async function writeFile(input: WriteInput): Promise<WriteResult> {
  const data = input.encoding === 'base64' ? decodeBase64(input.content) : Buffer.from(input.content, 'utf8');
  const requested = resolve(input.path);
  try {
    const existing = await existingFile(requested, 'write');
    const path = existing?.path ?? requested;
    if (existing) {
      // A rename would replace even a read-only file; respect its protection instead.
      await access(path, constants.W_OK);
    } else {
      await mkdir(dirname(path), { recursive: true });
    }
    // Keep an existing file's permissions (e.g. an executable script stays executable).
    await writeFileAtomic(path, data, existing ? { mode: existing.info.mode & 0o7777 } : {});
    return { path, bytes: data.length, created: !existing };
  } catch (error) {
    throw fileSystemError(error, requested, 'write');
  }
}

function decodeBase64(content: string): Buffer {
  const compact = content.replace(/\s+/g, '');
  // Buffer.from silently skips bad characters; refuse them so a corrupt upload is not written.
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(compact) || compact.replace(/=+$/, '').length % 4 === 1) {
    throw new MachineError('invalid_input', 'content is not valid base64. Encode the file\'s bytes as base64, or omit encoding to write text.');
  }
  return Buffer.from(compact, 'base64');
}
