import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { DEFAULT_TOOL_SEARCH_THRESHOLD } from '../common/tool-search-mode.js';
import { DEFAULT_SAVED_OUTPUT_TOTAL_MB } from './machine/saved-outputs.js';
import {
  APP_DIR_NAME,
  DEFAULT_CONTROL_PORT,
  DEFAULT_HOST,
  DEFAULT_PORT,
  DEFAULT_SESSION_IDLE_MINUTES,
  DEFAULT_SHELL_MAX_TIMEOUT_SECONDS,
  DEFAULT_SKILLS_DIR,
  DEFAULT_UPSTREAM_TIMEOUT_SECONDS,
  OFFICIAL_REGISTRY_URL,
  type SettingVariable,
} from './settings.js';
import { LIMIT_RANGES, type PlaceLimits } from './places/sandbox-policy.js';

/** Everything the host needs, resolved once from flags and the environment (the settings of `settings.ts`). */
export interface Config {
  host: string;
  port: number;
  /** The control plane's port (the page, /api, /oauth/callback), always on loopback. */
  controlPort: number;
  auth: boolean;
  /** The workspace root: the place "This machine", under which the other places are folders. */
  workspaceRoot: string;
  /** Host names (no port) that may appear in the Host header; empty means "derive from the bind address". */
  allowedHosts: string[];
  /** Extra browser origins allowed to call /mcp, beyond those on an allowed host. */
  allowedOrigins: string[];
  /**
   * The https origin clients reach /mcp at through a TLS-terminating reverse proxy; sign-in
   * metadata and token audiences name it for requests for its host.
   */
  publicUrl?: string;
  skillsDir: string;
  shellMaxTimeoutSeconds: number;
  /** Most bytes of bash's saved full outputs kept at once; the oldest are removed first. */
  bashOutputMaxBytes: number;
  /** The machine's defaults for the places' sandbox limits, where set (the rest: sandbox-limits.ts). */
  sandboxLimits: PlaceLimits;
  stateDir: string;
  sessionIdleTimeoutMs: number;
  /** The MCP Registry merged into the catalog; empty turns it off. */
  registryUrl: string;
  /** The person's own connector catalog, listed before the built-in one. */
  catalogFile?: string;
  /** Longest wait for an upstream MCP server's answer. */
  upstreamTimeoutMs: number;
  /** Above this many tools in a session, tool search is on unless the token or place says otherwise. */
  toolSearchThreshold: number;
  /** Lets connections reach loopback and private addresses (local development and tests). */
  allowPrivateNetwork: boolean;
  /**
   * The https URL of this app's OAuth client ID metadata document, hosted by the operator: used as
   * the client_id at authorization servers that accept such documents, instead of registering.
   */
  clientMetadataUrl?: string;
  jwt: JwtConfig;
}

