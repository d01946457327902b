import { homedir } from 'node:os';
import path, { isAbsolute, resolve } from 'node:path';
import * as z from 'zod';
import { credentialsMethodWords } from '../common/api/client-credentials.js';
import { UsageError, type Command } from './cli-args.js';
import { loadConfig } from './config.js';
import {
  addBodyOf,
  connectionAnswer,
  connectionDetailsAnswer,
  placeConnectionsAnswer,
  removedAnswer,
  secretNamesAnswer,
  type secretBody,
  type AddConnection,
  type ConnectionDetails,
  type ConnectionEdit,
  type ConnectionView,
} from '../common/api/connections.js';
import { placePolicyAnswer, placeToolSearchAnswer, type PlacePolicy, type PlaceToolSearchSetting } from '../common/api/places.js';
import { printJson } from './cli-json.js';
import { waitingFor } from './cli-waiting.js';
import type { PlaceConnections } from './connections/place-connections.js';
import { PlaceSecretsAccess } from './connections/place-secrets-access.js';
import { installHosts } from './connections/local/install-hosts.js';
import { ConnectionStore } from './connections/store/connection-store.js';
import { parseToolSearchMode } from '../common/tool-search-mode.js';
import { AccessDirectory, policyOf } from './places/access-directory.js';
import { placeRootOf, type Place } from './places/place-root.js';
import { LOCAL_PERSON } from './places/user-id.js';
import { describeNetwork } from './places/sandbox-policy.js';
import { policyView } from './places/policy-view.js';
import { CREDENTIAL_STORES, isCredentialStoreName } from './places/credential-stores.js';
import type { LimitName } from './machine/sandbox/sandbox-limits.js';
import type { PlaceLimits } from './places/sandbox-policy.js';
import { findRunningServer } from './running-server.js';
import { openSecretStore } from './secrets/open-secret-store.js';
import { PlaceSecrets } from './secrets/place-secrets.js';
import { forTerminal } from './terminal-text.js';
import { checkLimitMs, runningServer, sayNoServer, withQuery, type ServerClient } from './server-client.js';
import { PRODUCT_NAME } from './version.js';

type Of<K extends Command['kind']> = Extract<Command, { kind: K }>;

/** Shows or sets a place's sandbox policy: through the running server (which says if this machine cannot honour it), else in the access directory. */
export async function policyCommand(command: Of<'places-policy'>, env: NodeJS.ProcessEnv): Promise<number> {
  const config = loadConfig({}, env);
  const place = placeRootOf(config.workspaceRoot, command.place);
  const folders = command.folders.map((folder) => resolve(folder));
  const policy = await placePolicy(config.stateDir, place, command.policy === undefined ? undefined : { policy: command.policy, folders });
  if (command.json) return printJson(policy);
  const verb = command.policy === undefined ? 'is' : 'is now';
  process.stdout.write(
    `The policy of ${place.label} ${verb} ${policy.kind}.${policy.folders.map((f) => `\n  extra folder: ${f}`).join('')}` +
      (policy.kind === 'machine' ? '' : `\n  network: ${describeNetwork(policy)}\n${limitLines(policy)}`) +
      (policy.problem ? `\n  ${policy.problem}` : '') +
      '\n',
  );
  return 0;
}

/**
 * Shows or sets the limits of a place's sandboxed commands: through the running server (which ends
 * what ran under the old ones at once, and says what this machine enforces), else in the access directory.
 */
export async function limitsCommand(command: Of<'places-limits'>, env: NodeJS.ProcessEnv): Promise<number> {
  const config = loadConfig({}, env);
  const place = placeRootOf(config.workspaceRoot, command.place);
  const policy = await placePolicy(config.stateDir, place, command.limits && { limits: command.limits });
  if (command.json) return printJson(policy);
  if (policy.kind === 'machine') {
    process.stdout.write(
      `${place.label} has the machine policy: its commands run outside any sandbox, with no limits. Choose the place or strict policy first.\n`,
    );
    return 0;
  }
  process.stdout.write(
    `Limits of ${place.label}'s sandboxed commands (${policy.kind} policy)${command.limits ? ', now' : ''}:\n${limitLines(policy)}\n`,
  );
  return 0;
}

