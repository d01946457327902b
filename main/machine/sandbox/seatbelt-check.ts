import { MACOS_SYSTEM_DIRS, seatbeltProfile } from './seatbelt-profile.js';
import { pathPlan } from './path-plan.js';
import { SANDBOX_EXEC } from './seatbelt-launch.js';
import { trialRun } from './trial-run.js';

/** Cached per program: the answer holds while the app runs. */
const checks = new Map<string, Promise<string | undefined>>();

/**
 * The profile the check runs: a strict place's, with every kind of rule the real ones have (system
 * folders, hidden and sealed paths, a private temp folder, a proxy port), so that a macOS whose
 * Seatbelt no longer takes one of them, or whose programs need more than it grants to start, is
 * found before any agent's command runs.
 */
export function seatbeltCheckProfile(): string {
  const root = '/private/var/empty/persona-check';
  const plan = pathPlan({
    policy: { kind: 'strict', folders: [] },
    placeLabel: 'the sandbox check',
    workspaceRoot: `${root}/workspace`,
    placeFolder: `${root}/workspace/Crew/check`,
    tempDirs: ['/private/tmp'],
    appPaths: [`${root}/state`],
    systemDirs: MACOS_SYSTEM_DIRS,
    skillsDir: `${root}/workspace/.agents/skills`,
  });
  return seatbeltProfile({ plan, proxyPort: 9, privateTemp: `${root}/state/sandbox-tmp/check` });
}

/**
 * Why this Mac cannot run the bash sandbox, or nothing when it can: `sandbox-exec` runs
 * `/usr/bin/true` under a profile that allows everything, then under the shape of the real ones.
 */
export function seatbeltProblem(program: string = SANDBOX_EXEC): Promise<string | undefined> {
  let check = checks.get(program);
  if (!check) checks.set(program, (check = trySeatbelt(program)));
  return check;
}

async function trySeatbelt(program: string): Promise<string | undefined> {
  const plain = await failure(program, '(version 1)(allow default)');
  if (plain) return `macOS's sandbox (${program}) does not run here: ${plain}.`;
  const shaped = await failure(program, seatbeltCheckProfile());
  if (shaped) return `macOS's sandbox (${program}) refuses this app's sandbox profile, or a program cannot start under it: ${shaped}.`;
  return undefined;
}

/** What went wrong running `/usr/bin/true` under `profile`, or nothing. */
async function failure(program: string, profile: string): Promise<string | undefined> {
  const failed = await trialRun(program, ['-p', profile, '/usr/bin/true']);
  switch (failed?.kind) {
    case undefined:
      return undefined;
    case 'missing':
      return `${program} is not on this machine`;
    case 'unstartable':
      return `it could not be started (${failed.why})`;
    case 'failed':
      return failed.why;
  }
}
