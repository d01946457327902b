import { homedir } from 'node:os';
import path, { isAbsolute, resolve } from 'node:path';
import { credentialsMethodWords, DEFAULT_JWT_ALGORITHM } from '../common/api/client-credentials.js';
import { UsageError, type Command } from './cli-args.js';
import { loadConfig } from './config.js';
import type { ConnectionView, PlaceConnections } from './connections/place-connections.js';
import { PlaceSecretsAccess } from './connections/place-secrets-access.js';
import { installHosts } from './connections/local/install-hosts.js';
import { ConnectionStore } from './connections/store/connection-store.js';
import { parseToolSearchMode } from '../common/tool-search-mode.js';
import { AccessDirectory, policyOf } from './places/access-directory.js';
import { placeRootOf, type Place } from './places/place-root.js';
import { LOCAL_PERSON } from './places/user-id.js';
import { describeNetwork } from './places/sandbox-policy.js';
import { CREDENTIAL_STORES, isCredentialStoreName } from './places/credential-stores.js';
import type { LimitName, LimitsInEffect } from './machine/sandbox/sandbox-limits.js';
import type { PlaceLimits, SandboxPolicy } from './places/sandbox-policy.js';
import { findRunningServer } from './running-server.js';
import { openSecretStore } from './secrets/open-secret-store.js';
import { PlaceSecrets } from './secrets/place-secrets.js';
import { forTerminal } from './terminal-text.js';
import { PRODUCT_NAME } from './version.js';

type Of<K extends Command['kind']> = Extract<Command, { kind: K }>;

/** Shows or sets a place's sandbox policy, in the access directory the running server reads on every call. */
export async function policyCommand(command: Of<'places-policy'>, env: NodeJS.ProcessEnv): Promise<number> {
  const config = loadConfig({}, env);
  const place = placeRootOf(config.workspaceRoot, command.place);
  const access = new AccessDirectory(config.stateDir);
  const snapshot =
    command.policy === undefined
      ? await access.snapshot()
      : await access.setPlacePolicy(place.root, command.policy, command.folders.map((folder) => resolve(folder)));
  const policy = policyOf(snapshot, place);
  const verb = command.policy === undefined ? 'is' : 'is now';
  process.stdout.write(
    `The policy of ${place.label} ${verb} ${policy.kind}.${policy.folders.map((f) => `\n  extra folder: ${f}`).join('')}` +
      (policy.kind === 'machine' ? '' : `\n  network: ${describeNetwork(policy)}\n${limitLines(policy, await inEffectAtServer(config.stateDir, place))}`) +
      '\n',
  );
  return 0;
}

/**
 * Shows or sets the limits of a place's sandboxed commands, in the access directory: the running
 * server ends what ran under the old ones at once. What this machine enforces is the running
 * server's finding, asked of it.
 */
export async function limitsCommand(command: Of<'places-limits'>, env: NodeJS.ProcessEnv): Promise<number> {
  const config = loadConfig({}, env);
  const place = placeRootOf(config.workspaceRoot, command.place);
  const access = new AccessDirectory(config.stateDir);
  let snapshot = await access.snapshot();
  if (command.limits) {
    const merged: Record<string, number | undefined> = { ...policyOf(snapshot, place).limits, ...command.limits };
    const limits = Object.fromEntries(Object.entries(merged).filter(([, value]) => value !== undefined)) as PlaceLimits;
    snapshot = await access.setPlaceLimits(place.root, limits);
  }
  const policy = policyOf(snapshot, place);
  if (policy.kind === 'machine') {
    process.stdout.write(`${place.label} has the machine policy: its commands run outside any sandbox, with no limits. Choose the place or strict policy first.\n`);
    return 0;
  }
  process.stdout.write(`Limits of ${place.label}'s sandboxed commands (${policy.kind} policy)${command.limits ? ', now' : ''}:\n${limitLines(policy, await inEffectAtServer(config.stateDir, place))}\n`);
  return 0;
}

