import { DEFAULT_TOOL_SEARCH_THRESHOLD } from '../common/tool-search-mode.js';
import { DEFAULT_SAVED_OUTPUT_TOTAL_MB } from './machine/saved-outputs.js';

export const DEFAULT_PORT = 9100;
export const DEFAULT_CONTROL_PORT = 9101;
export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_SKILLS_DIR = '.agents/skills';
export const DEFAULT_SHELL_MAX_TIMEOUT_SECONDS = 600;
export const DEFAULT_SESSION_IDLE_MINUTES = 30;
export const DEFAULT_UPSTREAM_TIMEOUT_SECONDS = 60;
export const APP_DIR_NAME = 'persona-mcp-workspace';
/** The official MCP Registry (registry.modelcontextprotocol.io): a directory of servers, not a package registry. */
export const OFFICIAL_REGISTRY_URL = 'https://registry.modelcontextprotocol.io';

export type Kind = 'text' | 'port' | 'count' | 'seconds' | 'minutes' | 'boolean' | 'list' | 'store';

export interface Setting {
  /** The environment variable that sets it; the file's value is handed on under this name. */
  env?: string;
  /** The command-line flag that sets it, where there is one. */
  flag?: string;
  kind: Kind;
  /** The value used when nothing sets it, as `config` prints it. */
  default: string;
  /** What it sets, in a sentence: `--help` and docs/configuration.md show it. */
  about: string;
  /** Never printed: `config` says only that it is set. */
  secret?: boolean;
}

/**
 * Every setting, defined once, by its name in the settings file. The config reader
 * (`loadConfig`), the settings file, `config`, `--help` and the table in docs/configuration.md
 * (`scripts/settings-table.ts`) all read this. A flag beats the environment, which beats the
 * file, which beats the default. `startServerAtLaunch` and `trayHintShown` are the desktop app's own.
 */
