// Copy-ready configuration of MCP clients for this server. Plain data, no DOM: tested under Node
// (test/renderer/client-configs.test.ts). Formats as each client documents them: Claude Code's
// `claude mcp add --transport http` with `--header`; Cursor's `.cursor/mcp.json` (`mcpServers`,
// `url`, `headers`); VS Code's `.vscode/mcp.json` (`servers`, `type: "http"`); and the common
// `mcpServers` JSON with `type: "http"` that other clients (Claude Code's `.mcp.json`, ...) read.

export type ClientId = 'claude-code' | 'cursor' | 'vscode' | 'generic';

export interface ClientConfig {
  id: ClientId;
  name: string;
  /** Where the text goes, for the person. */
  where: string;
  text: string;
}

/** Stands for the token until one is created here; clearly not a token, and safe inside the shell's double quotes. */
export const TOKEN_PLACEHOLDER = '<paste-your-token-here>';
export const SERVER_NAME = 'persona-workspace';

export interface ConfigInput {
  url: string;
  /** Whether the endpoint needs a token; without, no header is configured. */
  authRequired: boolean;
  /** The token just created; else the placeholder is shown. */
  token?: string;
}

export function clientConfigs({ url, authRequired, token }: ConfigInput): ClientConfig[] {
  const authorization = `Bearer ${token ?? TOKEN_PLACEHOLDER}`;
  const headers = authRequired ? { headers: { Authorization: authorization } } : {};
  const json = (value: unknown) => JSON.stringify(value, null, 2);
  // Options before the server name, as Claude Code asks; the URL quoted for shells that glob `[` and `?`.
  const header = authRequired ? ` --header "Authorization: ${authorization}"` : '';
  return [
    {
      id: 'claude-code',
      name: 'Claude Code',
      where: 'Run this in a terminal, in the project where Claude Code should use this machine.',
      text: `claude mcp add --transport http${header} ${SERVER_NAME} "${url}"`,
    },
    {
      id: 'cursor',
      name: 'Cursor',
      where: 'Put this in .cursor/mcp.json in your project (or ~/.cursor/mcp.json for every project).',
      text: json({ mcpServers: { [SERVER_NAME]: { url, ...headers } } }),
    },
    {
      id: 'vscode',
      name: 'VS Code',
      where: 'Put this in .vscode/mcp.json in your workspace.',
      text: json({ servers: { [SERVER_NAME]: { type: 'http', url, ...headers } } }),
    },
    {
      id: 'generic',
      name: 'Other clients',
      where: 'Most MCP clients read this mcpServers JSON (Claude Code’s .mcp.json, for one). Streamable HTTP transport.',
      text: json({ mcpServers: { [SERVER_NAME]: { type: 'http', url, ...headers } } }),
    },
  ];
}