const LIMIT_WORDS: Record<LimitName, (value: number) => string> = {
  processes: (value) => `${value} processes and threads at once`,
  memoryMb: (value) => `${value} MiB of memory (its /tmp's files count)`,
  tmpMb: (value) => `a /tmp of ${value} MiB`,
};

/** The limits of a sandboxed policy in lines: as in effect on the running server, else as set here. */
function limitLines(policy: SandboxPolicy, inEffect: LimitsInEffect | undefined): string {
  const names = Object.keys(LIMIT_WORDS) as LimitName[];
  if (!inEffect) {
    const set = names.filter((name) => policy.limits?.[name] !== undefined).map((name) => LIMIT_WORDS[name](policy.limits![name]!));
    return `  limits: ${set.length ? `${set.join(', ')}; the others the machine's defaults` : "the machine's defaults"} (no server runs on this state dir: what this machine enforces is found when one starts)`;
  }
  const lines = names.map((name) => {
    const limit = inEffect[name];
    return `  limit: ${LIMIT_WORDS[name](limit.value)}${limit.byDefault ? " (the machine's default)" : ''}${limit.unenforced ? `, not enforced on this machine: ${limit.unenforced}` : ''}`;
  });
  if (inEffect.enforcedBy) lines.push(`  processes and memory held by ${inEffect.enforcedBy.how}`);
  return lines.join('\n');
}

/** The running server's limits in effect for the place (it found what the machine enforces at its start); none without a server. */
async function inEffectAtServer(stateDir: string, place: Place): Promise<LimitsInEffect | undefined> {
  const server = await findRunningServer(stateDir);
  if (!server) return undefined;
  const response = await fetch(`${server.controlUrl}/api/places/policy?workspace_path=${encodeURIComponent(place.root)}`, { headers: { Authorization: `Bearer ${server.adminToken}` } });
  if (!response.ok) throw new Error(`The running server did not answer with the place's policy (HTTP ${response.status}): ${(await response.text()).slice(0, 300)}`);
  return ((await response.json()) as { policy: { limitsInEffect?: LimitsInEffect } }).policy.limitsInEffect;
}

/** Shows or sets the hosts a place's sandboxed commands may reach, read by the running server on every call. */
export async function networkCommand(command: Of<'places-network'>, env: NodeJS.ProcessEnv): Promise<number> {
  const config = loadConfig({}, env);
  const place = placeRootOf(config.workspaceRoot, command.place);
  const access = new AccessDirectory(config.stateDir);
  const snapshot = command.hosts === undefined ? await access.snapshot() : await access.setPlaceNetwork(place.root, command.hosts);
  const policy = policyOf(snapshot, place);
  const verb = command.hosts === undefined ? 'reach' : 'now reach';
  process.stdout.write(`Sandboxed commands of ${place.label} (${policy.kind} policy) ${verb}: ${describeNetwork(policy)}.\n`);
  return 0;
}

/**
 * Shows what a place's agents find sealed (the credential stores, the owner's paths), seals more
 * (a path, or a store lifted before) or lifts some (`unseal`), in the access directory: the running
 * server ends what ran under the old seals at once.
 */