export const SETTINGS = {
  port: {
    env: 'WORKSPACE_PORT',
    flag: '--port',
    kind: 'port',
    default: String(DEFAULT_PORT),
    about: 'Port of the MCP endpoint; 0 picks a free one.',
  },
  host: {
    env: 'WORKSPACE_HOST',
    flag: '--host',
    kind: 'text',
    default: DEFAULT_HOST,
    about: 'Address the MCP endpoint binds; 0.0.0.0 lets agents on other machines in.',
  },
  controlPort: {
    env: 'WORKSPACE_CONTROL_PORT',
    flag: '--control-port',
    kind: 'port',
    default: String(DEFAULT_CONTROL_PORT),
    about: 'Loopback port of the page, its API and the sign-in callbacks of connections.',
  },
  noAuth: {
    env: 'WORKSPACE_NO_AUTH',
    flag: '--no-auth',
    kind: 'boolean',
    default: 'false',
    about: 'Accept requests without a token; refused unless the MCP endpoint binds a loopback address.',
  },
  cwd: {
    env: 'WORKSPACE_CWD',
    kind: 'text',
    default: 'the launch folder',
    about:
      'Folder the process changes into before anything else: the workspace root (the place This machine), where relative paths and bash start.',
  },
  skillsDir: {
    env: 'WORKSPACE_SKILLS_DIR',
    kind: 'text',
    default: DEFAULT_SKILLS_DIR,
    about: 'Skills root, relative to the working directory unless absolute.',
  },
  shellMaxTimeout: {
    env: 'WORKSPACE_SHELL_MAX_TIMEOUT',
    kind: 'seconds',
    default: String(DEFAULT_SHELL_MAX_TIMEOUT_SECONDS),
    about: 'The longest timeout an agent may give a bash command, in seconds.',
  },
  bashOutputMaxMb: {
    env: 'WORKSPACE_BASH_OUTPUT_MAX_MB',
    kind: 'count',
    default: String(DEFAULT_SAVED_OUTPUT_TOTAL_MB),
    about:
      "Most megabytes of bash's saved full outputs kept at once, the oldest removed first; each is also removed a day after it was saved and when the server stops.",
  },
  sandboxProcesses: {
    env: 'WORKSPACE_SANDBOX_PROCESSES',
    kind: 'count',
    default: '4096',
    about:
      "The default most processes and threads at once of a sandboxed place's commands (place and strict policies); a place's own limit wins.",
  },
  sandboxMemoryMb: {
    env: 'WORKSPACE_SANDBOX_MEMORY_MB',
    kind: 'count',
    default: "half of this machine's memory",
    about: "The default most memory, in MiB, of a sandboxed place's commands together; files in its /tmp count.",
  },
  sandboxTmpMb: {
    env: 'WORKSPACE_SANDBOX_TMP_MB',
    kind: 'count',
    default: '2048 (at most the memory limit)',
    about: "The default size, in MiB, of a sandboxed place's private /tmp.",
  },
  stateDir: {
    env: 'WORKSPACE_STATE_DIR',
    kind: 'text',
    default: `$XDG_STATE_HOME/${APP_DIR_NAME} (else ~/.local/state/${APP_DIR_NAME}; the desktop app: its settings folder)`,
    about:
      'Where the server keeps its state: tokens, access directory, connections, agent sign-ins, audit log, the encrypted secrets file.',
  },
  sessionIdleTimeout: {
    env: 'WORKSPACE_SESSION_IDLE_TIMEOUT',
    kind: 'minutes',
    default: String(DEFAULT_SESSION_IDLE_MINUTES),
    about: 'Minutes after which an MCP session with no open request is closed.',
  },
  registryUrl: {
    env: 'WORKSPACE_REGISTRY_URL',
    kind: 'text',
    default: OFFICIAL_REGISTRY_URL,
    about: 'The MCP Registry merged into the connector catalog; empty turns it off.',
  },
  catalogFile: {
    env: 'WORKSPACE_CATALOG_FILE',
    kind: 'text',
    default: 'none',
    about: "A JSON file of your own connectors, in the built-in catalog's format, listed first; http URLs only with allowPrivateNetwork.",
  },
  upstreamTimeout: {
    env: 'WORKSPACE_UPSTREAM_TIMEOUT',
    kind: 'seconds',
    default: String(DEFAULT_UPSTREAM_TIMEOUT_SECONDS),
    about: "Seconds to wait for a connected MCP server's answer.",
  },
  toolSearchThreshold: {
    env: 'WORKSPACE_TOOL_SEARCH_THRESHOLD',
    kind: 'count',
    default: String(DEFAULT_TOOL_SEARCH_THRESHOLD),
    about:
      'Above this many tools, agents get search_tools and call_tool instead of every tool, unless the place or the token says otherwise.',
  },
  allowPrivateNetwork: {
    env: 'WORKSPACE_ALLOW_PRIVATE_NETWORK',
    kind: 'boolean',
    default: 'false',
    about:
      "Let connections reach loopback and private addresses, and plain http (local development only; never link-local, metadata or the app's own ports).",
  },
  clientMetadataUrl: {
    env: 'WORKSPACE_CLIENT_METADATA_URL',
    flag: '--client-metadata-url',
    kind: 'text',
    default: 'none (registers with each server)',
    about: "The https URL where you host this app's OAuth client ID metadata document: the client_id at servers that accept one.",
  },
  allowedHosts: {
    env: 'WORKSPACE_ALLOWED_HOSTS',
    kind: 'list',
    default: 'none',
    about:
      "Host names the MCP endpoint accepts in the Host header besides its own: the bind address (loopback: its names; 0.0.0.0: the machine's name and addresses).",
  },
  allowedOrigins: {
    env: 'WORKSPACE_ALLOWED_ORIGINS',
    kind: 'list',
    default: 'none',
    about: 'Extra browser origins the MCP endpoint accepts in the Origin header.',
  },
  publicUrl: {
    env: 'WORKSPACE_PUBLIC_URL',
    kind: 'text',
    default: 'none',
    about:
      'The https origin agents reach the MCP endpoint at through a TLS-terminating reverse proxy (such as https://box.example.com); sign-in metadata and token audiences use it.',
  },
  secretStore: {
    env: 'WORKSPACE_SECRET_STORE',
    kind: 'store',
    default: 'chosen on first use',
    about: 'Where logins and secrets are kept: keychain or file (encrypted, in the state dir); a change moves them there.',
  },
  secretKey: {
    env: 'WORKSPACE_SECRET_KEY',
    kind: 'text',
    default: '<state dir>/secrets.key, made on first use',
    secret: true,
    about: "With the file store: the file's 32-byte key, in base64 or hex.",
  },
  keychainService: {
    env: 'WORKSPACE_KEYCHAIN_SERVICE',
    kind: 'text',
    default: APP_DIR_NAME,
    about: 'The keychain service name, to keep two installations on one machine apart.',
  },
  jwtSecret: {
    env: 'WORKSPACE_JWT_SECRET',
    kind: 'text',
    default: 'none',
    secret: true,
    about: 'HS256 secret shared with the platform that issues agent tokens.',
  },
  jwtPublicKey: {
    env: 'WORKSPACE_JWT_PUBLIC_KEY',
    kind: 'text',
    default: 'none',
    about: "PEM public key (or the path of one) that verifies your platform's agent tokens: RSA, EC or Ed25519.",
  },
  jwksUrl: {
    env: 'WORKSPACE_JWKS_URL',
    kind: 'text',
    default: 'none',
    about: 'JWKS URL of the identity provider that issues agent tokens (https; http only on loopback).',
  },
  jwtIssuer: { env: 'WORKSPACE_JWT_ISSUER', kind: 'text', default: 'none', about: "The iss that your platform's agent tokens must carry." },
  jwtAudience: {
    env: 'WORKSPACE_JWT_AUDIENCE',
    kind: 'text',
    default: 'none',
    about: "The aud that your platform's agent tokens must carry.",
  },
  startServerAtLaunch: { kind: 'boolean', default: 'true', about: 'The desktop app: open the MCP endpoint when the app starts.' },
  trayHintShown: {
    kind: 'boolean',
    default: 'false',
    about: 'The desktop app sets it once it has said, at the first close of its window, that it keeps running in the tray.',
  },
} satisfies Record<string, Setting>;

export type SettingName = keyof typeof SETTINGS;

/** The environment variables the settings read. */
export type SettingVariable = { [K in SettingName]: (typeof SETTINGS)[K] extends { env: infer E } ? E : never }[SettingName];