export interface JwtConfig {
  secret?: string | undefined;
  publicKeyPem?: string | undefined;
  jwksUrl?: string | undefined;
  issuer?: string | undefined;
  audience?: string | undefined;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** Node's timers fire at once past 2^31-1 ms, so no timeout may be longer. */
const MAX_TIMER_SECONDS = 2_147_483;

export interface ServeFlags {
  host?: string;
  port?: number;
  controlPort?: number;
  auth?: boolean;
  clientMetadataUrl?: string;
}

/**
 * Applies WORKSPACE_CWD. The product spec (persona-mcp-workspace.md) wants it to happen before anything else, so that relative paths,
 * bash and resource://cwd all agree.
 */
export function applyWorkingDirectory(env: NodeJS.ProcessEnv = process.env): void {
  const cwd = env.WORKSPACE_CWD;
  if (!cwd) return;
  try {
    process.chdir(cwd);
  } catch (error) {
    throw new ConfigError(
      `WORKSPACE_CWD=${cwd} cannot be used as the working directory (${(error as NodeJS.ErrnoException).code ?? error}). Create the folder or point WORKSPACE_CWD at an existing one.`,
    );
  }
}

export function stateDirFrom(env: NodeJS.ProcessEnv = process.env): string {
  if (env.WORKSPACE_STATE_DIR) return resolve(env.WORKSPACE_STATE_DIR);
  const xdg = env.XDG_STATE_HOME && isAbsolute(env.XDG_STATE_HOME) ? env.XDG_STATE_HOME : join(homedir(), '.local', 'state');
  return join(xdg, APP_DIR_NAME);
}

export function loadConfig(flags: ServeFlags = {}, env: NodeJS.ProcessEnv = process.env): Config {
  const host = flags.host ?? (env.WORKSPACE_HOST || DEFAULT_HOST);
  const port = flags.port ?? (env.WORKSPACE_PORT ? portFrom(env.WORKSPACE_PORT, 'WORKSPACE_PORT') : DEFAULT_PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ConfigError(`--port ${port} is not a port number. Use a whole number from 0 to 65535 (0 picks a free port).`);
  }
  const auth = flags.auth ?? env.WORKSPACE_NO_AUTH !== '1';
  if (!auth && !isLoopbackHost(host)) {
    throw new ConfigError(
      `--no-auth is only allowed on a loopback address, but --host is ${host}. Anyone who can reach this machine there could run commands on it. Bind to 127.0.0.1, or keep auth on and create a token with "persona-mcp-workspace token create --name NAME".`,
    );
  }
  const controlPort =
    flags.controlPort ??
    (env.WORKSPACE_CONTROL_PORT ? portFrom(env.WORKSPACE_CONTROL_PORT, 'WORKSPACE_CONTROL_PORT') : DEFAULT_CONTROL_PORT);
  if (controlPort === port && port !== 0) {
    throw new ConfigError(
      `The MCP endpoint and the page cannot share port ${port}. Choose another --control-port (default ${DEFAULT_CONTROL_PORT}).`,
    );
  }
  return {
    host,
    port,
    controlPort,
    auth,
    workspaceRoot: process.cwd(),
    allowedHosts: list(env.WORKSPACE_ALLOWED_HOSTS).map((h) => h.toLowerCase()),
    allowedOrigins: list(env.WORKSPACE_ALLOWED_ORIGINS),
    ...(env.WORKSPACE_PUBLIC_URL && { publicUrl: publicUrl(env.WORKSPACE_PUBLIC_URL) }),
    skillsDir: resolve(env.WORKSPACE_SKILLS_DIR || DEFAULT_SKILLS_DIR),
    shellMaxTimeoutSeconds: positiveNumber(env, 'WORKSPACE_SHELL_MAX_TIMEOUT', DEFAULT_SHELL_MAX_TIMEOUT_SECONDS, MAX_TIMER_SECONDS),
    bashOutputMaxBytes: Math.floor(
      positiveNumber(env, 'WORKSPACE_BASH_OUTPUT_MAX_MB', DEFAULT_SAVED_OUTPUT_TOTAL_MB, 1024 ** 2) * 1024 ** 2,
    ),
    sandboxLimits: sandboxLimitsFrom(env),
    stateDir: stateDirFrom(env),
    sessionIdleTimeoutMs:
      positiveNumber(env, 'WORKSPACE_SESSION_IDLE_TIMEOUT', DEFAULT_SESSION_IDLE_MINUTES, MAX_TIMER_SECONDS / 60) * 60_000,
    registryUrl: env.WORKSPACE_REGISTRY_URL ?? OFFICIAL_REGISTRY_URL,
    ...(env.WORKSPACE_CATALOG_FILE && { catalogFile: resolve(env.WORKSPACE_CATALOG_FILE) }),
    upstreamTimeoutMs: positiveNumber(env, 'WORKSPACE_UPSTREAM_TIMEOUT', DEFAULT_UPSTREAM_TIMEOUT_SECONDS, MAX_TIMER_SECONDS) * 1000,
    toolSearchThreshold: Math.floor(positiveNumber(env, 'WORKSPACE_TOOL_SEARCH_THRESHOLD', DEFAULT_TOOL_SEARCH_THRESHOLD, 100_000)),
    allowPrivateNetwork: env.WORKSPACE_ALLOW_PRIVATE_NETWORK === '1',
    ...clientMetadataUrlFrom(flags.clientMetadataUrl, env.WORKSPACE_CLIENT_METADATA_URL),
    jwt: {
      secret: env.WORKSPACE_JWT_SECRET || undefined,
      publicKeyPem: publicKey(env.WORKSPACE_JWT_PUBLIC_KEY),
      jwksUrl: jwksUrl(env.WORKSPACE_JWKS_URL),
      issuer: env.WORKSPACE_JWT_ISSUER || undefined,
      audience: env.WORKSPACE_JWT_AUDIENCE || undefined,
    },
  };
}

export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h);
}

