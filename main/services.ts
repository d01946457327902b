import { mkdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { AuditLog } from './audit/audit-log.js';
import { AdminAccess } from './auth/admin-access.js';
import type { AgentTokenStore } from './auth/agent-tokens.js';
import { agentTokenStore } from './auth/app-token-store.js';
import { Approvals } from './auth/agent-oauth/approvals.js';
import { AuthorizationServer } from './auth/agent-oauth/authorization-server.js';
import type { Config } from './config.js';
import { openConnectionServices } from './connection-services.js';
import { ChangeFeed } from './events/change-feed.js';
import { watchSkillsFolder } from './events/skills-changes.js';
import { watchStateFiles } from './events/state-changes.js';
import type { CatalogService } from './connections/catalog/catalog-service.js';
import type { GuardedFetch } from './network/guarded-fetch.js';
import type { ConnectionHealth } from './connections/gateway/connection-health.js';
import type { Gateway } from './connections/gateway/gateway.js';
import type { AccessDirectory } from './places/access-directory.js';
import type { PlaceSecrets } from './secrets/place-secrets.js';
import { ClientMetadataDocuments } from './auth/agent-oauth/client-metadata-documents.js';
import type { ConnectionOAuth } from './connections/upstream-oauth/connection-oauth.js';
import type { PlaceConnections } from './connections/place-connections.js';
import type { ConnectionStore } from './connections/store/connection-store.js';
import { CommandRunner } from './machine/command-runner.js';
import { endedByChange, PolicyWatch } from './places/policy-watch.js';
import { SandboxPool } from './machine/sandbox/sandbox-pool.js';
import { defaultLimitValues, SandboxLimits } from './machine/sandbox/sandbox-limits.js';
import { enterMethodWords } from './machine/sandbox/bubblewrap-check.js';
import { enforcerFor } from './machine/sandbox/sandbox-check.js';
import { SkillsWatch } from './machine/skills-watch.js';
import { Changes } from './mcp/resource-subscriptions.js';
import { PlaceSessions } from './mcp/place-sessions.js';
import { openSecretStore } from './secrets/open-secret-store.js';
import type { SecretStore } from './secrets/secret-store.js';
import { removeCrashTemps } from './state/atomic-write.js';

/** Everything both listeners share, made once per run of the app. */
export interface Services {
  config: Config;
  /** The app's settings as environment variables (the person's home and folders, for their MCP clients' files). */
  env: NodeJS.ProcessEnv;
  /** The control plane's origin: sign-in redirects come back there. */
  readonly controlUrl: string;
  oauth: ConnectionOAuth;
  log: (line: string) => void;
  admin: AdminAccess;
  tokens: AgentTokenStore;
  /** The agent endpoint's own OAuth authorization server: clients that sign in, and the owner's approvals. */
  agentAuthorization: AuthorizationServer;
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
  /** The places' sandbox limits: the machine's defaults and what it enforces, found once at start. */
  limits: SandboxLimits;
  /** Ends what ran under a place's old policy as soon as it changes. */
  policyWatch: PolicyWatch;
  /** The ports the app listens on (set by the host as it opens them): sandboxed commands never reach them. */
  listeningPorts: Set<number>;
  skills: SkillsWatch;
  skillsChanged: Changes;
  /** What changed, as it happens: the page's event stream and the tray listen here. */
  changes: ChangeFeed;
  close(): Promise<void>;
}

/** The OAuth authorization server, signing with the agent tokens' key. */
function authorizationServer(stateDir: string, tokens: AgentTokenStore, fetch: GuardedFetch['fetch']): AuthorizationServer {
  return new AuthorizationServer({ stateDir, signingKey: () => tokens.signingKey(), documents: new ClientMetadataDocuments(fetch) });
}

export interface ServicesOptions {
  /** The control plane's origin, where sign-ins come back; a run without one (a bench) starts no sign-in. */
  controlUrl?: string;
  env?: NodeJS.ProcessEnv;
  /** Opens a sign-in URL in the person's browser; default $BROWSER, else the link is logged. */
  openBrowser?: (url: string) => void;
  /** The sandbox limits, when their probes were started before (the CLI starts them before this code loads); else found here. */
  limits?: Promise<SandboxLimits>;
}

export async function openServices(config: Config, log: (line: string) => void, options: ServicesOptions = {}): Promise<Services> {
  const env = options.env ?? process.env;
  const controlUrl = options.controlUrl ?? '';
  // The limits' probes run programs (bwrap, a control group's first member): they run while the
  // state dir and the secrets are opened.
  const limitsFound = options.limits ?? SandboxLimits.open(defaultLimitValues(config.sandboxLimits), env);
  let secrets: SecretStore;
  try {
    await mkdir(config.stateDir, { recursive: true, mode: 0o700 });
    // Half-written state files of a process that crashed; the state itself is whole (rename is atomic).
    for (const dir of [config.stateDir, join(config.stateDir, 'personal-mcp')]) {
      for (const name of await removeCrashTemps(dir))
        log(`Removed ${join(dir, name)}, a temp file left by a process that stopped while writing it.`);
    }
    secrets = await openSecretStore({ stateDir: config.stateDir, env, say: log });
  } catch (error) {
    await limitsFound.then(
      (limits) => limits.close(),
      () => {},
    );
    throw error;
  }
  const limits = await limitsFound;
  const unenforced = Object.entries(limits.support.unenforced);
  if (unenforced.length)
    log(`Sandbox limits not enforced on this machine: ${unenforced.map(([name, why]) => `${name} (${why})`).join('; ')}.`);
  // Said once the launcher's trial has run (not waited for: the first sandboxed call reuses it).
  if (enforcerFor() === 'bubblewrap') void enterMethodWords(env).then((words) => log(`Sandboxed commands are ${words}.`));
  const listeningPorts = new Set([config.port, config.controlPort].filter((port) => port > 0));
  const connectionServices = openConnectionServices(config, {
    limits,
    secrets,
    log,
    redirectUrl: () => `${controlUrl}/oauth/callback`,
    ...(options.openBrowser && { openBrowser: options.openBrowser }),
    env,
    // The host adds the ports it opens; local servers start on first use, after that.
    appPorts: () => [...listeningPorts],
  });
  const { access, placeSecrets, store, catalog, network, oauth, gateway, health, connections } = connectionServices;
  const placeSessions = new PlaceSessions();
  const changes = new ChangeFeed();

  const stopStoreWatch = store.onChange((roots) => {
    placeSessions.toolsChanged(roots);
    for (const root of roots) changes.publish({ topic: 'connections', root });
    // The place list names the places that have connections.
    changes.publish({ topic: 'places' });
  });
  await store.watch();
  const stopConnectionsWatch = connections.onChange((root) =>
    changes.publish({ topic: 'connections', ...(root !== undefined && { root }) }),
  );
  await mkdir(dirname(store.path), { recursive: true, mode: 0o700 });
  const stopStateWatch = watchStateFiles({
    stateDir: config.stateDir,
    connectionsFile: basename(store.path),
    publish: (change) => changes.publish(change),
    // Reading the store tells its listeners (above) which places changed.
    connectionsChanged: () => void store.roots().catch(() => {}),
    secretsChanged: () => connections.secretsChanged(),
    report: (error) =>
      log(
        `Changes to the state files in ${config.stateDir} are not seen at once (${error.message}); the page shows them when it loads again.`,
      ),
  });
  const stopCatalogWatch = catalog.onChange(() => changes.publish({ topic: 'catalog' }));
  // An upstream's tools changed, a request to it failed: its health is measured again, and the
  // place's sessions hear when that changes the tools they get.
  const stopGatewayWatch = gateway.onToolsChanged((c) => health.toolsChanged(c));
  const stopFailureWatch = gateway.onFailure((c, error) => health.failed(c, error));
  const stopHealthWatch = health.onChange((root) => placeSessions.toolsChanged([root]));
  // A sign-in finished or a login ended: the place's agents gain or lose those tools.
  const stopSignInWatch = oauth.onStateChange(() => placeSessions.toolsChanged());

  const skillsChanged = new Changes();
  const skills = new SkillsWatch(config.skillsDir, {
    onChange: () => {
      skillsChanged.emit();
      changes.publish({ topic: 'skills' });
    },
    onInvalid: (skill) => log(`Skill folder ${skill.dir} skipped: ${skill.reason}`),
    onError: (error) => log(`Cannot read the skills folder ${config.skillsDir}: ${error.message}`),
  });
  await skills.start();
  const stopSkillsWatch = watchSkillsFolder(config.skillsDir, () => changes.publish({ topic: 'skills' }));
  await catalog.start();

  const audit = new AuditLog({ stateDir: config.stateDir });
  const stopAuditWatch = audit.onRecord(() => changes.publish({ topic: 'activity' }));
  const commands = new CommandRunner({ maxTimeoutSeconds: config.shellMaxTimeoutSeconds, maxSavedTotalBytes: config.bashOutputMaxBytes });
  // What earlier runs left (a crash, a kill) and what is past its day goes, now and every hour.
  commands.startSweeping(log);
  const sandboxes = new SandboxPool();
  // A policy change takes effect at once: what runs under the old one (commands, their background
  // processes, the place's live sandbox) is ended, and the commands' answers say why.
  const policyWatch = new PolicyWatch(
    access,
    async (changes) => {
      await Promise.all(
        changes.map((change) =>
          Promise.all([commands.stopPlace(change.root, endedByChange(change)), sandboxes.endPlace(change.root)]).catch((error: unknown) =>
            log(`Could not end what ran in ${change.label} under its old policy: ${(error as Error).message}`),
          ),
        ),
      );
    },
    log,
  );
  await policyWatch.start();
  const tokens = agentTokenStore(config.stateDir, secrets);
  const signIns = authorizationServer(config.stateDir, tokens, network.fetch);
  const services: Services = {
    controlUrl,
    config,
    env,
    log,
    admin: new AdminAccess(),
    tokens,
    agentAuthorization: signIns,
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
    limits,
    policyWatch,
    listeningPorts,
    skills,
    skillsChanged,
    changes,
    oauth,
    close: async () => {
      stopStoreWatch();
      stopConnectionsWatch();
      stopStateWatch();
      stopCatalogWatch();
      stopAuditWatch();
      stopSkillsWatch();
      stopGatewayWatch();
      stopFailureWatch();
      stopHealthWatch();
      stopSignInWatch();
      commands.stopSweeping();
      policyWatch.stop();
      await commands.killAll();
      for (const line of await commands.removeSavedOutputs()) log(`Saved bash outputs: ${line}`);
      await sandboxes.closeAll();
      await Promise.all([connectionServices.close(), skills.stop(), audit.close()]);
      await limits.close();
    },
  };
  return services;
}
