import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { AuditLog } from './audit/audit-log.js';
import { AdminAccess } from './auth/admin-access.js';
import type { AgentTokenStore } from './auth/agent-tokens.js';
import { agentTokenStore } from './auth/app-token-store.js';
import { Approvals } from './auth/oauth-server/approvals.js';
import { AuthorizationServer } from './auth/oauth-server/authorization-server.js';
import type { Config } from './config.js';
import { loadCatalog } from './connections/catalog/catalog-schema.js';
import { CatalogService } from './connections/catalog/catalog-service.js';
import { ConnectionHealth } from './connections/gateway/connection-health.js';
import { Gateway } from './connections/gateway/gateway.js';
import { createGuardedFetch, type GuardedFetch } from './connections/network/guarded-fetch.js';
import { ClientMetadataDocuments } from './auth/oauth-server/client-metadata-documents.js';
import { asksForSignIn } from './connections/oauth/challenge.js';
import { ConnectionOAuth } from './connections/oauth/connection-oauth.js';
import { PlaceConnections } from './connections/place-connections.js';
import { ConnectionStore } from './connections/store/connection-store.js';
import { CommandRunner } from './machine/command-runner.js';
import { SandboxPool } from './machine/sandbox/sandbox-pool.js';
import { SkillsWatch } from './machine/skills-watch.js';
import { Changes } from './mcp/resource-subscriptions.js';
import { PlaceSessions } from './mcp/place-sessions.js';
import { AccessDirectory } from './places/access-directory.js';
import { ConnectionSecrets } from './secrets/connection-secrets.js';
import { openSecretStore } from './secrets/open-secret-store.js';
import { PlaceSecrets } from './secrets/place-secrets.js';
import { removeCrashTemps } from './state/atomic-write.js';

/** Everything both listeners share, made once per run of the app. */
export interface Services {
  config: Config;
  /** The control plane's origin (set once it listens): sign-in redirects come back there. */
  controlUrl: string;
  oauth: ConnectionOAuth;
  log: (line: string) => void;
  admin: AdminAccess;
  tokens: AgentTokenStore;
  /** The agent endpoint's own OAuth authorization server: clients that sign in, and the owner's approvals. */
  signIns: AuthorizationServer;
  /** The owner's side of those sign-ins: what waits for an answer, the answers, the clients signed in. */
  approvals: Approvals;
  access: AccessDirectory;
  placeSecrets: PlaceSecrets;
  catalog: CatalogService;
  store: ConnectionStore;
  gateway: Gateway;
  health: ConnectionHealth;
  connections: PlaceConnections;
  placeSessions: PlaceSessions;
  audit: AuditLog;
  commands: CommandRunner;
  /** The places' live command sandboxes (place and strict policies). */
  sandboxes: SandboxPool;
  /** The ports the app listens on (set by the host as it opens them): sandboxed commands never reach them. */
  listeningPorts: Set<number>;
  skills: SkillsWatch;
  skillsChanged: Changes;
  close(): Promise<void>;
}

/** The OAuth authorization server, signing with the agent tokens' key. */
function authorizationServer(stateDir: string, tokens: AgentTokenStore, fetch: GuardedFetch['fetch']): AuthorizationServer {
  return new AuthorizationServer({ stateDir, signingKey: () => tokens.signingKey(), documents: new ClientMetadataDocuments(fetch) });
}

export interface ServicesOptions {
  env?: NodeJS.ProcessEnv;
  /** Opens a sign-in URL in the person's browser; default $BROWSER, else the link is logged. */
  openBrowser?: (url: string) => void;
}

