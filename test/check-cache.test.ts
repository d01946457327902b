import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { cp, mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { cachedCheck, checkKey } from '../scripts/check-cache.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

async function put(dir: string, files: Record<string, string>): Promise<void> {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
}

describe('the type check and lint, not run again over files that passed it', () => {
  let dir: string;
  let repo: string;
  let cache: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pw-check-cache-'));
    repo = join(dir, 'one');
    cache = join(dir, 'cache', 'checked.txt');
    await put(repo, {
      '.gitignore': 'dist/\nnode_modules/\n',
      'src/a.ts': 'export const a = 1;\n',
      'package-lock.json': '{}\n',
      'node_modules/typescript/package.json': '{ "version": "5.0.0" }\n',
      'dist/a.js': 'built\n',
    });
    execFileSync('git', ['init', '-q'], { cwd: repo });
    execFileSync('git', ['add', '-A'], { cwd: repo });
  });
  after(() => rm(dir, { recursive: true, force: true }));

  /** What the key is after `change`, against before it (the change put back after). */
  async function keyChangedBy(change: () => Promise<void>, undo: () => Promise<void>): Promise<boolean> {
    const before = await checkKey(repo);
    await change();
    const changed = (await checkKey(repo)) !== before;
    await undo();
    assert.equal(await checkKey(repo), before, 'the key is back once the change is undone');
    return changed;
  }

  it("keys the files' paths and contents and the checkers' versions, not where the clone is or what git ignores", async () => {
    const a = join(repo, 'src', 'a.ts');
    assert.ok(
      await keyChangedBy(
        () => writeFile(a, 'export const a = 2;\n'),
        () => writeFile(a, 'export const a = 1;\n'),
      ),
      'a content',
    );
    const b = join(repo, 'src', 'b.ts');
    assert.ok(
      await keyChangedBy(
        () => writeFile(b, ''),
        () => rm(b),
      ),
      'a new file git would list',
    );
    const renamed = join(repo, 'src', 'c.ts');
    assert.ok(
      await keyChangedBy(
        () => rename(a, renamed),
        () => rename(renamed, a),
      ),
      'a path',
    );
    const lock = join(repo, 'package-lock.json');
    assert.ok(
      await keyChangedBy(
        () => writeFile(lock, '{ "x": 1 }\n'),
        () => writeFile(lock, '{}\n'),
      ),
      'the lock',
    );
    const ts = join(repo, 'node_modules', 'typescript', 'package.json');
    assert.ok(
      await keyChangedBy(
        () => writeFile(ts, '{ "version": "5.0.1" }\n'),
        () => writeFile(ts, '{ "version": "5.0.0" }\n'),
      ),
      "the checker's version",
    );
    const built = join(repo, 'dist', 'a.js');
    assert.equal(
      await keyChangedBy(
        () => writeFile(built, 'other\n'),
        () => writeFile(built, 'built\n'),
      ),
      false,
      'an ignored file',
    );
    await cp(repo, join(dir, 'elsewhere'), { recursive: true });
    assert.equal(await checkKey(join(dir, 'elsewhere')), await checkKey(repo), 'a clone in another folder');
  });

  it('skips only a check that passed over the same files, and never keeps one that a change overtook', async () => {
    let runs = 0;
    const failing = async () => ((runs += 1), false);
    const passing = async () => ((runs += 1), true);
    assert.deepEqual(await cachedCheck(repo, cache, failing), { passed: false, skipped: false });
    assert.deepEqual(await cachedCheck(repo, cache, failing), { passed: false, skipped: false }, 'a failure is checked again');
    assert.deepEqual(await cachedCheck(repo, cache, passing), { passed: true, skipped: false });
    assert.deepEqual(await cachedCheck(repo, cache, failing), { passed: true, skipped: true }, 'the same files: not run');
    assert.equal(runs, 3);
    await cp(repo, join(dir, 'clone'), { recursive: true });
    assert.deepEqual(await cachedCheck(join(dir, 'clone'), cache, failing), { passed: true, skipped: true }, 'nor in a clone elsewhere');

    const a = join(repo, 'src', 'a.ts');
    await writeFile(a, 'export const a = 3;\n');
    assert.deepEqual(await cachedCheck(repo, cache, failing), { passed: false, skipped: false }, 'a change: run again');
    // A file changed while the check ran: what passed was not what the key named.
    const overtaken = async () => {
      runs += 1;
      await writeFile(a, 'export const a = 4;\n');
      return true;
    };
    await writeFile(a, 'export const a = 5;\n');
    assert.deepEqual(await cachedCheck(repo, cache, overtaken), { passed: true, skipped: false });
    await writeFile(a, 'export const a = 5;\n');
    assert.deepEqual(await cachedCheck(repo, cache, failing), { passed: false, skipped: false }, 'not kept');
  });

  it("check.ts says so and exits 0 where this repository's files passed before", async () => {
    const ownCache = join(dir, 'own', 'checked.txt');
    await put(dirname(ownCache), { 'checked.txt': `${await checkKey(ROOT)}\n` });
    const run = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts', 'check.ts'), ownCache], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    assert.equal(run.status, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /passed before over these very files.*not run again/);
  });
});
