import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { lstat, mkdir, mkdtemp, readdir, readFile, realpath, rm, symlink, writeFile as writeRaw } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { editFile } from './edit.js';
import { MachineError } from './errors.js';
import type { FileMode, FileRules } from './file-target.js';
import { readFile as readTool } from './read.js';
import { writeFile } from './write.js';

const run = promisify(execFile);

/** Rules that refuse everything under `forbidden`, and writes outside `writable`; they record what they were asked. */
class PrefixRules implements FileRules {
  readonly asked: string[] = [];
  constructor(
    private readonly forbidden: string,
    private readonly writable: string,
  ) {}

  checkFile(requested: string, real: string, mode: FileMode): void {
    this.asked.push(`${mode} ${real}`);
    const under = (dir: string) => real === dir || real.startsWith(`${dir}/`);
    if (under(this.forbidden) || (mode === 'write' && !under(this.writable))) {
      throw new MachineError('refused_by_policy', `Refused: cannot ${mode} ${requested} (really ${real})`);
    }
  }
}

describe('the file tools under rules, through descriptors (Linux)', { skip: process.platform !== 'linux' }, () => {
  let top: string;
  let place: string;
  let secret: string;
  let rules: PrefixRules;

  before(async () => {
    top = await realpath(await mkdtemp(join(tmpdir(), 'file-target-')));
    place = join(top, 'place');
    secret = join(top, 'secret');
    await mkdir(place);
    await mkdir(secret);
    await writeRaw(join(secret, 'key'), 'KEY\n');
    await writeRaw(join(place, 'own.txt'), 'own\n');
    await symlink(secret, join(place, 'to-secret'));
    await symlink(join(place, 'own.txt'), join(place, 'to-own'));
    await symlink(join(secret, 'new'), join(place, 'dangling-to-secret'));
    rules = new PrefixRules(secret, place);
  });
  after(() => rm(top, { recursive: true, force: true }));

  const refused = (error: unknown) => error instanceof MachineError && error.code === 'refused_by_policy';

  it('reads and writes through a link to where it points, deciding on the real path', async () => {
    const read = await readTool({ path: join(place, 'to-own') }, rules);
    assert.equal(read.path, join(place, 'own.txt'));
    assert.equal(read.kind === 'text' && read.text, 'own\n');
    const wrote = await writeFile({ path: join(place, 'to-own'), content: 'changed\n' }, rules);
    assert.equal(wrote.path, join(place, 'own.txt'));
    assert.ok((await lstat(join(place, 'to-own'))).isSymbolicLink(), 'the link stays');
    assert.equal(await readFile(join(place, 'own.txt'), 'utf8'), 'changed\n');
  });

  it('refuses a file behind a link in the middle of the path, or at its end, or dangling', async () => {
    await assert.rejects(readTool({ path: join(place, 'to-secret', 'key') }, rules), refused);
    await assert.rejects(
      editFile({ path: join(place, 'to-secret', 'key'), edits: [{ old_string: 'KEY', new_string: 'x' }] }, rules),
      refused,
    );
    await assert.rejects(writeFile({ path: join(place, 'dangling-to-secret'), content: 'x' }, rules), refused);
    await assert.rejects(writeFile({ path: join(place, 'to-secret', 'a', 'b', 'new.txt'), content: 'x' }, rules), refused);
    assert.deepEqual(await readdir(secret), ['key'], 'nothing made there, no temp file');
    assert.equal(await readFile(join(secret, 'key'), 'utf8'), 'KEY\n');
  });

  it('checks each folder it makes before making it, and makes none of a refused write', async () => {
    const outside = join(top, 'outside');
    await assert.rejects(writeFile({ path: join(outside, 'a', 'b.txt'), content: 'x' }, rules), refused);
    await assert.rejects(lstat(outside), { code: 'ENOENT' });
    rules.asked.length = 0;
    await writeFile({ path: join(place, 'n1', 'n2', 'f.txt'), content: 'x' }, rules);
    assert.deepEqual(rules.asked, [
      `write ${join(place, 'n1', 'n2', 'f.txt')}`,
      `write ${join(place, 'n1')}`,
      `write ${join(place, 'n1', 'n2')}`,
    ]);
    assert.equal(await readFile(join(place, 'n1', 'n2', 'f.txt'), 'utf8'), 'x');
  });

  it('says not found for a missing file or folder, after the rules had their say', async () => {
    await assert.rejects(
      readTool({ path: join(place, 'missing', 'x.txt') }, rules),
      (error: unknown) => error instanceof MachineError && error.code === 'not_found',
    );
    await assert.rejects(readTool({ path: join(secret, 'missing', 'x.txt') }, rules), refused);
    await assert.rejects(
      readTool({ path: join(place, 'own.txt', 'x') }, rules),
      (error: unknown) => error instanceof MachineError && /a part of this path is a file/.test(error.message),
    );
  });

  it('refuses a named pipe at once, without waiting for a writer', async () => {
    await run('mkfifo', [join(place, 'pipe')]);
    await assert.rejects(
      readTool({ path: join(place, 'pipe') }, rules),
      (error: unknown) => error instanceof MachineError && error.code === 'not_a_file',
    );
    await assert.rejects(
      writeFile({ path: join(place, 'pipe'), content: 'x' }, rules),
      (error: unknown) => error instanceof MachineError && error.code === 'not_a_file',
    );
  });

  it('refuses a directory', async () => {
    await assert.rejects(
      readTool({ path: place }, rules),
      (error: unknown) => error instanceof MachineError && error.code === 'is_directory',
    );
    await assert.rejects(
      writeFile({ path: place, content: 'x' }, rules),
      (error: unknown) => error instanceof MachineError && error.code === 'is_directory',
    );
  });

  it('keeps no descriptor open, whether it answers or refuses', async () => {
    const before = (await readdir('/proc/self/fd')).length;
    for (let i = 0; i < 20; i += 1) {
      await readTool({ path: join(place, 'to-own') }, rules);
      await writeFile({ path: join(place, 'deep', `f${i}.txt`), content: 'x' }, rules);
      await assert.rejects(readTool({ path: join(place, 'to-secret', 'key') }, rules), refused);
      await assert.rejects(readTool({ path: join(place, 'nope') }, rules));
    }
    assert.equal((await readdir('/proc/self/fd')).length, before);
  });
});
