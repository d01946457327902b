import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ConnectionIdentity } from '../../secrets/connection-secrets.js';
import type { TokenKeeper } from './token-keeper.js';

/** Told of a 403 `insufficient_scope` refusal of `token`; returns the error the request fails with. */
export type OnInsufficientScope = (token: string, challenge: string) => Promise<Error>;

/**
 * A fetch for an MCP client transport that sends the connection's access token with every
 * request: refreshed before it expires, and once more after a 401 (then the request is sent again,
 * once). A login that cannot be renewed fails the request with SignInRequiredError; a refusal for
 * lack of scope fails it with what `onInsufficientScope` makes of it (a refresh cannot widen a login).
 */
export function bearerFetch(
  keeper: TokenKeeper,
  connection: ConnectionIdentity,
  name: string,
  base: FetchLike,
  onInsufficientScope: OnInsufficientScope,
): FetchLike {
  const refusedForScope = async (response: Response, token: string): Promise<Response> => {
    const challenge = response.status === 403 ? response.headers.get('www-authenticate') : null;
    if (!challenge || !isInsufficientScope(challenge)) return response;
    await response.body?.cancel();
    throw await onInsufficientScope(token, challenge);
  };
  return async (url, init) => {
    const token = await keeper.accessToken(connection, name);
    const response = await base(url, withBearer(init, token));
    if (response.status !== 401) return refusedForScope(response, token);
    await response.body?.cancel();
    // The transports send string bodies, so the request can be sent again as it was.
    const renewed = await keeper.afterRejection(connection, name, token);
    return refusedForScope(await base(url, withBearer(init, renewed)), renewed);
  };
}

/** RFC 6750: a Bearer challenge with `error="insufficient_scope"`. */
export function isInsufficientScope(challenge: string): boolean {
  return /^\s*bearer\b/i.test(challenge) && /\berror\s*=\s*"?insufficient_scope"?/i.test(challenge);
}

function withBearer(init: RequestInit | undefined, token: string): RequestInit {
  const headers = new Headers(init?.headers);
  headers.set('Authorization', `Bearer ${token}`);
  return { ...init, headers };
}
