#!/usr/bin/env node
import { applyWorkingDirectory, ConfigError, loadConfig, stateDirFrom, type Config } from './config.js';
import { parseCommand, USAGE, UsageError, type Command } from './cli-args.js';
import type { ConnectionView } from './connections/place-connections.js';
import { signInCommand } from './cli-sign-ins.js';
import { resolve } from 'node:path';
import { AccessDirectory, policyOf } from './places/access-directory.js';
import { placeRootOf } from './places/place-root.js';
import { LOCAL_PERSON } from './places/user-id.js';
import { Host } from './host.js';
import { openSecretStore } from './secrets/open-secret-store.js';
import { agentTokenStore, openServices, type Services } from './services.js';
import { userError } from './user-errors.js';
import { JwtConfigError } from './auth/jwt-verifier.js';
import { UnknownTokenError } from './auth/agent-tokens.js';
import { parseToolSearchMode } from './connections/tool-search/tool-search-mode.js';
import { PRODUCT_NAME, VERSION } from './version.js';

type Of<K extends Command['kind']> = Extract<Command, { kind: K }>;

async function main(argv: string[]): Promise<number> {
  // The spec: WORKSPACE_CWD is applied before anything else.
  applyWorkingDirectory();
  const command = parseCommand(argv);
  switch (command.kind) {
    case 'help':
      process.stdout.write(USAGE);
      return 0;
    case 'version':
      process.stdout.write(`${VERSION}\n`);
      return 0;
    case 'serve':
      return serve(command.flags);
    case 'token-create':
    case 'token-list':
    case 'token-revoke':
    case 'token-tool-search':
      return tokenCommand(command);
    case 'approve-list':
    case 'approve':
    case 'deny':
    case 'clients-list':
    case 'clients-revoke':
      return signInCommand(command);
    case 'places-policy':
      return policyCommand(command);
    case 'places-tool-search':
      return placeToolSearchCommand(command);
    default:
      return placeCommand(command);
  }
}

async function serve(flags: Of<'serve'>['flags']): Promise<number> {
  const config = loadConfig(flags);
  const host = new Host(config);
  await host.open();
  const url = await host.start().catch(async (error: unknown) => {
    const status = host.status;
    await host.close();
    throw new ConfigError(status.state === 'failed' ? status.error : String(error));
  });
  const auth = config.auth ? `JWT; app tokens${externalKeys(config)}` : 'off (--no-auth, loopback only)';
  process.stdout.write(`${PRODUCT_NAME} listening on ${url} (auth: ${auth})\n`);
  process.stdout.write(`Manage connections, skills and agent access in a browser on this machine (this link signs you in once): ${await host.loginUrl()}\n`);

  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.stderr.write(`${signal} received, stopping...\n`);
      // A second signal means "now": skip the clean shutdown.
      process.once(signal, () => process.exit(130));
      host.close().then(resolve, (error: unknown) => {
        process.stderr.write(`Stopping failed: ${(error as Error).message}\n`);
        process.exit(1);
      });
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  return 0;
}

function externalKeys({ jwt }: Config): string {
  const sources = [jwt.secret && 'HS256 secret', jwt.publicKeyPem && 'public key', jwt.jwksUrl && 'JWKS'].filter(Boolean);
  return sources.length ? ` + ${sources.join(' + ')}` : '';
}

async function tokenCommand(command: Of<'token-create' | 'token-list' | 'token-revoke' | 'token-tool-search'>): Promise<number> {
  const stateDir = stateDirFrom();
  const tokens = agentTokenStore(stateDir, await openSecretStore({ stateDir }));
  switch (command.kind) {
    case 'token-create': {
      const created = await tokens.create({
        name: command.name,
        ...(command.expires !== undefined && { expiresIn: command.expires }),
        ...(command.workspacePath !== undefined && { workspacePath: command.workspacePath }),
      });
      // The token alone on stdout, so `TOKEN=$(... token create ...)` works; the rest on stderr.
      process.stderr.write(`Created token ${created.id} "${created.name}", ${created.expiresAt ? `expires ${created.expiresAt}` : 'never expires'}${created.workspacePath ? `, place ${created.workspacePath}` : ''}.\nIt is shown only now; revoke it with: ${PRODUCT_NAME} token revoke ${created.id}\n`);
      process.stdout.write(`${created.token}\n`);
      return 0;
    }
    case 'token-list': {
      const list = await tokens.list();
      if (command.json) {
        process.stdout.write(`${JSON.stringify(list, null, 2)}\n`);
      } else if (list.length === 0) {
        process.stdout.write(`No tokens yet. Create one with: ${PRODUCT_NAME} token create --name NAME\n`);
      } else {
        for (const t of list) {
          const state = t.revokedAt ? `revoked ${t.revokedAt}` : t.expiresAt ? `expires ${t.expiresAt}` : 'never expires';
          process.stdout.write(`${t.id}  ${t.name}  created ${t.createdAt}  ${state}${t.workspacePath ? `  place ${t.workspacePath}` : ''}${t.toolSearch ? `  tool search ${t.toolSearch}` : ''}\n`);
        }
      }
      return 0;
    }
    case 'token-tool-search': {
      const record =
        command.mode === undefined ? (await tokens.list()).find((t) => t.id === command.id) : await tokens.setToolSearch(command.id, parseToolSearchMode(command.mode));
      if (!record) throw new UnknownTokenError(command.id);
      const mode = record.toolSearch ?? 'auto';
      const meaning = mode === 'auto' ? "follows its place's setting" : mode === 'on' ? 'always gets search_tools and call_tool' : 'always gets every tool';
      process.stdout.write(`Tool search for token ${command.id} ${command.mode === undefined ? 'is' : 'is now'} ${mode}: an agent using it ${meaning}.\n`);
      return 0;
    }
    case 'token-revoke': {
      const revoked = await tokens.revoke(command.id);
      process.stdout.write(`Revoked token ${revoked.id} "${revoked.name}". A running server refuses it from now on.\n`);
      return 0;
    }
  }
}

