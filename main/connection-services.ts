import { spawn } from 'node:child_process';
import type { SandboxLimits } from './machine/sandbox/sandbox-limits.js';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import type { Config } from './config.js';
import { loadCatalog } from './connections/catalog/catalog-schema.js';
import { CatalogService } from './connections/catalog/catalog-service.js';
import { credentialHeaders } from './connections/credential-headers.js';
import { ConnectionHealth } from './connections/gateway/connection-health.js';
import { Gateway } from './connections/gateway/gateway.js';
import { createGuardedFetch, type GuardedFetch } from './network/guarded-fetch.js';
import { ConnectionOAuth } from './connections/upstream-oauth/connection-oauth.js';
import { PlaceConnections } from './connections/place-connections.js';
import { ConnectionStore } from './connections/store/connection-store.js';
import { localLaunch, localPolicyKey } from './connections/local/local-launch.js';
import { AccessDirectory } from './places/access-directory.js';
import { ConnectionSecrets } from './secrets/connection-secrets.js';
import type { SecretStore } from './secrets/secret-store.js';
import { PlaceSecrets } from './secrets/place-secrets.js';

/** The places' MCP connections and what they stand on: the server's, and the `connections` commands'. */
export interface ConnectionServices {
  access: AccessDirectory;
  placeSecrets: PlaceSecrets;
  store: ConnectionStore;
  catalog: CatalogService;
  network: GuardedFetch;
  oauth: ConnectionOAuth;
  gateway: Gateway;
  health: ConnectionHealth;
  connections: PlaceConnections;
  /** Stops the health checks and closes the upstream connections and the network. */
  close(): Promise<void>;
}

export interface ConnectionServicesOptions {
  secrets: SecretStore;
  log: (line: string) => void;
  /** Where the provider sends the browser back after a sign-in (the control plane's callback). */
  redirectUrl: () => string;
  /** Opens a sign-in URL in the person's browser; default $BROWSER, else the link is logged. */
  openBrowser?: (url: string) => void;
  /** The app's settings as environment variables (XDG_CACHE_HOME: where local servers' package caches go). */
  env: NodeJS.ProcessEnv;
  /** The ports the app listens on (agent endpoint, control plane): neither a remote connection nor a sandboxed local server reaches them on this machine. */
  appPorts: () => readonly number[];
  /** The places' sandbox limits on this machine (the server's): local servers run in their place's control group. */
  limits?: SandboxLimits;
}

/** A local server with no request for this long is ended; the next use starts it again. */
const LOCAL_SERVER_IDLE_MS = 5 * 60_000;

/** Makes the connection services; nothing listens or polls until the caller starts it. */
export function openConnectionServices(config: Config, options: ConnectionServicesOptions): ConnectionServices {
  const { log } = options;
  const placeSecrets = new PlaceSecrets(options.secrets, config.stateDir);
  const connectionSecrets = new ConnectionSecrets(options.secrets);
  const access = new AccessDirectory(config.stateDir);
  const store = new ConnectionStore({ stateDir: config.stateDir });
  const catalog = new CatalogService({
    stateDir: config.stateDir,
    registryUrl: config.registryUrl,
    builtin: loadCatalog(config.catalogFile ? { path: config.catalogFile, allowHttp: config.allowPrivateNetwork } : undefined),
    report: log,
  });
  const network = createGuardedFetch({ allowPrivateNetwork: config.allowPrivateNetwork, appPorts: options.appPorts });
  const oauth = new ConnectionOAuth({
    secrets: connectionSecrets,
    fetch: network.fetch,
    redirectUrl: options.redirectUrl,
    ...(config.clientMetadataUrl && { clientMetadataUrl: config.clientMetadataUrl }),
  });
  // What local servers inherit is this process's environment, as for `bash` (the agent endpoint's sandbox host).
  const host = {
    workspaceRoot: config.workspaceRoot,
    stateDir: config.stateDir,
    skillsDir: config.skillsDir,
    env: process.env,
    appPorts: options.appPorts,
    ...(options.limits && { limits: options.limits }),
  };
  const gateway = new Gateway({
    timeoutMs: config.upstreamTimeoutMs,
    allowPrivateNetwork: config.allowPrivateNetwork,
    appPorts: options.appPorts,
    credentials: (c) => credentialHeaders(placeSecrets, c),
    signedFetch: (c, base) => oauth.fetch(c, base),
    local: {
      start: (c) => localLaunch(c, { access, placeSecrets, host, cacheRoot: localCacheRoot(options.env) }),
      policyKey: (c) => localPolicyKey(c, { access }),
      logDir: join(config.stateDir, 'local-servers'),
      idleMs: LOCAL_SERVER_IDLE_MS,
    },
  });
  // Failing servers are checked again after 1 s, 2 s, 4 s ... up to a minute apart.
  const health = new ConnectionHealth({ gateway, firstBackoffMs: 1_000, maxBackoffMs: 60_000 });
  const connections = new PlaceConnections({
    answerWaitMs: config.upstreamTimeoutMs,
    store,
    oauth,
    openBrowser: options.openBrowser ?? ((url) => openInBrowser(url, log)),
    // A server that cannot be reached now is taken as open; connecting will say what is wrong.
    // Given as long as any request to a connection's server: one that never answers does not hold the add.
    asksForSignIn: async (url) =>
      (await import('./connections/upstream-oauth/challenge.js'))
        .asksForSignIn(url, (input, init) => network.fetch(input, { ...init, signal: AbortSignal.timeout(config.upstreamTimeoutMs) }))
        .catch(() => false),
    access,
    catalog,
    placeSecrets,
    connectionSecrets,
    gateway,
    health,
    allowPrivateNetwork: config.allowPrivateNetwork,
    appPorts: options.appPorts,
  });
  return {
    access,
    placeSecrets,
    store,
    catalog,
    network,
    oauth,
    gateway,
    health,
    connections,
    close: async () => {
      health.close();
      // A registry fetch still running is left to finish on its own: shutdown never waits on the network.
      store.close();
      await Promise.all([gateway.closeAll(), network.close()]);
    },
  };
}

/** Where places' local servers keep package caches: the user's cache folder, never the state dir (which sandboxes cannot see). */
function localCacheRoot(env: NodeJS.ProcessEnv): string {
  const base =
    env.XDG_CACHE_HOME && isAbsolute(env.XDG_CACHE_HOME)
      ? env.XDG_CACHE_HOME
      : join(homedir(), process.platform === 'darwin' ? 'Library/Caches' : '.cache');
  return join(base, 'persona-mcp-workspace', 'local-servers');
}

/**
 * Headless: the sign-in page opens with $BROWSER when it is set; otherwise the link is printed for
 * the person to open on this machine (the answer comes back to this machine's loopback).
 */
function openInBrowser(url: string, log: (line: string) => void): void {
  const browser = process.env.BROWSER;
  if (!browser) {
    log(`Open this link in a browser on this machine to sign in: ${url}`);
    return;
  }
  const child = spawn(browser, [url], { detached: true, stdio: 'ignore' });
  child.on('error', (error) => log(`Could not start $BROWSER (${browser}): ${error.message}. Open this link to sign in: ${url}`));
  child.unref();
}
