import { close, closeSync, constants, fstatSync, open, read, readSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import { promisify } from 'node:util';
import { MachineError, fileSystemError, isDirectoryError } from './errors.js';
import { LocalFileSystems } from './local-file-system.js';
import { completeUtf8Prefix, looksLikeText } from './utf8.js';

/** Lines returned when the caller gives no `limit`. */
export const READ_DEFAULT_LINE_LIMIT = 2000;
/** Most bytes of text in one answer; whole lines only, unless a single line is longer. */
export const READ_MAX_TEXT_BYTES = 256 * 1024;
/** Most raw bytes in one base64 answer (256 KiB once encoded). */
export const READ_MAX_BINARY_BYTES = 192 * 1024;

// How much of the file decides "text or binary".
const SNIFF_BYTES = 8 * 1024;
// Read buffer while scanning; the only per-call memory besides the answer itself.
const CHUNK_BYTES = 1024 * 1024;
// Opening a FIFO for reading would block until a writer appears; O_NONBLOCK returns at once, and
// regular files ignore it. (Windows has no FIFOs to open this way.)
const OPEN_FLAGS = process.platform === 'win32' ? 'r' : constants.O_RDONLY | constants.O_NONBLOCK;
// Files up to this size on a local file system are read synchronously: one read of the page cache
// or a local disk, where each asynchronous call is a round trip through the thread pool that costs
// the event loop more than the read itself (see bench/README.md). Larger files, and files on network
// or FUSE file systems, which may wait on a server, are read asynchronously.
const SYNC_READ_MAX_BYTES = 64 * 1024;

const openFile = promisify(open);
const localFileSystems = new LocalFileSystems();

/** Reads into `buffer` at a file position; resolves to the number of bytes read. */
type ReadAt = (buffer: Buffer, offset: number, length: number, position: number) => number | Promise<number>;

const IMAGE_TYPES: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
};

export interface ReadInput {
  path: string;
  /** Text: first line, 1-based (0 counts as 1). Base64: first byte, 0-based. */
  offset?: number;
  /** Text: number of lines. Base64: number of bytes. */
  limit?: number;
  /** Absent: text unless the file looks binary. */
  encoding?: 'text' | 'base64';
}

export interface TextReadResult {
  kind: 'text';
  path: string;
  text: string;
  /** First and last line returned (1-based; endLine < startLine when nothing was returned). */
  startLine: number;
  endLine: number;
  totalLines: number;
  /** Where the answer stops and how to continue; absent when the whole file was returned. */
  note?: string;
}

export interface BinaryReadResult {
  kind: 'base64';
  path: string;
  base64: string;
  /** 0-based offset of the first byte returned, and how many bytes were returned. */
  offset: number;
  length: number;
  totalBytes: number;
  /** Set for image files (png, jpeg, gif, webp). */
  mimeType?: string;
  note: string;
}

export type ReadResult = TextReadResult | BinaryReadResult;