const LIMIT_WORDS: Record<LimitName, (value: number) => string> = {
  processes: (value) => `${value} processes and threads at once`,
  memoryMb: (value) => `${value} MiB of memory (its /tmp's files count)`,
  tmpMb: (value) => `a /tmp of ${value} MiB`,
};

/** The limits of a sandboxed policy in lines: as in effect on the running server, else as set in the access directory. */
function limitLines(policy: PlacePolicy): string {
  const names = Object.keys(LIMIT_WORDS) as LimitName[];
  const inEffect = policy.limitsInEffect;
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

/** Shows or sets the hosts a place's sandboxed commands may reach: through the running server, else in the access directory. */
export async function networkCommand(command: Of<'places-network'>, env: NodeJS.ProcessEnv): Promise<number> {
  const config = loadConfig({}, env);
  const place = placeRootOf(config.workspaceRoot, command.place);
  const policy = await placePolicy(config.stateDir, place, command.hosts === undefined ? undefined : { hosts: command.hosts });
  if (command.json) return printJson(policy);
  const verb = command.hosts === undefined ? 'reach' : 'now reach';
  process.stdout.write(`Sandboxed commands of ${place.label} (${policy.kind} policy) ${verb}: ${describeNetwork(policy)}.\n`);
  return 0;
}

/** A change of a place's limits: each one given, undefined for back to the machine's default; the others stay. */
type LimitsChange = Partial<Record<keyof PlaceLimits, number | undefined>>;
type PolicyChange = { policy: string; folders: string[] } | { hosts: string[] } | { limits: LimitsChange };

/** A place's policy after the change asked for (none: as it is), as the running server has it, else from the access directory. */
async function placePolicy(stateDir: string, place: Place, change: PolicyChange | undefined): Promise<PlacePolicy> {
  const server = await runningServer(stateDir);
  if (server) {
    const where = { workspace_path: place.root };
    const get = async () => (await server.call('GET', withQuery('/places/policy', where), placePolicyAnswer)).policy;
    if (!change) return get();
    if ('limits' in change)
      return (
        await server.call('PUT', '/places/limits', placePolicyAnswer, { ...where, ...withLimits((await get()).limits, change.limits) })
      ).policy;
    return 'hosts' in change
      ? (await server.call('PUT', '/places/network', placePolicyAnswer, { ...where, hosts: change.hosts })).policy
      : (await server.call('PUT', '/places/policy', placePolicyAnswer, { ...where, ...change })).policy;
  }
  sayNoServer(
    stateDir,
    `${change ? 'writes' : 'reads'} the access directory itself and cannot say whether this machine can honour the policy`,
  );
  const access = new AccessDirectory(stateDir);
  const snapshot = await access.snapshot();
  if (!change) return policyView(policyOf(snapshot, place));
  const changed =
    'limits' in change
      ? await access.setPlaceLimits(place.root, withLimits(policyOf(snapshot, place).limits, change.limits))
      : 'hosts' in change
        ? await access.setPlaceNetwork(place.root, change.hosts)
        : await access.setPlacePolicy(place.root, change.policy, change.folders);
  return policyView(policyOf(changed, place));
}

function withLimits(current: PlaceLimits | undefined, change: LimitsChange): PlaceLimits {
  return Object.fromEntries(Object.entries({ ...current, ...change }).filter(([, value]) => value !== undefined));
}

/**
 * Shows what a place's agents find sealed (the credential stores, the owner's paths), seals more
 * (a path, or a store lifted before) or lifts some (`unseal`): through the running server, else in
 * the access directory (a server started later reads it).
 */
export async function sealCommand(command: Of<'places-seal'>, env: NodeJS.ProcessEnv): Promise<number> {
  const config = loadConfig({}, env);
  const place = placeRootOf(config.workspaceRoot, command.place);
  const server = await runningServer(config.stateDir);
  if (!server) sayNoServer(config.stateDir, 'reads and writes the access directory itself');
  const access = new AccessDirectory(config.stateDir);
  let policy = server
    ? (await server.call('GET', withQuery('/places/policy', { workspace_path: place.root }), placePolicyAnswer)).policy
    : policyView(policyOf(await access.snapshot(), place));
  if (command.paths.length > 0) {
    const home = env.HOME && isAbsolute(env.HOME) ? env.HOME : homedir();
    // The shell expands ~/.ssh before this sees it: back to the name the rules use.
    const names = command.paths.map((path) =>
      path.startsWith(`${home}/`) && isCredentialStoreName(`~/${path.slice(home.length + 1)}`) ? `~/${path.slice(home.length + 1)}` : path,
    );
    const seal = new Set(policy.seal ?? []);
    const unseal = new Set(policy.unseal ?? []);
    for (const name of names) {
      if (!command.unseal) {
        if (isCredentialStoreName(name)) unseal.delete(name);
        else seal.add(path.isAbsolute(name) ? path.resolve(name) : name);
      } else if (isCredentialStoreName(name)) unseal.add(name);
      else if (!seal.delete(name) && !seal.delete(path.resolve(name))) {
        throw new UsageError(
          `${name} is neither a credential store (see "${PRODUCT_NAME} places seal ${command.place}") nor a path sealed for ${place.label}.`,
        );
      }
    }
    const seals = { seal: [...seal], unseal: [...unseal] };
    policy = server
      ? (await server.call('PUT', '/places/seals', placePolicyAnswer, { workspace_path: place.root, ...seals })).policy
      : policyView(policyOf(await access.setPlaceSeals(place.root, seals), place));
  }
  if (command.json) return printJson(policy);
  const lifted = new Set(policy.unseal ?? []);
  const lines = [
    `Sealed for the agents of ${place.label} (${policy.kind} policy${policy.kind === 'machine' ? ': nothing is sealed until it is place or strict' : ''}):`,
  ];
  for (const store of CREDENTIAL_STORES) lines.push(`  ${lifted.has(store.name) ? 'lifted ' : 'sealed '} ${store.name}  ${store.what}`);
  for (const path of policy.seal ?? []) lines.push(`  sealed  ${path}  (sealed by the owner)`);
  process.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}

/** Shows or sets a place's tool search: through the running server (which counts the place's tools), else in the access directory. */
export async function placeToolSearchCommand(command: Of<'places-tool-search'>, env: NodeJS.ProcessEnv): Promise<number> {
  const config = loadConfig({}, env);
  const place = placeRootOf(config.workspaceRoot, command.place);
  const server = await runningServer(config.stateDir);
  let answer: PlaceToolSearchSetting;
  if (server) {
    answer =
      command.mode === undefined
        ? await server.call('GET', withQuery('/tool-search', { workspace_path: place.root }), placeToolSearchAnswer)
        : await server.call('PUT', '/access/places/tool-search', placeToolSearchAnswer, { workspace_path: place.root, mode: command.mode });
  } else {
    sayNoServer(config.stateDir, `${command.mode === undefined ? 'reads' : 'writes'} the access directory itself`);
    const access = new AccessDirectory(config.stateDir);
    const snapshot =
      command.mode === undefined ? await access.snapshot() : await access.setPlaceToolSearch(place.root, parseToolSearchMode(command.mode));
    // Without a server, nobody counted the place's tools: the setting alone.
    answer = {
      workspace_path: place.root,
      label: place.label,
      mode: snapshot.places[place.root]?.toolSearch ?? 'auto',
      threshold: config.toolSearchThreshold,
    };
  }
  if (command.json) return printJson(answer);
  const mode = answer.mode;
  const meaning = mode === 'auto' ? `on when it has more than ${config.toolSearchThreshold} tools` : mode;
  process.stdout.write(
    `Tool search in ${place.label} ${command.mode === undefined ? 'is' : 'is now'} ${mode} (${meaning}); a token's own setting wins.\n`,
  );
  return 0;
}

type PlaceCommand = Of<
  | 'connections-list'
  | 'connections-add'
  | 'connections-remove'
  | 'connections-test'
  | 'connections-show'
  | 'connections-edit'
  | 'secrets-list'
  | 'secrets-set'
  | 'secrets-remove'
>;
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
  // The running server is the one truth: it checks, and every surface shows what it found. A
  // secret set through it is sent at once by the connections that use it, which it checks again.
  const server = await runningServer(config.stateDir);
  if (server)
    return isSecretsCommand(command)
      ? runSecretsCommand(secretsAtServer(server, place), command, place)
      : runConnectionsCommand(atServer(server, place), command, place);
  const secrets = await openSecretStore({ stateDir: config.stateDir, env, say: log });
  if (isSecretsCommand(command)) {
    const access = new PlaceSecretsAccess({
      access: new AccessDirectory(config.stateDir),
      placeSecrets: new PlaceSecrets(secrets, config.stateDir),
      store: new ConnectionStore({ stateDir: config.stateDir }),
    });
    return runSecretsCommand(secretsHere(access, place), command, place);
  }
  sayNoServer(config.stateDir, 'checks the connections itself, with its own settings');
  const { openConnectionServices } = await import('./connection-services.js');
  // No sign-in starts here (that is the page's Connect), so there is no callback to come back to.
  // The app's ports, as configured and as the running server opened its control plane: never a connection's target.
  const running = await findRunningServer(config.stateDir);
  const appPorts = [config.port, config.controlPort, ...(running ? [Number(new URL(running.controlUrl).port)] : [])].filter(
    (port) => port > 0,
  );
  const services = openConnectionServices(
    { ...config, registryUrl: '' },
    { secrets, log, redirectUrl: () => '/oauth/callback', env, appPorts: () => appPorts },
  );
  try {
    return await runConnectionsCommand(here(services.connections, place, config.upstreamTimeoutMs), command, place);
  } finally {
    await services.close();
  }
}

