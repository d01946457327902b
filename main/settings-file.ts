import { readFileSync } from 'node:fs';
import { mkdir, readFile, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { APP_DIR_NAME, ConfigError } from './config.js';
import { writeFileAtomic } from './state/atomic-write.js';

export const SETTINGS_FILE_NAME = 'settings.json';

type Kind = 'text' | 'port' | 'count' | 'seconds' | 'minutes' | 'boolean' | 'list' | 'store';

interface Setting {
  /** The environment variable that sets it; the file's value is handed on under this name. */
  env?: string;
  /** The command-line flag that sets it, where there is one. */
  flag?: string;
  kind: Kind;
  /** What `config` prints when nothing sets it. */
  default: string;
  /** Never printed: `config` says only that it is set. */
  secret?: boolean;
}

/**
 * Every setting, by its name in the settings file. A flag beats the environment, which beats the
 * file, which beats the default. `startServerAtLaunch` and `trayHintShown` are the desktop app's own.
 */
export const SETTINGS = {
  port: { env: 'WORKSPACE_PORT', flag: '--port', kind: 'port', default: '9100' },
  host: { env: 'WORKSPACE_HOST', flag: '--host', kind: 'text', default: '127.0.0.1' },
  controlPort: { env: 'WORKSPACE_CONTROL_PORT', flag: '--control-port', kind: 'port', default: '9101' },
  noAuth: { env: 'WORKSPACE_NO_AUTH', flag: '--no-auth', kind: 'boolean', default: 'false' },
  cwd: { env: 'WORKSPACE_CWD', kind: 'text', default: 'the launch folder' },
  skillsDir: { env: 'WORKSPACE_SKILLS_DIR', kind: 'text', default: '.agents/skills' },
  shellMaxTimeout: { env: 'WORKSPACE_SHELL_MAX_TIMEOUT', kind: 'seconds', default: '600' },
  bashOutputMaxMb: { env: 'WORKSPACE_BASH_OUTPUT_MAX_MB', kind: 'count', default: '1024' },
  sandboxProcesses: { env: 'WORKSPACE_SANDBOX_PROCESSES', kind: 'count', default: '4096' },
  sandboxMemoryMb: { env: 'WORKSPACE_SANDBOX_MEMORY_MB', kind: 'count', default: 'half of this machine\'s memory' },
  sandboxTmpMb: { env: 'WORKSPACE_SANDBOX_TMP_MB', kind: 'count', default: '2048' },
  stateDir: { env: 'WORKSPACE_STATE_DIR', kind: 'text', default: '$XDG_STATE_HOME/persona-mcp-workspace' },
  sessionIdleTimeout: { env: 'WORKSPACE_SESSION_IDLE_TIMEOUT', kind: 'minutes', default: '30' },
  registryUrl: { env: 'WORKSPACE_REGISTRY_URL', kind: 'text', default: 'the official MCP Registry' },
  catalogFile: { env: 'WORKSPACE_CATALOG_FILE', kind: 'text', default: 'none' },
  upstreamTimeout: { env: 'WORKSPACE_UPSTREAM_TIMEOUT', kind: 'seconds', default: '60' },
  toolSearchThreshold: { env: 'WORKSPACE_TOOL_SEARCH_THRESHOLD', kind: 'count', default: '40' },
  allowPrivateNetwork: { env: 'WORKSPACE_ALLOW_PRIVATE_NETWORK', kind: 'boolean', default: 'false' },
  clientMetadataUrl: { env: 'WORKSPACE_CLIENT_METADATA_URL', flag: '--client-metadata-url', kind: 'text', default: 'none (registers with each server)' },
  allowedHosts: { env: 'WORKSPACE_ALLOWED_HOSTS', kind: 'list', default: 'from host' },
  allowedOrigins: { env: 'WORKSPACE_ALLOWED_ORIGINS', kind: 'list', default: 'none' },
  publicUrl: { env: 'WORKSPACE_PUBLIC_URL', kind: 'text', default: 'none' },
  secretStore: { env: 'WORKSPACE_SECRET_STORE', kind: 'store', default: 'chosen on first use' },
  secretKey: { env: 'WORKSPACE_SECRET_KEY', kind: 'text', default: '<state dir>/secrets.key', secret: true },
  keychainService: { env: 'WORKSPACE_KEYCHAIN_SERVICE', kind: 'text', default: 'persona-mcp-workspace' },
  jwtSecret: { env: 'WORKSPACE_JWT_SECRET', kind: 'text', default: 'none', secret: true },
  jwtPublicKey: { env: 'WORKSPACE_JWT_PUBLIC_KEY', kind: 'text', default: 'none' },
  jwksUrl: { env: 'WORKSPACE_JWKS_URL', kind: 'text', default: 'none' },
  jwtIssuer: { env: 'WORKSPACE_JWT_ISSUER', kind: 'text', default: 'none' },
  jwtAudience: { env: 'WORKSPACE_JWT_AUDIENCE', kind: 'text', default: 'none' },
  startServerAtLaunch: { kind: 'boolean', default: 'true' },
  /** Set by the desktop app once it has said, at the first close of its window, that it keeps running in the tray. */
  trayHintShown: { kind: 'boolean', default: 'false' },
} satisfies Record<string, Setting>;

export type SettingName = keyof typeof SETTINGS;
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
export function readSettingsFile(configFlag: string | undefined, env: NodeJS.ProcessEnv = process.env, defaultPath = join(configDir(env), SETTINGS_FILE_NAME)): SettingsFile {
  const path = configFlag ? resolve(configFlag) : defaultPath;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && !configFlag) return { path, found: false, settings: {} };
    throw new ConfigError(`The settings file ${path} cannot be read (${code ?? error}).${code === 'ENOENT' ? ' Check the path given to --config.' : ''}`);
  }
  return { path, found: true, settings: parseSettings(text, path) };
}