export async function readFile(input: ReadInput): Promise<ReadResult> {
  const path = resolve(input.path);
  checkCount(input.offset, 'offset', 0);
  checkCount(input.limit, 'limit', 1);
  const fd = await openFile(path, OPEN_FLAGS).catch((error: unknown) => {
    throw fileSystemError(error, path, 'read');
  });
  let sync = false;
  try {
    // An fstat of a file just opened never waits (not on a pipe or a device, and network and FUSE
    // file systems have just fetched its attributes to open it), so it is synchronous.
    const info = fstatSync(fd);
    if (info.isDirectory()) throw isDirectoryError(path, 'read');
    if (!info.isFile()) {
      throw new MachineError('not_a_file', `Cannot read ${path}: it is not a regular file (a device, socket or pipe). Use bash to inspect it.`);
    }
    // Files such as those in /proc say size 0 and may be any length: never synchronous.
    sync = info.size > 0 && info.size <= SYNC_READ_MAX_BYTES && (await localFileSystems.isLocal(info.dev, fd));
    const readAt: ReadAt = sync
      ? (buffer, offset, length, position) => readSync(fd, buffer, offset, length, position)
      : (buffer, offset, length, position) => readAsync(fd, buffer, offset, length, position);
    // The first read serves both the text-or-binary check and the start of the scan: a small file
    // takes one read and a buffer of its own size.
    const chunk = Buffer.allocUnsafe(info.size > 0 ? Math.min(CHUNK_BYTES, Math.max(info.size, SNIFF_BYTES)) : SNIFF_BYTES);
    const bytesRead = await readAt(chunk, 0, chunk.length, 0);
    const first = chunk.subarray(0, bytesRead);
    const encoding = input.encoding ?? (looksLikeText(first.subarray(0, SNIFF_BYTES), bytesRead >= SNIFF_BYTES) ? 'text' : 'base64');
    return encoding === 'text'
      ? await readLines(readAt, path, input, chunk, bytesRead, info.size)
      : await readBytes(readAt, path, info.size, input, input.encoding === undefined);
  } catch (error) {
    throw fileSystemError(error, path, 'read');
  } finally {
    // Closing a file opened for reading has nothing to report, so the answer does not wait for an
    // asynchronous close (on a network file system, one more round trip to the server).
    if (sync) closeSync(fd);
    else close(fd, () => {});
  }
}

function readAsync(fd: number, buffer: Buffer, offset: number, length: number, position: number): Promise<number> {
  return new Promise((resolve, reject) => {
    read(fd, buffer, offset, length, position, (error, bytesRead) => (error ? reject(error) : resolve(bytesRead)));
  });
}

function checkCount(value: number | undefined, name: string, min: number): void {
  if (value !== undefined && (!Number.isInteger(value) || value < min)) {
    throw new MachineError('invalid_input', `${name} must be a whole number of at least ${min} (got ${value}).`);
  }
}

/**
 * Streams the file once: keeps the requested lines (up to the byte cap) and counts every newline
 * for the total, so memory stays at one chunk plus the answer whatever the file's size.
 */
