import { resolve } from 'node:path';
import type { Command } from './cli-args.js';
import { agentTokenStore } from './auth/app-token-store.js';
import { loadConfig } from './config.js';
import { connectClient, DEFAULT_ENTRY_NAME, entryFileOf } from './connections/client-configs/client-entry.js';
import { ClientImport } from './connections/client-configs/client-import.js';
import { machineOf } from './connections/client-configs/client-files.js';
import { mcpUrlOf } from './http/mcp-urls.js';
import { placeRootOf } from './places/place-root.js';
import { LOCAL_PERSON } from './places/user-id.js';
import { runningServer } from './server-client.js';
import { serverInfo } from '../common/api/server.js';
import type { HostStatus } from '../common/api/host-status.js';
import { openSecretStore } from './secrets/open-secret-store.js';
import { forTerminal } from './terminal-text.js';
import { PRODUCT_NAME } from './version.js';

type Of<K extends Command['kind']> = Extract<Command, { kind: K }>;

/** clients connect: this server's entry written into an MCP client's configuration, and what was written said. */
export async function clientConnectCommand(command: Of<'clients-connect'>, env: NodeJS.ProcessEnv): Promise<number> {
  const config = loadConfig({}, env);
  const place = placeRootOf(config.workspaceRoot, command.workspacePath);
  const machine = machineOf(env);
  // The running server says its URL (its port may have been picked when it started).
  const status = (await runningStatus(config.stateDir)) ?? ({ state: 'stopped' } as HostStatus);
  const file = entryFileOf(command.client, command.scope, resolve(config.workspaceRoot, place.root), machine);
  const url = mcpUrlOf(config, { status: () => status });
  const tokens = agentTokenStore(
    config.stateDir,
    await openSecretStore({ stateDir: config.stateDir, env, say: (line) => process.stderr.write(`${line}\n`) }),
  );
  const { written, token } = await connectClient({
    client: command.client,
    file,
    url,
    placeRoot: place.root,
    auth: command.auth,
    name: command.name ?? DEFAULT_ENTRY_NAME,
    replace: command.replace,
    tokens,
  });
  const out = (line: string) => process.stdout.write(`${forTerminal(line)}\n`);
  out(
    `${written.created ? 'Made' : 'Changed'} ${written.file}: ${written.replaced ? 'replaced' : 'added'} the server "${written.name}" for ${written.clientName}, working in ${place.label}:`,
  );
  out(JSON.stringify(written.entry, null, 2));
  if (written.backup) out(`The file as it was is in ${written.backup}.`);
  if (token)
    out(`<token> is a new token of this app, "${token.name}" (${token.id}); revoke it with "${PRODUCT_NAME} token revoke ${token.id}".`);
  else out(`${written.clientName} signs in with OAuth on first use; approve it with "${PRODUCT_NAME} approve CODE".`);
  return 0;
}

/** connections import: what the clients' servers would become in the place, or the chosen ones added. */
export async function importCommand(command: Of<'connections-import'>, env: NodeJS.ProcessEnv): Promise<number> {
  const config = loadConfig({}, env);
  const place = placeRootOf(config.workspaceRoot, command.workspacePath);
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const secrets = await openSecretStore({ stateDir: config.stateDir, env, say: log });
  const { openConnectionServices } = await import('./connection-services.js');
  const appPorts = [config.port, config.controlPort].filter((port) => port > 0);
  const services = openConnectionServices(
    { ...config, registryUrl: '' },
    { secrets, log, redirectUrl: () => '/oauth/callback', env, appPorts: () => appPorts },
  );
  const out = (line: string) => process.stdout.write(`${forTerminal(line)}\n`);
  try {
    const importer = new ClientImport({
      connections: services.connections,
      workspaceRoot: config.workspaceRoot,
      machine: machineOf(env),
      allowPrivateNetwork: config.allowPrivateNetwork,
    });
    const plan = await importer.plan(LOCAL_PERSON, place);
    if (!command.all && command.items.length === 0) {
      if (command.json) {
        out(JSON.stringify(plan, null, 2));
        return 0;
      }
      for (const problem of plan.problems) out(`! ${problem.file}: ${problem.problem}`);
      if (plan.items.length === 0)
        out(`No MCP servers found in the configurations of Claude Desktop, Cursor, VS Code or Claude Code for ${place.label}.`);
      for (const item of plan.items) {
        const what = !item.adds
          ? ''
          : 'url' in item.adds
            ? `${item.adds.url}${item.adds.header ? ` (${item.adds.header.name} from the secret ${item.adds.header.secret})` : ''}`
            : `runs ${item.adds.commandLine}`;
        out(
          `${item.id}  ${item.name}  ${item.clientName} (${item.scope})  ${item.problem ? `cannot be imported: ${item.problem}` : `${item.kind}: ${what}`}`,
        );
        for (const secret of item.secrets) out(`    new secret ${secret.name} of ${place.label}, from its ${secret.from}`);
        if (item.adds && 'hosts' in item.adds && item.adds.hosts.length)
          out(`    under the place and strict policies it may also reach ${item.adds.hosts.join(', ')}, where it is installed from`);
        for (const note of item.notes) out(`    ${note}`);
      }
      if (plan.items.some((item) => !item.problem))
        out(
          `Add them to ${place.label} with: ${PRODUCT_NAME} connections import ${place.root ? `--workspace-path ${place.root} ` : ''}ID... (or --all). Nothing is written to those files.`,
        );
      return 0;
    }
    const ids = command.all ? plan.items.filter((item) => !item.problem).map((item) => item.id) : command.items;
    const results = await importer.run(LOCAL_PERSON, place, ids);
    if (command.json) out(JSON.stringify(results, null, 2));
    else
      for (const r of results)
        out(
          r.added
            ? `Added ${r.name} as ${r.added.name}: ${r.added.state}${r.added.reason ? ` (${r.added.reason})` : ''}`
            : `Not added: ${r.name}: ${r.error}`,
        );
    return results.every((r) => r.added) ? 0 : 1;
  } finally {
    await services.close();
  }
}

/** The running server's state, asked of it through control.json, if one runs. */
async function runningStatus(stateDir: string): Promise<HostStatus | undefined> {
  const server = await runningServer(stateDir);
  return server?.call('GET', '/server', serverInfo);
}
