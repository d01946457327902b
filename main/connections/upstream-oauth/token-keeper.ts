import { InvalidClientError, InvalidGrantError, UnauthorizedClientError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ConnectionIdentity } from '../../secrets/connection-secrets.js';
import { describeFailure, SignInRequiredError, TokenRefreshError } from './errors.js';
import type { OAuthClientInformationMixed } from '@modelcontextprotocol/sdk/shared/auth.js';
import {
  keyOf,
  type LoginEnd,
  type OAuthRecord,
  type OAuthStore,
  storedTokens,
  type StoredServer,
  type StoredTokens,
} from './oauth-store.js';

/** Whether a connection has a login its calls can use. */
export type SignInState = 'signed-in' | 'sign-in';

/** A refresh happens when less than this is left of the access token's life, or of half of it for short-lived ones. */
const REFRESH_AHEAD_MS = 60_000;

export interface TokenKeeperOptions {
  store: OAuthStore;
  fetch: FetchLike;
  now: () => number;
  /** The provider ended the login (the connection now needs a sign-in). */
  onSignedOut: (connection: ConnectionIdentity, ended: LoginEnd) => void;
}

type Refreshed = { tokens: StoredTokens } | { lost: 'signed-out' | LoginEnd };

/**
 * Keeps each connection's access token usable: refreshed before it expires and after the server
 * refuses it, one refresh per connection at a time (every caller waits on it), the new tokens in
 * the keychain before any caller gets them (so a rotated refresh token is never lost), and a
 * login the provider ended cleared at once (the connection needs a sign-in; nothing retries).
 */
export class TokenKeeper {
  private readonly refreshing = new Map<string, Promise<StoredTokens>>();

  constructor(private readonly options: TokenKeeperOptions) {}

  async state(connection: ConnectionIdentity): Promise<SignInState> {
    const { tokens, client } = await this.options.store.read(connection);
    // Machine credentials get a new token whenever one expires: no person needs to sign in again.
    return tokens && (tokens.refresh_token || client?.source === 'client-credentials' || !this.expired(tokens)) ? 'signed-in' : 'sign-in';
  }

  /** How the provider ended the connection's last login, while no login replaces it. */
  async loginEnded(connection: ConnectionIdentity): Promise<LoginEnd | undefined> {
    const { tokens, ended } = await this.options.store.read(connection);
    return tokens ? undefined : ended;
  }

  /** An access token for a request now, refreshed first when it is about to expire. */
  async accessToken(connection: ConnectionIdentity, name: string): Promise<string> {
    const { tokens } = await this.options.store.read(connection);
    if (!tokens) throw notSignedIn(connection, name);
    if (!this.expiresSoon(tokens)) return tokens.access_token;
    return (await this.refresh(connection, name, tokens.access_token)).access_token;
  }

  /** An access token to retry with after the server refused `rejected`. */
  async afterRejection(connection: ConnectionIdentity, name: string, rejected: string): Promise<string> {
    const { tokens } = await this.options.store.read(connection);
    if (!tokens) throw notSignedIn(connection, name);
    // Another caller refreshed since `rejected` was handed out.
    if (tokens.access_token !== rejected) return tokens.access_token;
    return (await this.refresh(connection, name, rejected)).access_token;
  }

  /** The single flight: callers while a refresh runs share its outcome, success or failure. */
  private refresh(connection: ConnectionIdentity, name: string, stale: string): Promise<StoredTokens> {
    const key = keyOf(connection);
    let flight = this.refreshing.get(key);
    if (!flight) {
      flight = this.refreshOnce(connection, name, stale).finally(() => this.refreshing.delete(key));
      this.refreshing.set(key, flight);
    }
    return flight;
  }

