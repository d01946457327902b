import { auth, fetchToken, type OAuthServerInfo } from '@modelcontextprotocol/sdk/client/auth.js';
import { InvalidClientError, InvalidGrantError, UnauthorizedClientError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type {
  AuthorizationServerMetadata,
  OAuthClientInformationMixed,
  OAuthClientMetadata,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ConnectionIdentity } from '../../secrets/connection-secrets.js';
import { PRODUCT_NAME, VERSION } from '../../version.js';
import { parseChallenge, readChallenge, type Challenge } from './challenge.js';
import { discoverSignIn } from './discovery.js';
import {
  describeFailure,
  OwnAppRequiredError,
  SignInDeniedError,
  SignInFailedError,
  SignInStateError,
  SignInUnsupportedError,
} from './errors.js';
import { lastGrantedScope, type OAuthStore, type ServerMetadata } from './oauth-store.js';
import { UpstreamSignInsInProgress } from './sign-ins-in-progress.js';
import { revokeTokens } from './revocation.js';
import { scopeFor } from './scope-choice.js';
import { SignInProvider } from './sign-in-provider.js';

/** A connection as sign-in needs it (a PlaceConnection fits). */
export interface OAuthConnection {
  storeId: string;
  /** The connection's server name. */
  name: string;
  /** The MCP server's URL. */
  url: string;
  displayName: string;
}

/** The person's own OAuth app at the provider, for providers that let no app register by itself. */
export interface OwnApp {
  clientId: string;
  clientSecret?: string;
}

/** The query of the redirect to /oauth/callback. */
export interface CallbackAnswer {
  code?: string;
  state?: string;
  error?: string;
  error_description?: string;
  /** RFC 9207: the authorization server that answered. */
  iss?: string;
}

export interface SignInFlowOptions {
  store: OAuthStore;
  fetch: FetchLike;
  redirectUrl: () => string;
  clientMetadataUrl: string | undefined;
  ttlMs: number;
  now: () => number;
  onSignedIn: (connection: ConnectionIdentity) => void;
}

/**
 * The sign-ins of a sign-in group begun so far ("Connect N services"), by the authorization server
 * each signs in at: a connection of the group with no registration of its own signs in with the one
 * the first of its server made, so that a consent there covers both.
 */
export type SignInGroup = Map<string, ConnectionIdentity>;

/** A sign-in begun: the URL to open, the authorization server it goes to, and the resource it asks a token for. */
export interface BegunSignIn {
  url: URL;
  authorizationServer: string;
  resource: string | undefined;
}

interface StartedSignIn {
  connection: OAuthConnection;
  provider: SignInProvider;
  state: string;
}

/**
 * Sign-in by the MCP authorization spec (2025-11-25), on the SDK's client auth: `begin` finds the
 * authorization server from the server's 401 challenge (else the well-known locations, else the
 * 2025-03-26 defaults: discovery.ts), refuses
 * one without PKCE S256, registers if needed and returns the authorization URL; `finish` takes
 * the browser's answer, matched by its state, and exchanges the code for tokens.
 */
export class SignInFlow {
  private readonly inProgress: UpstreamSignInsInProgress<StartedSignIn>;

  constructor(private readonly options: SignInFlowOptions) {
    this.inProgress = new UpstreamSignInsInProgress(options.ttlMs, options.now);
  }

  /**
   * `hints.challenge`: the `WWW-Authenticate` header of the server's last refusal of a request (its
   * scope and metadata URL win over those of a bare initialize); `hints.scope`: the wider access a
   * step-up asks for, added to the scope chosen by the MCP authorization spec's rules, as is the scope of the
   * connection's last login (a sign-in again keeps the access its owner approved before). `group`:
   * the sign-ins of its group begun before it (this one is added).
   */
  async begin(
    connection: OAuthConnection,
    ownApp?: OwnApp,
    hints: { challenge?: string; scope?: string; group?: SignInGroup } = {},
  ): Promise<BegunSignIn> {
    const { fetch, store } = this.options;
    const name = connection.displayName;
    const id = identityOf(connection);
    const challenge = { ...(await this.challenge(connection)), ...(hints.challenge && parseChallenge(hints.challenge)) };
    const discovery = await this.discover(connection, challenge);
    const metadata = discovery.authorizationServerMetadata!;
    const redirectUrl = this.options.redirectUrl();
    const server = discovery.authorizationServerUrl;
    const shared = hints.group?.get(server);
    if (!ownApp && shared) await this.shareRegistration(shared, id);

    if (ownApp) {
      const information = {
        client_id: ownApp.clientId,
        ...(ownApp.clientSecret && { client_secret: ownApp.clientSecret }),
        issuer: server,
      };
      await store.update(id, (record) => [{ ...record, client: { source: 'own-app', information } }, undefined]);
    } else if (!this.canRegister(metadata) && !registeredAt((await store.read(id)).client?.information.issuer, server)) {
      throw new OwnAppRequiredError(
        `${name} does not let apps register by themselves. Create an OAuth app in ${name}'s developer settings with the redirect URL ` +
          `${redirectUrl}, then sign in with its client ID (and secret, if it has one).`,
        redirectUrl,
      );
    }

    const record = await store.read(id);
    const scope = scopeFor(challenge, discovery, { stepUp: hints.scope, granted: lastGrantedScope(record) });
    const stored = ownApp ? undefined : record.client;
    const { provider } = this.inProgress.open((state) => ({
      connection,
      state,
      provider: new SignInProvider({
        connection: id,
        store,
        redirectUrl,
        clientMetadata: clientMetadata(redirectUrl),
        clientMetadataUrl: this.options.clientMetadataUrl,
        state,
        discovery,
        renewRegistration: stored?.source === 'registered' && !covers(stored.information, scope),
        now: this.options.now,
      }),
    }));
    try {
      await auth(provider, {
        serverUrl: connection.url,
        ...(challenge.resourceMetadataUrl && { resourceMetadataUrl: challenge.resourceMetadataUrl }),
        ...(scope && { scope }),
        fetchFn: fetch,
      });
    } catch (error) {
      this.inProgress.drop((p) => p.provider === provider);
      throw new SignInFailedError(
        `Cannot start the sign-in to ${name}: ${describeFailure(error, [ownApp?.clientSecret])}. Try again, or check the server URL.`,
      );
    }
    if (hints.group && !shared) hints.group.set(server, id);
    // With no stored tokens offered and a redirect URL set, auth() ends in a redirect.
    return { url: provider.url!, authorizationServer: server, resource: provider.resource };
  }

  /**
   * Gives a connection that has no registration of its own the one another connection of its
   * group made at the same authorization server (a public client: no secret to share). One that has
   * its own keeps it: its login, if any, is bound to it.
   */
  private async shareRegistration(from: ConnectionIdentity, to: ConnectionIdentity): Promise<void> {
    const { client } = await this.options.store.read(from);
    if (client?.source !== 'registered' && client?.source !== 'metadata-document') return;
    await this.options.store.update(to, (record) => [record.client ? record : { ...record, client }, undefined]);
  }

  /** Finishes the sign-in the answer belongs to; returns its connection. Nothing is stored unless it succeeds. */
  async finish(answer: CallbackAnswer): Promise<OAuthConnection> {
    const { connection, provider, state } = this.inProgress.take(answer.state);
    const name = connection.displayName;
    const id = identityOf(connection);
    const verifier = await provider.codeVerifier();
    const discovery = provider.discoveryState();
    const metadata: ServerMetadata = discovery.authorizationServerMetadata!;
    const previous = await this.options.store.read(id);
    const { client } = previous;
    const secrets = [answer.code, verifier, client?.information.client_secret];
    try {
      // RFC 9207: an answer from another authorization server (a mix-up attack) is refused.
      if ((answer.iss !== undefined || metadata.authorization_response_iss_parameter_supported) && answer.iss !== metadata.issuer) {
        throw new SignInStateError(
          `This sign-in answer does not come from ${name}'s sign-in server (${metadata.issuer}), so it was refused. Start the sign-in again.`,
        );
      }
      if (answer.error) throw new SignInDeniedError(denial(name, answer.error, answer.error_description, secrets));
      if (!answer.code) throw new SignInFailedError(`${name}'s sign-in server answered without a code. Start the sign-in again.`);
      const tokens = await fetchToken(provider, discovery.authorizationServerUrl, {
        metadata,
        ...(provider.resource && { resource: provider.resource }),
        authorizationCode: answer.code,
        fetchFn: this.options.fetch,
      });
      await provider.saveTokens(tokens);
    } catch (error) {
      // A refused new registration (of a step-up) says nothing of the stored one.
      const rejectedClient =
        (error instanceof InvalidClientError || error instanceof UnauthorizedClientError) &&
        client?.source !== 'own-app' &&
        !provider.renewedRegistration;
      await this.options.store.update(id, ({ signIn, client: stored, ...rest }) => [
        // The verifier is of no more use; a registration the provider no longer accepts is dropped, so the next sign-in registers again.
        { ...rest, ...(signIn && signIn.state !== state && { signIn }), ...(stored && !rejectedClient && { client: stored }) },
        undefined,
      ]);
      throw failure(error, name, client?.source, secrets);
    }
    // The login of the registration this sign-in replaced ends at the provider too (failures only leave it to expire).
    if (provider.renewedRegistration) await revokeTokens(previous, name, this.options.fetch);
    this.options.onSignedIn(id);
    return connection;
  }

  /** Cancels the connection's sign-ins in progress. */
  cancel(connection: ConnectionIdentity): void {
    this.inProgress.drop((p) => p.connection.storeId === connection.storeId && p.connection.name === connection.serverName);
  }

  private async challenge(connection: OAuthConnection): Promise<Challenge> {
    try {
      return await readChallenge(connection.url, this.options.fetch);
    } catch (error) {
      throw new SignInFailedError(
        `Cannot reach ${connection.displayName} at ${connection.url}: ${describeFailure(error, [])}. Check that the server URL is right and the service is up.`,
      );
    }
  }

  private async discover(connection: OAuthConnection, challenge: Challenge): Promise<OAuthServerInfo> {
    const info = await discoverSignIn(connection, challenge, this.options.fetch);
    const metadata = info.authorizationServerMetadata!;
    // The MCP authorization spec: without S256 listed (or with no list at all) the client must refuse to proceed.
    if (!metadata.code_challenge_methods_supported?.includes('S256')) {
      throw new SignInUnsupportedError(
        `${connection.displayName} does not support secure sign-in (PKCE S256): its sign-in server ${metadata.issuer} does not list S256 among its ` +
          'code challenge methods, so this app will not sign in there. Ask the provider to support PKCE, or use an API key if it offers one.',
      );
    }
    return info;
  }

  /** Whether the app can get a client ID at this server by itself (metadata document or dynamic registration). */
  private canRegister(metadata: AuthorizationServerMetadata): boolean {
    return (
      (metadata.client_id_metadata_document_supported === true && this.options.clientMetadataUrl !== undefined) ||
      metadata.registration_endpoint !== undefined
    );
  }
}

/** How this app describes itself when it registers. */
function clientMetadata(redirectUrl: string): OAuthClientMetadata {
  return {
    client_name: 'Persona Workspace',
    redirect_uris: [redirectUrl],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    // A public client: the machine keeps no secret the provider handed out to every install.
    token_endpoint_auth_method: 'none',
    software_id: PRODUCT_NAME,
    software_version: VERSION,
  };
}

/**
 * Whether a dynamic registration allows `scope`: a registration the provider answered with a
 * scope may be held to it (RFC 7591), so a step-up beyond it registers anew; one without is not.
 */
function covers(information: OAuthClientInformationMixed, scope: string | undefined): boolean {
  const registered = 'scope' in information && typeof information.scope === 'string' ? information.scope.split(' ') : undefined;
  return (
    !registered ||
    (scope ?? '')
      .split(' ')
      .filter(Boolean)
      .every((s) => registered.includes(s))
  );
}

function registeredAt(issuer: string | undefined, server: string): boolean {
  return issuer !== undefined && issuer.replace(/\/$/, '') === server.replace(/\/$/, '');
}

function identityOf(connection: OAuthConnection): ConnectionIdentity {
  return { storeId: connection.storeId, serverName: connection.name };
}

/** An error answer of the authorization server, in words. */
function denial(name: string, error: string, description: string | undefined, secrets: Array<string | undefined>): string {
  const detail = description ? ` (${describeFailure(new Error(description), secrets)})` : '';
  switch (error) {
    case 'access_denied':
      return `The sign-in to ${name} was declined${detail}. Sign in again and allow access to use this connection.`;
    case 'invalid_scope':
      return `${name} refused the permissions this connection asks for${detail}. The server may have changed; remove the connection and add it again.`;
    case 'server_error':
    case 'temporarily_unavailable':
      return `${name}'s sign-in server had a problem${detail}. Try again in a few minutes.`;
    default:
      return `${name} refused the sign-in: ${describeFailure(new Error(error), secrets)}${detail}. Try again, or check the connection's settings at ${name}.`;
  }
}

function failure(error: unknown, name: string, source: string | undefined, secrets: Array<string | undefined>): Error {
  if (error instanceof SignInStateError || error instanceof SignInDeniedError || error instanceof SignInFailedError) return error;
  if (error instanceof InvalidGrantError)
    return new SignInFailedError(`${name} refused the sign-in code (it expired or was already used). Start the sign-in again.`);
  if (error instanceof InvalidClientError || error instanceof UnauthorizedClientError) {
    return source === 'own-app'
      ? new SignInFailedError(
          `${name} refused the client ID or secret of your OAuth app. Check them in ${name}'s developer settings, then sign in again with the right ones.`,
        )
      : new SignInFailedError(`${name} no longer accepts this app's registration. Start the sign-in again: the app registers anew.`);
  }
  return new SignInFailedError(`Could not finish the sign-in to ${name}: ${describeFailure(error, secrets)}. Start the sign-in again.`);
}
