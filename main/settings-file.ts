import { readFileSync } from 'node:fs';
import { mkdir, readFile, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { ConfigError } from './config.js';
import { APP_DIR_NAME, SETTINGS, type Kind, type Setting, type SettingName } from './settings.js';
import { writeFileAtomic } from './state/atomic-write.js';

export const SETTINGS_FILE_NAME = 'settings.json';

export type FileSettings = Partial<Record<SettingName, string | number | boolean | string[]>>;

export interface SettingsFile {
  path: string;
  /** False when the file does not exist (only the default path may be missing). */
  found: boolean;
  settings: FileSettings;
}

/** The platform's folder for an app's settings: XDG on Linux, Application Support on macOS, %APPDATA% on Windows. */
export function configDir(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  if (platform === 'darwin') return join(homedir(), 'Library', 'Application Support', APP_DIR_NAME);
  if (platform === 'win32') return join(env.APPDATA || join(homedir(), 'AppData', 'Roaming'), APP_DIR_NAME);
  const xdg = env.XDG_CONFIG_HOME && isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : join(homedir(), '.config');
  return join(xdg, APP_DIR_NAME);
}

/**
 * The settings file `--config` names, else the one in the platform's config folder (or `defaultPath`,
 * the desktop app's userData folder), which may not exist.
 */
export function readSettingsFile(
  configFlag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  defaultPath = join(configDir(env), SETTINGS_FILE_NAME),
): SettingsFile {
  const path = configFlag ? resolve(configFlag) : defaultPath;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && !configFlag) return { path, found: false, settings: {} };
    throw new ConfigError(
      `The settings file ${path} cannot be read (${code ?? error}).${code === 'ENOENT' ? ' Check the path given to --config.' : ''}`,
    );
  }
  return { path, found: true, settings: parseSettings(text, path) };
}

/** Checks every setting of a settings file; the error names the file and the setting. */
export function parseSettings(text: string, path: string): FileSettings {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(
      `The settings file ${path} is not valid JSON (${(error as Error).message}). Fix it, or remove it to use the defaults.`,
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ConfigError(`The settings file ${path} must hold one JSON object, like {"port": 9100}.`);
  }
  const settings: FileSettings = {};
  for (const [name, field] of Object.entries(value)) {
    if (!Object.hasOwn(SETTINGS, name)) {
      throw new ConfigError(
        `The settings file ${path} has an unknown setting "${name}". The settings are: ${Object.keys(SETTINGS).join(', ')}.`,
      );
    }
    const problem = checkValue(SETTINGS[name as SettingName].kind, field);
    if (problem) throw new ConfigError(`The settings file ${path}: "${name}" ${problem}`);
    settings[name as SettingName] = field as string | number | boolean | string[];
  }
  return settings;
}

/**
 * Sets one setting in a settings file that people also edit by hand: every other setting is kept
 * (in its order), the file is replaced atomically with its mode kept, and a file that does not
 * parse is left as it is (the ConfigError says why).
 */
export async function writeSetting(path: string, name: SettingName, value: string | number | boolean | string[]): Promise<void> {
  const problem = checkValue(SETTINGS[name].kind, value);
  if (problem) throw new ConfigError(`"${name}" ${problem}`);
  let text: string | undefined;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new ConfigError(`The settings file ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? error}).`);
  }
  const settings = text === undefined ? {} : parseSettings(text, path);
  const mode = text === undefined ? 0o600 : (await stat(path)).mode & 0o777;
  await mkdir(dirname(path), { recursive: true });
  await writeFileAtomic(path, `${JSON.stringify({ ...settings, [name]: value }, null, 2)}\n`, { mode });
}

function checkValue(kind: Kind, value: unknown): string | undefined {
  switch (kind) {
    case 'text':
      return typeof value === 'string' ? undefined : 'must be text (in double quotes).';
    case 'port':
      return Number.isInteger(value) && (value as number) >= 0 && (value as number) <= 65535
        ? undefined
        : 'must be a whole number from 0 to 65535.';
    case 'count':
      return Number.isInteger(value) && (value as number) > 0 ? undefined : 'must be a whole number above 0.';
    case 'seconds':
    case 'minutes':
      return typeof value === 'number' && value > 0 && Number.isFinite(value) ? undefined : `must be a number of ${kind} above 0.`;
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'must be true or false.';
    case 'list':
      return Array.isArray(value) && value.every((item) => typeof item === 'string')
        ? undefined
        : 'must be a list of text, like ["a", "b"].';
    case 'store':
      return value === 'keychain' || value === 'file' ? undefined : 'must be "keychain" or "file".';
  }
}

/**
 * The environment the app reads: the file's settings under their variables' names, with the real
 * environment on top (the environment beats the file).
 */
export function environmentWith(file: FileSettings, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const fromFile: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(file)) {
    const variable = (SETTINGS[name as SettingName] as Setting).env;
    if (!variable || value === undefined) continue;
    fromFile[variable] = Array.isArray(value) ? value.join(',') : typeof value === 'boolean' ? (value ? '1' : '') : String(value);
  }
  return { ...fromFile, ...env };
}

export interface EffectiveSetting {
  name: SettingName;
  /** The value as it would be written, or "(set)" for a secret. */
  value: string;
  /** "--port", "WORKSPACE_PORT", the file's path, or "default". */
  source: string;
}

/** Each setting's effective value and where it comes from, for `config`. */
export function effectiveSettings(
  flags: Partial<Record<SettingName, string>>,
  file: SettingsFile,
  env: NodeJS.ProcessEnv = process.env,
): EffectiveSetting[] {
  return (Object.entries(SETTINGS) as Array<[SettingName, Setting]>).map(([name, setting]) => {
    const shown = (value: string): string => (setting.secret ? '(set)' : value);
    const flag = flags[name];
    if (flag !== undefined && setting.flag) return { name, value: shown(flag), source: setting.flag };
    if (setting.env && env[setting.env] !== undefined) return { name, value: shown(env[setting.env]!), source: setting.env };
    const fromFile = file.settings[name];
    if (fromFile !== undefined)
      return { name, value: shown(Array.isArray(fromFile) ? fromFile.join(',') : String(fromFile)), source: file.path };
    return { name, value: setting.default, source: 'default' };
  });
}