export async function sealCommand(command: Of<'places-seal'>, env: NodeJS.ProcessEnv): Promise<number> {
  const config = loadConfig({}, env);
  const place = placeRootOf(config.workspaceRoot, command.place);
  const access = new AccessDirectory(config.stateDir);
  let snapshot = await access.snapshot();
  if (command.paths.length > 0) {
    const before = policyOf(snapshot, place);
    const home = env.HOME && isAbsolute(env.HOME) ? env.HOME : homedir();
    // The shell expands ~/.ssh before this sees it: back to the name the rules use.
    const names = command.paths.map((path) => (path.startsWith(`${home}/`) && isCredentialStoreName(`~/${path.slice(home.length + 1)}`) ? `~/${path.slice(home.length + 1)}` : path));
    const seal = new Set(before.seal ?? []);
    const unseal = new Set(before.unseal ?? []);
    for (const name of names) {
      if (!command.unseal) {
        if (isCredentialStoreName(name)) unseal.delete(name);
        else seal.add(path.isAbsolute(name) ? path.resolve(name) : name);
      } else if (isCredentialStoreName(name)) unseal.add(name);
      else if (!seal.delete(name) && !seal.delete(path.resolve(name))) {
        throw new UsageError(`${name} is neither a credential store (see "${PRODUCT_NAME} places seal ${command.place}") nor a path sealed for ${place.label}.`);
      }
    }
    snapshot = await access.setPlaceSeals(place.root, { seal: [...seal], unseal: [...unseal] });
  }
  const policy = policyOf(snapshot, place);
  const lifted = new Set(policy.unseal ?? []);
  const lines = [`Sealed for the agents of ${place.label} (${policy.kind} policy${policy.kind === 'machine' ? ': nothing is sealed until it is place or strict' : ''}):`];
  for (const store of CREDENTIAL_STORES) lines.push(`  ${lifted.has(store.name) ? 'lifted ' : 'sealed '} ${store.name}  ${store.what}`);
  for (const path of policy.seal ?? []) lines.push(`  sealed  ${path}  (sealed by the owner)`);
  process.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}

/** Shows or sets a place's tool search, in the access directory a running server reads on every tools/list. */
export async function placeToolSearchCommand(command: Of<'places-tool-search'>, env: NodeJS.ProcessEnv): Promise<number> {
  const config = loadConfig({}, env);
  const place = placeRootOf(config.workspaceRoot, command.place);
  const access = new AccessDirectory(config.stateDir);
  const snapshot = command.mode === undefined ? await access.snapshot() : await access.setPlaceToolSearch(place.root, parseToolSearchMode(command.mode));
  const mode = snapshot.places[place.root]?.toolSearch ?? 'auto';
  const meaning = mode === 'auto' ? `on when it has more than ${config.toolSearchThreshold} tools` : mode;
  process.stdout.write(`Tool search in ${place.label} ${command.mode === undefined ? 'is' : 'is now'} ${mode} (${meaning}); a token's own setting wins.\n`);
  return 0;
}

type PlaceCommand = Of<'connections-list' | 'connections-add' | 'connections-remove' | 'connections-test' | 'connections-show' | 'connections-edit' | 'secrets-list' | 'secrets-set' | 'secrets-remove'>;
type SecretsCommand = Of<'secrets-list' | 'secrets-set' | 'secrets-remove'>;
type ConnectionsCommand = Exclude<PlaceCommand, SecretsCommand>;

/**
 * connections and secrets: the same rules as the page, acting as the person who runs the app. Each
 * opens only what it uses: the secrets commands the secret store and the state files; the
 * connections commands the connection services too, none of the server's other parts.
 */
export async function placeCommand(command: PlaceCommand, env: NodeJS.ProcessEnv): Promise<number> {
  const config = loadConfig({}, env);
  const place = placeRootOf(config.workspaceRoot, command.workspacePath);
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const secrets = await openSecretStore({ stateDir: config.stateDir, env, say: log });
  if (isSecretsCommand(command)) {
    const access = new PlaceSecretsAccess({ access: new AccessDirectory(config.stateDir), placeSecrets: new PlaceSecrets(secrets, config.stateDir), store: new ConnectionStore({ stateDir: config.stateDir }) });
    return runSecretsCommand(access, command, place);
  }
  const { openConnectionServices } = await import('./connection-services.js');
  // No sign-in starts here (that is the page's Connect), so there is no callback to come back to.
  // The app's ports, as configured and as the running server opened its control plane: never a connection's target.
  const running = await findRunningServer(config.stateDir);
  const appPorts = [config.port, config.controlPort, ...(running ? [Number(new URL(running.controlUrl).port)] : [])].filter((port) => port > 0);
  const services = openConnectionServices({ ...config, registryUrl: '' }, { secrets, log, redirectUrl: () => '/oauth/callback', env, appPorts: () => appPorts });
  try {
    return await runConnectionsCommand(services.connections, config.upstreamTimeoutMs, command, place);
  } finally {
    await services.close();
  }
}