export async function openServices(config: Config, log: (line: string) => void, options: ServicesOptions = {}): Promise<Services> {
  const env = options.env ?? process.env;
  await mkdir(config.stateDir, { recursive: true, mode: 0o700 });
  // Half-written state files of a process that crashed; the state itself is whole (rename is atomic).
  for (const dir of [config.stateDir, join(config.stateDir, 'personal-mcp')]) {
    for (const name of await removeCrashTemps(dir)) log(`Removed ${join(dir, name)}, a temp file left by a process that stopped while writing it.`);
  }
  const secrets = await openSecretStore({ stateDir: config.stateDir, env, say: log });
  const placeSecrets = new PlaceSecrets(secrets);
  const connectionSecrets = new ConnectionSecrets(secrets);
  const access = new AccessDirectory(config.stateDir);
  const store = new ConnectionStore({ stateDir: config.stateDir });
  const catalog = new CatalogService({
    stateDir: config.stateDir,
    registryUrl: config.registryUrl,
    builtin: loadCatalog(config.catalogFile ? { path: config.catalogFile, allowHttp: config.allowPrivateNetwork } : undefined),
    report: log,
  });
  const placeSessions = new PlaceSessions();

  const network = createGuardedFetch({ allowPrivateNetwork: config.allowPrivateNetwork });
  const oauth = new ConnectionOAuth({
    secrets: connectionSecrets,
    fetch: network.fetch,
    // The control plane listens once the services exist; sign-ins start only after that.
    redirectUrl: () => `${services.controlUrl}/oauth/callback`,
    ...(config.clientMetadataUrl && { clientMetadataUrl: config.clientMetadataUrl }),
  });
  // The gateway reads credentials through the connections service, which owns the rules.
  let connections: PlaceConnections | undefined;
  const gateway = new Gateway({
    timeoutMs: config.upstreamTimeoutMs,
    allowPrivateNetwork: config.allowPrivateNetwork,
    credentials: (c) => connections!.credentials(c),
    signedFetch: (c, base) => oauth.fetch(c, base),
  });
  // Failing servers are checked again after 1 s, 2 s, 4 s ... up to a minute apart.
  const health = new ConnectionHealth({ gateway, firstBackoffMs: 1_000, maxBackoffMs: 60_000 });
  connections = new PlaceConnections({
    store,
    oauth,
    openBrowser: options.openBrowser ?? ((url) => openInBrowser(url, log)),
    // A server that cannot be reached now is taken as open; connecting will say what is wrong.
    asksForSignIn: (url) => asksForSignIn(url, network.fetch).catch(() => false),
    access,
    catalog,
    placeSecrets,
    connectionSecrets,
    gateway,
    health,
    allowPrivateNetwork: config.allowPrivateNetwork,
  });

  const stopStoreWatch = store.onChange((roots) => placeSessions.toolsChanged(roots));
  await store.watch();
  // An upstream's tools changed, a request to it failed: its health is measured again, and the
  // place's sessions hear when that changes the tools they get.
  const stopGatewayWatch = gateway.onToolsChanged((c) => health.toolsChanged(c));
  const stopFailureWatch = gateway.onFailure((c, error) => health.failed(c, error));
  const stopHealthWatch = health.onChange((root) => placeSessions.toolsChanged([root]));
  // A sign-in finished or a login ended: the place's agents gain or lose those tools.
  const stopSignInWatch = oauth.onStateChange(() => placeSessions.toolsChanged());

  const skillsChanged = new Changes();
  const skills = new SkillsWatch(config.skillsDir, {
    onChange: () => skillsChanged.emit(),
    onInvalid: (skill) => log(`Skill folder ${skill.dir} skipped: ${skill.reason}`),
    onError: (error) => log(`Cannot read the skills folder ${config.skillsDir}: ${error.message}`),
  });
  await skills.start();
  await catalog.start();

  const audit = new AuditLog({ stateDir: config.stateDir });
  const commands = new CommandRunner({ maxTimeoutSeconds: config.shellMaxTimeoutSeconds, maxSavedTotalBytes: config.bashOutputMaxBytes });
  // What earlier runs left (a crash, a kill) and what is past its day goes, now and every hour.
  commands.startSweeping(log);
  const sandboxes = new SandboxPool();
  const tokens = agentTokenStore(config.stateDir, secrets);
  const signIns = authorizationServer(config.stateDir, tokens, network.fetch);
  const services: Services = {
    controlUrl: '',
    config,
    log,
    admin: new AdminAccess(),
    tokens,
    signIns,
    approvals: new Approvals(signIns, config.workspaceRoot),
    access,
    placeSecrets,
    catalog,
    store,
    gateway,
    health,
    connections,
    placeSessions,
    audit,
    commands,
    sandboxes,
    listeningPorts: new Set([config.port, config.controlPort].filter((port) => port > 0)),
    skills,
    skillsChanged,
    oauth,
    close: async () => {
      stopStoreWatch();
      stopGatewayWatch();
      stopFailureWatch();
      stopHealthWatch();
      health.close();
      stopSignInWatch();
      commands.stopSweeping();
      await commands.killAll();
      await commands.removeSavedOutputs();
      await sandboxes.closeAll();
      // A registry fetch still running is left to finish on its own: shutdown never waits on the network.
      await Promise.all([gateway.closeAll(), skills.stop(), audit.close(), store.close(), network.close()]);
    },
  };
  return services;
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
