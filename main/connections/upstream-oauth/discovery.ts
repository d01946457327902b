import { discoverOAuthServerInfo, type OAuthServerInfo } from '@modelcontextprotocol/sdk/client/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Challenge } from './challenge.js';
import { describeFailure, SignInFailedError, SignInUnsupportedError } from './errors.js';

/**
 * How to sign in to a connection's server: its protected-resource metadata (from the challenge, else
 * the well-known locations) names the authorization server, whose RFC 8414 or OpenID metadata says
 * the rest. A server of the 2025-03-26 spec publishes neither: its authorization server is the
 * server's origin, at that spec's default endpoints (/authorize, /token, /register). One with
 * protected-resource metadata but no authorization-server metadata is refused (the later specs
 * require the metadata).
 */
export async function discoverSignIn(
  connection: { url: string; displayName: string },
  challenge: Challenge,
  fetch: FetchLike,
): Promise<OAuthServerInfo> {
  const name = connection.displayName;
  let info: OAuthServerInfo;
  try {
    info = await discoverOAuthServerInfo(connection.url, {
      ...(challenge.resourceMetadataUrl && { resourceMetadataUrl: challenge.resourceMetadataUrl }),
      fetchFn: fetch,
    });
  } catch (error) {
    throw new SignInFailedError(`Cannot find how to sign in to ${name}: ${describeFailure(error, [])}. Try again later.`);
  }
  if (info.authorizationServerMetadata) return info;
  if (info.resourceMetadata) {
    throw new SignInUnsupportedError(
      `${name} does not say how to sign in: ${info.authorizationServerUrl} publishes no OAuth metadata (RFC 8414 or OpenID discovery). ` +
        'Check the server URL, or add the server with an API key if it takes one.',
    );
  }
  const origin = new URL(connection.url).origin;
  return {
    authorizationServerUrl: origin,
    authorizationServerMetadata: {
      issuer: origin,
      authorization_endpoint: `${origin}/authorize`,
      token_endpoint: `${origin}/token`,
      registration_endpoint: `${origin}/register`,
      response_types_supported: ['code'],
      // The 2025-03-26 spec requires PKCE of every client, so its servers support S256.
      code_challenge_methods_supported: ['S256'],
    },
  };
}
