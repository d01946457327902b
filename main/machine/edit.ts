import { closeSync, read } from 'node:fs';
import { resolve } from 'node:path';
import { capped, unifiedDiff } from './diff.js';
import { MachineError, fileSystemError } from './errors.js';
import { openSpot, type FileRules } from './file-target.js';
import { SCAN_BUFFER_BYTES, releaseScanBuffer, takeScanBuffer, type ScanBuffer } from './newline-scanner.js';
import { replaceFile } from './replace-file.js';
import { FileSink, StreamReplacer, type PieceSink } from './stream-replace.js';
import { Utf8Stream, completeUtf8Prefix, skipUtf8Continuation } from './utf8.js';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function readAsync(fd: number, buffer: Buffer, offset: number, length: number, position: number): Promise<number> {
  return new Promise((resolve, reject) => {
    read(fd, buffer, offset, length, position, (error, bytesRead) => (error ? reject(error) : resolve(bytesRead)));
  });
}

// Lines of context around a change in the diff, and how far to look for them.
const CONTEXT_LINES = 3;
const CONTEXT_WINDOW_BYTES = 64 * 1024;
/** Changes spanning up to this much are diffed whole; beyond, only their start and end (DIFF_EXCERPT_BYTES each). */
const DIFF_WHOLE_BYTES = 256 * 1024;
// Small enough that many changes in it still diff line by line (diff.ts gives up past 500 changed lines).
const DIFF_EXCERPT_BYTES = 16 * 1024;

export interface TextEdit {
  old_string: string;
  new_string: string;
  replace_all?: boolean | undefined;
}

export interface EditInput {
  path: string;
  edits: TextEdit[];
}

export interface EditResult {
  /** The file edited: the target of `path` when `path` is a symbolic link. */
  path: string;
  edits: number;
  replacements: number;
  /** Unified-style diff of the change, bounded in length. */
  diff: string;
}

/**
 * Applies the edits to a file of any size in one pass, with memory bounded whatever its size: the
 * file streams through one replacer per edit (each sees the output of the ones before, as if they
 * ran in turn) into a temp file beside it, which replaces the file only if every edit matched as
 * it must and the file is text. Otherwise the temp file is removed: the file is left untouched.
 * Under place or strict, `rules` are the policy's, applied to what is opened (file-target.ts).
 */
export async function editFile(input: EditInput, rules?: FileRules): Promise<EditResult> {
  const requested = resolve(input.path);
  if (!Array.isArray(input.edits) || input.edits.length === 0) {
    throw new MachineError('invalid_input', 'edits is empty: give at least one {old_string, new_string}.');
  }
  const spot = openSpot(requested, { rules, action: 'edit' });
  const file = spot.file;
  try {
    if (!file) {
      throw new MachineError(
        'not_found',
        `Cannot edit ${requested}: no such file. Use write to create it (relative paths resolve against ${process.cwd()}).`,
      );
    }
    input.edits.forEach((edit, index) => checkEdit(edit, index, input.edits.length, requested));
    const scan = takeScanBuffer();
    try {
      // Agents send LF text; in a file whose line breaks are all CRLF it is meant as CRLF, to match and to write.
      const crlf =
        input.edits.some((edit) => `${edit.old_string}${edit.new_string}`.includes('\n')) && (await allLineBreaksAreCrlf(file.fd, scan));
      let result: { replacements: number; diff: string } | undefined;
      await replaceFile(spot, file.info.mode & 0o7777, async (temp) => {
        result = await editInto(file.fd, temp, input.edits, { crlf, path: requested, scan });
      });
      return { path: spot.path, edits: input.edits.length, ...result! };
    } finally {
      releaseScanBuffer(scan);
    }
  } catch (error) {
    throw fileSystemError(error, requested, 'edit');
  } finally {
    if (file) closeSync(file.fd);
    spot.close();
  }
}

function failure(index: number, total: number, path: string, why: string): MachineError {
  return new MachineError('edit_failed', `edit ${index + 1} of ${total} failed: ${why} Nothing was written; ${path} is unchanged.`);
}

/** What is wrong with an edit whatever the file holds. */
function checkEdit(edit: TextEdit, index: number, total: number, path: string): void {
  if (typeof edit.old_string !== 'string' || edit.old_string === '') {
    throw failure(index, total, path, 'old_string is empty. Give the exact text to replace; to replace the whole file use write.');
  }
  if (typeof edit.new_string !== 'string') throw failure(index, total, path, 'new_string is missing.');
  if (edit.old_string === edit.new_string)
    throw failure(index, total, path, 'old_string and new_string are identical, so there is nothing to change.');
}

interface EditPass {
  crlf: boolean;
  path: string;
  scan: ScanBuffer;
}

