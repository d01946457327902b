import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';

/** The desktop app's own settings: `settings.json` in Electron's userData folder, edited by hand. */
export interface DesktopSettings {
  /** Whether the agent endpoint opens when the app starts (the control plane always does). */
  startServerAtLaunch: boolean;
  /** The agent endpoint's port (0 picks a free one); default the CLI's default. */
  port?: number;
}

export const DEFAULT_SETTINGS: DesktopSettings = { startServerAtLaunch: true };

export const SETTINGS_FILE = 'settings.json';

/**
 * Reads the settings. A missing file means the defaults; a file that cannot be used is left as it
 * is (the app never writes it) and reported, and the defaults apply, so a typo never stops the app.
 */
export async function loadSettings(dir: string): Promise<{ settings: DesktopSettings; problem?: string }> {
  const path = join(dir, SETTINGS_FILE);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { settings: DEFAULT_SETTINGS };
    return { settings: DEFAULT_SETTINGS, problem: `${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? error}); using the defaults.` };
  }
  try {
    return { settings: parseSettings(text) };
  } catch (error) {
    return { settings: DEFAULT_SETTINGS, problem: `${path}: ${(error as Error).message} Using the defaults until it is fixed.` };
  }
}

export function parseSettings(text: string): DesktopSettings {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error('is not valid JSON.');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('must be a JSON object, like {"startServerAtLaunch": true}.');
  const settings: DesktopSettings = { ...DEFAULT_SETTINGS };
  for (const [key, field] of Object.entries(value)) {
    if (key === 'startServerAtLaunch') {
      if (typeof field !== 'boolean') throw new Error('startServerAtLaunch must be true or false.');
      settings.startServerAtLaunch = field;
    } else if (key === 'port') {
      if (!Number.isInteger(field) || (field as number) < 0 || (field as number) > 65535) throw new Error('port must be a whole number from 0 to 65535.');
      settings.port = field as number;
    } else {
      throw new Error(`has an unknown setting "${key}"; the settings are startServerAtLaunch and port.`);
    }
  }
  return settings;
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
