import type { IncomingMessage } from 'node:http';

export const MCP_PATH = '/mcp';
export const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource';

/** The origin a request reached this server at (its Host header was checked by the guard before). */
export function originOf(req: IncomingMessage): string {
  return `http://${req.headers.host ?? 'localhost'}`;
}

/** The metadata URL a 401 points at: path-suffixed (RFC 9728 §3.1), keeping the place the client named. */
export function resourceMetadataUrl(req: IncomingMessage): string {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const place = url.searchParams.get('workspace_path');
  const query = place === null ? '' : `?${new URLSearchParams({ workspace_path: place })}`;
  return `${originOf(req)}${PROTECTED_RESOURCE_PATH}${MCP_PATH}${query}`;
}