/** Streams `source` through the edits into `temp`; throws, having checked them in order, if one did not match as it must or the file is not text. */
async function editInto(
  source: number,
  temp: number,
  edits: TextEdit[],
  { crlf, path, scan }: EditPass,
): Promise<{ replacements: number; diff: string }> {
  const sink = new FileSink(temp);
  const stages: StreamReplacer[] = [];
  let next: PieceSink = sink;
  for (const edit of [...edits].reverse()) {
    const from = crlf ? toCrlf(edit.old_string) : edit.old_string;
    const to = crlf ? toCrlf(edit.new_string) : edit.new_string;
    // A string that is not well-formed (a lone surrogate) is in no text, whatever its UTF-8 would be.
    const stage = new StreamReplacer(LONE_SURROGATE.test(from) ? Buffer.alloc(0) : Buffer.from(from), Buffer.from(to), next);
    stages.unshift(stage);
    next = stage;
  }
  const text = new Utf8Stream();
  // Where each piece read starts, and the newlines before it: line numbers for the diff.
  const pieces: Array<{ start: number; newlines: number }> = [];
  let size = 0;
  let newlines = 0;
  for (;;) {
    const bytesRead = await readAsync(source, scan.buffer, 0, SCAN_BUFFER_BYTES, size);
    if (bytesRead === 0) break;
    const piece = scan.buffer.subarray(0, bytesRead);
    text.push(piece);
    pieces.push({ start: size, newlines });
    newlines += scan.countNewlines(0, bytesRead);
    await stages[0]!.write([piece]);
    // The read buffer is read into again next: nothing may refer to it any more.
    await sink.flush();
    size += bytesRead;
  }
  await stages[0]!.end();
  if (!text.end()) {
    throw new MachineError(
      'not_text',
      `Cannot edit ${path}: it is not a UTF-8 text file. Replace it whole with write (encoding "base64") instead.`,
    );
  }
  stages.forEach((stage, index) => checkCount(stage.count, edits[index]!, index, edits.length, path));

  // What changed lies between the first replacement's start and the last one's end, over all stages.
  const prefix = Math.min(...stages.map((stage) => stage.firstStart));
  const suffix = Math.min(...stages.map((stage) => stage.written - stage.lastEnd));
  const lines: Lines = {
    a: newlines,
    // Each replacement adds its new_string's newlines and takes away its old_string's.
    b: newlines + stages.reduce((sum, stage) => sum + stage.count * stage.newlinesAdded, 0),
    async before(offset) {
      const at = pieces.findLast((piece) => piece.start <= offset) ?? { start: 0, newlines: 0 };
      const length = await readRange(source, scan, at.start, offset - at.start);
      return at.newlines + scan.countNewlines(0, length);
    },
  };
  const diff = await changeDiff({ fd: source, size }, { fd: temp, size: sink.written }, prefix, suffix, scan, lines);
  return { replacements: stages.reduce((sum, stage) => sum + stage.count, 0), diff };
}

function checkCount(count: number, edit: TextEdit, index: number, total: number, path: string): void {
  if (count === 0) {
    const after = index > 0 ? ` (after applying edits 1-${index})` : '';
    throw failure(
      index,
      total,
      path,
      `old_string was not found in ${path}${after}. It must match the file exactly, including whitespace and indentation; read the file again and copy the text.`,
    );
  }
  if (count > 1 && !edit.replace_all) {
    throw failure(
      index,
      total,
      path,
      `old_string matches ${count} places in ${path}. Include more surrounding lines to make it unique, or set replace_all: true to replace all ${count}.`,
    );
  }
}

interface Side {
  fd: number;
  size: number;
}

/**
 * The diff of the change: the lines from three before the first changed byte to three after the
 * last one, read back from both files (the bytes before `prefix` and the last `suffix` bytes are
 * the same in both). When that is more than DIFF_WHOLE_BYTES on either side, the diffs of its
 * start and of its end, each of at most DIFF_EXCERPT_BYTES, and a line between them saying which
 * lines are not shown.
 */
