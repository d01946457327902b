import { lstat, rm, rmdir } from 'node:fs/promises';
import { homedir } from 'node:os';
import { isAbsolute, join, relative } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { CommandFailedError, UsageError } from './cli-args.js';
import { stateDirFrom } from './config.js';
import { DEFAULT_SAVED_OUTPUT_TOTAL_MB, SavedOutputs } from './machine/saved-outputs.js';
import { claimStateDir, ServerRunningError } from './running-server.js';
import { KEYCHAIN_CHECK_ACCOUNT, KEYCHAIN_SERVICE, KeychainSecretStore } from './secrets/keychain-store.js';
import { readChoice, SECRET_STORE_CHOICE_FILE } from './secrets/store-choice-record.js';
import { configDir, type SettingsFile } from './settings-file.js';
import { PRODUCT_NAME } from './version.js';

/**
 * Removes what this app keeps on the machine for this state dir: the entries it made in the OS
 * keychain (its check entry too), the state dir, the settings folder, and the saved bash outputs
 * that no running server uses. Asks on a terminal; elsewhere only with --yes. Refused while a server
 * runs on the state dir: the state dir is claimed as a starting server would, so none starts meanwhile.
 */
export async function uninstallCommand(yes: boolean, settings: SettingsFile, env: NodeJS.ProcessEnv): Promise<number> {
  const stateDir = stateDirFrom(env);
  const settingsDir = configDir(env);
  const service = env.WORKSPACE_KEYCHAIN_SERVICE || KEYCHAIN_SERVICE;
  const outputs = new SavedOutputs({ maxTotalBytes: DEFAULT_SAVED_OUTPUT_TOTAL_MB * 1024 ** 2 });
  const interactive = process.stdin.isTTY && process.stdout.isTTY;
  if (!yes && !interactive)
    throw new UsageError(
      `uninstall removes this app's state, settings and keychain entries: run it on a terminal to confirm, or add --yes.`,
    );
  refuseUnsafe(stateDir);
  const recorded = await readChoice(join(stateDir, SECRET_STORE_CHOICE_FILE)).catch(() => undefined);
  const hadState = await exists(stateDir);
  try {
    await claimStateDir(stateDir);
  } catch (error) {
    if (error instanceof ServerRunningError)
      throw new CommandFailedError(
        `A ${PRODUCT_NAME} server runs on the state dir ${stateDir} (pid ${error.found.pid}): uninstall does not remove what a running server uses. Stop it first, then run uninstall again. Nothing was removed.`,
      );
    throw error;
  }

  const plan = [
    `the entries this app made in the OS keychain (service ${service}), its check entry too`,
    `the state dir ${stateDir} (tokens, sign-ins, connections, audit log${recorded === 'file' ? ', the encrypted secrets' : ''})`,
    `the settings folder ${settingsDir}`,
    `the saved bash outputs in ${outputs.base} that no running server uses`,
  ];
  if (!yes) {
    process.stdout.write(`This removes:\n${plan.map((line) => `  - ${line}\n`).join('')}`);
    const answer = await ask('Remove all of it? [y/N] ');
    if (!/^y(es)?$/i.test(answer.trim())) {
      await rm(join(stateDir, 'control.json'), { force: true });
      process.stdout.write('Nothing was removed.\n');
      return 0;
    }
  }

  const out = (line: string) => process.stdout.write(`${line}\n`);
  // The keychain first: while its entries stay, the state dir that names them stays too.
  try {
    const removed = await new KeychainSecretStore({ service }).deleteAll();
    out(
      removed.length === 0
        ? `No entries of this app in the OS keychain (service ${service}).`
        : `Removed ${removed.length} entries from the OS keychain (service ${service})${removed.includes(KEYCHAIN_CHECK_ACCOUNT) ? ', its check entry among them' : ''}.`,
    );
  } catch (error) {
    const why = (error as Error).message;
    if (recorded === 'keychain') {
      await rm(join(stateDir, 'control.json'), { force: true });
      throw new CommandFailedError(
        `The OS keychain holds this app's logins (recorded in ${join(stateDir, SECRET_STORE_CHOICE_FILE)}) but could not be reached: ${why} Nothing was removed; unlock the keychain and run uninstall again.`,
      );
    }
    // Where the keychain never answered, the app never wrote to it (not even its check entry).
    out(`The OS keychain could not be checked (${why.split('. ')[0]}): entries this app made there, if any, stay (service ${service}).`);
  }
  // Claiming made the state dir if there was none.
  if (hadState) out(await removeFolder(stateDir, 'state dir'));
  else {
    await rm(stateDir, { recursive: true, force: true });
    out(`No state dir at ${stateDir}.`);
  }
  const ownFile = isInside(settingsDir, settings.path);
  out(await removeFolder(settingsDir, 'settings folder'));
  if (settings.found && !ownFile) out(`Left the settings file ${settings.path} that --config names: it is yours.`);
  // Folders of servers that no longer run; a running server's (another state dir's) stays.
  const left = await outputs.sweep();
  const base = await rmdir(outputs.base).then(
    () => 'removed',
    (error: NodeJS.ErrnoException) => error.code,
  );
  if (base === 'removed') out(`Removed the saved bash outputs folder ${outputs.base}.`);
  else if (base === 'ENOENT') out(`No saved bash outputs at ${outputs.base}.`);
  else out(`Left ${outputs.base}: it holds what a running server or another user's files use.`);
  for (const line of left) out(`  ${line}`);
  out(`The program itself stays: remove it with "npm rm -g ${PRODUCT_NAME}", or delete its folder if you run it from a clone.`);
  return 0;
}

const exists = async (path: string): Promise<boolean> => (await lstat(path).catch(() => undefined)) !== undefined;

/** Removes a folder and what is in it (never following a link in it); says what it did. */
async function removeFolder(path: string, what: string): Promise<string> {
  if (!(await exists(path))) return `No ${what} at ${path}.`;
  await rm(path, { recursive: true, force: true });
  return `Removed the ${what} ${path}.`;
}

/** Whether `path` is `folder` or inside it. */
function isInside(folder: string, path: string): boolean {
  const rel = relative(folder, path);
  return rel === '' || (rel !== '..' && !rel.startsWith('../') && !isAbsolute(rel));
}

/** A state dir that holds the home folder or the workspace (a mistaken WORKSPACE_STATE_DIR) is never removed. */
function refuseUnsafe(stateDir: string): void {
  // The workspace is the working directory by now (WORKSPACE_CWD is applied first).
  for (const [path, what] of [
    [homedir(), 'your home folder'],
    [process.cwd(), 'the workspace'],
  ] as const) {
    if (isInside(stateDir, path))
      throw new UsageError(
        `The state dir ${stateDir} holds ${what} (${path}): uninstall removes only a state dir of its own. Nothing was removed.`,
      );
  }
}

async function ask(question: string): Promise<string> {
  const lines = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return await lines.question(question);
  } finally {
    lines.close();
  }
}
