/**
 * Builds the sandbox launcher (main/machine/sandbox/sandbox-enter.c) into dist/native/sandbox-enter
 * with the machine's C compiler, statically linked where its C library allows (an exec then maps
 * no shared libraries: fewer page faults per sandboxed call). `npm run build` runs it; the test
 * build (test-build.ts) runs it when the source is newer than what was built. Linux only; where no
 * C compiler is found it builds nothing and says so, and the server enters sandboxes with
 * util-linux's nsenter and setpriv instead.
 *
 *   node --import tsx scripts/build-launcher.ts
 */
import { execFile } from 'node:child_process';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The source and the program, relative to the package root (live-sandbox.ts finds it there). */
export const LAUNCHER_SOURCE = join('main', 'machine', 'sandbox', 'sandbox-enter.c');
export const LAUNCHER_OUTPUT = join('dist', 'native', 'sandbox-enter');

const FLAGS = ['-O2', '-s', '-Wall', '-Wextra'];

/**
 * Builds the launcher under `root`; with `onlyStale`, only when the source is newer than the
 * program. Returns what happened, in words (nothing built: why).
 */
export async function buildLauncher(root: string, options: { onlyStale?: boolean } = {}): Promise<string> {
  if (process.platform !== 'linux') return `the sandbox launcher is for Linux only (this is ${process.platform})`;
  const from = join(root, LAUNCHER_SOURCE);
  const to = join(root, LAUNCHER_OUTPUT);
  if (options.onlyStale && (await isFresh(from, to))) return 'the sandbox launcher is up to date';
  await mkdir(dirname(to), { recursive: true });
  // Whole or not at all: a server starting meanwhile never runs half a program.
  const temp = `${to}.${process.pid}.tmp`;
  try {
    try {
      await run('cc', [...FLAGS, '-static', '-o', temp, from]);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        await rm(to, { force: true });
        return `no C compiler (cc) here: the sandbox launcher is not built, and sandboxes are entered with nsenter and setpriv`;
      }
      // No static C library (some distributions ship none): linked dynamically, as other programs are.
      await run('cc', [...FLAGS, '-o', temp, from]);
    }
    await rename(temp, to);
    return `built ${LAUNCHER_OUTPUT}`;
  } finally {
    await rm(temp, { force: true });
  }
}

async function isFresh(source: string, output: string): Promise<boolean> {
  const [from, to] = await Promise.all([stat(source), stat(output).catch(() => undefined)]);
  return to !== undefined && to.mtimeMs >= from.mtimeMs;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.stdout.write(`${await buildLauncher(fileURLToPath(new URL('..', import.meta.url)))}\n`);
}