function isSecretsCommand(command: PlaceCommand): command is SecretsCommand {
  return command.kind.startsWith('secrets-');
}

async function runSecretsCommand(secrets: PlaceSecretsAccess, command: SecretsCommand, place: Place): Promise<number> {
  const out = (line: string) => process.stdout.write(`${line}\n`);
  switch (command.kind) {
    case 'secrets-list': {
      const names = await secrets.names(LOCAL_PERSON, place);
      out(names.length ? names.join('\n') : `${place.label} has no secrets. Set one with: ${PRODUCT_NAME} secrets set NAME < value-file`);
      return 0;
    }
    case 'secrets-set': {
      // From stdin, never the command line, where other users could read it in the process list.
      const value = (await readStdin()).replace(/\r?\n$/, '');
      if (!value) throw new UsageError(`secrets set reads the value from stdin, which was empty. Example: printf %s "$KEY" | ${PRODUCT_NAME} secrets set ${command.name}`);
      // A running server reads a secret at each request, so the connections that send it use the new value from now on.
      await secrets.set(LOCAL_PERSON, place, command.name, value, { replace: command.replace });
      out(`Saved the secret ${command.name} of ${place.label}.`);
      return 0;
    }
    case 'secrets-remove': {
      await secrets.remove(LOCAL_PERSON, place, command.name);
      out(`Removed the secret ${command.name} of ${place.label}.`);
      return 0;
    }
  }
}