function isSecretsCommand(command: PlaceCommand): command is SecretsCommand {
  return command.kind.startsWith('secrets-');
}

/** A place's secrets as a command reaches them: through the running server, or in the secret store. */
interface PlaceSecretsAt {
  names(): Promise<string[]>;
  set(name: string, value: string, options: { replace: boolean }): Promise<void>;
  remove(name: string): Promise<void>;
}

function secretsAtServer(server: ServerClient, place: Place): PlaceSecretsAt {
  const path = (name: string) => withQuery(`/secrets/${encodeURIComponent(name)}`, { workspace_path: place.root });
  return {
    names: async () => (await server.call('GET', withQuery('/secrets', { workspace_path: place.root }), secretNamesAnswer)).names,
    set: async (name, value, { replace }) =>
      void (await server.call('PUT', path(name), noContent, { value, replace } satisfies z.input<typeof secretBody>)),
    remove: async (name) => void (await server.call('DELETE', path(name), noContent)),
  };
}

function secretsHere(secrets: PlaceSecretsAccess, place: Place): PlaceSecretsAt {
  return {
    names: () => secrets.names(LOCAL_PERSON, place),
    set: async (name, value, options) => void (await secrets.set(LOCAL_PERSON, place, name, value, options)),
    remove: (name) => secrets.remove(LOCAL_PERSON, place, name),
  };
}

