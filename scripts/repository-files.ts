/**
 * The files of a repository as its checks see them: what git lists (tracked, and untracked that
 * .gitignore does not exclude), or, in a copy that is not a clone (or with no git), every file
 * outside node_modules and .git. Paths relative to the root, sorted; a tracked file deleted in the
 * work tree is still named (a reader finds it gone).
 */
import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

export async function repositoryFiles(root: string): Promise<string[]> {
  const listed = await promisify(execFile)('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    maxBuffer: 64 * 1024 * 1024,
  }).then(
    ({ stdout }) => stdout.split('\0').filter(Boolean),
    () => walk(root, ''),
  );
  return [...new Set(listed)].sort();
}

async function walk(root: string, dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(join(root, dir), { withFileTypes: true })) {
    const path = dir ? `${dir}/${entry.name}` : entry.name;
    if (entry.isFile()) found.push(path);
    else if (entry.isDirectory() && entry.name !== 'node_modules' && entry.name !== '.git') found.push(...(await walk(root, path)));
  }
  return found;
}