async function readLines(readAt: ReadAt, path: string, input: ReadInput, chunk: Buffer, firstBytes: number, size: number): Promise<TextReadResult> {
  const startLine = Math.max(1, input.offset ?? 1);
  const lastWanted = startLine + (input.limit ?? READ_DEFAULT_LINE_LIMIT) - 1;
  const pieces: Buffer[] = [];
  let kept = 0; // bytes in pieces
  let keptWhole = 0; // bytes of pieces that are whole lines
  let endLine = startLine - 1;
  let collecting = true;
  let hitByteCap = false;
  let cutLine: { line: number; resumeAt: number } | undefined;

  let line = 1; // line number of the byte being scanned
  let lineStart = 0; // file offset where that line starts
  let newlines = 0;
  let lastByte = -1;
  let position = 0;

  const keep = (segment: Buffer, endsLine: boolean): void => {
    if (line > lastWanted) {
      collecting = false;
      return;
    }
    if (kept + segment.length > READ_MAX_TEXT_BYTES) {
      collecting = false;
      hitByteCap = true;
      if (endLine >= startLine) return; // stop before this line; the whole lines so far are the answer
      // A single line longer than the cap: return its beginning and say where the rest starts.
      const head = completeUtf8Prefix(Buffer.concat([...pieces, segment.subarray(0, READ_MAX_TEXT_BYTES - kept)]));
      pieces.splice(0, pieces.length, head);
      kept = keptWhole = head.length;
      cutLine = { line, resumeAt: lineStart + head.length };
      return;
    }
    pieces.push(Buffer.from(segment));
    kept += segment.length;
    if (endsLine) {
      keptWhole = kept;
      endLine = line;
    }
  };

  for (let bytesRead = firstBytes; bytesRead > 0; ) {
    const data = chunk.subarray(0, bytesRead);
    let at = 0;
    while (at < data.length) {
      const newline = data.indexOf(0x0a, at);
      const end = newline === -1 ? data.length : newline + 1;
      if (collecting && line >= startLine) keep(data.subarray(at, end), newline !== -1);
      at = end;
      if (newline !== -1) {
        newlines += 1;
        line += 1;
        lineStart = position + end;
      }
    }
    position += bytesRead;
    lastByte = data[bytesRead - 1]!;
    // A regular file ends at its size; files such as those in /proc say 0 and are read until empty.
    if (size > 0 && position >= size) break;
    bytesRead = await readAt(chunk, 0, chunk.length, position);
  }
  // The last line has no newline but is still a line.
  if (collecting && kept > keptWhole) {
    keptWhole = kept;
    endLine = line;
  }
  const totalLines = newlines + (position > 0 && lastByte !== 0x0a ? 1 : 0);
  if (totalLines === 0) return { kind: 'text', path, text: '', startLine: 1, endLine: 0, totalLines: 0, note: '[the file is empty]' };
  if (startLine > totalLines) {
    throw new MachineError('out_of_range', `offset ${startLine} is past the end of ${path}, which has ${totalLines} lines.`);
  }
  const text = Buffer.concat(pieces).subarray(0, keptWhole).toString('utf8');
  const result: TextReadResult = { kind: 'text', path, text, startLine, endLine: cutLine?.line ?? endLine, totalLines };
  if (cutLine) {
    result.note =
      `[line ${cutLine.line} of ${totalLines} is longer than the ${READ_MAX_TEXT_BYTES / 1024} KiB cap: only its beginning is shown. ` +
      `Read the rest of it with encoding "base64" and offset ${cutLine.resumeAt} (a 0-based byte offset)` +
      (cutLine.line < totalLines ? `, or the next lines with offset ${cutLine.line + 1}]` : ']');
  } else if (startLine > 1 || endLine < totalLines) {
    const more = endLine < totalLines ? `; call read with offset ${endLine + 1} to continue` : '';
    const why = hitByteCap ? ` (stopped at the ${READ_MAX_TEXT_BYTES / 1024} KiB cap)` : '';
    result.note = `[lines ${startLine}-${endLine} of ${totalLines}${why}${more}]`;
  }
  return result;
}

async function readBytes(readAt: ReadAt, path: string, size: number, input: ReadInput, detected: boolean): Promise<BinaryReadResult> {
  const offset = input.offset ?? 0;
  if (offset > size) {
    throw new MachineError('out_of_range', `offset ${offset} is past the end of ${path}, which is ${size} bytes long.`);
  }
  const want = Math.min(input.limit ?? READ_MAX_BINARY_BYTES, READ_MAX_BINARY_BYTES);
  const buffer = Buffer.alloc(want);
  let length = 0;
  while (length < want) {
    const bytesRead = await readAt(buffer, length, want - length, offset + length);
    if (bytesRead === 0) break;
    length += bytesRead;
  }
  // Files such as those in /proc report size 0; trust what was actually read.
  const totalBytes = Math.max(size, offset + length);
  const end = offset + length;
  const what = detected ? 'The file is not text (it has NUL bytes or invalid UTF-8), so this is base64' : 'Base64';
  const range = length === 0 ? 'no bytes' : `bytes ${offset}-${end - 1}`;
  const more = end < totalBytes ? `; call read with encoding "base64" and offset ${end} to continue` : '';
  const result: BinaryReadResult = {
    kind: 'base64',
    path,
    base64: buffer.subarray(0, length).toString('base64'),
    offset,
    length,
    totalBytes,
    note: `[${what} of ${range} of ${totalBytes} (offsets are 0-based bytes)${more}]`,
  };
  const mimeType = IMAGE_TYPES[extname(path).toLowerCase()];
  if (mimeType) result.mimeType = mimeType;
  return result;
}
