import { close, closeSync, constants, fstatSync, open, read, readSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import { promisify } from 'node:util';
import { MachineError, fileSystemError, isDirectoryError } from './errors.js';
import { openSpot, type FileRules } from './file-target.js';
import { LocalFileSystems } from './local-file-system.js';
import { SCAN_BUFFER_BYTES, releaseScanBuffer, takeScanBuffer, type ScanBuffer } from './newline-scanner.js';
import { completeUtf8Prefix, looksLikeText } from './utf8.js';

/** Lines returned when the caller gives no `limit`. */
export const READ_DEFAULT_LINE_LIMIT = 2000;
/** Most bytes of text in one answer; whole lines only, unless a single line is longer. */
export const READ_MAX_TEXT_BYTES = 256 * 1024;
/** Most raw bytes in one base64 answer (256 KiB once encoded). */
export const READ_MAX_BINARY_BYTES = 192 * 1024;

// How much of the file decides "text or binary".
const SNIFF_BYTES = 8 * 1024;
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
  /** Text: first line, 1-based (0 counts as 1); negative counts from the end (-10: the last 10 lines). Base64: first byte, 0-based. */
  offset?: number | undefined;
  /** Text: number of lines. Base64: number of bytes. */
  limit?: number | undefined;
  /** Absent: text unless the file looks binary. */
  encoding?: 'text' | 'base64' | undefined;
  /** Text: count every line of the file, to give its total (a read of the whole file). */
  total?: boolean | undefined;
}