async function changeDiff(a: Side, b: Side, prefix: number, suffix: number, scan: ScanBuffer, lines: Lines): Promise<string> {
  const aChangeEnd = Math.max(prefix, a.size - suffix);
  const bChangeEnd = Math.max(prefix, b.size - suffix);
  // From the start of the line three before the one where the change starts...
  const windowStart = Math.max(0, prefix - CONTEXT_WINDOW_BYTES);
  const before = scan.buffer.subarray(0, await readRange(a.fd, scan, windowStart, prefix - windowStart));
  const start = windowStart + linesBackStart(before, CONTEXT_LINES + 1, windowStart === 0);
  // ...to the end of the line three after the one where it ends (the same bytes on both sides).
  const from = Math.max(prefix, aChangeEnd - 1);
  const after = scan.buffer.subarray(0, await readRange(a.fd, scan, from, CONTEXT_WINDOW_BYTES));
  const aEnd = from + linesForwardEnd(after, CONTEXT_LINES + 1);
  const bEnd = bChangeEnd + (aEnd - aChangeEnd);
  const firstLine = (await lines.before(start)) + 1;
  const text = async (side: Side, at: number, length: number, cut: 'start' | 'end' | undefined): Promise<string> =>
    utf8Text(scan.buffer.subarray(0, await readRange(side.fd, scan, at, length)), cut);
  if (aEnd - start <= DIFF_WHOLE_BYTES && bEnd - start <= DIFF_WHOLE_BYTES) {
    return unifiedDiff(await text(a, start, aEnd - start, undefined), await text(b, start, bEnd - start, undefined), {
      firstLine: { a: firstLine, b: firstLine },
    });
  }
  const aHead = await text(a, start, DIFF_EXCERPT_BYTES, 'end');
  const head = unifiedDiff(aHead, await text(b, start, DIFF_EXCERPT_BYTES, 'end'), {
    firstLine: { a: firstLine, b: firstLine },
    cut: 'end',
  });
  // The end's line numbers, counted back from the end: the lines after it are the same in both files.
  const linesAfter = lines.a - (await lines.before(aEnd));
  const aTail = Math.max(start, aEnd - DIFF_EXCERPT_BYTES);
  const bTail = Math.max(start, bEnd - DIFF_EXCERPT_BYTES);
  const aTailText = await text(a, aTail, aEnd - aTail, 'start');
  const bTailText = await text(b, bTail, bEnd - bTail, 'start');
  const aTailLine = lines.a - linesAfter - newlines(aTailText) + 1;
  const bTailLine = lines.b - linesAfter - newlines(bTailText) + 1;
  const tail = unifiedDiff(aTailText, bTailText, { firstLine: { a: aTailLine, b: bTailLine }, cut: 'start' });
  const gap = `... lines ${firstLine + newlines(aHead)}-${aTailLine - 1} (numbered as before the edit) are not shown: more changes may be there`;
  return capped([head, gap, tail].filter(Boolean).join('\n').split('\n'));
}

/** Newline counts of the file before the edit (`a`) and after it (`b`), and before an offset of the first. */
interface Lines {
  a: number;
  b: number;
  before(offset: number): Promise<number>;
}

function newlines(text: string): number {
  let count = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) count += 1;
  return count;
}

/**
 * Where, in `bytes`, the line starts that holds the end of `bytes` and goes `newlines - 1` lines
 * further back; with fewer newlines, the start of `bytes` if it is the file's start, else just after
 * the earliest newline (a line longer than the window is shown from there).
 */
function linesBackStart(bytes: Buffer, newlines: number, fileStart: boolean): number {
  let start = 0;
  let at = bytes.length;
  for (let found = 0; found < newlines; found += 1) {
    const newline = at > 0 ? bytes.lastIndexOf(0x0a, at - 1) : -1;
    if (newline === -1) return fileStart ? 0 : start;
    start = newline + 1;
    at = newline;
  }
  return start;
}

/** Where, in `bytes`, the `newlines`-th line ends (just after its newline); the end of `bytes` if it holds fewer. */
function linesForwardEnd(bytes: Buffer, newlines: number): number {
  let end = bytes.length;
  for (let at = 0, found = 0; found < newlines; found += 1) {
    const newline = bytes.indexOf(0x0a, at);
    if (newline === -1) return bytes.length;
    end = newline + 1;
    at = end;
  }
  return end;
}

/** `bytes` as text, never half a character; whole lines only at the end that was `cut` short. */
function utf8Text(bytes: Buffer, cut: 'start' | 'end' | undefined): string {
  let whole = bytes;
  if (cut === 'end') {
    const lastNewline = bytes.lastIndexOf(0x0a);
    whole = lastNewline === -1 ? completeUtf8Prefix(bytes) : bytes.subarray(0, lastNewline + 1);
  } else if (cut === 'start') {
    const firstNewline = bytes.indexOf(0x0a);
    whole = firstNewline === -1 ? skipUtf8Continuation(bytes) : bytes.subarray(firstNewline + 1);
  }
  return whole.toString('utf8');
}

/** Reads up to `length` bytes at `position` into the scan buffer (at most its size); returns how many. */
async function readRange(fd: number, scan: ScanBuffer, position: number, length: number): Promise<number> {
  let got = 0;
  const want = Math.min(length, SCAN_BUFFER_BYTES);
  while (got < want) {
    const bytesRead = await readAsync(fd, scan.buffer, got, want - got, position + got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  return got;
}

/** Whether the file has CRLF line breaks and no other kind; read until the first lone LF. */
async function allLineBreaksAreCrlf(fd: number, scan: ScanBuffer): Promise<boolean> {
  let position = 0;
  let previous = -1;
  let crlf = false;
  for (;;) {
    const bytesRead = await readAsync(fd, scan.buffer, 0, SCAN_BUFFER_BYTES, position);
    if (bytesRead === 0) return crlf;
    const data = scan.buffer.subarray(0, bytesRead);
    for (let newline = data.indexOf(0x0a); newline !== -1; newline = data.indexOf(0x0a, newline + 1)) {
      if ((newline > 0 ? data[newline - 1] : previous) !== 0x0d) return false;
      crlf = true;
    }
    previous = data[bytesRead - 1]!;
    position += bytesRead;
  }
}

function toCrlf(text: string): string {
  return text.replace(/\r?\n/g, '\r\n');
}
