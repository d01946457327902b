import { resolve } from 'node:path';
import { UsageError, type Command } from './cli-args.js';
import { loadConfig } from './config.js';
import type { ConnectionView, PlaceConnections } from './connections/place-connections.js';
import { PlaceSecretsAccess } from './connections/place-secrets-access.js';
import { ConnectionStore } from './connections/store/connection-store.js';
import { parseToolSearchMode } from './connections/tool-search/tool-search-mode.js';
import { AccessDirectory, policyOf } from './places/access-directory.js';
import { placeRootOf, type Place } from './places/place-root.js';
import { LOCAL_PERSON } from './places/user-id.js';
import { describeNetwork } from './places/sandbox-policy.js';
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
      (policy.kind === 'machine' ? '' : `\n  network: ${describeNetwork(policy)}`) +
      '\n',
  );
  return 0;
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
  const appPorts = [config.port, config.controlPort].filter((port) => port > 0);
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
      const edited = await connections.edit(LOCAL_PERSON, place, command.name, edit, command.owner);
      out(`Changed ${edited.displayName} (${edited.name}): ${stateLine(edited)}`);
      if (edit.ownApp !== undefined) out(`Sign in to it again from the page to use ${edit.ownApp ? `your OAuth app ${edit.ownApp.clientId}` : 'it without your own OAuth app'}.`);
      return 0;
    }
    case 'connections-test': {
      const tested = await connections.test(LOCAL_PERSON, place, command.name, command.owner);
      out(`${tested.displayName} (${tested.name}): ${stateLine(tested)}`);
      return tested.state === 'connected' ? 0 : 1;
    }
    case 'connections-add': {
      const request = command.catalog ? { catalog: command.catalog, ...(command.secret && { secret: command.secret }) } : command.local ? { local: command.local } : { server: command.server! };
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