export interface TextReadResult {
  kind: 'text';
  path: string;
  text: string;
  /**
   * First and last line returned (1-based; endLine < startLine when nothing was returned), absent
   * when the lines were found by reading from the end, which counts no further; and the file's line
   * count, when the read got to the end of the file (or the total was asked for).
   */
  startLine?: number;
  endLine?: number;
  totalLines?: number;
  /** With a negative offset whose lines were not numbered: how many lines from the end the text starts. */
  fromEnd?: number;
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

/**
 * Reads `input.path`; under place or strict, `rules` are the policy's, applied to what is opened
 * (file-target.ts), and the answer names the real path.
 */
export async function readFile(input: ReadInput, rules?: FileRules): Promise<ReadResult> {
  const requested = resolve(input.path);
  if (input.offset !== undefined && !Number.isInteger(input.offset)) {
    throw new MachineError('invalid_input', `offset must be a whole number (got ${input.offset}).`);
  }
  checkCount(input.limit, 'limit', 1);
  let path = requested;
  let fd: number;
  let closeFolder = () => {};
  if (rules) {
    const spot = openSpot(requested, { rules, action: 'read' });
    if (!spot.file) {
      spot.close();
      throw fileSystemError(Object.assign(new Error('no such file'), { code: 'ENOENT' }), requested, 'read');
    }
    ({ path, fd } = { path: spot.path, fd: spot.file.fd });
    closeFolder = () => spot.close();
  } else {
    fd = await openFile(path, OPEN_FLAGS).catch((error: unknown) => {
      throw fileSystemError(error, path, 'read');
    });
  }
  let sync = false;
  const scan = takeScanBuffer();
  try {
    closeFolder();
    // An fstat of a file just opened never waits (not on a pipe or a device, and network and FUSE
    // file systems have just fetched its attributes to open it), so it is synchronous.
    const info = fstatSync(fd);
    if (info.isDirectory()) throw isDirectoryError(path, 'read');
    if (!info.isFile()) {
      throw new MachineError(
        'not_a_file',
        `Cannot read ${path}: it is not a regular file (a device, socket or pipe). Use bash to inspect it.`,
      );
    }
    // Files such as those in /proc say size 0 and may be any length: never synchronous.
    sync = info.size > 0 && info.size <= SYNC_READ_MAX_BYTES && (await localFileSystems.isLocal(info.dev, fd));
    const readAt: ReadAt = sync
      ? (buffer, offset, length, position) => readSync(fd, buffer, offset, length, position)
      : (buffer, offset, length, position) => readAsync(fd, buffer, offset, length, position);
    const file: OpenFile = { path, readAt, scan, size: info.size };
    // The first read serves both the text-or-binary check and the start of a forward scan: a small
    // file takes one read.
    const firstLength = info.size > 0 ? Math.min(SCAN_BUFFER_BYTES, Math.max(info.size, SNIFF_BYTES)) : SNIFF_BYTES;
    const bytesRead = await readAt(scan.buffer, 0, firstLength, 0);
    const first = scan.buffer.subarray(0, bytesRead);
    const encoding = input.encoding ?? (looksLikeText(first.subarray(0, SNIFF_BYTES), bytesRead >= SNIFF_BYTES) ? 'text' : 'base64');
    if (encoding === 'base64') return await readBytes(readAt, path, info.size, input, input.encoding === undefined);
    const limit = input.limit ?? READ_DEFAULT_LINE_LIMIT;
    const offset = input.offset ?? 1;
    if (offset >= 0) return await readLines(file, bytesRead, Math.max(1, offset), limit, input.total === true);
    return info.size > 0 ? await readLastLines(file, -offset, limit) : await readLastLinesOfUnsizedFile(file, bytesRead, -offset, limit);
  } catch (error) {
    throw fileSystemError(error, path, 'read');
  } finally {
    releaseScanBuffer(scan);
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

interface OpenFile {
  path: string;
  readAt: ReadAt;
  /** The read buffer; its newlines are counted at memory speed. */
  scan: ScanBuffer;
  /** 0 for files such as those in /proc, which are read until empty. */
  size: number;
}

/** Keeps the lines of a scan from the first one it is given, up to `limit` lines and the byte cap. */
class LineCollector {
  private readonly pieces: Buffer[] = [];
  private kept = 0; // bytes in pieces
  private keptWhole = 0; // bytes of pieces that are whole lines
  /** Lines kept (a last line with no newline counts once finish() is called). */
  lines = 0;
  /** Set once no more lines are wanted. */
  done = false;
  hitByteCap = false;
  /** When one line was longer than the cap: the file offset where the rest of it starts. */
  cutAt: number | undefined;

  constructor(private readonly limit: number) {}

  /** `segment` is the next part of a line that starts at file offset `lineStart`; `endsLine` when it ends with its newline. */
  add(segment: Buffer, endsLine: boolean, lineStart: number): void {
    if (this.kept + segment.length > READ_MAX_TEXT_BYTES) {
      this.done = true;
      this.hitByteCap = true;
      if (this.lines > 0) return; // stop before this line; the whole lines so far are the answer
      // A single line longer than the cap: return its beginning and say where the rest starts.
      const head = completeUtf8Prefix(Buffer.concat([...this.pieces, segment.subarray(0, READ_MAX_TEXT_BYTES - this.kept)]));
      this.pieces.splice(0, this.pieces.length, head);
      this.kept = this.keptWhole = head.length;
      this.lines = 1;
      this.cutAt = lineStart + head.length;
      return;
    }
    this.pieces.push(Buffer.from(segment));
    this.kept += segment.length;
    if (endsLine) {
      this.keptWhole = this.kept;
      this.lines += 1;
      if (this.lines >= this.limit) this.done = true;
    }
  }

  /** At the end of the file: a last line without a newline is still a line. */
  finish(): void {
    if (!this.done && this.kept > this.keptWhole) {
      this.keptWhole = this.kept;
      this.lines += 1;
    }
  }

  text(): string {
    return Buffer.concat(this.pieces).subarray(0, this.keptWhole).toString('utf8');
  }
}

/** Where a scan is: the line being read, the file offset where it starts, and the newlines passed. */
interface Cursor {
  line: number;
  lineStart: number;
  newlines: number;
}

/** Gives the collector the lines of `data` (read at file offset `position`) from `at` on, until it is done; returns where it stopped. */
function collect(data: Buffer, at: number, position: number, cursor: Cursor, collector: LineCollector): number {
  while (at < data.length && !collector.done) {
    const newline = data.indexOf(0x0a, at);
    const end = newline === -1 ? data.length : newline + 1;
    collector.add(data.subarray(at, end), newline !== -1, cursor.lineStart);
    at = end;
    if (newline !== -1) {
      cursor.newlines += 1;
      cursor.line += 1;
      cursor.lineStart = position + end;
    }
  }
  return at;
}

/**
 * Reads the file from its start, `bytesRead` bytes of which are already in the buffer: skips to
 * line `startLine` counting newlines at memory speed, and hands the lines from there to the
 * collector (if any). Once it is done, reads no further (on to the end of a line cut at the byte
 * cap only), unless `countAll`: then it counts the lines to the end. Lines already in the buffer
 * are counted anyway, so a file that fits one buffer always gets its total. Memory stays at one
 * buffer plus the answer whatever the file's size. Returns the number of lines in the file, or
 * undefined when it stopped before the end (more follows).
 */
async function scanLines(
  file: OpenFile,
  bytesRead: number,
  startLine: number,
  collector: LineCollector | undefined,
  countAll: boolean,
): Promise<number | undefined> {
  const { scan, size } = file;
  const cursor: Cursor = { line: 1, lineStart: 0, newlines: 0 };
  let position = 0;
  let lastByte = -1;
  let finishingLine = false; // the collector cut a line at the cap: read on to its end
  while (bytesRead > 0) {
    const data = scan.buffer.subarray(0, bytesRead);
    let at = 0;
    if (finishingLine) {
      const newline = data.indexOf(0x0a);
      at = newline === -1 ? bytesRead : newline + 1;
      if (newline !== -1) {
        cursor.newlines += 1;
        finishingLine = false;
      }
    } else if (collector && !collector.done) {
      if (cursor.line < startLine) {
        const newlines = scan.countNewlines(0, bytesRead);
        if (cursor.line + newlines < startLine) {
          at = bytesRead; // the wanted lines start after this chunk
          cursor.line += newlines;
          cursor.newlines += newlines;
          if (newlines > 0) cursor.lineStart = position + data.lastIndexOf(0x0a) + 1;
        } else {
          while (cursor.line < startLine) {
            at = data.indexOf(0x0a, at) + 1;
            cursor.line += 1;
            cursor.newlines += 1;
          }
          cursor.lineStart = position + at;
        }
      }
      at = collect(data, at, position, cursor, collector);
      // A line cut at the cap that goes on past this buffer.
      finishingLine = collector.cutAt !== undefined && at === bytesRead && data[bytesRead - 1] !== 0x0a;
    }
    const end = position + bytesRead;
    const stopping = collector?.done === true && !finishingLine && !countAll;
    if (stopping && at < bytesRead && (size === 0 || end < size)) return undefined;
    if (at < bytesRead) cursor.newlines += scan.countNewlines(at, bytesRead);
    position = end;
    lastByte = data[bytesRead - 1]!;
    // A regular file ends at its size; files such as those in /proc say 0 and are read until empty.
    if (size > 0 && position >= size) break;
    if (stopping && size > 0) return undefined;
    bytesRead = await file.readAt(scan.buffer, 0, SCAN_BUFFER_BYTES, position);
    if (stopping && bytesRead > 0) return undefined;
  }
  collector?.finish();
  // The last line has no newline but is still a line.
  return cursor.newlines + (position > 0 && lastByte !== 0x0a ? 1 : 0);
}

async function readLines(file: OpenFile, bytesRead: number, startLine: number, limit: number, countAll: boolean): Promise<TextReadResult> {
  const collector = new LineCollector(limit);
  const totalLines = await scanLines(file, bytesRead, startLine, collector, countAll);
  if (totalLines === 0) return emptyFile(file.path);
  if (totalLines !== undefined && startLine > totalLines) {
    throw new MachineError('out_of_range', `offset ${startLine} is past the end of ${file.path}, which has ${totalLines} lines.`);
  }
  return numberedLines(file.path, collector, startLine, totalLines);
}

/**
 * The lines from the `fromEnd`-th last one: finds where that line starts by reading backwards from
 * the end of the file (never the whole file), then reads forward from there.
 */
async function readLastLines(file: OpenFile, fromEnd: number, limit: number): Promise<TextReadResult> {
  const { scan, size } = file;
  let position = size;
  let newlines = 0; // newlines after `position`, the file's last byte excepted
  let start = 0;
  let linesBefore: number | undefined = 0; // lines before `start`, when known
  let linesFromStart: number | undefined; // lines from `start` to the end
  while (position > 0) {
    const from = Math.max(0, position - SCAN_BUFFER_BYTES);
    const data = scan.buffer.subarray(0, await readFully(file, from, position - from));
    // A newline as the file's last byte ends its last line; it does not start another one.
    const end = position === size && data[data.length - 1] === 0x0a ? data.length - 1 : data.length;
    const found = scan.countNewlines(0, end);
    if (newlines + found >= fromEnd) {
      let at = end;
      for (let left = fromEnd - newlines; left > 0; left -= 1) at = data.lastIndexOf(0x0a, at - 1);
      start = from + at + 1;
      linesFromStart = fromEnd;
      // Only when the backward read reached the start of the file are the line numbers known.
      linesBefore = from === 0 ? scan.countNewlines(0, at + 1) : undefined;
      break;
    }
    newlines += found;
    position = from;
  }
  // Fewer lines than asked for: the whole file, whose lines were all counted.
  linesFromStart ??= newlines + 1;

  const collector = new LineCollector(limit);
  const cursor: Cursor = { line: 1, lineStart: start, newlines: 0 };
  for (let at = start; !collector.done && at < size;) {
    const bytesRead = await file.readAt(scan.buffer, 0, Math.min(SCAN_BUFFER_BYTES, size - at), at);
    if (bytesRead === 0) break;
    collect(scan.buffer.subarray(0, bytesRead), 0, at, cursor, collector);
    at += bytesRead;
  }
  collector.finish();

  if (linesBefore !== undefined) return numberedLines(file.path, collector, linesBefore + 1, linesBefore + linesFromStart);
  const result: TextReadResult = { kind: 'text', path: file.path, text: collector.text(), fromEnd };
  const lines = collector.lines;
  if (collector.cutAt !== undefined) {
    result.note =
      `[line -${fromEnd} (counted from the end) is longer than the ${READ_MAX_TEXT_BYTES / 1024} KiB cap: only its beginning is shown. ` +
      `Read the rest of it with encoding "base64" and offset ${collector.cutAt} (a 0-based byte offset)` +
      (fromEnd > 1 ? `, or the next lines with offset -${fromEnd - 1}]` : ']');
  } else if (lines < fromEnd) {
    const why = collector.hitByteCap ? ` (stopped at the ${READ_MAX_TEXT_BYTES / 1024} KiB cap)` : '';
    result.note =
      `[${plural(lines, 'line')} from line -${fromEnd} (counted from the end: the file was read from its end, so line numbers were not counted)${why}; ` +
      `call read with offset -${fromEnd - lines} to continue]`;
  } else {
    result.note =
      `[the last ${plural(lines, 'line')} of the file; it was read from its end, so line numbers were not counted; ` +
      `call read with offset -${2 * fromEnd} and limit ${fromEnd} for the lines before them]`;
  }
  return result;
}

/** The last lines of a file that reports no size (such as those in /proc): counts its lines, then reads them. */
async function readLastLinesOfUnsizedFile(file: OpenFile, bytesRead: number, fromEnd: number, limit: number): Promise<TextReadResult> {
  const totalLines = (await scanLines(file, bytesRead, Infinity, undefined, true))!;
  if (totalLines === 0) return emptyFile(file.path);
  const again = await file.readAt(file.scan.buffer, 0, SCAN_BUFFER_BYTES, 0);
  const collector = new LineCollector(limit);
  const startLine = Math.max(1, totalLines - fromEnd + 1);
  // The file may have changed between the two reads; the second one's count is the one shown.
  return numberedLines(file.path, collector, startLine, await scanLines(file, again, startLine, collector, true));
}

/** Reads `length` bytes at `position` into the scan buffer (fewer if the file ends sooner); returns how many. */
async function readFully(file: OpenFile, position: number, length: number): Promise<number> {
  let got = 0;
  while (got < length) {
    const bytesRead = await file.readAt(file.scan.buffer, got, length - got, position + got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  return got;
}

function emptyFile(path: string): TextReadResult {
  return { kind: 'text', path, text: '', startLine: 1, endLine: 0, totalLines: 0, note: '[the file is empty]' };
}

/**
 * The answer for lines whose numbers are known, with a note saying which they are and how to go on;
 * `totalLines` undefined: the read stopped before the end of the file, so more lines follow.
 */
function numberedLines(path: string, collector: LineCollector, startLine: number, totalLines: number | undefined): TextReadResult {
  const endLine = startLine + collector.lines - 1;
  const result: TextReadResult = { kind: 'text', path, text: collector.text(), startLine, endLine };
  if (totalLines !== undefined) result.totalLines = totalLines;
  const more = totalLines === undefined || endLine < totalLines;
  const of = totalLines === undefined ? '' : ` of ${totalLines}`;
  if (collector.cutAt !== undefined) {
    result.note =
      `[line ${endLine}${of} is longer than the ${READ_MAX_TEXT_BYTES / 1024} KiB cap: only its beginning is shown. ` +
      `Read the rest of it with encoding "base64" and offset ${collector.cutAt} (a 0-based byte offset)` +
      (more ? `, or the next lines with offset ${endLine + 1}]` : ']');
  } else if (startLine > 1 || more) {
    const why = collector.hitByteCap ? ` (stopped at the ${READ_MAX_TEXT_BYTES / 1024} KiB cap)` : '';
    const follow = totalLines === undefined ? ', more follow' : '';
    const next = more ? `; call read with offset ${endLine + 1} to continue` : '';
    result.note = `[lines ${startLine}-${endLine}${of}${why}${follow}${next}]`;
  }
  return result;
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

async function readBytes(readAt: ReadAt, path: string, size: number, input: ReadInput, detected: boolean): Promise<BinaryReadResult> {
  const offset = input.offset ?? 0;
  if (offset < 0) {
    throw new MachineError(
      'invalid_input',
      `A negative offset counts lines from the end, which only text has; ${path} is read as base64, where offset is a 0-based byte ` +
        `(it is ${size} bytes long${size >= -offset ? `: offset ${size + offset} gives its last ${-offset} bytes` : ''}).`,
    );
  }
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
