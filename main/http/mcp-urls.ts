import type { HostStatus } from '../../common/api/host-status.js';
import type { Config } from '../config.js';
import { ConnectionRequestError } from '../connections/place-rules.js';
import type { IncomingMessage } from 'node:http';
import type { RequestOrigin } from './request-origin.js';

export const MCP_PATH = '/mcp';
export const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource';
export const AUTHORIZATION_SERVER_PATH = '/.well-known/oauth-authorization-server';

/**
 * The OAuth documents and endpoints any browser page may call (CORS, no cookies): they hand out
 * nothing without a code, a refresh token or a registration anyone may make.
 */
const PUBLIC_OAUTH_PATHS = new Set([
  PROTECTED_RESOURCE_PATH,
  `${PROTECTED_RESOURCE_PATH}${MCP_PATH}`,
  AUTHORIZATION_SERVER_PATH,
  '/register',
  '/token',
  '/revoke',
]);

export function isPublicOAuthPath(url: string): boolean {
  const end = url.indexOf('?');
  return PUBLIC_OAUTH_PATHS.has(end === -1 ? url : url.slice(0, end));
}

/** The metadata URL a 401 points at: path-suffixed (RFC 9728 §3.1), keeping the place the client named. */
export function resourceMetadataUrl(req: IncomingMessage, originOf: RequestOrigin): string {
  return `${originOf(req)}${PROTECTED_RESOURCE_PATH}${MCP_PATH}${placeQuery(req.url ?? '/')}`;
}

/** The MCP endpoint as a client named it in the protected resource metadata URL it asked for. */
export function resourceUrl(req: IncomingMessage, originOf: RequestOrigin): string {
  return `${originOf(req)}${MCP_PATH}${placeQuery(req.url ?? '/')}`;
}

/**
 * The query of a request target, when it names a place: RFC 9728 §3.3 wants the resource exactly
 * as the client's URL had it, so `workspace_path=Crew/alpha` stays so (not `Crew%2Falpha`). Kept
 * as sent when it is one workspace_path and nothing else, in the form a URL serializes (nothing
 * to escape: it goes into a header and a document); otherwise rebuilt from the place it names.
 */
function placeQuery(target: string): string {
  const start = target.indexOf('?');
  if (start === -1) return '';
  const sent = target.slice(start + 1);
  const params = new URLSearchParams(sent);
  const place = params.get('workspace_path');
  if (place === null) return '';
  const asSent = [...params.keys()].length === 1 && new URL(`http://localhost/?${sent}`).search === `?${sent}`;
  return asSent ? `?${sent}` : `?${new URLSearchParams({ workspace_path: place })}`;
}

/** This server's MCP URL for a client on this machine: the public one, the running one, else the configured address. */
export function mcpUrlOf(config: Pick<Config, 'publicUrl' | 'port' | 'host'>, host: { status(): HostStatus }): string {
  if (config.publicUrl) return `${config.publicUrl}/mcp`;
  const status = host.status();
  if (status.state === 'running') return status.url;
  if (config.port === 0)
    throw new ConnectionRequestError(
      'The server has no port yet (it picks one when it starts). Start it, then write the configuration.',
      409,
    );
  const address =
    config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host.includes(':') ? `[${config.host}]` : config.host;
  return `http://${address}:${config.port}/mcp`;
}
