#!/usr/bin/env node
import { applyWorkingDirectory, ConfigError, loadConfig, stateDirFrom, type Config, type ServeFlags } from './config.js';
import { parseCommand, takeConfigFlag, USAGE, UsageError, type Command } from './cli-args.js';
import { effectiveSettings, environmentWith, readSettingsFile, type SettingName, type SettingsFile } from './settings-file.js';
import { spawn } from 'node:child_process';
import type { ConnectionView } from './connections/place-connections.js';
import { signInCommand } from './cli-sign-ins.js';
import { resolve } from 'node:path';
import { LOGIN_LINK_TTL_MS } from './auth/admin-access.js';
import { findRunningServer } from './running-server.js';
import { AccessDirectory, policyOf } from './places/access-directory.js';
import { placeRootOf } from './places/place-root.js';
import { LOCAL_PERSON } from './places/user-id.js';
import { Host } from './host.js';
import { openSecretStore, recordedSecretStore } from './secrets/open-secret-store.js';
import { agentTokenStore, openServices, type Services } from './services.js';
import { userError } from './user-errors.js';
import { JwtConfigError } from './auth/jwt-verifier.js';
import { UnknownTokenError } from './auth/agent-tokens.js';
import { parseToolSearchMode } from './connections/tool-search/tool-search-mode.js';
import { PRODUCT_NAME, VERSION } from './version.js';

type Of<K extends Command['kind']> = Extract<Command, { kind: K }>;

