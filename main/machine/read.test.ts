import assert from 'node:assert/strict';
import { fileRequestsDuring } from '../../test/support/file-requests.js';
import { chmod, mkdir, mkdtemp, open, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { execFile } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { builtUrl } from '../../test/support/built.js';
import { waitFor } from '../../test/support/wait.js';
import { MachineError } from './errors.js';
import { SCAN_BUFFER_BYTES } from './newline-scanner.js';
import {
  READ_DEFAULT_LINE_LIMIT,
  READ_MAX_BINARY_BYTES,
  READ_MAX_TEXT_BYTES,
  readFile,
  type BinaryReadResult,
  type TextReadResult,
} from './read.js';

const run = promisify(execFile);

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'machine-read-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function file(name: string, content: string | Buffer): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, content);
  return path;
}

async function readText(input: Parameters<typeof readFile>[0]): Promise<TextReadResult> {
  const result = await readFile(input);
  assert.equal(result.kind, 'text');
  return result as TextReadResult;
}

async function readBinary(input: Parameters<typeof readFile>[0]): Promise<BinaryReadResult> {
  const result = await readFile(input);
  assert.equal(result.kind, 'base64');
  return result as BinaryReadResult;
}

/** readFile's error for `path` as an unprivileged user (root reads anything, so as root: in a child as nobody). */
async function readWithoutPrivileges(path: string): Promise<{ code: string; message: string }> {
  if (process.getuid?.() !== 0) {
    const error = await readFile({ path }).then(
      () => assert.fail('read succeeded'),
      (e: MachineError) => e,
    );
    return { code: error.code, message: error.message };
  }
  const script = `import(${JSON.stringify(builtUrl(new URL('./read.ts', import.meta.url)))}).then((m) => m.readFile({ path: ${JSON.stringify(path)} }))
    .then(() => console.log('{}'), (e) => console.log(JSON.stringify({ code: e.code, message: e.message })))`;
  const { stdout } = await run('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, '-e', script]);
  return JSON.parse(stdout) as { code: string; message: string };
}

function lines(count: number, make = (n: number) => `line ${n}`): string {
  return Array.from({ length: count }, (_, i) => `${make(i + 1)}\n`).join('');
}

describe('read: text', () => {
  it('returns the whole file exactly as it is, with no note', async () => {
    const content = '\uFEFFfirst\r\nsecond\r\n\ttabbed  \nno newline at end';
    const result = await readText({ path: await file('exact.txt', content) });
    assert.equal(result.text, content);
    assert.equal(result.totalLines, 4);
    assert.equal(result.startLine, 1);
    assert.equal(result.endLine, 4);
    assert.equal(result.note, undefined);
  });

  it('returns the requested lines and says how to continue', async () => {
    const path = await file('five.txt', lines(5));
    const result = await readText({ path, offset: 2, limit: 2 });
    assert.equal(result.text, 'line 2\nline 3\n');
    assert.equal(result.note, '[lines 2-3 of 5; call read with offset 4 to continue]');
  });

  it('notes the range without "continue" when the range reaches the end', async () => {
    const result = await readText({ path: await file('end.txt', lines(5)), offset: 4 });
    assert.equal(result.text, 'line 4\nline 5\n');
    assert.equal(result.note, '[lines 4-5 of 5]');
  });

  it('treats offset 0 as the first line', async () => {
    const result = await readText({ path: await file('zero.txt', lines(3)), offset: 0, limit: 1 });
    assert.equal(result.text, 'line 1\n');
  });

  it(`returns the first ${READ_DEFAULT_LINE_LIMIT} lines by default`, async () => {
    const result = await readText({ path: await file('long.txt', lines(2500)) });
    assert.equal(result.endLine, READ_DEFAULT_LINE_LIMIT);
    assert.equal(result.text, lines(READ_DEFAULT_LINE_LIMIT));
    assert.equal(result.note, `[lines 1-2000 of 2500; call read with offset 2001 to continue]`);
  });

  it('stops at the byte cap on a whole line and says where to continue', async () => {
    const line = 'x'.repeat(999);
    const result = await readText({
      path: await file(
        'wide.txt',
        lines(400, () => line),
      ),
    });
    const whole = Math.floor(READ_MAX_TEXT_BYTES / 1000);
    assert.equal(result.endLine, whole);
    assert.equal(
      result.text,
      lines(whole, () => line),
    );
    assert.ok(Buffer.byteLength(result.text) <= READ_MAX_TEXT_BYTES);
    assert.match(
      result.note ?? '',
      new RegExp(`^\\[lines 1-${whole} of 400 \\(stopped at the 256 KiB cap\\); call read with offset ${whole + 1} to continue\\]$`),
    );
  });

  it('shows the start of a line longer than the cap without splitting a character, and the byte offset of the rest', async () => {
    const long = 'é'.repeat(READ_MAX_TEXT_BYTES); // 2 bytes each: twice the cap
    const path = await file('one-long-line.txt', `short\n${long}\nafter\n`);
    const result = await readText({ path, offset: 2 });
    assert.equal(result.startLine, 2);
    assert.equal(result.endLine, 2);
    assert.ok(!result.text.includes('\uFFFD'));
    assert.equal(result.text, 'é'.repeat(READ_MAX_TEXT_BYTES / 2));
    const resumeAt = 'short\n'.length + READ_MAX_TEXT_BYTES;
    assert.equal(
      result.note,
      `[line 2 of 3 is longer than the 256 KiB cap: only its beginning is shown. Read the rest of it with encoding "base64" and offset ${resumeAt} (a 0-based byte offset), or the next lines with offset 3]`,
    );
    const rest = await readBinary({ path, encoding: 'base64', offset: resumeAt, limit: 4 });
    assert.equal(Buffer.from(rest.base64, 'base64').toString('utf8'), 'éé');
  });

  it('reports an empty file', async () => {
    const result = await readText({ path: await file('empty.txt', '') });
    assert.equal(result.text, '');
    assert.equal(result.totalLines, 0);
    assert.equal(result.note, '[the file is empty]');
  });

  it('refuses an offset past the end', async () => {
    await assert.rejects(readFile({ path: await file('three.txt', lines(3)), offset: 4 }), (error: MachineError) => {
      assert.equal(error.code, 'out_of_range');
      assert.match(error.message, /offset 4 is past the end of .*three\.txt, which has 3 lines/);
      return true;
    });
  });

  it('refuses a limit below 1', async () => {
    await assert.rejects(readFile({ path: await file('limit.txt', 'a\n'), limit: 0 }), { code: 'invalid_input' });
  });

  it('resolves a relative path against the process cwd', async () => {
    const path = await file('relative.txt', 'here\n');
    const result = await readText({ path: relative(process.cwd(), path) });
    assert.equal(result.text, 'here\n');
    assert.equal(result.path, path);
  });

  it('streams a range near the end of a 1 GiB file without holding it in memory', async () => {
    const path = join(dir, 'huge.txt');
    const handle = await open(path, 'w');
    const head = lines(10_000);
    await handle.write(head, 0);
    const size = 1024 ** 3;
    const end = '\nlast-1\nlast-2\n';
    // Sparse: the gigabyte between head and end costs no disk and reads back as NUL bytes.
    await handle.write(end, size - end.length);
    await handle.close();
    const rssBefore = process.memoryUsage().rss;
    const result = await readText({ path, offset: 10_002 });
    const peak = process.resourceUsage().maxRSS * 1024;
    assert.equal(result.text, 'last-1\nlast-2\n');
    assert.equal(result.totalLines, 10_003);
    assert.equal(result.note, '[lines 10002-10003 of 10003]');
    assert.ok(peak - rssBefore < 256 * 1024 ** 2, `peak RSS grew by ${Math.round((peak - rssBefore) / 1024 ** 2)} MiB`);
    await rm(path);
  });
});

/** Lines of multi-byte characters (2, 3 and 4 bytes) of varied lengths, so that chunk boundaries cut characters and lines. */
function wideLines(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${i + 1} ${'é€😀'.repeat(i % 23)}${'x'.repeat(i % 5)}\n`);
}

/** A file of more than 2 scan buffers of `wideLines`, padded at the start so that the last buffer's first byte is inside a character. */
async function wideFile(name: string): Promise<{ path: string; all: string[]; padding: number }> {
  const all = wideLines(60_000);
  const body = Buffer.from(all.join(''));
  assert.ok(body.length > 2 * SCAN_BUFFER_BYTES);
  let padding = 0;
  while (padding < 4 && (body[body.length - SCAN_BUFFER_BYTES - padding]! & 0xc0) !== 0x80) padding += 1;
  assert.equal(body[body.length - SCAN_BUFFER_BYTES - padding]! & 0xc0, 0x80, 'a buffer boundary cuts a character');
  // The padding joins the first line, which the tests do not look at.
  all[0] = `${'p'.repeat(padding)}${all[0]}`;
  return { path: await file(name, Buffer.concat([Buffer.from('p'.repeat(padding)), body])), all, padding };
}

describe('read: from the end (negative offset)', () => {
  it('returns the last lines with their numbers when it read back to the start', async () => {
    const result = await readText({ path: await file('tail-five.txt', lines(5)), offset: -2 });
    assert.equal(result.text, 'line 4\nline 5\n');
    assert.equal(result.startLine, 4);
    assert.equal(result.endLine, 5);
    assert.equal(result.totalLines, 5);
    assert.equal(result.note, '[lines 4-5 of 5]');
  });

  it('counts a last line without a newline as a line', async () => {
    const path = await file('tail-no-newline.txt', 'a\nb\nc');
    assert.equal((await readText({ path, offset: -1 })).text, 'c');
    const two = await readText({ path, offset: -2 });
    assert.equal(two.text, 'b\nc');
    assert.equal(two.startLine, 2);
    assert.equal(two.totalLines, 3);
  });

  it('keeps CRLF line endings as they are', async () => {
    const result = await readText({ path: await file('tail-crlf.txt', 'one\r\ntwo\r\nthree\r\n'), offset: -2 });
    assert.equal(result.text, 'two\r\nthree\r\n');
    assert.equal(result.startLine, 2);
  });

  it('returns the whole file when the offset reaches past its start', async () => {
    const result = await readText({ path: await file('tail-short.txt', lines(3)), offset: -10 });
    assert.equal(result.text, lines(3));
    assert.equal(result.startLine, 1);
    assert.equal(result.totalLines, 3);
    assert.equal(result.note, undefined);
  });

  it('returns limit lines from there and says how to continue', async () => {
    const result = await readText({ path: await file('tail-limit.txt', lines(5)), offset: -4, limit: 2 });
    assert.equal(result.text, 'line 2\nline 3\n');
    assert.equal(result.note, '[lines 2-3 of 5; call read with offset 4 to continue]');
  });

  it('handles blank lines and a file that is only newlines', async () => {
    assert.equal((await readText({ path: await file('tail-blank.txt', 'a\n\n\n'), offset: -2 })).text, '\n\n');
    const newlines = await readText({ path: await file('tail-newline.txt', '\n'), offset: -1 });
    assert.equal(newlines.text, '\n');
    assert.equal(newlines.totalLines, 1);
  });

  it('reports an empty file', async () => {
    const result = await readText({ path: await file('tail-empty.txt', ''), offset: -3 });
    assert.equal(result.note, '[the file is empty]');
  });

  it('reads the last lines of a large file, without numbers, whole across buffer boundaries that cut characters', async () => {
    const { path, all } = await wideFile('tail-wide.txt');
    // Enough lines to reach back past the start of the last buffer.
    let back = 0;
    for (let bytes = 0; bytes <= SCAN_BUFFER_BYTES + 1000; back += 1) bytes += Buffer.byteLength(all[all.length - 1 - back]!);
    for (const fromEnd of [1, 7, back]) {
      const result = await readText({ path, offset: -fromEnd, limit: 50 });
      const want = all.slice(all.length - fromEnd, all.length - fromEnd + 50);
      assert.equal(result.text, want.join(''), `offset -${fromEnd}`);
      assert.ok(!result.text.includes('\uFFFD'));
      assert.equal(result.startLine, undefined);
      assert.equal(result.totalLines, undefined);
      assert.equal(result.fromEnd, fromEnd);
      if (fromEnd <= 50) {
        assert.equal(
          result.note,
          `[the last ${fromEnd === 1 ? '1 line' : `${fromEnd} lines`} of the file; it was read from its end, so line numbers were not counted; call read with offset -${2 * fromEnd} and limit ${fromEnd} for the lines before them]`,
        );
      } else {
        assert.equal(
          result.note,
          `[50 lines from line -${fromEnd} (counted from the end: the file was read from its end, so line numbers were not counted); call read with offset -${fromEnd - 50} to continue]`,
        );
        const next = await readText({ path, offset: -(fromEnd - 50), limit: 3 });
        assert.equal(next.text, all.slice(all.length - fromEnd + 50, all.length - fromEnd + 53).join(''));
      }
    }
  });

  it('numbers the lines when reading back reached the start of a large file', async () => {
    const { path, all } = await wideFile('tail-wide-numbered.txt');
    const result = await readText({ path, offset: -(all.length - 9), limit: 3 });
    assert.equal(result.text, all.slice(9, 12).join(''));
    assert.equal(result.startLine, 10);
    assert.equal(result.totalLines, all.length);
    assert.equal(result.note, `[lines 10-12 of ${all.length}; call read with offset 13 to continue]`);
  });

  it('shows the start of a last line longer than the cap, and where the rest is', async () => {
    const path = await file('tail-long-line.txt', `short\n${'y'.repeat(READ_MAX_TEXT_BYTES + 10)}`);
    const result = await readText({ path, offset: -1 });
    assert.equal(result.text, 'y'.repeat(READ_MAX_TEXT_BYTES));
    assert.match(
      result.note ?? '',
      new RegExp(`^\\[line 2 of 2 is longer than the 256 KiB cap.*offset ${6 + READ_MAX_TEXT_BYTES} \\(a 0-based byte offset\\)\\]$`),
    );
  });

  it('shows the start of a long last line of a large file, and where the rest is, without line numbers', async () => {
    const before = 'a\n'.repeat(SCAN_BUFFER_BYTES);
    const path = await file('tail-long-line-large.txt', `${before}${'y'.repeat(READ_MAX_TEXT_BYTES + 10)}\n`);
    const result = await readText({ path, offset: -1 });
    assert.equal(result.text, 'y'.repeat(READ_MAX_TEXT_BYTES));
    assert.equal(
      result.note,
      `[line -1 (counted from the end) is longer than the 256 KiB cap: only its beginning is shown. Read the rest of it with encoding "base64" and offset ${before.length + READ_MAX_TEXT_BYTES} (a 0-based byte offset)]`,
    );
  });

  it('reads only the end of a 1 GiB file', { skip: process.platform !== 'linux' }, async () => {
    const path = join(dir, 'huge-tail.txt');
    const handle = await open(path, 'w');
    await handle.write(lines(10_000), 0);
    const end = '\nlast-1\nlast-2\n';
    await handle.write(end, 1024 ** 3 - end.length); // sparse: the middle reads back as NUL bytes
    await handle.close();
    // rchar: bytes this process read through read(2) and its kin.
    const bytesRead = async () =>
      Number(/rchar: (\d+)/.exec(await import('node:fs/promises').then((fs) => fs.readFile('/proc/self/io', 'utf8')))![1]);
    const before = await bytesRead();
    const started = performance.now();
    const result = await readText({ path, offset: -2 });
    const ms = performance.now() - started;
    const read = (await bytesRead()) - before;
    assert.equal(result.text, 'last-1\nlast-2\n');
    assert.equal(result.fromEnd, 2);
    // The start (to tell text from binary) and the last buffer, plus the /proc/self/io reads themselves.
    assert.ok(read < 2 * SCAN_BUFFER_BYTES + 64 * 1024, `read ${read} bytes`);
    assert.ok(ms < 1000, `took ${ms} ms`);
    await rm(path);
  });

  it('reads the last lines of a file that reports size 0, such as those in /proc', { skip: process.platform !== 'linux' }, async () => {
    const result = await readText({ path: '/proc/self/status', offset: -2 });
    assert.equal(result.endLine, result.totalLines);
    assert.equal(result.startLine, result.totalLines! - 1);
    assert.equal(result.text.split('\n').length, 3);
  });

  it('refuses a negative offset for base64, and says which byte offset gives the last bytes', async () => {
    await assert.rejects(readFile({ path: await file('tail.bin', Buffer.from([0, 1, 2, 3])), offset: -2 }), (error: MachineError) => {
      assert.equal(error.code, 'invalid_input');
      assert.match(error.message, /read as base64, where offset is a 0-based byte \(it is 4 bytes long: offset 2 gives its last 2 bytes\)/);
      return true;
    });
  });

  it('refuses an offset that is not a whole number', async () => {
    await assert.rejects(readFile({ path: await file('tail-frac.txt', 'a\n'), offset: -1.5 }), { code: 'invalid_input' });
  });
});

describe('read: scanning forward', () => {
  it('finds a line far down a large file exactly, across buffer boundaries that cut characters', async () => {
    const { path, all } = await wideFile('forward-wide.txt');
    for (const line of [2, 31_000, all.length - 1]) {
      const result = await readText({ path, offset: line, limit: 2 });
      assert.equal(result.text, all.slice(line - 1, line + 1).join(''), `line ${line}`);
      assert.equal(result.totalLines, line + 1 === all.length ? all.length : undefined, 'a total only once the read got to the end');
      assert.equal((await readText({ path, offset: line, limit: 2, total: true })).totalLines, all.length);
    }
  });

  it('stops at its last line, and says that more follow without counting them', async () => {
    // 256 GiB, sparse: a read that went on to the end would not finish.
    const path = await file('sparse-huge.txt', lines(5000));
    await run('truncate', ['-s', '256G', path]);
    const result = await readText({ path, offset: 2, limit: 3 });
    assert.equal(result.text, 'line 2\nline 3\nline 4\n');
    assert.equal(result.totalLines, undefined);
    assert.equal(result.note, '[lines 2-4, more follow; call read with offset 5 to continue]');
    const byDefault = await readText({ path });
    assert.equal(byDefault.text, lines(READ_DEFAULT_LINE_LIMIT));
    assert.equal(
      byDefault.note,
      `[lines 1-${READ_DEFAULT_LINE_LIMIT}, more follow; call read with offset ${READ_DEFAULT_LINE_LIMIT + 1} to continue]`,
    );
  });

  it('counts the lines in the buffer it read anyway, so a file of one buffer always has its total', async () => {
    const result = await readText({ path: await file('one-buffer.txt', lines(50_000)), limit: 2 });
    assert.equal(result.totalLines, 50_000);
    assert.equal(result.note, '[lines 1-2 of 50000; call read with offset 3 to continue]');
  });

  it('reads on to the end of a line cut at the cap, to say whether more lines follow', async () => {
    const long = 'x'.repeat(3 * SCAN_BUFFER_BYTES);
    const path = await file('cut-then-more.txt', `${long}\nnext\n${'y\n'.repeat(SCAN_BUFFER_BYTES)}`);
    const result = await readText({ path });
    assert.equal(result.text, 'x'.repeat(READ_MAX_TEXT_BYTES));
    assert.equal(
      result.note,
      `[line 1 is longer than the 256 KiB cap: only its beginning is shown. Read the rest of it with encoding "base64" and offset ${READ_MAX_TEXT_BYTES} (a 0-based byte offset), or the next lines with offset 2]`,
    );
    const last = await readText({ path: await file('cut-last.txt', long) });
    assert.match(last.note ?? '', /^\[line 1 of 1 is longer than the 256 KiB cap: .*byte offset\)\]$/);
  });

  it('counts the lines of a large file as wc -l does', { skip: process.platform !== 'linux' }, async () => {
    const { path } = await wideFile('forward-count.txt');
    const { stdout } = await run('wc', ['-l', path]);
    assert.equal((await readText({ path, limit: 1, total: true })).totalLines, Number(stdout.trim().split(' ')[0]));
    const noNewline = await file('forward-count-open.txt', 'a\n'.repeat(SCAN_BUFFER_BYTES) + 'last');
    const result = await readText({ path: noNewline, offset: SCAN_BUFFER_BYTES + 1 });
    assert.equal(result.text, 'last');
    assert.equal(result.totalLines, SCAN_BUFFER_BYTES + 1);
  });
});

describe('read: binary', () => {
  it('returns a file with NUL bytes as base64, offsets in bytes', async () => {
    const bytes = Buffer.from([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const path = await file('data.bin', bytes);
    const all = await readBinary({ path });
    assert.deepEqual(Buffer.from(all.base64, 'base64'), bytes);
    assert.equal(all.totalBytes, 10);
    assert.match(
      all.note,
      /^\[The file is not text \(it has NUL bytes or invalid UTF-8\), so this is base64 of bytes 0-9 of 10 \(offsets are 0-based bytes\)\]$/,
    );
    const part = await readBinary({ path, offset: 3, limit: 4 });
    assert.deepEqual(Buffer.from(part.base64, 'base64'), bytes.subarray(3, 7));
    assert.equal(part.offset, 3);
    assert.equal(part.length, 4);
    assert.match(part.note, /bytes 3-6 of 10 .*call read with encoding "base64" and offset 7 to continue/);
  });

  it('treats invalid UTF-8 as binary', async () => {
    const result = await readFile({ path: await file('latin1.txt', Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a])) });
    assert.equal(result.kind, 'base64');
  });

  it('returns a text file as base64 when asked', async () => {
    const result = await readBinary({ path: await file('text-as-b64.txt', 'hello\n'), encoding: 'base64' });
    assert.equal(Buffer.from(result.base64, 'base64').toString(), 'hello\n');
    assert.match(result.note, /^\[Base64 of bytes 0-5 of 6/);
  });

  it(`caps one answer at ${READ_MAX_BINARY_BYTES} bytes`, async () => {
    const bytes = Buffer.alloc(READ_MAX_BINARY_BYTES + 100, 0);
    const result = await readBinary({ path: await file('big.bin', bytes), limit: 10 * READ_MAX_BINARY_BYTES });
    assert.equal(result.length, READ_MAX_BINARY_BYTES);
    assert.match(result.note, new RegExp(`offset ${READ_MAX_BINARY_BYTES} to continue`));
  });

  it('names the mime type of images', async () => {
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
    const result = await readBinary({ path: await file('logo.png', png) });
    assert.equal(result.mimeType, 'image/png');
  });
});

describe('read: errors', () => {
  it('says a missing file is not found, and where relative paths resolve', async () => {
    await assert.rejects(readFile({ path: join(dir, 'nope.txt') }), (error: MachineError) => {
      assert.ok(error instanceof MachineError);
      assert.equal(error.code, 'not_found');
      assert.match(error.message, /nope\.txt: no such file\. Relative paths resolve against /);
      return true;
    });
  });

  it('says a directory is a directory and suggests ls', async () => {
    const sub = join(dir, 'folder');
    await mkdir(sub);
    await assert.rejects(readFile({ path: sub }), (error: MachineError) => {
      assert.equal(error.code, 'is_directory');
      assert.match(error.message, /is a directory.*ls -la/);
      return true;
    });
  });

  it('refuses a device instead of reading it forever', async () => {
    await assert.rejects(readFile({ path: '/dev/zero' }), { code: 'not_a_file' });
  });

  it('refuses a named pipe at once instead of waiting for a writer', { skip: process.platform === 'win32' }, async () => {
    const fifo = join(dir, 'pipe');
    await promisify(execFile)('mkfifo', [fifo]);
    await assert.rejects(readFile({ path: fifo }), { code: 'not_a_file' });
  });

  it('reads files that report a size of 0, such as those in /proc', { skip: process.platform !== 'linux' }, async () => {
    const result = (await readFile({ path: '/proc/self/status' })) as TextReadResult;
    assert.match(result.text, /^Name:/);
    assert.ok((result.totalLines ?? 0) > 5);
  });

  it(
    'reads a small file on a local disk with one round trip through the thread pool: the open',
    { skip: process.platform !== 'linux' },
    async () => {
      const small = await file('round-trips.txt', lines(16));
      const large = await file('round-trips-large.txt', lines(20_000));
      await readFile({ path: small }); // the first read on a device also asks for its file system type
      const roundTrips = (path: string) => fileRequestsDuring(() => readFile({ path }));
      assert.equal(await roundTrips(small), 1);
      assert.ok((await roundTrips(large)) >= 3, 'a larger file is read asynchronously, and closed so');
    },
  );

  it('closes every file it opens, whether it answers or refuses', { skip: process.platform !== 'linux' }, async () => {
    // The answer does not wait for the close, so the descriptors are counted once the closes are done.
    const openFiles = async () => (await readdir('/proc/self/fd')).length;
    const text = await file('closed.txt', lines(3));
    const sub = join(dir, 'closed-folder');
    await mkdir(sub);
    const atStart = await openFiles();
    for (let i = 0; i < 50; i++) {
      await readFile({ path: text });
      await readFile({ path: text, offset: 9 }).catch(() => {});
      await readFile({ path: sub }).catch(() => {});
      await readFile({ path: '/dev/null' }).catch(() => {});
    }
    await waitFor(async () => (await openFiles()) <= atStart, 10_000, 'every file to be closed');
  });

  it('says permission denied', async () => {
    await chmod(dir, 0o755);
    const path = await file('secret.txt', 'x');
    await chmod(path, 0o000);
    const error = await readWithoutPrivileges(path);
    assert.equal(error.code, 'permission_denied');
    assert.match(error.message, /^Cannot read .*secret\.txt: permission denied for user /);
  });
});
