import { tokensAnswer, type AgentToken } from '../common/api/agent-tokens.js';
import type { Command } from './cli-args.js';
import { stateDirFrom } from './config.js';
import { UnknownTokenError } from './auth/agent-tokens.js';
import { agentTokenStore } from './auth/app-token-store.js';
import { openSecretStore } from './secrets/open-secret-store.js';
import { parseToolSearchMode } from '../common/tool-search-mode.js';
import { runningServer } from './server-client.js';
import { printJson } from './cli-json.js';
import { PRODUCT_NAME } from './version.js';

type Of<K extends Command['kind']> = Extract<Command, { kind: K }>;

export async function tokenCommand(
  command: Of<'token-create' | 'token-list' | 'token-revoke' | 'token-tool-search'>,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  const stateDir = stateDirFrom(env);
  // Reading: what the running server has, when one runs.
  const server =
    command.kind === 'token-list' || (command.kind === 'token-tool-search' && command.mode === undefined)
      ? await runningServer(stateDir)
      : undefined;
  if (server && command.kind === 'token-list') return listTokens((await server.call('GET', '/tokens', tokensAnswer)).tokens, command.json);
  if (server && command.kind === 'token-tool-search')
    return showToolSearch(
      command.id,
      (await server.call('GET', '/tokens', tokensAnswer)).tokens.find((t) => t.id === command.id),
      undefined,
      command.json,
    );
  const tokens = agentTokenStore(stateDir, await openSecretStore({ stateDir, env }));
  switch (command.kind) {
    case 'token-create': {
      const created = await tokens.create({
        name: command.name,
        ...(command.expires !== undefined && { expiresIn: command.expires }),
        ...(command.workspacePath !== undefined && { workspacePath: command.workspacePath }),
      });
      // The token alone on stdout, so `TOKEN=$(... token create ...)` works; the rest on stderr.
      process.stderr.write(
        `Created token ${created.id} "${created.name}", ${created.expiresAt ? `expires ${created.expiresAt}` : 'never expires'}${created.workspacePath ? `, place ${created.workspacePath}` : ''}.\nIt is shown only now; revoke it with: ${PRODUCT_NAME} token revoke ${created.id}\n`,
      );
      process.stdout.write(`${created.token}\n`);
      return 0;
    }
    case 'token-list':
      return listTokens(await tokens.list(), command.json);
    case 'token-tool-search': {
      const record =
        command.mode === undefined
          ? (await tokens.list()).find((t) => t.id === command.id)
          : await tokens.setToolSearch(command.id, parseToolSearchMode(command.mode));
      return showToolSearch(command.id, record, command.mode, command.json);
    }
    case 'token-revoke': {
      const revoked = await tokens.revoke(command.id);
      process.stdout.write(`Revoked token ${revoked.id} "${revoked.name}". A running server refuses it from now on.\n`);
      return 0;
    }
  }
}

function listTokens(list: AgentToken[], json: boolean): number {
  if (json) return printJson(list);
  if (list.length === 0) {
    process.stdout.write(`No tokens yet. Create one with: ${PRODUCT_NAME} token create --name NAME\n`);
  } else {
    for (const t of list) {
      const state = t.revokedAt ? `revoked ${t.revokedAt}` : t.expiresAt ? `expires ${t.expiresAt}` : 'never expires';
      process.stdout.write(
        `${t.id}  ${t.name}  created ${t.createdAt}  ${state}${t.workspacePath ? `  place ${t.workspacePath}` : ''}${t.toolSearch ? `  tool search ${t.toolSearch}` : ''}\n`,
      );
    }
  }
  return 0;
}

function showToolSearch(id: string, record: AgentToken | undefined, set: string | undefined, json: boolean): number {
  if (!record) throw new UnknownTokenError(id);
  if (json) return printJson(record);
  const mode = record.toolSearch ?? 'auto';
  const meaning =
    mode === 'auto' ? "follows its place's setting" : mode === 'on' ? 'always gets search_tools and call_tool' : 'always gets every tool';
  process.stdout.write(`Tool search for token ${id} ${set === undefined ? 'is' : 'is now'} ${mode}: an agent using it ${meaning}.\n`);
  return 0;
}
