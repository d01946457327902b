// The MCP clients by id, apart from the API's schemas (common/api/client-configs.ts): the CLI checks
// `clients connect`'s argument with them at every start, the server's included.

/** The MCP clients whose configurations this app reads (import) and writes (its own entry). */
export const CLIENTS = ['claude-desktop', 'cursor', 'vscode', 'claude-code'] as const;
export type ClientId = (typeof CLIENTS)[number];
