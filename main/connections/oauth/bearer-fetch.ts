import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ConnectionIdentity } from '../../secrets/connection-secrets.js';
import type { TokenKeeper } from './token-keeper.js';

/**
 * A fetch for an MCP client transport that sends the connection's access token with every
 * request: refreshed before it expires, and once more after a 401 (then the request is sent again,
 * once). A login that cannot be renewed fails the request with SignInRequiredError.
 */
export function bearerFetch(keeper: TokenKeeper, connection: ConnectionIdentity, name: string, base: FetchLike): FetchLike {
  return async (url, init) => {
    const token = await keeper.accessToken(connection, name);
    const response = await base(url, withBearer(init, token));
    if (response.status !== 401) return response;
    await response.body?.cancel();
    // The transports send string bodies, so the request can be sent again as it was.
    return base(url, withBearer(init, await keeper.afterRejection(connection, name, token)));
  };
}

function withBearer(init: RequestInit | undefined, token: string): RequestInit {
  const headers = new Headers(init?.headers);
  headers.set('Authorization', `Bearer ${token}`);
  return { ...init, headers };
}
