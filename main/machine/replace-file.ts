import { randomBytes } from 'node:crypto';
import { close, closeSync, constants, fchmod, openSync, renameSync, unlinkSync, write } from 'node:fs';
import { promisify } from 'node:util';
import type { FileSpot } from './file-target.js';

const closeAsync = promisify(close);
const fchmodAsync = promisify(fchmod);

/**
 * Gives the spot's file new content so that a reader sees the old file or the new one, never half
 * of one: `fill` writes a temp file made beside it, in the very folder that was checked (through
 * the spot's folder path, never a second lookup of the folder by name), which is renamed over the
 * file. If anything fails, the temp file is removed: the file and its folder are as they were.
 * Not synced to disk, as `cp`, `sed -i` and editors do not: a sync costs more than the write of a
 * 10 MiB file (bench/README.md); the app's own state files are (state/atomic-write.ts). `mode`:
 * the new file's permissions, exactly (an existing file's are kept this way). The temp file is open
 * for reading too, so `fill` can read back what it wrote.
 */
export async function replaceFile(spot: FileSpot, mode: number | undefined, fill: (fd: number) => Promise<void>): Promise<void> {
  const temp = `${spot.folder}/.${spot.name}.${process.pid}-${randomBytes(6).toString('hex')}.tmp`;
  // O_EXCL and O_NOFOLLOW: a fresh file, never something the agent put at that name meanwhile.
  const fd = openSync(temp, constants.O_RDWR | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW | spot.openFlags, mode ?? 0o666);
  let open = true;
  try {
    await fill(fd);
    // The umask may have narrowed the mode given to open(); set it exactly.
    if (mode !== undefined) await fchmodAsync(fd, mode);
    open = false;
    await closeAsync(fd);
    renameSync(temp, `${spot.folder}/${spot.name}`);
  } catch (error) {
    if (open) closeSync(fd);
    try {
      unlinkSync(temp);
    } catch {
      // Already renamed, or never made.
    }
    throw error;
  }
}

/** Writes all of `data` at `position`. */
export async function writeAll(fd: number, data: Uint8Array, position = 0): Promise<void> {
  for (let done = 0; done < data.length;) {
    done += await new Promise<number>((resolve, reject) => {
      write(fd, data, done, data.length - done, position + done, (error, written) => (error ? reject(error) : resolve(written)));
    });
  }
}

const PIECE_BYTES = 1024 * 1024;
const encoder = new TextEncoder();
/** Pieces kept for the next write: fresh memory costs a page fault per 4 KiB at first touch. */
const spare: Uint8Array[] = [];

/**
 * Writes `text` as UTF-8 from the start of `fd`, encoded a piece at a time into a reused buffer
 * rather than whole into a new one (for 10 MiB, touching a new buffer costs more than the write:
 * bench/README.md); returns the bytes written. A character is never split between pieces, so the
 * bytes are exactly Buffer.from(text, 'utf8').
 */
export async function writeText(fd: number, text: string): Promise<number> {
  const piece = spare.pop() ?? new Uint8Array(PIECE_BYTES);
  let position = 0;
  try {
    for (let at = 0; at < text.length;) {
      const { read, written } = encoder.encodeInto(at === 0 ? text : text.slice(at), piece);
      await writeAll(fd, piece.subarray(0, written), position);
      at += read;
      position += written;
    }
  } finally {
    if (spare.length < 2) spare.push(piece);
  }
  return position;
}
