import { bubblewrapProblem } from './bubblewrap-check.js';
import { seatbeltProblem } from './seatbelt-check.js';

/** What enforces the place and strict policies for `bash`: bubblewrap on Linux, Seatbelt on macOS. */
export type Enforcer = 'bubblewrap' | 'seatbelt';

/** The one place where the platform picks the sandbox; none on other systems (Windows). */
export function enforcerFor(platform: NodeJS.Platform = process.platform): Enforcer | undefined {
  if (platform === 'linux') return 'bubblewrap';
  if (platform === 'darwin') return 'seatbelt';
  return undefined;
}

/**
 * Why this machine cannot run the bash sandbox, or nothing when it can: the platform's enforcer,
 * tried once (bubblewrap-check.ts, seatbelt-check.ts). Places with place or strict are refused
 * with this reason, never run unsandboxed.
 */
export function sandboxProblem(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): Promise<string | undefined> {
  switch (enforcerFor(platform)) {
    case 'bubblewrap':
      return bubblewrapProblem(env);
    case 'seatbelt':
      return seatbeltProblem();
    case undefined:
      return Promise.resolve(
        `This machine (${platform}) has no command sandbox in this app: only Linux (bubblewrap) and macOS (Seatbelt) are supported.`,
      );
  }
}