/** Shows or sets a place's sandbox policy, in the access directory the running server reads on every call. */
async function policyCommand(command: Of<'places-policy'>): Promise<number> {
  const config = loadConfig();
  const place = placeRootOf(config.workspaceRoot, command.place);
  const access = new AccessDirectory(config.stateDir);
  const snapshot =
    command.policy === undefined
      ? await access.snapshot()
      : await access.setPlacePolicy(place.root, command.policy, command.folders.map((folder) => resolve(folder)));
  const policy = policyOf(snapshot, place);
  const verb = command.policy === undefined ? 'is' : 'is now';
  process.stdout.write(`The policy of ${place.label} ${verb} ${policy.kind}.${policy.folders.map((f) => `\n  extra folder: ${f}`).join('')}\n`);
  return 0;
}

/** Shows or sets a place's tool search, in the access directory a running server reads on every tools/list. */
async function placeToolSearchCommand(command: Of<'places-tool-search'>): Promise<number> {
  const config = loadConfig();
  const place = placeRootOf(config.workspaceRoot, command.place);
  const access = new AccessDirectory(config.stateDir);
  const snapshot = command.mode === undefined ? await access.snapshot() : await access.setPlaceToolSearch(place.root, parseToolSearchMode(command.mode));
  const mode = snapshot.places[place.root]?.toolSearch ?? 'auto';
  const meaning = mode === 'auto' ? `on when it has more than ${config.toolSearchThreshold} tools` : mode;
  process.stdout.write(`Tool search in ${place.label} ${command.mode === undefined ? 'is' : 'is now'} ${mode} (${meaning}); a token's own setting wins.\n`);
  return 0;
}

/** connections and secrets: the same rules as the page, acting as the person who runs the app. */
async function placeCommand(command: Of<'connections-list' | 'connections-add' | 'connections-remove' | 'connections-test' | 'secrets-list' | 'secrets-set' | 'secrets-remove'>): Promise<number> {
  const config = loadConfig();
  const place = placeRootOf(config.workspaceRoot, command.workspacePath);
  const services = await openServices({ ...config, registryUrl: '' }, (line) => process.stderr.write(`${line}\n`));
  try {
    return await runPlaceCommand(services, command, place);
  } finally {
    await services.close();
  }
}

async function runPlaceCommand(services: Services, command: Parameters<typeof placeCommand>[0], place: ReturnType<typeof placeRootOf>): Promise<number> {
  const { connections } = services;
  const out = (line: string) => process.stdout.write(`${line}\n`);
  switch (command.kind) {
    case 'connections-list': {
      // Each server is asked now (initialize + tools/list with the connection's credentials): a check takes two requests at most.
      const list = await connections.list(LOCAL_PERSON, place, { waitMs: 2 * services.config.upstreamTimeoutMs + 1_000 });
      if (command.json) out(JSON.stringify(list, null, 2));
      else if (list.length === 0) out(`${place.label} has no MCP connections. Add one with: ${PRODUCT_NAME} connections add --catalog ID`);
      else for (const c of list) out(`${c.name}  ${c.displayName}  ${c.ownerName}'s login  ${stateLine(c)}  ${c.url}`);
      return 0;
    }
    case 'connections-test': {
      const tested = await connections.test(LOCAL_PERSON, place, command.name, command.owner);
      out(`${tested.displayName} (${tested.name}): ${stateLine(tested)}`);
      return tested.state === 'connected' ? 0 : 1;
    }
    case 'connections-add': {
      const request = command.catalog ? { catalog: command.catalog, ...(command.secret && { secret: command.secret }) } : { server: command.server! };
      const added = await connections.add(LOCAL_PERSON, place, request);
      out(`Added ${added.displayName} to ${place.label} as ${added.name} (${added.state}${added.reason ? `: ${added.reason}` : ''}).`);
      return 0;
    }
    case 'connections-remove': {
      const removed = await connections.remove(LOCAL_PERSON, place, command.name, command.owner);
      out(`Removed ${removed.displayName} (${removed.name}) from ${place.label}; its login was deleted.`);
      return 0;
    }
    case 'secrets-list': {
      const names = await connections.secretNames(LOCAL_PERSON, place);
      out(names.length ? names.join('\n') : `${place.label} has no secrets. Set one with: ${PRODUCT_NAME} secrets set NAME < value-file`);
      return 0;
    }
    case 'secrets-set': {
      // From stdin, never the command line, where other users could read it in the process list.
      const value = (await readStdin()).replace(/\r?\n$/, '');
      if (!value) throw new UsageError(`secrets set reads the value from stdin, which was empty. Example: printf %s "$KEY" | ${PRODUCT_NAME} secrets set ${command.name}`);
      await connections.setSecret(LOCAL_PERSON, place, command.name, value);
      out(`Saved the secret ${command.name} of ${place.label}.`);
      return 0;
    }
    case 'secrets-remove': {
      await connections.removeSecret(LOCAL_PERSON, place, command.name);
      out(`Removed the secret ${command.name} of ${place.label}.`);
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

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    const message = error instanceof UsageError || error instanceof ConfigError || error instanceof JwtConfigError ? error.message : userError(error)?.message;
    process.stderr.write(`${PRODUCT_NAME}: ${message ?? (error as Error).stack ?? String(error)}\n`);
    process.exit(2);
  },
);
