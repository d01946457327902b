import { extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { PRODUCT_NAME, VERSION } from '../../version.js';

/** What an MCP server's 401 challenge says about signing in to it. */
export interface Challenge {
  /** Where its protected-resource metadata is (RFC 9728 `resource_metadata`). */
  resourceMetadataUrl?: URL;
  /** The scope it asks for. */
  scope?: string;
}

/**
 * Asks the MCP server, without credentials, to start a session, as a client's first request
 * would, and reads its `WWW-Authenticate` challenge. A server that answers anything but 401 gives
 * no hints: discovery then falls back to the well-known locations.
 */
export async function readChallenge(serverUrl: string, fetch: FetchLike): Promise<Challenge> {
  const response = await initializeWithoutCredentials(serverUrl, fetch);
  await response.body?.cancel();
  await endSession(serverUrl, response, fetch);
  if (response.status !== 401) return {};
  const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(response);
  return { ...(resourceMetadataUrl && { resourceMetadataUrl }), ...(scope && { scope }) };
}

/** What a `WWW-Authenticate` header the server sent on a request says about signing in. */
export function parseChallenge(header: string): Challenge {
  const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(
    new Response(null, { status: 401, headers: { 'WWW-Authenticate': header } }),
  );
  return { ...(resourceMetadataUrl && { resourceMetadataUrl }), ...(scope && { scope }) };
}

/** Whether the MCP server wants a sign-in: it answers a first request without credentials with 401. */
export async function asksForSignIn(serverUrl: string, fetch: FetchLike): Promise<boolean> {
  const response = await initializeWithoutCredentials(serverUrl, fetch);
  await response.body?.cancel();
  await endSession(serverUrl, response, fetch);
  return response.status === 401;
}

/** A probe that opened a session closes it at the server (DELETE), as a client that is done must. */
async function endSession(serverUrl: string, response: Response, fetch: FetchLike): Promise<void> {
  const session = response.ok ? response.headers.get('mcp-session-id') : null;
  if (!session) return;
  const ended = await fetch(serverUrl, {
    method: 'DELETE',
    redirect: 'manual',
    headers: { 'Mcp-Session-Id': session, 'MCP-Protocol-Version': LATEST_PROTOCOL_VERSION },
  }).catch(() => undefined);
  await ended?.body?.cancel();
}

function initializeWithoutCredentials(serverUrl: string, fetch: FetchLike): Promise<Response> {
  return fetch(serverUrl, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': LATEST_PROTOCOL_VERSION,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: PRODUCT_NAME, version: VERSION } },
    }),
  });
}
