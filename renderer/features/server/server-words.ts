import type { AuthMode, ServerInfo } from '../../../common/api/server.js';
import type { PlaceForPerson as Place } from '../../../common/api/places.js';

// How the Server and Agent access screens put the endpoint in words.

const KEY_SOURCES: Record<'secret' | 'public-key' | 'jwks', string> = {
  secret: 'your platform’s shared secret',
  'public-key': 'your platform’s public key',
  jwks: 'your identity provider’s keys (JWKS)',
};

export function authWords(mode: AuthMode): string {
  if (!mode.required) return 'Off: any program on this machine can connect without a token (started with --no-auth).';
  const external = mode.external.map((source) => KEY_SOURCES[source]);
  const also = external.length ? `, or one signed with ${external.join(' or ')}` : '';
  return `Token required: agents sign in and you allow each one here, or they send a token made here${also}, as “Authorization: Bearer <token>”.`;
}

export function reachWords(info: ServerInfo): string {
  return info.reachable === 'this-machine'
    ? 'Only programs on this machine can reach it. To let remote agents in, start the app with --host 0.0.0.0.'
    : 'Agents on your network can reach it: give them this machine’s address in place of 127.0.0.1.';
}

/**
 * The MCP URL agents use: the public one behind a reverse proxy, else the live one while running,
 * else the one the configured port will give (none for a free port picked at start).
 */
export function mcpUrl(info: ServerInfo): string | undefined {
  if (info.publicUrl) return `${info.publicUrl}/mcp`;
  if (info.state === 'running') return info.url;
  if (info.listen.port === 0) return undefined;
  const host = info.listen.host === '0.0.0.0' || info.listen.host === '::' ? '127.0.0.1' : info.listen.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${info.listen.port}/mcp`;
}

export function addressWords(info: ServerInfo): string {
  const { host, port } = info.listen;
  if (info.state === 'running') return new URL(info.url).host;
  return port === 0 ? `${host}, on a free port picked when it starts` : `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** A place's name for people; the root itself when the place is not in the list. */
export function placeLabel(root: string, places: Place[]): string {
  if (root === '') return 'This machine';
  return places.find((p) => p.root === root)?.label ?? root;
}
