/**
 * What lets the whole run skip a type check and lint that passed before over the very same files:
 * a key of the repository's files (each path and content, package-lock.json among them, so the
 * installed packages too) and of the checkers' versions, kept once the check passed in a file of the
 * cache folder outside the clone, where a fresh clone of the same commit finds it. Any change
 * anywhere gives another key, and the whole check runs.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { repositoryFiles } from './repository-files.js';

/** The packages whose versions decide the verdict besides the files. */
const CHECKERS = ['typescript', 'eslint', 'typescript-eslint'];
/** Keys kept: the newest first, up to this many (other branches, other commits). */
const KEPT = 200;

/** The key of `root`'s files as they are now (the same for a clone of them elsewhere). */
export async function checkKey(root: string): Promise<string> {
  const hash = createHash('sha256');
  for (const name of CHECKERS) {
    const manifest = await readFile(join(root, 'node_modules', name, 'package.json'), 'utf8').catch(() => '{}');
    hash.update(`${name}@${(JSON.parse(manifest) as { version?: string }).version ?? 'absent'}\0`);
  }
  for (const file of await repositoryFiles(root)) {
    const text = await readFile(join(root, file)).catch(() => undefined);
    hash.update(`${file}\0${text === undefined ? 'absent' : createHash('sha256').update(text).digest('hex')}\0`);
  }
  return hash.digest('hex').slice(0, 32);
}

/**
 * Runs `check` over `root` unless it passed before over the very same files; whether it passed (a
 * skipped one did). Kept only when it passed and no file changed while it ran, so that what the key
 * names is what was checked.
 */
export async function cachedCheck(
  root: string,
  cacheFile: string,
  check: () => Promise<boolean>,
): Promise<{ passed: boolean; skipped: boolean }> {
  const key = await checkKey(root);
  if (await passedBefore(cacheFile, key)) return { passed: true, skipped: true };
  const passed = await check();
  if (passed && key === (await checkKey(root))) await rememberPassed(cacheFile, key);
  return { passed, skipped: false };
}

async function keys(cacheFile: string): Promise<string[]> {
  return (await readFile(cacheFile, 'utf8').catch(() => '')).split('\n').filter(Boolean);
}

/** Whether a check with this key passed before. */
async function passedBefore(cacheFile: string, key: string): Promise<boolean> {
  return (await keys(cacheFile)).includes(key);
}

/** Keeps the key of a check that passed; moved in whole, so a reader never sees half the file. */
async function rememberPassed(cacheFile: string, key: string): Promise<void> {
  const kept = [key, ...(await keys(cacheFile)).filter((other) => other !== key)].slice(0, KEPT);
  await mkdir(dirname(cacheFile), { recursive: true });
  const temp = `${cacheFile}.${process.pid}`;
  await writeFile(temp, `${kept.join('\n')}\n`);
  await rename(temp, cacheFile);
}
