import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { checkFormat } from '../scripts/format-check.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** A git repository with Prettier's settings and ignore files as this one has them. */
async function repository(dir: string, files: Record<string, string>): Promise<void> {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  execFileSync('git', ['init', '-q'], { cwd: dir });
  execFileSync('git', ['add', '-A'], { cwd: dir });
}

describe('the format check', () => {
  let dir: string;
  let cache: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pw-format-'));
    cache = join(dir, 'cache', 'format-checked.txt');
    await repository(join(dir, 'one'), {
      '.prettierrc.json': '{ "singleQuote": true }\n',
      '.prettierignore': '*.md\n*.json\n',
      '.gitignore': 'dist/\n',
      'src/good.ts': "export const a = 'x';\n",
      'src/bad.ts': 'export const b = "y"\n',
      'dist/built.js': 'var c="z"\n',
      'notes.md': 'a   *b*\n',
      run: '#!/bin/sh\necho  hi\n',
    });
    await writeFile(join(dir, 'one', 'src', 'new.ts'), 'export const d   = 1;\n');
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('names the files prettier --check . names: tracked or new, not ignored, with a parser', async () => {
    const result = await checkFormat(join(dir, 'one'), cache);
    assert.deepEqual(result, { checked: 3, parsed: 3, unformatted: ['src/bad.ts', 'src/new.ts'] });
    // What Prettier's own command says of the same folder.
    const prettier = spawnSync(join(ROOT, 'node_modules', '.bin', 'prettier'), ['--check', '--no-color', '.'], {
      cwd: join(dir, 'one'),
      encoding: 'utf8',
    });
    assert.deepEqual(
      [...`${prettier.stdout}${prettier.stderr}`.matchAll(/^\[warn\] (\S+)$/gm)].map((m) => m[1]).sort(),
      result.unformatted,
    );
  });

  it('does not parse again what it found formatted, in this clone or another elsewhere, and a change is checked again', async () => {
    await writeFile(join(dir, 'one', 'src', 'new.ts'), 'export const d = 1;\n');
    assert.deepEqual(await checkFormat(join(dir, 'one'), cache), { checked: 3, parsed: 2, unformatted: ['src/bad.ts'] });
    await cp(join(dir, 'one'), join(dir, 'two'), { recursive: true });
    assert.deepEqual(await checkFormat(join(dir, 'two'), cache), { checked: 3, parsed: 1, unformatted: ['src/bad.ts'] });
    await writeFile(join(dir, 'two', 'src', 'good.ts'), 'export const a = "x";\n');
    assert.deepEqual(await checkFormat(join(dir, 'two'), cache), { checked: 3, parsed: 2, unformatted: ['src/bad.ts', 'src/good.ts'] });
  });

  it('checks the same files in a copy that is not a git clone', async () => {
    await cp(join(dir, 'one'), join(dir, 'plain'), { recursive: true, filter: (path) => !path.endsWith('/.git') });
    await mkdir(join(dir, 'plain', 'node_modules', 'dep'), { recursive: true });
    await writeFile(join(dir, 'plain', 'node_modules', 'dep', 'index.js'), 'var e="w"\n');
    assert.deepEqual(await checkFormat(join(dir, 'plain'), cache), { checked: 3, parsed: 1, unformatted: ['src/bad.ts'] });
  });
});