/** WORKSPACE_PUBLIC_URL as an origin: https, a host and maybe a port, nothing else. */
function publicUrl(value: string): string {
  const fix =
    'Set it to the https origin agents use, such as https://box.example.com (the MCP URL is then that origin with /mcp), or unset it.';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`WORKSPACE_PUBLIC_URL=${value} is not a URL. ${fix}`);
  }
  if (url.protocol !== 'https:')
    throw new ConfigError(`WORKSPACE_PUBLIC_URL=${value} is not https: tokens would cross the network in the clear. ${fix}`);
  if (url.username || url.password || url.search || url.hash || (url.pathname !== '/' && url.pathname !== '/mcp')) {
    throw new ConfigError(
      `WORKSPACE_PUBLIC_URL=${value} has more than an origin (a path, query or credentials): the proxy must pass /mcp and /.well-known/ through unchanged. ${fix}`,
    );
  }
  return url.origin;
}

function portFrom(value: string, name: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535)
    throw new ConfigError(`${name}=${value} is not a port number. Use a whole number from 0 to 65535.`);
  return port;
}

function list(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function positiveNumber(env: NodeJS.ProcessEnv, name: SettingVariable, fallback: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0 || value > max) {
    throw new ConfigError(`${name}=${raw} is not a number from above 0 to ${Math.floor(max)}. Unset it to use the default (${fallback}).`);
  }
  return value;
}

/** The machine's default sandbox limits that the environment (or the settings file) sets, each in its range. */
function sandboxLimitsFrom(env: NodeJS.ProcessEnv): PlaceLimits {
  const limits: { -readonly [K in keyof PlaceLimits]: number } = {};
  for (const [name, variable] of [
    ['processes', 'WORKSPACE_SANDBOX_PROCESSES'],
    ['memoryMb', 'WORKSPACE_SANDBOX_MEMORY_MB'],
    ['tmpMb', 'WORKSPACE_SANDBOX_TMP_MB'],
  ] as const) {
    const raw = env[variable];
    if (raw === undefined || raw === '') continue;
    const [min, max] = LIMIT_RANGES[name];
    const value = Number(raw);
    if (!/^\d+$/.test(raw) || value < min || value > max)
      throw new ConfigError(`${variable}=${raw} is not a whole number from ${min} to ${max}. Unset it to use the default.`);
    limits[name] = value;
  }
  return limits;
}

/**
 * The client ID metadata document's URL: https with a path (the MCP authorization spec's rule for a URL client_id),
 * since an authorization server fetches it from there to learn who this app is.
 */
function clientMetadataUrlFrom(flag: string | undefined, variable: string | undefined): { clientMetadataUrl?: string } {
  const [value, source] = flag !== undefined ? [flag, '--client-metadata-url'] : [variable, 'WORKSPACE_CLIENT_METADATA_URL'];
  if (!value) return {};
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (url?.protocol !== 'https:' || url.pathname === '/' || url.hash || url.username || url.password) {
    throw new ConfigError(
      `${source}=${value} is not the https URL of a client ID metadata document. Give the full https URL where the document is served, with its path ` +
        '(for example https://example.com/oauth/client.json), or leave it unset to register with each server instead.',
    );
  }
  return { clientMetadataUrl: url.href };
}

function publicKey(value: string | undefined): string | undefined {
  if (!value) return undefined;
  if (value.includes('-----BEGIN')) return value;
  try {
    return readFileSync(value, 'utf8');
  } catch (error) {
    throw new ConfigError(
      `WORKSPACE_JWT_PUBLIC_KEY is neither a PEM key nor a readable file (${(error as NodeJS.ErrnoException).code ?? error}). Set it to the PEM text or to the path of a .pem file.`,
    );
  }
}

function jwksUrl(value: string | undefined): string | undefined {
  if (!value) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`WORKSPACE_JWKS_URL=${value} is not a URL. Set it to the https URL of your identity provider's JWKS.`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) {
    throw new ConfigError(`WORKSPACE_JWKS_URL must use https (plain http is accepted only on loopback), got ${url.protocol}.`);
  }
  return url.href;
}