/** An answer with no body (204). */
const noContent = z.undefined();

async function runSecretsCommand(secrets: PlaceSecretsAt, command: SecretsCommand, place: Place): Promise<number> {
  const out = (line: string) => process.stdout.write(`${line}\n`);
  switch (command.kind) {
    case 'secrets-list': {
      const names = await secrets.names();
      if (command.json) return printJson(names);
      out(names.length ? names.join('\n') : `${place.label} has no secrets. Set one with: ${PRODUCT_NAME} secrets set NAME < value-file`);
      return 0;
    }
    case 'secrets-set': {
      // From stdin, never the command line, where other users could read it in the process list.
      const value = (await readStdin()).replace(/\r?\n$/, '');
      if (!value)
        throw new UsageError(
          `secrets set reads the value from stdin, which was empty. Example: printf %s "$KEY" | ${PRODUCT_NAME} secrets set ${command.name}`,
        );
      await secrets.set(command.name, value, { replace: command.replace });
      out(`Saved the secret ${command.name} of ${place.label}.`);
      return 0;
    }
    case 'secrets-remove': {
      await secrets.remove(command.name);
      out(`Removed the secret ${command.name} of ${place.label}.`);
      return 0;
    }
  }
}

/** The connections of a place as a command sees them: through the running server, or checked by this command. */
interface PlaceConnectionsAt {
  /** Who checks, and the longest a check takes: what the command says it waits for. */
  who: string;
  limitMs: number;
  list(): Promise<ConnectionView[]>;
  details(name: string, owner?: string): Promise<ConnectionDetails>;
  edit(name: string, edit: ConnectionEdit, owner?: string): Promise<ConnectionView>;
  test(name: string, owner?: string): Promise<ConnectionView>;
  /** Through the running server: cancels the check running there (a check this command runs itself ends with it). */
  cancelCheck?(name: string, owner?: string): Promise<ConnectionView>;
  add(request: AddConnection): Promise<ConnectionView>;
  remove(name: string, owner?: string): Promise<ConnectionView>;
}

