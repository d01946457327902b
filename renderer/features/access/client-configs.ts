// Copy-ready configuration of MCP clients for this server. Plain data, no DOM: tested under Node
// (test/renderer/client-configs.test.ts). Claude Code, Cursor and VS Code can sign in with OAuth by
// themselves (the owner approves them here), so without a token theirs carry no header; once a token
// is created here, every client's text carries it, so whichever one is pasted uses it. Formats as each client documents them: Claude Code's
// `claude mcp add --transport http`; Cursor's `.cursor/mcp.json` (`mcpServers`,
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

/** Said under the clients that sign in by themselves, when the endpoint needs sign-in. */
export const SIGN_IN_NOTE = 'On first use it opens a sign-in page; approve it here under Waiting sign-ins (check the code matches).';

export function clientConfigs({ url, authRequired, token }: ConfigInput): ClientConfig[] {
  const authorization = `Bearer ${token ?? TOKEN_PLACEHOLDER}`;
  const headers = authRequired ? { headers: { Authorization: authorization } } : {};
  // The clients that can sign in carry the header only when there is a real token to put in it.
  const withToken = authRequired && token !== undefined;
  const tokenHeaders = withToken ? headers : {};
  const json = (value: unknown) => JSON.stringify(value, null, 2);
  const signIn = withToken ? ' It sends the token you just created.' : authRequired ? ` ${SIGN_IN_NOTE}` : '';
  return [
    {
      id: 'claude-code',
      name: 'Claude Code',
      where: `Run this in a terminal, in the project where Claude Code should use this machine.${signIn}`,
      // The URL quoted for shells that glob `[` and `?`.
      text: `claude mcp add --transport http ${SERVER_NAME} "${url}"${withToken ? ` --header "Authorization: ${authorization}"` : ''}`,
    },
    {
      id: 'cursor',
      name: 'Cursor',
      where: `Put this in .cursor/mcp.json in your project (or ~/.cursor/mcp.json for every project).${signIn}`,
      text: json({ mcpServers: { [SERVER_NAME]: { url, ...tokenHeaders } } }),
    },
    {
      id: 'vscode',
      name: 'VS Code',
      where: `Put this in .vscode/mcp.json in your workspace.${signIn}`,
      text: json({ servers: { [SERVER_NAME]: { type: 'http', url, ...tokenHeaders } } }),
    },
    {
      id: 'generic',
      name: 'Other clients',
      where: `For clients that cannot sign in by themselves: most read this mcpServers JSON. Streamable HTTP transport${authRequired ? ', with a token from above' : ''}.`,
      text: json({ mcpServers: { [SERVER_NAME]: { type: 'http', url, ...headers } } }),
    },
  ];
}

/** What the page knows of tool search where a client's agent works (see renderer/api/access.ts). */
export interface ToolSearchFacts {
  on: boolean;
  by: 'token' | 'place' | 'automatic';
  toolCount: number;
  threshold: number;
  /** The place's name, as the page shows it. */
  place: string;
}

/** Roughly how many tools each client takes, where it has a cap and no tool search of its own. */
const CLIENT_TOOL_CAPS: Partial<Record<ClientId, { name: string; cap: number }>> = {
  cursor: { name: 'Cursor', cap: 40 },
  vscode: { name: 'VS Code', cap: 128 },
};

/** One line per client config: whether this server's tool search is on for that client's agent, and what that means for it. */
export function toolSearchNote(client: ClientId, facts: ToolSearchFacts): string {
  const why =
    facts.by === 'automatic'
      ? `${facts.place} has ${facts.toolCount} tools, ${facts.on ? 'more than' : 'no more than'} ${facts.threshold}`
      : `set for ${facts.by === 'place' ? facts.place : 'this token'}`;
  const state = facts.on
    ? `Tool search is on (${why}): the agent gets the machine's tools with search_tools and call_tool, which find and run the rest.`
    : `Tool search is off (${why}): the agent gets all ${facts.toolCount} tools.`;
  if (client === 'claude-code')
    return `${state} Claude Code also searches tools itself; the machine's tools are marked to load on every turn.`;
  const limit = CLIENT_TOOL_CAPS[client];
  if (limit && !facts.on && facts.toolCount > limit.cap)
    return `${state} That is more than ${limit.name} takes (about ${limit.cap}): turn tool search on for this place.`;
  return state;
}