async function runConnectionsCommand(connections: PlaceConnections, upstreamTimeoutMs: number, command: ConnectionsCommand, place: Place): Promise<number> {
  // What servers, the registry and other people wrote is printed as text, never as terminal controls.
  const out = (line: string) => process.stdout.write(`${forTerminal(line)}\n`);
  switch (command.kind) {
    case 'connections-list': {
      // Each server is asked now (initialize + tools/list with the connection's credentials): a check takes two requests at most.
      const list = await connections.list(LOCAL_PERSON, place, { waitMs: 2 * upstreamTimeoutMs + 1_000 });
      if (command.json) out(JSON.stringify(list, null, 2));
      else if (list.length === 0) out(`${place.label} has no MCP connections. Add one with: ${PRODUCT_NAME} connections add --catalog ID`);
      else for (const c of list) out(`${c.name}  ${c.displayName}  ${c.ownerName}'s login  ${stateLine(c)}  ${c.url ?? c.local?.commandLine}`);
      return 0;
    }
    case 'connections-show': {
      const details = await connections.details(LOCAL_PERSON, place, command.name, command.owner);
      if (command.json) {
        out(JSON.stringify(details, null, 2));
        return 0;
      }
      out(`${details.displayName} (${details.name}), ${details.ownerName}'s login, ${details.url ?? `runs ${details.local?.commandLine}`}`);
      out(`  state: ${stateLine(details)}`);
      if (details.local) {
        for (const e of details.local.env) out(`  variable ${e.name} from the secret ${e.secret}`);
        if (details.local.hosts.length) out(`  may also reach: ${details.local.hosts.join(', ')}`);
        const p = details.local.process;
        out(`  process: ${p ? `${p.state}${p.pid ? ` (pid ${p.pid})` : ''}${p.stopped ? `: ${p.stopped}` : ''}; log ${p.logFile}` : 'not started by this command'}`);
        for (const line of p?.stderr ?? []) out(`  stderr: ${line}`);
      }
      if (details.header) out(`  header: ${details.header} from the secret ${details.secretName}`);
      if (details.ownApp) out(`  signs in with your own OAuth app ${details.ownApp.clientId}`);
      if (details.clientCredentials) out(`  logs in with the client credentials ${details.clientCredentials.clientId}, ${credentialsMethodWords[details.clientCredentials.method]}`);
      for (const tool of details.toolList) out(`  ${tool.enabled ? 'on ' : 'off'}  ${tool.name}${tool.description ? `  ${tool.description.replace(/\s+/g, ' ').slice(0, 100)}` : ''}`);
      for (const error of details.errors) out(`  error at ${error.at}: ${error.message}`);
      return 0;
    }
    case 'connections-edit': {
      const edit = command.edit;
      if (command.clientSecretFromStdin && edit.ownApp) {
        const clientSecret = (await readStdin()).replace(/\r?\n$/, '');
        if (!clientSecret) throw new UsageError(`--client-secret-stdin reads the secret from stdin, which was empty. Example: printf %s "$SECRET" | ${PRODUCT_NAME} connections edit ${command.name} --client-id ID --client-secret-stdin`);
        edit.ownApp = { ...edit.ownApp, clientSecret };
      }
      if (command.credentials) {
        const { clientId, privateKeyFromStdin: key } = command.credentials;
        const given = await readStdin();
        if (!given.trim()) {
          const flag = key ? '--private-key-stdin' : '--client-secret-stdin';
          throw new UsageError(`${flag} reads the ${key ? 'private key' : 'secret'} from stdin, which was empty. Example: ${key ? '<key.pem' : 'printf %s "$SECRET" |'} ${PRODUCT_NAME} connections edit ${command.name} --client-credentials ${clientId} ${flag}`);
        }
        // A PEM key keeps its line breaks; a secret loses the one its echo added.
        edit.clientCredentials = key ? { clientId, privateKey: given, algorithm: key.algorithm ?? DEFAULT_JWT_ALGORITHM } : { clientId, clientSecret: given.replace(/\r?\n$/, '') };
      }
      const edited = await connections.edit(LOCAL_PERSON, place, command.name, edit, command.owner);
      out(`Changed ${edited.displayName} (${edited.name}): ${stateLine(edited)}`);
      if (edit.ownApp !== undefined) out(`Sign in to it again from the page to use ${edit.ownApp ? `your OAuth app ${edit.ownApp.clientId}` : 'it without your own OAuth app'}.`);
      if (edit.clientCredentials === null) out('It signs in in the browser again: sign in to it from the page.');
      return 0;
    }
    case 'connections-test': {
      const tested = await connections.test(LOCAL_PERSON, place, command.name, command.owner);
      out(`${tested.displayName} (${tested.name}): ${stateLine(tested)}`);
      return tested.state === 'connected' ? 0 : 1;
    }
    case 'connections-add': {
      // A local server given no hosts may reach the one its launcher installs from, as the page proposes.
      const local = command.local && { ...command.local, hosts: command.local.hosts ?? (await installHosts(command.local.command)) };
      const request = command.catalog ? { catalog: command.catalog, ...(command.secret && { secret: command.secret }) } : local ? { local } : { server: command.server! };
      const added = await connections.add(LOCAL_PERSON, place, request);
      out(`Added ${added.displayName} to ${place.label} as ${added.name} (${added.state}${added.reason ? `: ${added.reason}` : ''}).`);
      if (added.local?.hosts.length) out(`Under the place and strict policies it may also reach: ${added.local.hosts.join(', ')}.`);
      return 0;
    }
    case 'connections-remove': {
      const removed = await connections.remove(LOCAL_PERSON, place, command.name, command.owner);
      out(`Removed ${removed.displayName} (${removed.name}) from ${place.label}; its login was deleted.`);
      return 0;
    }
  }
}

/** A connection's state in one line: connected with its tool count, or the state and what to do. */
function stateLine(c: ConnectionView): string {
  if (c.state === 'connected') return `connected (${c.tools ?? 0} tools, checked ${c.checkedAt ?? 'now'})`;
  return `${c.state}${c.reason ? ` (${c.reason})` : ''}`;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
