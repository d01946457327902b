import { mkdir } from 'node:fs/promises';
import { AuditLog } from './audit/audit-log.js';
import { AdminAccess } from './auth/admin-access.js';
import { AgentTokenStore } from './auth/agent-tokens.js';
import type { Config } from './config.js';
import { CatalogService } from './connections/catalog/catalog-service.js';
import { Gateway } from './connections/gateway/gateway.js';
import { PlaceConnections } from './connections/place-connections.js';
import { ConnectionStore } from './connections/store/connection-store.js';
import { CommandRunner } from './machine/command-runner.js';
import { SkillsWatch } from './machine/skills-watch.js';
import { Changes } from './mcp/resource-subscriptions.js';
import { PlaceSessions } from './mcp/place-sessions.js';
import { AccessDirectory } from './places/access-directory.js';
import { ConnectionSecrets } from './secrets/connection-secrets.js';
import { openSecretStore } from './secrets/open-secret-store.js';
import { PlaceSecrets } from './secrets/place-secrets.js';
import type { SecretStore } from './secrets/secret-store.js';
import { SecretStoreSigningKeySource } from './secrets/signing-key-source.js';

/** Everything both listeners share, made once per run of the app. */
export interface Services {
  config: Config;
  log: (line: string) => void;
  admin: AdminAccess;
  tokens: AgentTokenStore;
  access: AccessDirectory;
  placeSecrets: PlaceSecrets;
  catalog: CatalogService;
  store: ConnectionStore;
  gateway: Gateway;
  connections: PlaceConnections;
  placeSessions: PlaceSessions;
  audit: AuditLog;
  commands: CommandRunner;
  skills: SkillsWatch;
  skillsChanged: Changes;
  close(): Promise<void>;
}

/** The app's own agent tokens, signed with a key kept in the secret store (the CLI uses this too). */
export function agentTokenStore(stateDir: string, secrets: SecretStore): AgentTokenStore {
  return new AgentTokenStore({ stateDir, keySource: new SecretStoreSigningKeySource(secrets, stateDir) });
}

export async function openServices(config: Config, log: (line: string) => void, env: NodeJS.ProcessEnv = process.env): Promise<Services> {
  await mkdir(config.stateDir, { recursive: true, mode: 0o700 });
  const secrets = openSecretStore({ stateDir: config.stateDir, env });
  const placeSecrets = new PlaceSecrets(secrets);
  const connectionSecrets = new ConnectionSecrets(secrets);
  const access = new AccessDirectory(config.stateDir);
  const store = new ConnectionStore({ stateDir: config.stateDir });
  const catalog = new CatalogService({ stateDir: config.stateDir, registryUrl: config.registryUrl, report: log });
  const placeSessions = new PlaceSessions();

  // The gateway reads credentials through the connections service, which owns the rules.
  let connections: PlaceConnections | undefined;
  const gateway = new Gateway({ timeoutMs: config.upstreamTimeoutMs, allowPrivateNetwork: config.allowPrivateNetwork, credentials: (c) => connections!.credentials(c) });
  connections = new PlaceConnections({ store, access, catalog, placeSecrets, connectionSecrets, gateway, allowPrivateNetwork: config.allowPrivateNetwork });

  const stopStoreWatch = store.onChange((roots) => placeSessions.toolsChanged(roots));
  await store.watch();
  const stopGatewayWatch = gateway.onToolsChanged((root) => placeSessions.toolsChanged([root]));

  const skillsChanged = new Changes();
  const skills = new SkillsWatch(config.skillsDir, {
    onChange: () => skillsChanged.emit(),
    onInvalid: (skill) => log(`Skill folder ${skill.dir} skipped: ${skill.reason}`),
    onError: (error) => log(`Cannot read the skills folder ${config.skillsDir}: ${error.message}`),
  });
  await skills.start();
  await catalog.start();

  const audit = new AuditLog({ stateDir: config.stateDir });
  const commands = new CommandRunner({ maxTimeoutSeconds: config.shellMaxTimeoutSeconds });
  return {
    config,
    log,
    admin: new AdminAccess(),
    tokens: agentTokenStore(config.stateDir, secrets),
    access,
    placeSecrets,
    catalog,
    store,
    gateway,
    connections,
    placeSessions,
    audit,
    commands,
    skills,
    skillsChanged,
    close: async () => {
      stopStoreWatch();
      stopGatewayWatch();
      await commands.killAll();
      // A registry fetch still running is left to finish on its own: shutdown never waits on the network.
      await Promise.all([gateway.closeAll(), skills.stop(), audit.close(), store.close()]);
    },
  };
}
