import { execFile } from 'node:child_process';
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

const enterChecks = new Map<string, Promise<boolean>>();

/**
 * Whether commands can be entered into a running sandbox here (util-linux's nsenter and setpriv);
 * without them each command gets a bubblewrap of its own, slower but as closed.
 */
export function canEnterSandboxes(env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  const key = env.PATH ?? '';
  let check = enterChecks.get(key);
  if (!check)
    enterChecks.set(
      key,
      (check = Promise.all(['nsenter', 'setpriv'].map(async (program) => (await trialRun(program, ['--version'], env)) === undefined)).then(
        (all) => all.every(Boolean),
      )),
    );
  return check;
}

const sizeChecks = new Map<string, Promise<boolean>>();

/** Whether this bubblewrap can size the temp folders it makes (`--size`, bubblewrap 0.6 and later): its help lists it. */
export function bubblewrapSizesTmpfs(env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  const key = env.PATH ?? '';
  let check = sizeChecks.get(key);
  if (!check) {
    check = new Promise((resolve) =>
      execFile('bwrap', ['--help'], { env }, (_error, stdout) => resolve(/^\s*--size\b/m.test(String(stdout)))),
    );
    sizeChecks.set(key, check);
  }
  return check;
}
