import { randomUUID } from 'node:crypto';
import { fetchToken, selectResourceURL, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { InvalidClientError, UnauthorizedClientError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { importPKCS8, SignJWT } from 'jose';
import type { JwtAlgorithm } from '../../../common/api/client-credentials.js';
import { readChallenge } from './challenge.js';
import { discoverSignIn } from './discovery.js';
import { describeFailure, SignInFailedError, SignInUnsupportedError } from './errors.js';
import type { StoredServer } from './oauth-store.js';
import { scopeFor } from './scope-choice.js';

/**
 * A connection's machine login (the client-credentials grant, no browser, no person): its client ID
 * with a client secret (sent with HTTP Basic, or in the body where the server takes only that), or
 * with a private key that signs a short JWT assertion for each token request (RFC 7523, private_key_jwt).
 */
export type ClientCredentials =
  { clientId: string; clientSecret: string } | { clientId: string; privateKey: string; algorithm: JwtAlgorithm };

/** How the credentials are kept in the connection's keychain record (its `client.information`). */
export function credentialsInformation(credentials: ClientCredentials): OAuthClientInformationMixed {
  return 'clientSecret' in credentials
    ? { client_id: credentials.clientId, client_secret: credentials.clientSecret }
    : // Fields of this app's own beside the registration's: the record keeps them as they are.
      ({
        client_id: credentials.clientId,
        token_endpoint_auth_method: 'private_key_jwt',
        private_key_pem: credentials.privateKey,
        signing_algorithm: credentials.algorithm,
      } as OAuthClientInformationMixed);
}

/** The values in kept credentials that must never appear in a message. */
export function credentialSecrets(information: OAuthClientInformationMixed): string[] {
  const { client_secret: secret, private_key_pem: key } = information as { client_secret?: unknown; private_key_pem?: unknown };
  return [secret, key].filter((value): value is string => typeof value === 'string');
}

/**
 * Asks the authorization server for an access token with the client-credentials grant. The JWT
 * assertion's audience is the server's issuer; a secret goes by the method the server lists
 * (client_secret_basic when it lists none).
 */
export async function clientCredentialsToken(
  server: StoredServer,
  information: OAuthClientInformationMixed,
  scope: string | undefined,
  fetch: FetchLike,
): Promise<OAuthTokens> {
  const { private_key_pem: privateKey, signing_algorithm: algorithm } = information as {
    private_key_pem?: string;
    signing_algorithm?: string;
  };
  // fetchToken reads only these of a provider for a grant it is given (prepareTokenRequest).
  const provider: Pick<
    OAuthClientProvider,
    'redirectUrl' | 'clientMetadata' | 'clientInformation' | 'prepareTokenRequest' | 'addClientAuthentication'
  > = {
    redirectUrl: undefined,
    clientMetadata: { redirect_uris: [], ...(scope && { scope }) },
    clientInformation: () => information,
    prepareTokenRequest: (asked) => new URLSearchParams({ grant_type: 'client_credentials', ...(asked && { scope: asked }) }),
    ...(privateKey && algorithm && { addClientAuthentication: privateKeyJwtAuth(information.client_id, privateKey, algorithm) }),
  };
  return fetchToken(provider as OAuthClientProvider, server.authorizationServerUrl, {
    metadata: server.metadata,
    ...(server.resource && { resource: new URL(server.resource) }),
    fetchFn: fetch,
  });
}

/**
 * Client authentication by a JWT assertion signed with the private key (RFC 7523 2.2, the
 * private_key_jwt method): issued by the client about itself, for the authorization server (its
 * issuer), short-lived and used once.
 */
function privateKeyJwtAuth(
  clientId: string,
  privateKey: string,
  algorithm: string,
): NonNullable<OAuthClientProvider['addClientAuthentication']> {
  return async (_headers, params, url, metadata) => {
    const key = await importPKCS8(privateKey, algorithm);
    const assertion = await new SignJWT({})
      .setProtectedHeader({ alg: algorithm })
      .setIssuer(clientId)
      .setSubject(clientId)
      .setAudience(metadata?.issuer ?? String(url))
      .setIssuedAt()
      .setExpirationTime('1m')
      .setJti(randomUUID())
      .sign(key);
    params.set('client_assertion_type', 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
    params.set('client_assertion', assertion);
  };
}

/** A login made with machine credentials: where, with which credentials (bound to that issuer), its tokens and the scope asked for. */
export interface CredentialsLogin {
  server: StoredServer;
  information: OAuthClientInformationMixed;
  tokens: OAuthTokens;
  scope: string | undefined;
}

/**
 * A machine login to a connection's server: its authorization server found as for a sign-in
 * (discovery.ts), the grant asked for with the scope the spec's rules choose, the token bound to
 * the resource the server names. Credentials already used at one authorization server are not
 * sent to another (the stamp `issuer`): a server that changes its authorization server needs them set again.
 */
export async function credentialsLogin(
  connection: { url: string; displayName: string },
  information: OAuthClientInformationMixed,
  fetch: FetchLike,
): Promise<CredentialsLogin> {
  const name = connection.displayName;
  const secrets = credentialSecrets(information);
  let challenge;
  try {
    challenge = await readChallenge(connection.url, fetch);
  } catch (error) {
    throw new SignInFailedError(
      `Cannot reach ${name} at ${connection.url}: ${describeFailure(error, secrets)}. Check that the server URL is right and the service is up.`,
    );
  }
  const info = await discoverSignIn(connection, challenge, fetch);
  const metadata = info.authorizationServerMetadata!;
  const issuer = info.authorizationServerUrl;
  if (metadata.grant_types_supported && !metadata.grant_types_supported.includes('client_credentials')) {
    throw new SignInUnsupportedError(
      `${name}'s sign-in server ${metadata.issuer} does not offer machine logins (the client-credentials grant). Remove the client credentials and sign in in the browser.`,
    );
  }
  const stamp = (information as { issuer?: unknown }).issuer;
  if (typeof stamp === 'string' && stamp.replace(/\/$/, '') !== issuer.replace(/\/$/, '')) {
    throw new SignInFailedError(
      `${name} now names another sign-in server (${issuer}) than the one its client credentials were used with (${stamp}); they are not sent there. Set them again if they belong to it.`,
    );
  }
  let resource: string | undefined;
  try {
    // The SDK's check of the resource the server names against its URL; the name is then sent as the server wrote it.
    resource =
      (await selectResourceURL(connection.url, {} as OAuthClientProvider, info.resourceMetadata)) && info.resourceMetadata!.resource;
  } catch (error) {
    throw new SignInFailedError(`${name} names a resource that is not its own URL: ${describeFailure(error, [])}. Check the server URL.`);
  }
  const server: StoredServer = { authorizationServerUrl: issuer, metadata, ...(resource && { resource }) };
  const scope = scopeFor(challenge, info);
  const bound = { ...information, issuer } as OAuthClientInformationMixed;
  try {
    return { server, information: bound, tokens: await clientCredentialsToken(server, bound, scope, fetch), scope };
  } catch (error) {
    if (error instanceof InvalidClientError || error instanceof UnauthorizedClientError) {
      throw new SignInFailedError(
        `${name} refused the client credentials: ${describeFailure(error, secrets)}. Check the client ID and the secret or key, and set them again.`,
      );
    }
    throw new SignInFailedError(`Could not log in to ${name} with the client credentials: ${describeFailure(error, secrets)}. Try again.`);
  }
}
