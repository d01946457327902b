import assert from 'node:assert/strict';
import { chmod, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { unifiedDiff } from './diff.js';
import { editFile } from './edit.js';
import type { MachineError } from './errors.js';
import { SCAN_BUFFER_BYTES } from './newline-scanner.js';

let dir: string;
let count = 0;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'machine-edit-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function file(content: string | Buffer): Promise<string> {
  count += 1;
  const path = join(dir, `file-${count}.txt`);
  await writeFile(path, content);
  return path;
}

/** Asserts that the edit fails with `code` and a message matching `message`, leaving the file byte-for-byte as it was. */
async function assertFailsUnchanged(
  path: string,
  edits: Parameters<typeof editFile>[0]['edits'],
  code: string,
  message: RegExp,
): Promise<void> {
  const before = await readFile(path);
  await assert.rejects(editFile({ path, edits }), (error: MachineError) => {
    assert.equal(error.code, code);
    assert.match(error.message, message);
    return true;
  });
  assert.deepEqual(await readFile(path), before);
}

describe('edit', () => {
  it('replaces a unique match, keeps the mode and shows a diff', async () => {
    const path = await file('one\ntwo\nthree\nfour\n');
    await chmod(path, 0o640);
    const result = await editFile({ path, edits: [{ old_string: 'two', new_string: 'TWO' }] });
    assert.equal(await readFile(path, 'utf8'), 'one\nTWO\nthree\nfour\n');
    assert.equal((await stat(path)).mode & 0o777, 0o640);
    assert.equal(result.replacements, 1);
    assert.equal(result.diff, '@@ -1,4 +1,4 @@\n one\n-two\n+TWO\n three\n four');
  });

  it('applies edits in order, each to the result of the previous one', async () => {
    const path = await file('alpha beta\n');
    const result = await editFile({
      path,
      edits: [
        { old_string: 'alpha', new_string: 'gamma' },
        { old_string: 'gamma beta', new_string: 'delta' },
      ],
    });
    assert.equal(await readFile(path, 'utf8'), 'delta\n');
    assert.equal(result.edits, 2);
  });

  it('writes nothing when a later edit is not found, and names it', async () => {
    const path = await file('keep this\nas it is\n');
    await assertFailsUnchanged(
      path,
      [
        { old_string: 'keep', new_string: 'changed' },
        { old_string: 'missing', new_string: 'x' },
      ],
      'edit_failed',
      /^edit 2 of 2 failed: old_string was not found in .* \(after applying edits 1-1\)\. .*Nothing was written/,
    );
  });

  it('refuses an ambiguous match and suggests more context or replace_all', async () => {
    const path = await file('x = 1\nx = 1\nx = 1\n');
    await assertFailsUnchanged(
      path,
      [{ old_string: 'x = 1', new_string: 'x = 2' }],
      'edit_failed',
      /^edit 1 of 1 failed: old_string matches 3 places .*more surrounding lines.*replace_all: true/,
    );
  });

  it('replaces every match with replace_all', async () => {
    const path = await file('x = 1\nx = 1\nx = 1\n');
    const result = await editFile({ path, edits: [{ old_string: 'x = 1', new_string: 'x = 2', replace_all: true }] });
    assert.equal(await readFile(path, 'utf8'), 'x = 2\nx = 2\nx = 2\n');
    assert.equal(result.replacements, 3);
  });

  it('refuses an empty old_string', async () => {
    await assertFailsUnchanged(await file('text'), [{ old_string: '', new_string: 'x' }], 'edit_failed', /old_string is empty/);
  });

  it('refuses an edit that changes nothing', async () => {
    await assertFailsUnchanged(await file('text'), [{ old_string: 'text', new_string: 'text' }], 'edit_failed', /identical/);
  });

  it('refuses an empty list of edits', async () => {
    await assert.rejects(editFile({ path: await file('text'), edits: [] }), { code: 'invalid_input' });
  });

  it('matches LF old_string in a CRLF file and keeps its CRLF line endings', async () => {
    const path = await file('first\r\nsecond\r\nthird\r\n');
    await editFile({ path, edits: [{ old_string: 'first\nsecond\n', new_string: 'one\ntwo\nextra\n' }] });
    assert.equal(await readFile(path, 'utf8'), 'one\r\ntwo\r\nextra\r\nthird\r\n');
    await editFile({ path, edits: [{ old_string: 'third', new_string: 'third\nfourth' }] });
    assert.equal(await readFile(path, 'utf8'), 'one\r\ntwo\r\nextra\r\nthird\r\nfourth\r\n');
  });

  it('matches exactly in a file with mixed line endings', async () => {
    const path = await file('lf\ncrlf\r\n');
    await editFile({ path, edits: [{ old_string: 'lf\ncrlf', new_string: 'a\nb' }] });
    assert.equal(await readFile(path, 'utf8'), 'a\nb\r\n');
  });

  it('inserts new_string literally ($& and $1 are not patterns)', async () => {
    const path = await file('price: X\n');
    await editFile({ path, edits: [{ old_string: 'X', new_string: '$& $1 $$' }] });
    assert.equal(await readFile(path, 'utf8'), 'price: $& $1 $$\n');
  });

  it('keeps a byte-order mark', async () => {
    const path = await file('\uFEFFhello\n');
    await editFile({ path, edits: [{ old_string: 'hello', new_string: 'bye' }] });
    assert.deepEqual(await readFile(path), Buffer.from('\uFEFFbye\n'));
  });

  it('edits the target of a symbolic link', async () => {
    const target = await file('linked\n');
    const link = join(dir, 'edit-link.txt');
    await symlink(target, link);
    const result = await editFile({ path: link, edits: [{ old_string: 'linked', new_string: 'edited' }] });
    assert.equal(result.path, target);
    assert.equal(await readFile(target, 'utf8'), 'edited\n');
  });

  it('refuses a binary file', async () => {
    await assertFailsUnchanged(
      await file(Buffer.from([0x61, 0, 0x62])),
      [{ old_string: 'a', new_string: 'b' }],
      'not_text',
      /not a UTF-8 text file/,
    );
  });

  it('says a missing file is not found and suggests write', async () => {
    await assert.rejects(
      editFile({ path: join(dir, 'absent.txt'), edits: [{ old_string: 'a', new_string: 'b' }] }),
      (error: MachineError) => {
        assert.equal(error.code, 'not_found');
        assert.match(error.message, /no such file\. Use write to create it/);
        return true;
      },
    );
  });
});