/** The running server's view: what the page and agents see too. */
function atServer(server: ServerClient, place: Place): PlaceConnectionsAt {
  const path = (name: string, action = '') => `/mcp/place/${encodeURIComponent(name)}${action}`;
  const where = (owner?: string) => ({ workspace_path: place.root, owner });
  return {
    who: `the server (pid ${server.server.pid})`,
    limitMs: server.limitMs,
    list: async () => (await server.call('GET', withQuery('/mcp/place', where()), placeConnectionsAnswer)).connections,
    details: async (name, owner) => (await server.call('GET', withQuery(path(name), where(owner)), connectionDetailsAnswer)).connection,
    edit: async (name, edit, owner) => (await server.call('PATCH', withQuery(path(name), where(owner)), connectionAnswer, edit)).connection,
    test: async (name, owner) => (await server.call('POST', withQuery(path(name, '/test'), where(owner)), connectionAnswer)).connection,
    cancelCheck: async (name, owner) =>
      (await server.call('POST', withQuery(path(name, '/cancel-check'), where(owner)), connectionAnswer)).connection,
    // The server goes on checking it: the command answers once it is saved.
    add: async (request) =>
      (await server.call('POST', '/mcp/place', connectionAnswer, addBodyOf({ workspace_path: place.root, wait: false }, request)))
        .connection,
    remove: async (name, owner) => (await server.call('DELETE', withQuery(path(name), where(owner)), removedAnswer)).removed,
  };
}

/** No server runs: this command checks each server itself, with its own settings. */
function here(connections: PlaceConnections, place: Place, upstreamTimeoutMs: number): PlaceConnectionsAt {
  // Each server is asked now (initialize + tools/list with the connection's credentials). Nothing
  // else would finish a check this command leaves.
  const waitMs = checkLimitMs(upstreamTimeoutMs);
  return {
    who: 'this command',
    limitMs: waitMs,
    list: () => connections.list(LOCAL_PERSON, place, { waitMs }),
    details: (name, owner) => connections.details(LOCAL_PERSON, place, name, owner),
    edit: (name, edit, owner) => connections.edit(LOCAL_PERSON, place, name, edit, owner),
    test: (name, owner) => connections.test(LOCAL_PERSON, place, name, owner),
    add: (request) => connections.add(LOCAL_PERSON, place, request, { waitMs }),
    remove: (name, owner) => connections.remove(LOCAL_PERSON, place, name, owner),
  };
}

