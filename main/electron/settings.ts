import { join, resolve } from 'node:path';
import { environmentWith, readSettingsFile, SETTINGS_FILE_NAME, type FileSettings } from '../settings-file.js';

/**
 * The desktop app's settings: `settings.json` in Electron's userData folder, which is the platform's
 * config folder the CLI reads too (one file for both). Edited by hand.
 */
export interface DesktopSettings {
  /** Whether the agent endpoint opens when the app starts (the control plane always does). */
  startServerAtLaunch: boolean;
}

export const DEFAULT_SETTINGS: DesktopSettings = { startServerAtLaunch: true };

export const SETTINGS_FILE = SETTINGS_FILE_NAME;

export interface LoadedSettings {
  settings: DesktopSettings;
  /** The environment the host reads: the file's settings under the real environment. */
  env: NodeJS.ProcessEnv;
  problem?: string;
}

/**
 * Reads the settings. A missing file means the defaults; a file that cannot be used is left as it
 * is (the app never writes it) and reported, and the defaults apply, so a typo never stops the app.
 */
export function loadSettings(dir: string, env: NodeJS.ProcessEnv = process.env): LoadedSettings {
  let file: FileSettings;
  try {
    file = readSettingsFile(undefined, env, join(dir, SETTINGS_FILE)).settings;
  } catch (error) {
    return { settings: DEFAULT_SETTINGS, env, problem: `${(error as Error).message} Using the defaults until it is fixed.` };
  }
  const startServerAtLaunch = file.startServerAtLaunch as boolean | undefined;
  return {
    settings: { startServerAtLaunch: startServerAtLaunch ?? DEFAULT_SETTINGS.startServerAtLaunch },
    env: environmentWith(file, env),
  };
}

/**
 * The folder a `--user-data-dir=<path>` argument asks for. Electron keeps its userData folder (and
 * with it these settings, the server's state and the single-instance lock) where the app's name
 * says unless told otherwise, so the app reads the switch itself: a second profile, a portable
 * install or a test gets a folder of its own.
 */
export function userDataDirFromArgs(argv: readonly string[], cwd: string = process.cwd()): string | undefined {
  const arg = argv.find((a) => a.startsWith('--user-data-dir='));
  const value = arg?.slice('--user-data-dir='.length);
  return value ? resolve(cwd, value) : undefined;
}