/** The edits applied as the product spec (persona-mcp-workspace.md) says, in memory: each to the result of the ones before. */
function editedInMemory(text: string, edits: Array<{ old_string: string; new_string: string }>): string {
  return edits.reduce((current, edit) => current.split(edit.old_string).join(edit.new_string), text);
}

describe('edit: files of many buffers, streamed', () => {
  // About 5 buffers of numbered lines, with a two-byte character here and there.
  const big = Array.from({ length: 300_000 }, (_, i) => `line ${i + 1} ${i % 7 === 0 ? 'é' : 'e'}\n`).join('');
  const boundary = (n: number): number =>
    Buffer.from(big)
      .subarray(0, n * SCAN_BUFFER_BYTES)
      .toString('utf8').length;

  it('matches across buffer boundaries, applies edits in order, and shows the same diff as a whole-file one', async () => {
    const path = await file(big);
    // Text that straddles the end of the second and of the third buffer.
    const across2 = big.slice(boundary(2) - 10, boundary(2) + 10);
    const across3 = big.slice(boundary(3) - 5, boundary(3) + 20);
    const edits = [
      { old_string: across2, new_string: 'FIRST\nEDIT' },
      { old_string: 'FIRST\nEDIT', new_string: 'SECOND\nEDIT\nTOO' },
      { old_string: across3, new_string: '' },
    ];
    const result = await editFile({ path, edits });
    const expected = editedInMemory(big, edits);
    assert.equal(await readFile(path, 'utf8'), expected);
    assert.equal(result.replacements, 3);
    // Far apart: the diff of the start and of the end of the change, with the lines between left out.
    const [head, gap, tail] = result.diff.split(/\n(\.\.\. lines .*)\n/);
    assert.equal(`${head}\n${tail}`, unifiedDiff(big, expected));
    const [, from, to] =
      /^\.\.\. lines (\d+)-(\d+) \(numbered as before the edit\) are not shown: more changes may be there$/.exec(gap!) ?? [];
    assert.ok(Number(from) > 156_144 && Number(to) < 230_278 && Number(from) < Number(to), gap);
  });

  it('replaces every match across the file with replace_all; a diff of many changes says where it stops', async () => {
    const path = await file(big);
    const result = await editFile({ path, edits: [{ old_string: 'é', new_string: 'E', replace_all: true }] });
    assert.equal(await readFile(path, 'utf8'), big.split('é').join('E'));
    assert.equal(result.replacements, big.split('é').length - 1);
    const start = big.split('\n').slice(0, 100).join('\n');
    assert.deepEqual(result.diff.split('\n').slice(1, 20), unifiedDiff(start, start.split('é').join('E')).split('\n').slice(1, 20));
    assert.ok(result.diff.split('\n').length <= 81);
  });

  it('finds two matches in different buffers ambiguous, and a later edit not found, writing nothing and leaving no temp file', async () => {
    const path = await file(`${big}line 1 é\n`);
    await assertFailsUnchanged(
      path,
      [
        { old_string: 'line 1 é\n', new_string: 'x' },
        { old_string: 'line 299999 e\n', new_string: 'y' },
      ],
      'edit_failed',
      /^edit 1 of 2 failed: old_string matches 2 places/,
    );
    await assertFailsUnchanged(
      path,
      [
        { old_string: 'line 299999 e\n', new_string: 'y' },
        { old_string: 'line 299999 e\n', new_string: 'z' },
      ],
      'edit_failed',
      /^edit 2 of 2 failed: old_string was not found .*\(after applying edits 1-1\)/,
    );
    assert.deepEqual(
      (await readdir(dir)).filter((name) => name.endsWith('.tmp')),
      [],
    );
  });

  it('refuses a file that stops being text after its first buffers, writing nothing', async () => {
    const path = await file(Buffer.concat([Buffer.from(big), Buffer.from([0xc3])]));
    await assertFailsUnchanged(path, [{ old_string: 'line 1 é', new_string: 'x' }], 'not_text', /not a UTF-8 text file/);
    await writeFile(path, `${big}\u0000`);
    await assertFailsUnchanged(path, [{ old_string: 'line 1 é', new_string: 'x' }], 'not_text', /not a UTF-8 text file/);
  });

  it('takes LF as CRLF in a large CRLF file, and as LF where one LF stands alone far down', async () => {
    const crlf = big.replaceAll('\n', '\r\n');
    const path = await file(crlf);
    await editFile({ path, edits: [{ old_string: 'line 299998 e\nline 299999 e\n', new_string: 'a\nb\n' }] });
    assert.equal(await readFile(path, 'utf8'), crlf.replace('line 299998 e\r\nline 299999 e\r\n', 'a\r\nb\r\n'));
    const mixed = `${crlf}lone\n`;
    await writeFile(path, mixed);
    await assertFailsUnchanged(path, [{ old_string: 'line 2 e\nline 3 e', new_string: 'x' }], 'edit_failed', /was not found/);
  });
});