/** Checks every setting of a settings file; the error names the file and the setting. */
export function parseSettings(text: string, path: string): FileSettings {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`The settings file ${path} is not valid JSON (${(error as Error).message}). Fix it, or remove it to use the defaults.`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ConfigError(`The settings file ${path} must hold one JSON object, like {"port": 9100}.`);
  }
  const settings: FileSettings = {};
  for (const [name, field] of Object.entries(value)) {
    if (!Object.hasOwn(SETTINGS, name)) {
      throw new ConfigError(`The settings file ${path} has an unknown setting "${name}". The settings are: ${Object.keys(SETTINGS).join(', ')}.`);
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
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw new ConfigError(`The settings file ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? error}).`);
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
      return Number.isInteger(value) && (value as number) >= 0 && (value as number) <= 65535 ? undefined : 'must be a whole number from 0 to 65535.';
    case 'count':
      return Number.isInteger(value) && (value as number) > 0 ? undefined : 'must be a whole number above 0.';
    case 'seconds':
    case 'minutes':
      return typeof value === 'number' && value > 0 && Number.isFinite(value) ? undefined : `must be a number of ${kind} above 0.`;
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'must be true or false.';
    case 'list':
      return Array.isArray(value) && value.every((item) => typeof item === 'string') ? undefined : 'must be a list of text, like ["a", "b"].';
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
export function effectiveSettings(flags: Partial<Record<SettingName, string>>, file: SettingsFile, env: NodeJS.ProcessEnv = process.env): EffectiveSetting[] {
  return (Object.entries(SETTINGS) as Array<[SettingName, Setting]>).map(([name, setting]) => {
    const shown = (value: string): string => (setting.secret ? '(set)' : value);
    const flag = flags[name];
    if (flag !== undefined && setting.flag) return { name, value: shown(flag), source: setting.flag };
    if (setting.env && env[setting.env] !== undefined) return { name, value: shown(env[setting.env]!), source: setting.env };
    const fromFile = file.settings[name];
    if (fromFile !== undefined) return { name, value: shown(Array.isArray(fromFile) ? fromFile.join(',') : String(fromFile)), source: file.path };
    return { name, value: setting.default, source: 'default' };
  });
}