  private async refreshOnce(connection: ConnectionIdentity, name: string, stale: string): Promise<StoredTokens> {
    const outcome = await this.options.store.update<Refreshed>(connection, async (record) => {
      const { tokens, server, client } = record;
      // Read afresh: a refresh that just ended, or one in another process, may have renewed it already.
      if (tokens && tokens.access_token !== stale && !this.expiresSoon(tokens)) return [record, { tokens }];
      if (!tokens) return [record, { lost: 'signed-out' }];
      if (client?.source === 'client-credentials' && server)
        return this.renewWithCredentials(connection, name, record, tokens, server, client.information);
      if (!tokens.refresh_token || !server || !client) return [withoutTokens(record, 'no-refresh-token'), { lost: 'no-refresh-token' }];
      let fresh;
      try {
        // Loaded at the first refresh: the SDK's OAuth client (and its schemas) costs every command that only reads logins.
        const { refreshAuthorization } = await import('@modelcontextprotocol/sdk/client/auth.js');
        fresh = await refreshAuthorization(server.authorizationServerUrl, {
          metadata: server.metadata,
          clientInformation: client.information,
          refreshToken: tokens.refresh_token,
          ...(server.resource && { resource: server.resource }),
          fetchFn: this.options.fetch,
        });
      } catch (error) {
        if (error instanceof InvalidGrantError) return [withoutTokens(record, 'grant'), { lost: 'grant' }];
        if (error instanceof InvalidClientError || error instanceof UnauthorizedClientError) {
          if (client.source === 'own-app') return [withoutTokens(record, 'own-app'), { lost: 'own-app' }];
          // The registration is dropped with the tokens it issued, so the next sign-in registers once more.
          const { client: _rejected, ...rest } = withoutTokens(record, 'client');
          return [rest, { lost: 'client' }];
        }
        throw new TokenRefreshError(
          connection,
          `Could not renew the login of ${name}: ${describeFailure(error, [tokens.refresh_token, tokens.access_token, client.information.client_secret])}. ` +
            'It is kept and tried again at the next use.',
        );
      }
      // Stored (by update) before this resolves: no caller sees the new access token before the rotated refresh token is safe.
      // RFC 6749 6: a refresh answer without a scope keeps the scope the login was granted.
      const renewed = storedTokens(
        { ...fresh, ...(fresh.scope === undefined && tokens.scope !== undefined && { scope: tokens.scope }) },
        tokens.issuer,
        this.options.now(),
      );
      return [{ ...record, tokens: renewed }, { tokens: renewed }];
    });
    if ('tokens' in outcome) return outcome.tokens;
    if (outcome.lost !== 'signed-out') this.options.onSignedOut(connection, outcome.lost);
    throw new SignInRequiredError(connection, lostMessage(name, outcome.lost));
  }

  /** A new token of the client-credentials grant, with the scope the last one was asked for. */
  private async renewWithCredentials(
    connection: ConnectionIdentity,
    name: string,
    record: OAuthRecord,
    tokens: StoredTokens,
    server: StoredServer,
    information: OAuthClientInformationMixed,
  ): Promise<[OAuthRecord, Refreshed]> {
    let fresh;
    try {
      const { clientCredentialsToken } = await import('./client-credentials.js');
      fresh = await clientCredentialsToken(server, information, tokens.scope, this.options.fetch);
    } catch (error) {
      if (error instanceof InvalidClientError || error instanceof UnauthorizedClientError || error instanceof InvalidGrantError) {
        return [withoutTokens(record, 'client-credentials'), { lost: 'client-credentials' }];
      }
      const { credentialSecrets } = await import('./client-credentials.js');
      throw new TokenRefreshError(
        connection,
        `Could not get a new token for ${name}: ${describeFailure(error, [tokens.access_token, ...credentialSecrets(information)])}. It is tried again at the next use.`,
      );
    }
    const renewed = storedTokens(
      { ...fresh, ...(fresh.scope === undefined && tokens.scope !== undefined && { scope: tokens.scope }) },
      tokens.issuer,
      this.options.now(),
    );
    return [{ ...record, tokens: renewed }, { tokens: renewed }];
  }

  private expired(tokens: StoredTokens): boolean {
    return tokens.expires_at !== undefined && tokens.expires_at <= this.options.now();
  }

  private expiresSoon(tokens: StoredTokens): boolean {
    if (tokens.expires_at === undefined) return false;
    const ahead = Math.min(REFRESH_AHEAD_MS, ((tokens.expires_in ?? 0) * 1000) / 2);
    return tokens.expires_at - this.options.now() <= ahead;
  }
}

/**
 * The record without its login, which keeps how it ended (for the connection to say) and the
 * scope it was granted (for the next sign-in to ask for again).
 */
function withoutTokens({ tokens, ...record }: OAuthRecord, ended: LoginEnd): OAuthRecord {
  return { ...record, ended, ...(tokens?.scope && { grantedScope: tokens.scope }) };
}

function notSignedIn(connection: ConnectionIdentity, name: string): SignInRequiredError {
  return new SignInRequiredError(connection, lostMessage(name, 'signed-out'));
}

function lostMessage(name: string, lost: Exclude<Refreshed, { tokens: StoredTokens }>['lost']): string {
  switch (lost) {
    case 'signed-out':
      return `${name} is not signed in. Its owner must sign in to it on the Connections page.`;
    case 'grant':
      return `The login of ${name} has ended at the provider (it was revoked or expired). Its owner must sign in again on the Connections page.`;
    case 'client':
      return `${name} no longer accepts this app's registration, so its login ended. Its owner must sign in again (the app registers anew).`;
    case 'own-app':
      return `${name} refused the client ID or secret of the owner's OAuth app, so the login ended. Its owner must check them and sign in again.`;
    case 'client-credentials':
      return `${name} refused the client credentials its owner set, so the login ended. Its owner must check them, set them again and connect.`;
    case 'no-refresh-token':
      return `The login of ${name} has expired and cannot be renewed (the provider gave no refresh token). Its owner must sign in again on the Connections page.`;
  }
}
