import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmod, chown, lstat, mkdir, mkdtemp, open, readFile, readdir, rm, stat, symlink, writeFile as writeRaw } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { builtUrl } from '../../test/support/built.js';
import type { MachineError } from './errors.js';
import { writeFile } from './write.js';

const run = promisify(execFile);

let dir: string;

/** writeFile's error as an unprivileged user (root may write anything, so as root: in a child as nobody). */
async function writeWithoutPrivileges(path: string, content: string): Promise<{ code: string; message: string }> {
  if (process.getuid?.() !== 0) {
    const error = await writeFile({ path, content }).then(
      () => assert.fail('write succeeded'),
      (e: MachineError) => e,
    );
    return { code: error.code, message: error.message };
  }
  const script = `import(${JSON.stringify(builtUrl(new URL('./write.ts', import.meta.url)))})
    .then((m) => m.writeFile({ path: ${JSON.stringify(path)}, content: ${JSON.stringify(content)} }))
    .then(() => console.log('{}'), (e) => console.log(JSON.stringify({ code: e.code, message: e.message })))`;
  const { stdout } = await run('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, '-e', script]);
  return JSON.parse(stdout) as { code: string; message: string };
}

describe('write', () => {
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'machine-write-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  it('writes text larger than its encoding piece byte for byte as UTF-8, no character split', async () => {
    const path = join(dir, 'large.txt');
    // A four-byte character across the first piece's 1 MiB end, two lone surrogates (written as
    // U+FFFD, as Buffer.from does), and a second piece ending in the middle of more text.
    const text = `${'a'.repeat(1024 * 1024 - 2)}\u{1F600}\uD800x\uDC00${'é'.repeat(700_000)}`;
    const result = await writeFile({ path, content: text });
    const expected = Buffer.from(text, 'utf8');
    assert.equal(result.bytes, expected.length);
    assert.ok((await readFile(path)).equals(expected));
  });

  it('creates a file and its missing parent folders', async () => {
    const path = join(dir, 'a', 'b', 'c', 'new.txt');
    const result = await writeFile({ path, content: 'héllo\n' });
    assert.deepEqual(result, { path, bytes: 7, created: true });
    assert.equal(await readFile(path, 'utf8'), 'héllo\n');
  });

  it('overwrites an existing file and keeps its mode', async () => {
    const path = join(dir, 'script.sh');
    await writeRaw(path, 'old');
    await chmod(path, 0o751);
    const result = await writeFile({ path, content: '#!/bin/sh\necho new\n' });
    assert.equal(result.created, false);
    assert.equal(await readFile(path, 'utf8'), '#!/bin/sh\necho new\n');
    assert.equal((await stat(path)).mode & 0o777, 0o751);
  });

  it('replaces the file atomically: a reader of the old file keeps seeing all of it, and no temp file is left', async () => {
    const path = join(dir, 'atomic.txt');
    await writeRaw(path, 'old content');
    const reader = await open(path, 'r');
    await writeFile({ path, content: 'new content that is longer' });
    const seen = Buffer.alloc(64);
    const { bytesRead } = await reader.read(seen, 0, 64, 0);
    await reader.close();
    assert.equal(seen.subarray(0, bytesRead).toString(), 'old content');
    assert.equal(await readFile(path, 'utf8'), 'new content that is longer');
    assert.deepEqual(
      (await readdir(dir)).filter((name) => name.includes('atomic')),
      ['atomic.txt'],
    );
  });

  it('writes base64 content as bytes', async () => {
    const bytes = Buffer.from([0, 255, 1, 254, 10, 13]);
    const path = join(dir, 'bytes.bin');
    const result = await writeFile({ path, content: bytes.toString('base64'), encoding: 'base64' });
    assert.equal(result.bytes, 6);
    assert.deepEqual(await readFile(path), bytes);
  });

  it('refuses content that is not base64 and writes nothing', async () => {
    const path = join(dir, 'bad.bin');
    await assert.rejects(writeFile({ path, content: 'not*base64!', encoding: 'base64' }), (error: MachineError) => {
      assert.equal(error.code, 'invalid_input');
      assert.match(error.message, /not valid base64/);
      return true;
    });
    await assert.rejects(stat(path), { code: 'ENOENT' });
  });

  it('writes through a symbolic link to its target, keeping the link', async () => {
    const target = join(dir, 'target.txt');
    const link = join(dir, 'link.txt');
    await writeRaw(target, 'before');
    await symlink(target, link);
    const result = await writeFile({ path: link, content: 'after' });
    assert.equal(result.path, target);
    assert.ok((await lstat(link)).isSymbolicLink());
    assert.equal(await readFile(target, 'utf8'), 'after');
  });

  it('resolves a relative path against the process cwd', async () => {
    const path = join(dir, 'relative.txt');
    const result = await writeFile({ path: relative(process.cwd(), path), content: 'x' });
    assert.equal(result.path, path);
    assert.equal(await readFile(path, 'utf8'), 'x');
  });

  it('refuses to write over a directory', async () => {
    const sub = join(dir, 'folder');
    await mkdir(sub);
    await assert.rejects(writeFile({ path: sub, content: 'x' }), (error: MachineError) => {
      assert.equal(error.code, 'is_directory');
      assert.match(error.message, /is a directory/);
      return true;
    });
  });

  it('refuses to replace a read-only file even where the folder is writable', async () => {
    const shared = join(dir, 'shared');
    await mkdir(shared);
    await chmod(dir, 0o755);
    await chmod(shared, 0o777);
    const path = join(shared, 'readonly.txt');
    await writeRaw(path, 'keep me');
    await chmod(path, 0o444);
    if (process.getuid?.() === 0) await chown(path, 65534, 65534);
    const error = await writeWithoutPrivileges(path, 'replaced');
    assert.equal(error.code, 'permission_denied');
    assert.match(error.message, /^Cannot write .*readonly\.txt: permission denied/);
    assert.equal(await readFile(path, 'utf8'), 'keep me');
  });
});
