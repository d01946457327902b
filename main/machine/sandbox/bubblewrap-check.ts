import { execFile } from 'node:child_process';
import { constants } from 'node:fs';
import { access, open, stat } from 'node:fs/promises';
import { delimiter, isAbsolute, join } from 'node:path';
import { PACKAGE_ROOT } from '../../version.js';
import { trialRun } from './trial-run.js';

/** Cached per PATH: the answer holds while the app runs (installing bubblewrap needs a restart). */
const checks = new Map<string, Promise<string | undefined>>();

/**
 * Why this Linux machine cannot run the bash sandbox, or nothing when it can: a bubblewrap that
 * starts a namespaced command.
 */
export function bubblewrapProblem(env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  const key = env.PATH ?? '';
  let check = checks.get(key);
  if (!check) checks.set(key, (check = tryBubblewrap(env)));
  return check;
}

async function tryBubblewrap(env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const failure = await trialRun('bwrap', ['--ro-bind', '/', '/', '--unshare-pid', '--unshare-net', '--', 'true'], env);
  switch (failure?.kind) {
    case undefined:
      return undefined;
    case 'missing':
      return 'bubblewrap (bwrap) is not installed on this machine: install the bubblewrap package.';
    case 'unstartable':
      return `bubblewrap (bwrap) could not be started: ${failure.why}.`;
    case 'failed':
      return `bubblewrap (bwrap) cannot make a sandbox here (${failure.why}); user namespaces may be turned off (sysctl kernel.unprivileged_userns_clone).`;
  }
}

/**
 * How commands are entered into a running sandbox here: the launcher built with the package
 * (dist/native/sandbox-enter, from sandbox-enter.c: one static exec), else util-linux's nsenter and
 * setpriv (three execs with /bin/sh joining the control group); without either, each command gets
 * a bubblewrap of its own, slower but as closed.
 */
export type EnterMethod = { readonly kind: 'launcher'; readonly path: string } | { readonly kind: 'nsenter' };

/** Where `npm run build` puts the launcher (scripts/build-launcher.ts); absent where no C compiler was found. */
export const SANDBOX_LAUNCHER = join(PACKAGE_ROOT, 'dist', 'native', 'sandbox-enter');

const enterChecks = new Map<string, Promise<EnterMethod | undefined>>();

/** How commands are entered into a running sandbox on this machine (see EnterMethod), tried once per PATH and launcher. */
export function howToEnter(env: NodeJS.ProcessEnv = process.env, launcher = SANDBOX_LAUNCHER): Promise<EnterMethod | undefined> {
  const key = `${launcher}\0${env.PATH ?? ''}`;
  let check = enterChecks.get(key);
  if (!check) enterChecks.set(key, (check = findEnterMethod(env, launcher)));
  return check;
}

async function findEnterMethod(env: NodeJS.ProcessEnv, launcher: string): Promise<EnterMethod | undefined> {
  if ((await trialRun(launcher, ['--version'], env)) === undefined) return { kind: 'launcher', path: launcher };
  const found = await Promise.all(
    ['nsenter', 'setpriv'].map(async (program) => (await trialRun(program, ['--version'], env)) === undefined),
  );
  return found.every(Boolean) ? { kind: 'nsenter' } : undefined;
}

/** How sandboxed commands start here, in words, for the server's log. */
export async function enterMethodWords(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const method = await howToEnter(env);
  if (method?.kind === 'launcher') return `entered into their place's sandbox by the launcher ${method.path}`;
  if (method)
    return `entered into their place's sandbox with nsenter and setpriv (the launcher ${SANDBOX_LAUNCHER} is not there or does not run: it is built where a C compiler is found)`;
  return 'each run in a bubblewrap of its own (neither the launcher nor nsenter and setpriv are here)';
}

const sizeChecks = new Map<string, Promise<boolean>>();

/** Whether this bubblewrap can size the temp folders it makes (`--size`, bubblewrap 0.6 and later): its help lists it. */
export function bubblewrapSizesTmpfs(env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  const key = env.PATH ?? '';
  let check = sizeChecks.get(key);
  if (!check) sizeChecks.set(key, (check = sizesTmpfs(env)));
  return check;
}

/** The option's line in bubblewrap's help. */
const SIZE_OPTION = /^\s*--size\b/m;
/** bubblewrap is about 70 KiB; a larger file is not read, but run. */
const MAX_PROGRAM_BYTES = 4 * 1024 * 1024;

/**
 * bubblewrap's help text is compiled into the program, so it is first looked for in the file that
 * PATH names: running a program at start costs this process a fork of itself (milliseconds of its
 * one thread). A file without it (a wrapper, a script, an older bubblewrap) is run with --help.
 */
async function sizesTmpfs(env: NodeJS.ProcessEnv): Promise<boolean> {
  const file = await programOnPath('bwrap', env.PATH);
  if (file) {
    try {
      const handle = await open(file, 'r');
      try {
        const { size } = await handle.stat();
        if (size <= MAX_PROGRAM_BYTES && SIZE_OPTION.test((await handle.readFile()).toString('latin1'))) return true;
      } finally {
        await handle.close();
      }
    } catch {
      // Unreadable (execute-only): its help says.
    }
  }
  return new Promise((resolve) => execFile('bwrap', ['--help'], { env }, (_error, stdout) => resolve(SIZE_OPTION.test(String(stdout)))));
}

/**
 * The file a program of this name runs from, as `execFile` finds it on `path`; none when no entry
 * has it, or when `path` has an entry that is not absolute (one that depends on the folder it runs in).
 */
async function programOnPath(name: string, path: string | undefined): Promise<string | undefined> {
  const dirs = path?.split(delimiter) ?? [];
  if (!dirs.every(isAbsolute)) return undefined;
  for (const dir of dirs) {
    const file = join(dir, name);
    try {
      await access(file, constants.X_OK);
      if ((await stat(file)).isFile()) return file;
    } catch {
      // Not here: the next entry.
    }
  }
  return undefined;
}
