/**
 * The whole run's format check: what `prettier --check .` says, without parsing again a file whose
 * text, options and Prettier version were found formatted before. Prettier's own `--cache` keys its
 * entries by path, so a fresh clone in another folder (each CI run's) found none of them; this one
 * keys them by content (a hash of the three), in the cache folder outside the clone that
 * run-tests.ts names (`format-checked.txt`, one hash a line).
 *
 * The files are those `prettier --check .` finds: every file git lists (tracked, and untracked
 * that .gitignore does not exclude; every file, outside a clone), less what .gitignore and
 * .prettierignore ignore and what Prettier has no parser for. Exits 1 and names each file that is not formatted.
 *
 *   format-check.ts CACHE_FILE
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';
import { repositoryFiles } from './repository-files.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** The hashes kept: this run's, then earlier ones (other branches, other clones) up to this many in all. */
const KEPT = 10_000;

/** The files Prettier checks in `root`, each with the hash of what decides its verdict. */
export async function formatTargets(root: string): Promise<Array<{ file: string; text: string; options: prettier.Options; key: string }>> {
  const ignorePath = ['.gitignore', '.prettierignore'].map((name) => join(root, name));
  const targets = [];
  for (const file of await repositoryFiles(root)) {
    const path = join(root, file);
    const info = await prettier.getFileInfo(path, { ignorePath });
    if (info.ignored || !info.inferredParser) continue;
    // A file listed by git but deleted in the work tree is not there to check.
    const text = await readFile(path, 'utf8').catch(() => undefined);
    if (text === undefined) continue;
    const options = { ...(await prettier.resolveConfig(path, { editorconfig: true })), filepath: path };
    const key = createHash('sha256')
      .update(JSON.stringify([prettier.version, { ...options, filepath: file }, info.inferredParser]))
      .update('\0')
      .update(text)
      .digest('hex')
      .slice(0, 32);
    targets.push({ file, text, options, key });
  }
  return targets;
}

/** Checks `root`'s files, with the verdicts kept in `cacheFile`: the files not formatted, and how many were parsed. */
export async function checkFormat(root: string, cacheFile: string): Promise<{ checked: number; parsed: number; unformatted: string[] }> {
  const known = new Set((await readFile(cacheFile, 'utf8').catch(() => '')).split('\n').filter(Boolean));
  const formatted: string[] = [];
  const unformatted: string[] = [];
  let parsed = 0;
  for (const target of await formatTargets(root)) {
    if (!known.has(target.key)) {
      parsed += 1;
      if (!(await prettier.check(target.text, target.options))) {
        unformatted.push(target.file);
        continue;
      }
    }
    formatted.push(target.key);
  }
  const kept = [...new Set([...formatted, ...known])].slice(0, Math.max(KEPT, formatted.length));
  await mkdir(dirname(cacheFile), { recursive: true });
  const temp = `${cacheFile}.${process.pid}`;
  await writeFile(temp, `${kept.join('\n')}\n`);
  await rename(temp, cacheFile);

  return { checked: formatted.length + unformatted.length, parsed, unformatted };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const cacheFile = process.argv[2];
  if (!cacheFile) throw new Error('Usage: format-check.ts CACHE_FILE');
  const { checked, parsed, unformatted } = await checkFormat(ROOT, cacheFile);
  for (const file of unformatted) console.log(`[warn] ${file}`);
  console.log(
    unformatted.length === 0
      ? `All ${checked} files use Prettier code style (${parsed} parsed, the rest known formatted).`
      : `Code style issues in ${unformatted.length} of ${checked} files: npx prettier --write <file>.`,
  );
  process.exitCode = unformatted.length === 0 ? 0 : 1;
}
