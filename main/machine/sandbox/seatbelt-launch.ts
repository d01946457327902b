import { createHash } from 'node:crypto';
import { accessSync, constants, realpathSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import type { Launch } from '../command-runner.js';
import { proxyEnv } from './network-bridge.js';
import { decide, type PathPlan } from './path-plan.js';
import { seatbeltProfile } from './seatbelt-profile.js';

/** Absolute: the sandbox is never looked up on PATH, which the environment could change. */
export const SANDBOX_EXEC = '/usr/bin/sandbox-exec';

/** The folder of the state dir that holds strict places' private temp folders on macOS. */
export const PRIVATE_TEMP_FOLDER = 'sandbox-tmp';

/**
 * Strict's temp folder of its own on macOS, one per place: Seatbelt cannot mount an empty folder
 * over the system's, so the place gets a folder inside the app's state dir, which is sealed from
 * every other place (and from the file tools, as strict's temp folder is on Linux). Named by a
 * digest of the place's folder: short, and the same for every call of the place.
 */
export function privateTempOf(stateDir: string, placeFolder: string): string {
  return join(stateDir, PRIVATE_TEMP_FOLDER, createHash('sha256').update(placeFolder).digest('hex').slice(0, 16));
}

/** Every Mac has it, in a system folder. */
const SYSTEM_BASH = '/bin/bash';

/**
 * The bash a sandboxed command runs with, by absolute path: the first on `PATH` (as the runner's
 * own, unsandboxed, would be) whose real path the plan lets a command read, else the system's.
 * Given to sandbox-exec as a bare name, its PATH search would stop with an error at the first
 * folder Seatbelt denies (a version manager's folder in the home folder, under strict).
 */
export function sandboxBash(plan: PathPlan, path: string | undefined): string {
  for (const dir of (path ?? '').split(':')) {
    if (!isAbsolute(dir)) continue;
    const candidate = join(dir, 'bash');
    try {
      accessSync(candidate, constants.X_OK);
      if (decide(plan, realpathSync(candidate), 'read').allowed) return candidate;
    } catch {
      // Not there, or not a program: the next folder.
    }
  }
  return SYSTEM_BASH;
}

export interface SeatbeltLaunchInput {
  readonly plan: PathPlan;
  readonly command: string;
  /** Absolute (sandboxBash). */
  readonly bash: string;
  /** The clean environment (sandboxEnv): no secrets, no keychain addresses. */
  readonly env: Readonly<Record<string, string>>;
  /** With network: the loopback port of the command's proxy. */
  readonly proxyPort?: number;
  /** The private temp folder (privateTempOf), made already. */
  readonly privateTemp?: string;
  /** The start script's file (start-script.ts), which the environment's BASH_ENV names. */
  readonly startScript?: string;
}

/**
 * `bash -c command` under `sandbox-exec` with the plan's profile, in the place's folder. The
 * environment points programs at the proxy and (strict) at the private temp folder: /tmp itself
 * is the machine's, out of reach under strict.
 */
export function seatbeltLaunch({ plan, command, bash, env, proxyPort, privateTemp, startScript }: SeatbeltLaunchInput): Launch {
  const profile = seatbeltProfile({
    plan,
    ...(proxyPort !== undefined && { proxyPort }),
    ...(privateTemp !== undefined && { privateTemp }),
    ...(startScript !== undefined && { startScript }),
  });
  return {
    file: SANDBOX_EXEC,
    args: ['-p', profile, bash, '-c', command],
    env: {
      ...env,
      ...(proxyPort !== undefined && proxyEnv(proxyPort)),
      ...(privateTemp !== undefined && { TMPDIR: privateTemp, TMP: privateTemp, TEMP: privateTemp }),
    },
    cwd: plan.placeFolder,
  };
}