async function runConnectionsCommand(connections: PlaceConnectionsAt, command: ConnectionsCommand, place: Place): Promise<number> {
  // What servers, the registry and other people wrote is printed as text, never as terminal controls.
  const out = (line: string) => process.stdout.write(`${forTerminal(line)}\n`);
  const { who, limitMs } = connections;
  switch (command.kind) {
    case 'connections-list': {
      const list = await waitingFor(`Waiting for ${who} to ask the servers of ${place.label} for their tools`, connections.list(), limitMs);
      if (command.json) out(JSON.stringify(list, null, 2));
      else if (list.length === 0) out(`${place.label} has no MCP connections. Add one with: ${PRODUCT_NAME} connections add --catalog ID`);
      else
        for (const c of list) out(`${c.name}  ${c.displayName}  ${c.ownerName}'s login  ${stateLine(c)}  ${c.url ?? c.local?.commandLine}`);
      return 0;
    }
    case 'connections-show': {
      const details = await waitingFor(
        `Waiting for ${who} to ask ${command.name}'s server for its tools`,
        connections.details(command.name, command.owner),
        limitMs,
      );
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
        out(
          `  process: ${p ? `${p.state}${p.pid ? ` (pid ${p.pid})` : ''}${p.stopped ? `: ${p.stopped}` : ''}; log ${p.logFile}` : 'not started yet'}`,
        );
        for (const line of p?.stderr ?? []) out(`  stderr: ${line}`);
      }
      if (details.header) out(`  header: ${details.header} from the secret ${details.secretName}`);
      if (details.ownApp) out(`  signs in with your own OAuth app ${details.ownApp.clientId}`);
      if (details.clientCredentials)
        out(
          `  logs in with the client credentials ${details.clientCredentials.clientId}, ${credentialsMethodWords[details.clientCredentials.method]}`,
        );
      for (const tool of details.toolList)
        out(
          `  ${tool.enabled ? 'on ' : 'off'}  ${tool.name}${tool.description ? `  ${tool.description.replace(/\s+/g, ' ').slice(0, 100)}` : ''}`,
        );
      for (const error of details.errors) out(`  error at ${error.at}: ${error.message}`);
      return 0;
    }
    case 'connections-edit': {
      const edit = command.edit;
      if (command.clientSecretFromStdin && edit.own_app) {
        const clientSecret = (await readStdin()).replace(/\r?\n$/, '');
        if (!clientSecret)
          throw new UsageError(
            `--client-secret-stdin reads the secret from stdin, which was empty. Example: printf %s "$SECRET" | ${PRODUCT_NAME} connections edit ${command.name} --client-id ID --client-secret-stdin`,
          );
        edit.own_app = { ...edit.own_app, client_secret: clientSecret };
      }
      if (command.credentials) {
        const { clientId, privateKeyFromStdin: key } = command.credentials;
        const given = await readStdin();
        if (!given.trim()) {
          const flag = key ? '--private-key-stdin' : '--client-secret-stdin';
          throw new UsageError(
            `${flag} reads the ${key ? 'private key' : 'secret'} from stdin, which was empty. Example: ${key ? '<key.pem' : 'printf %s "$SECRET" |'} ${PRODUCT_NAME} connections edit ${command.name} --client-credentials ${clientId} ${flag}`,
          );
        }
        // A PEM key keeps its line breaks; a secret loses the one its echo added.
        edit.client_credentials = key
          ? { client_id: clientId, private_key: given, ...(key.algorithm && { signing_algorithm: key.algorithm }) }
          : { client_id: clientId, client_secret: given.replace(/\r?\n$/, '') };
      }
      const edited = await waitingFor(
        `Waiting for ${who} to change ${command.name} and ask its server again`,
        connections.edit(command.name, edit, command.owner),
        limitMs,
      );
      out(`Changed ${edited.displayName} (${edited.name}): ${stateLine(edited)}`);
      if (edit.own_app !== undefined)
        out(
          `Sign in to it again from the page to use ${edit.own_app ? `your OAuth app ${edit.own_app.client_id}` : 'it without your own OAuth app'}.`,
        );
      if (edit.client_credentials === null) out('It signs in in the browser again: sign in to it from the page.');
      return 0;
    }
    case 'connections-test': {
      const testing = connections.test(command.name, command.owner);
      const cancel = connections.cancelCheck && (() => connections.cancelCheck!(command.name, command.owner));
      const tested = await waitingFor(
        `Waiting for ${who} to ask ${command.name}'s server for its tools${cancel ? ' (Ctrl-C cancels the check)' : ''}`,
        cancel ? cancelOnInterrupt(testing, cancel) : testing,
        limitMs,
      );
      out(`${tested.displayName} (${tested.name}): ${stateLine(tested)}`);
      return tested.state === 'connected' ? 0 : 1;
    }
    case 'connections-add': {
      // A local server given no hosts may reach the one its launcher installs from, as the page proposes.
      const local = command.local && { ...command.local, hosts: command.local.hosts ?? (await installHosts(command.local.command)) };
      const request = command.catalog
        ? { catalog: command.catalog, ...(command.secret && { secret: command.secret }) }
        : local
          ? { local }
          : { server: command.server! };
      const added = await waitingFor(`Waiting for ${who} to add the connection to ${place.label}`, connections.add(request), limitMs);
      out(`Added ${added.displayName} to ${place.label} as ${added.name} (${added.state}${added.reason ? `: ${added.reason}` : ''}).`);
      if (added.local?.hosts.length) out(`Under the place and strict policies it may also reach: ${added.local.hosts.join(', ')}.`);
      if (added.state === 'checking') {
        out(
          who === 'this command'
            ? `Its server has not answered yet. Check it again with: ${PRODUCT_NAME} connections test ${added.name}${command.workspacePath ? ` --workspace-path ${command.workspacePath}` : ''}`
            : `The server goes on checking it; the page shows how that ends, and so does: ${PRODUCT_NAME} connections show ${added.name}${command.workspacePath ? ` --workspace-path ${command.workspacePath}` : ''}`,
        );
      }
      return 0;
    }
    case 'connections-remove': {
      const removed = await waitingFor(
        `Waiting for ${who} to remove ${command.name} and end its login`,
        connections.remove(command.name, command.owner),
        limitMs,
      );
      out(`Removed ${removed.displayName} (${removed.name}) from ${place.label}; its login was deleted.`);
      return 0;
    }
  }
}

/** A connection's state in one line: connected with its tool count, or the state and what to do. */
/**
 * Ctrl-C while the running server checks: the check is cancelled there too, rather than left to
 * run, and the answer then says "cancelled". A second Ctrl-C ends the command at once.
 */
async function cancelOnInterrupt<T>(work: Promise<T>, cancel: () => Promise<unknown>): Promise<T> {
  const interrupted = () => void cancel().catch(() => {});
  process.once('SIGINT', interrupted);
  try {
    return await work;
  } finally {
    process.removeListener('SIGINT', interrupted);
  }
}

function stateLine(c: ConnectionView): string {
  if (c.state === 'connected') return `connected (${c.tools ?? 0} tools, checked ${c.checkedAt ?? 'now'})`;
  return `${c.state}${c.reason ? ` (${c.reason})` : ''}`;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
