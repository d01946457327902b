import type { IncomingMessage } from 'node:http';
import type { RequestOrigin } from './request-origin.js';

export const MCP_PATH = '/mcp';
export const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource';

/** The metadata URL a 401 points at: path-suffixed (RFC 9728 §3.1), keeping the place the client named. */
export function resourceMetadataUrl(req: IncomingMessage, originOf: RequestOrigin): string {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const place = url.searchParams.get('workspace_path');
  const query = place === null ? '' : `?${new URLSearchParams({ workspace_path: place })}`;
  return `${originOf(req)}${PROTECTED_RESOURCE_PATH}${MCP_PATH}${query}`;
}
