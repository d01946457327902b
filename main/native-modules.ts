import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { NativeModule, NativeModuleName } from '../common/api/server.js';
import { PACKAGE_ROOT } from './version.js';

/**
 * The optional native modules: npm drops one it cannot build (no compiler, no libsecret headers)
 * and the install goes on. Each is checked by loading it, as the app does when it needs it, and one
 * that does not load is named with what works without it and the one step that brings it back:
 * at install (scripts/check-native-modules.mjs), in the server's start lines and in `status`.
 */
const MODULES: Record<NativeModuleName, { gives: string; without: string; needs: BuildNeed[] }> = {
  keytar: {
    gives: 'logins and secrets in the OS keychain',
    without: 'logins and secrets go to an encrypted file in the state dir instead',
    needs: ['compiler', 'make', 'python3', 'pkg-config', 'libsecret'],
  },
  'node-pty': {
    gives: 'bash with tty: true (a pseudo-terminal)',
    without: 'bash refuses tty: true; commands without it run as before',
    needs: ['compiler', 'make', 'python3'],
  },
};

export const NATIVE_MODULES = Object.keys(MODULES) as NativeModuleName[];

type BuildNeed = 'compiler' | 'make' | 'python3' | 'pkg-config' | 'libsecret';

/** What building a native module needs: how to tell it is there, and its Debian package. */
const BUILD_NEEDS: Record<BuildNeed, { what: string; debian: string; present: (env: NodeJS.ProcessEnv) => Promise<boolean> }> = {
  compiler: {
    what: 'a C++ compiler',
    debian: 'g++',
    present: (env) => runs((env.CXX || 'c++').split(' ').filter(Boolean), ['--version'], env),
  },
  make: { what: 'make', debian: 'make', present: (env) => runs(['make'], ['--version'], env) },
  python3: { what: 'Python 3', debian: 'python3', present: (env) => runs(['python3'], ['--version'], env) },
  'pkg-config': { what: 'pkg-config', debian: 'pkg-config', present: (env) => runs(['pkg-config'], ['--version'], env) },
  libsecret: {
    what: "libsecret's development files",
    debian: 'libsecret-1-dev',
    present: (env) => runs(['pkg-config'], ['--exists', 'libsecret-1'], env),
  },
};

/**
 * Whether a program runs and succeeds. One still running after a few seconds (a version manager's
 * shim on a loaded machine) is there: it is not named as missing, only one that fails.
 */
function runs([file, ...first]: string[], args: string[], env: NodeJS.ProcessEnv): Promise<boolean> {
  if (!file) return Promise.resolve(false);
  return new Promise((resolve) => {
    execFile(file, [...first, ...args], { env, timeout: 5_000 }, (error) => resolve(!error || error.killed === true));
  });
}

export interface CheckOptions {
  /** Loads a module by name; default an import from this install. */
  load?: (name: NativeModuleName) => Promise<unknown>;
  env?: NodeJS.ProcessEnv;
  /** The package's folder, where the step that fixes it runs. */
  packageRoot?: string;
  platform?: NodeJS.Platform;
}

/** Each optional native module: loaded, or why not, what works without it and the one step that fixes it. */
export async function checkNativeModules({
  load = (name) => import(name),
  env = process.env,
  packageRoot = PACKAGE_ROOT,
  platform = process.platform,
}: CheckOptions = {}): Promise<NativeModule[]> {
  // Asked once per check, whichever modules need it: a version manager's shim (pyenv's python3)
  // starts a score of processes each time.
  const presence = new Map<BuildNeed, Promise<boolean>>();
  const present = (need: BuildNeed): Promise<boolean> => {
    let found = presence.get(need);
    if (!found) presence.set(need, (found = BUILD_NEEDS[need].present(env)));
    return found;
  };
  return Promise.all(
    NATIVE_MODULES.map(async (name): Promise<NativeModule> => {
      const { gives, without, needs } = MODULES[name];
      try {
        await load(name);
        return { name, gives, loaded: true };
      } catch (error) {
        const missing = await missingBuildNeeds(needs, present);
        const problem =
          (error as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND'
            ? 'it is not installed (npm leaves it out when it cannot build it)'
            : /\.node\b/.test(firstLine(error))
              ? `its native part was not built (${firstLine(error)})`
              : firstLine(error);
        return { name, gives, loaded: false, problem, without, fix: fixStep(name, missing, packageRoot, platform) };
      }
    }),
  );
}

let checked: Promise<NativeModule[]> | undefined;

/** This process's check, made once: the server's start lines and its answers show the same. */
export function nativeModules(): Promise<NativeModule[]> {
  checked ??= checkNativeModules();
  return checked;
}

async function missingBuildNeeds(needs: BuildNeed[], present: (need: BuildNeed) => Promise<boolean>): Promise<BuildNeed[]> {
  const found = await Promise.all(needs.map(present));
  // Without pkg-config, libsecret cannot be found either way: name pkg-config, and libsecret too.
  return needs.filter((_, i) => !found[i]);
}

/** The one step: install what building it needs (as this system names it), then build it again where it is installed. */
function fixStep(name: NativeModuleName, missing: BuildNeed[], packageRoot: string, platform: NodeJS.Platform): string {
  // The desktop app's modules are built for its Electron when the app is packaged, not by the user.
  if (process.versions.electron) return 'install the desktop app again, from a package built for this system';
  const rebuild = rebuildCommand(name, packageRoot);
  if (missing.length === 0) return `run ${rebuild}`;
  const install =
    platform === 'darwin'
      ? 'xcode-select --install'
      : existsSync('/etc/debian_version')
        ? `sudo apt-get install ${missing.map((need) => BUILD_NEEDS[need].debian).join(' ')}`
        : `install ${missing.map((need) => BUILD_NEEDS[need].what).join(', ')}`;
  return `${install}, then run ${rebuild}`;
}

/**
 * npm removes an optional module it could not build, so "npm rebuild" finds nothing to build: it is
 * installed again, where this package is (a clone keeps its lockfile; an installed package does not).
 */
function rebuildCommand(name: NativeModuleName, packageRoot: string): string {
  const clone = existsSync(join(packageRoot, 'package-lock.json'));
  return clone ? `npm install (in ${packageRoot})` : `npm install --no-save --omit=dev ${name} (in ${packageRoot})`;
}

/** One line per module that did not load: what it gives, why, what happens without it, and the fix. */
export function describeMissing(modules: NativeModule[]): string[] {
  return modules
    .filter((module) => !module.loaded)
    .map(
      (module) =>
        `${module.name} (${module.gives}) is not available: ${module.problem}. Without it ${module.without}. To fix it: ${module.fix}.`,
    );
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0]!.trim() || 'no reason given';
}