async function main(argv: string[]): Promise<number> {
  const { configFile, rest } = takeConfigFlag(argv);
  const command = parseCommand(rest);
  if (command.kind === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  if (command.kind === 'version') {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  // The settings file under the environment: every command below reads this environment.
  const file = readSettingsFile(configFile);
  const env = environmentWith(file.settings);
  // The spec: WORKSPACE_CWD is applied before anything else.
  applyWorkingDirectory(env);
  switch (command.kind) {
    case 'serve':
      return serve(command.flags, env);
    case 'config':
      return configCommand(command.flags, file, env);
    case 'open':
      return openCommand(env);
    case 'token-create':
    case 'token-list':
    case 'token-revoke':
    case 'token-tool-search':
      return tokenCommand(command, env);
    case 'approve-list':
    case 'approve':
    case 'deny':
    case 'clients-list':
    case 'clients-revoke':
      return signInCommand(command, env);
    case 'places-policy':
      return policyCommand(command, env);
    case 'places-tool-search':
      return placeToolSearchCommand(command, env);
    default:
      return placeCommand(command, env);
  }
}

/** Each setting's effective value and where it came from. */
async function configCommand(flags: ServeFlags, file: SettingsFile, env: NodeJS.ProcessEnv): Promise<number> {
  // Checks the whole configuration as a start would, so a bad value shows here too.
  const config = loadConfig(flags, env);
  const flagValues: Partial<Record<SettingName, string>> = {
    ...(flags.port !== undefined && { port: String(flags.port) }),
    ...(flags.host !== undefined && { host: flags.host }),
    ...(flags.controlPort !== undefined && { controlPort: String(flags.controlPort) }),
    ...(flags.auth === false && { noAuth: 'true' }),
    ...(flags.clientMetadataUrl !== undefined && { clientMetadataUrl: flags.clientMetadataUrl }),
  };
  // Sources are told apart on the real environment, before the file's settings were put under it.
  const rows = effectiveSettings(flagValues, file, process.env);
  const store = rows.find((row) => row.name === 'secretStore')!;
  if (store.source === 'default') {
    const recorded = await recordedSecretStore(config.stateDir);
    if (recorded) Object.assign(store, { value: recorded.store, source: `chosen on first use (${recorded.path})` });
  }
  const out = [`Settings file: ${file.path}${file.found ? '' : ' (none there: defaults apply)'}`];
  const width = Math.max(...rows.map((row) => row.name.length), ...rows.map((row) => row.value.length).filter((n) => n <= 40));
  for (const row of rows) out.push(`${row.name.padEnd(width)}  ${row.value.padEnd(width)}  ${row.source}`);
  process.stdout.write(`${out.join('\n')}\n`);
  return 0;
}

/** A fresh one-time link to the running server's page (or, in the desktop app, its window). */
async function openCommand(env: NodeJS.ProcessEnv): Promise<number> {
  const stateDir = stateDirFrom(env);
  const notRunning = `No ${PRODUCT_NAME} server is running on the state dir ${stateDir}. Start it with: ${PRODUCT_NAME}`;
  const server = await findRunningServer(stateDir);
  if (!server) throw new ConfigError(notRunning);
  let answer: { url?: string; expiresInSeconds?: number; window?: boolean };
  try {
    const response = await fetch(`${server.controlUrl}/api/open`, { method: 'POST', headers: { Authorization: `Bearer ${server.adminToken}` } });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    answer = (await response.json()) as typeof answer;
  } catch (error) {
    throw new ConfigError(`${notRunning} (the server recorded there did not answer: ${(error as Error).message}).`);
  }
  if (answer.window) {
    process.stdout.write('The desktop app shows its window.\n');
    return 0;
  }
  const minutes = Math.round((answer.expiresInSeconds ?? 0) / 60);
  process.stdout.write(`Open this link in a browser on this machine; it signs you in once, within ${minutes} minutes: ${answer.url}\n`);
  const browser = env.BROWSER;
  if (browser) {
    const child = spawn(browser, [answer.url!], { detached: true, stdio: 'ignore' });
    child.on('error', (error) => process.stderr.write(`Could not start $BROWSER (${browser}): ${error.message}\n`));
    child.unref();
  }
  return 0;
}

async function serve(flags: Of<'serve'>['flags'], env: NodeJS.ProcessEnv): Promise<number> {
  const config = loadConfig(flags, env);
  const host = new Host(config, { env });
  // A busy control port (or any other failure to listen) is the user's to fix: no stack trace.
  await host.open().catch((error: unknown) => {
    throw new ConfigError((error as Error).message);
  });
  const url = await host.start().catch(async (error: unknown) => {
    const status = host.status;
    await host.close();
    throw new ConfigError(status.state === 'failed' ? status.error : String(error));
  });
  const auth = config.auth ? `JWT; app tokens${externalKeys(config)}` : 'off (--no-auth, loopback only)';
  process.stdout.write(`${PRODUCT_NAME} listening on ${url} (auth: ${auth})\n`);
  process.stdout.write(`Manage connections, skills and agent access in a browser on this machine (this link signs you in once, within ${LOGIN_LINK_TTL_MS / 60_000} minutes; "${PRODUCT_NAME} open" makes a new one): ${await host.loginUrl()}\n`);

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

async function tokenCommand(command: Of<'token-create' | 'token-list' | 'token-revoke' | 'token-tool-search'>, env: NodeJS.ProcessEnv): Promise<number> {
  const stateDir = stateDirFrom(env);
  const tokens = agentTokenStore(stateDir, await openSecretStore({ stateDir, env }));
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
async function policyCommand(command: Of<'places-policy'>, env: NodeJS.ProcessEnv): Promise<number> {
  const config = loadConfig({}, env);
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
async function placeToolSearchCommand(command: Of<'places-tool-search'>, env: NodeJS.ProcessEnv): Promise<number> {
  const config = loadConfig({}, env);
  const place = placeRootOf(config.workspaceRoot, command.place);
  const access = new AccessDirectory(config.stateDir);
  const snapshot = command.mode === undefined ? await access.snapshot() : await access.setPlaceToolSearch(place.root, parseToolSearchMode(command.mode));
  const mode = snapshot.places[place.root]?.toolSearch ?? 'auto';
  const meaning = mode === 'auto' ? `on when it has more than ${config.toolSearchThreshold} tools` : mode;
  process.stdout.write(`Tool search in ${place.label} ${command.mode === undefined ? 'is' : 'is now'} ${mode} (${meaning}); a token's own setting wins.\n`);
  return 0;
}

/** connections and secrets: the same rules as the page, acting as the person who runs the app. */
async function placeCommand(command: Of<'connections-list' | 'connections-add' | 'connections-remove' | 'connections-test' | 'connections-show' | 'connections-edit' | 'secrets-list' | 'secrets-set' | 'secrets-remove'>, env: NodeJS.ProcessEnv): Promise<number> {
  const config = loadConfig({}, env);
  const place = placeRootOf(config.workspaceRoot, command.workspacePath);
  const services = await openServices({ ...config, registryUrl: '' }, (line) => process.stderr.write(`${line}\n`), { env });
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
    case 'connections-show': {
      const details = await connections.details(LOCAL_PERSON, place, command.name, command.owner);
      if (command.json) {
        out(JSON.stringify(details, null, 2));
        return 0;
      }
      out(`${details.displayName} (${details.name}), ${details.ownerName}'s login, ${details.url}`);
      out(`  state: ${stateLine(details)}`);
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
      await connections.setSecret(LOCAL_PERSON, place, command.name, value, { replace: command.replace });
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

/**
 * Exits once stdout and stderr have handed everything to the OS: writes to a pipe are asynchronous,
 * and exiting before they finish cuts the output (at the pipe's 64 KiB, say, with `| head`).
 */
function exitAfterOutput(code: number): void {
  process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
}

main(process.argv.slice(2)).then(exitAfterOutput, (error: unknown) => {
  const message = error instanceof UsageError || error instanceof ConfigError || error instanceof JwtConfigError ? error.message : userError(error)?.message;
  process.stderr.write(`${PRODUCT_NAME}: ${message ?? (error as Error).stack ?? String(error)}\n`);
  exitAfterOutput(2);
});
