import { createHash } from 'node:crypto';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ConnectionIdentity, ConnectionSecrets } from '../../secrets/connection-secrets.js';
import { bearerFetch } from './bearer-fetch.js';
import type { ClientCredentials, CredentialsLogin } from './client-credentials.js';
import { SignInFailedError, StepUpRequiredError } from './errors.js';
import { type LoginEnd, OAuthStore, storedTokens } from './oauth-store.js';
import type { Revocation } from './revocation.js';
import type { CallbackAnswer, OAuthConnection, OwnApp, SignInFlow, SignInGroup } from './sign-in.js';
import { type ChainOutcome, type ChainStep, SignInChains } from './sign-in-chains.js';
import { beginning, refused, type StepUpNeed } from './step-ups.js';
import { type SignInState, TokenKeeper } from './token-keeper.js';

// The types of this API, importable from here with it.
export type {
  CallbackAnswer,
  ChainOutcome,
  ChainStep,
  ClientCredentials,
  LoginEnd,
  OAuthConnection,
  OwnApp,
  Revocation,
  SignInGroup,
  SignInState,
};

/** A sign-in begun: the URL to open, and, to chain it with others, where it signs in and the resource it asks for. */
export interface BegunSignIn {
  authorizationUrl: string;
  authorizationServer: string;
  resource?: string;
}

export interface ConnectionOAuthOptions {
  /** Where logins live: each connection's keychain items. */
  secrets: ConnectionSecrets;
  /** Every request of discovery, registration, token exchange, refresh and revocation goes through it. */
  fetch: FetchLike;
  /** The control plane's /oauth/callback URL, where the browser comes back. */
  redirectUrl: () => string;
  /** The public https URL of this app's client ID metadata document, if one is hosted (never on loopback). */
  clientMetadataUrl?: string;
  /** How long a sign-in may take from begin to finish (default 10 minutes). */
  signInTtlMs?: number;
  now?: () => number;
}

/** A connection's sign-in state changed: a sign-in finished, or the login ended or was deleted. */
export interface SignInChange extends ConnectionIdentity {
  state: SignInState;
  /** Signed out because the provider ended the login, and how. */
  ended?: LoginEnd;
}

/**
 * OAuth for place connections: sign-in (`begin` → browser → `finish`), the access token on every
 * upstream request (`fetch`), staying signed in, and forgetting (`revokeAndForget`).
 */
export class ConnectionOAuth {
  private readonly store: OAuthStore;
  private readonly ttlMs: number;
  private readonly now: () => number;
  // Made at the first sign-in: it loads the SDK's OAuth client, which reading a login never needs.
  private flowLoading?: Promise<SignInFlow>;
  private flowMade?: SignInFlow;
  private readonly keeper: TokenKeeper;
  private readonly chains: SignInChains;
  private readonly listeners = new Set<(change: SignInChange) => void>();

  constructor(private readonly options: ConnectionOAuthOptions) {
    this.now = options.now ?? Date.now;
    this.ttlMs = options.signInTtlMs ?? 10 * 60_000;
    this.chains = new SignInChains(this.ttlMs, this.now);
    this.store = new OAuthStore(options.secrets);
    this.keeper = new TokenKeeper({
      store: this.store,
      fetch: options.fetch,
      now: this.now,
      onSignedOut: (connection, ended) => this.emit({ ...connection, state: 'sign-in', ended }),
    });
  }

  private flow(): Promise<SignInFlow> {
    this.flowLoading ??= import('./sign-in.js').then(({ SignInFlow }) => {
      this.flowMade = new SignInFlow({
        store: this.store,
        fetch: this.options.fetch,
        redirectUrl: this.options.redirectUrl,
        clientMetadataUrl: this.options.clientMetadataUrl,
        ttlMs: this.ttlMs,
        now: this.now,
        // The login's write also met the step-up's need (SignInProvider.saveTokens).
        onSignedIn: (connection) => this.emit({ ...connection, state: 'signed-in' }),
      });
      return this.flowMade;
    });
    return this.flowLoading;
  }

  /**
   * Starts a sign-in: returns the URL to open in the person's browser. `ownApp` is the person's
   * own OAuth app, for providers that let no app register itself (OwnAppRequiredError says so).
   * `challenge` is the `WWW-Authenticate` header of the server's last refusal, if any. A sign-in
   * while the server wants wider access (a step-up) asks for it; a sign-in again asks for the
   * scope of the connection's last login too (SignInFlow.begin). `group`: the sign-ins begun before
   * it for the same "Connect N services" (see `chain`).
   */
  async begin(
    connection: OAuthConnection,
    options: { ownApp?: OwnApp; challenge?: string; group?: SignInGroup } = {},
  ): Promise<BegunSignIn> {
    const scope = await this.store.update(identityOf(connection), (record) => {
      const begun = beginning(record.stepUp);
      if (begun.record === record.stepUp) return [record, begun.scope];
      const { stepUp: _ended, ...rest } = record;
      return [{ ...rest, ...(begun.record && { stepUp: begun.record }) }, begun.scope];
    });
    const begun = await (
      await this.flow()
    ).begin(connection, options.ownApp, {
      ...(options.challenge && { challenge: options.challenge }),
      ...(scope && { scope }),
      ...(options.group && { group: options.group }),
    });
    return {
      authorizationUrl: begun.url.href,
      authorizationServer: begun.authorizationServer,
      ...(begun.resource && { resource: begun.resource }),
    };
  }

  /**
   * Logs in to a server with machine credentials the owner gives (the client-credentials grant, no
   * browser), keeping nothing: the login comes back for `keepCredentialsLogin`, so that credentials
   * the provider refuses change nothing.
   */
  async tryClientCredentials(connection: { url: string; displayName: string }, credentials: ClientCredentials): Promise<CredentialsLogin> {
    const { credentialsInformation, credentialsLogin } = await import('./client-credentials.js');
    return credentialsLogin(connection, credentialsInformation(credentials), this.options.fetch);
  }

  /**
   * Keeps a login made by `tryClientCredentials` with its credentials (in the connection's keychain
   * record, never shown again): from then on the connection logs in with them, with no browser.
   */
  async keepCredentialsLogin(connection: OAuthConnection, login: CredentialsLogin): Promise<void> {
    await this.keepLogin(identityOf(connection), login);
  }

  /** Logs in again with the connection's kept machine credentials, with no browser. */
  async logInWithCredentials(connection: OAuthConnection): Promise<void> {
    const id = identityOf(connection);
    const { client } = await this.store.read(id);
    if (client?.source !== 'client-credentials') {
      throw new SignInFailedError(
        `${connection.displayName} has no client credentials. Set them (its client ID with a secret or a private key), then connect.`,
      );
    }
    const { credentialsLogin } = await import('./client-credentials.js');
    await this.keepLogin(id, await credentialsLogin(connection, client.information, this.options.fetch));
  }

  private async keepLogin(id: ConnectionIdentity, login: CredentialsLogin): Promise<void> {
    await this.store.update(id, ({ signIn: _none, ended: _over, grantedScope: _replaced, stepUp: _met, ...record }) => [
      {
        ...record,
        client: { source: 'client-credentials', information: login.information },
        server: login.server,
        // Without a scope in the answer, the login has the scope asked for (RFC 6749 5.1).
        tokens: storedTokens(
          { ...login.tokens, ...(login.tokens.scope === undefined && login.scope !== undefined && { scope: login.scope }) },
          login.server.authorizationServerUrl,
          this.now(),
        ),
      },
      undefined,
    ]);
    this.emit({ ...id, state: 'signed-in' });
  }

  /**
   * Why the connection's login is not enough now, if it is not: its server asked for wider access
   * (the owner must sign in again to approve it), or refuses it even after the step-ups allowed.
   */
  async stepUp(connection: OAuthConnection): Promise<{ problem: 'sign-in' | 'key-refused'; reason: string } | undefined> {
    const need = (await this.store.read(identityOf(connection))).stepUp?.need;
    return need && { problem: need.kind === 'step-up' ? 'sign-in' : 'key-refused', reason: stepUpMessage(connection.displayName, need) };
  }

  /** Finishes the sign-in the browser's answer (the query of /oauth/callback) belongs to; returns its connection. */
  async finish(answer: CallbackAnswer): Promise<ConnectionIdentity & { displayName: string }> {
    const connection = await (await this.flow()).finish(answer);
    return { storeId: connection.storeId, serverName: connection.name, displayName: connection.displayName };
  }

  /**
   * Chains sign-ins begun with `begin` (with one `group`), to run one after another in one browser
   * window; returns the URL to open. The first sign-in at each authorization server also names the
   * resources of the others there (RFC 8707 allows several), so the person consents once for all of
   * them; the others, made with the same registration, then come back without a question (unless
   * they ask for offline access, see below), each still with a token for its own server only. Returns each one's URL as chained, the first to open first.
   */
  chain(signIns: (BegunSignIn & { displayName: string })[]): string[] {
    const firsts = new Map<string, URL>();
    const links = signIns.map((signIn) => {
      const first = firsts.get(signIn.authorizationServer);
      if (!first) {
        const url = new URL(signIn.authorizationUrl);
        firsts.set(signIn.authorizationServer, url);
        return { displayName: signIn.displayName, url };
      }
      if (signIn.resource && !first.searchParams.getAll('resource').includes(signIn.resource))
        first.searchParams.append('resource', signIn.resource);
      // A sign-in that asks for a refresh token (offline_access) keeps its prompt=consent: OpenID
      // providers grant offline access only with it, and a login without a refresh token would
      // end with its access token. Such providers ask once per service; the others once in all.
      return { displayName: signIn.displayName, url: new URL(signIn.authorizationUrl) };
    });
    const chained = links.map(({ displayName, url }) => ({ displayName, authorizationUrl: url.href }));
    this.chains.add(chained);
    return chained.map((link) => link.authorizationUrl);
  }

  /** Records how the sign-in of `state` ended; in a chain, says where the browser goes next, or, at its end, every outcome. */
  advanceChain(state: string | undefined, outcome: { ok: boolean; message?: string }): ChainStep | undefined {
    return this.chains.advance(state, outcome);
  }

  state(connection: OAuthConnection): Promise<SignInState> {
    return this.keeper.state(identityOf(connection));
  }

  /** How the provider ended the connection's last login, while no login replaces it. */
  loginEnded(connection: OAuthConnection): Promise<LoginEnd | undefined> {
    return this.keeper.loginEnded(identityOf(connection));
  }

  /** A fetch for the connection's MCP client transport: `base` with the connection's access token, kept fresh. */
  fetch(connection: OAuthConnection, base: FetchLike): FetchLike {
    const id = identityOf(connection);
    return bearerFetch(this.keeper, id, connection.displayName, base, async (token, challenge) => {
      // A fingerprint, not the token: the record says which login was counted, and nothing more.
      const login = createHash('sha256').update(token).digest('hex').slice(0, 16);
      const challenged = (await import('./challenge.js')).parseChallenge(challenge).scope;
      const { need, fresh } = await this.store.update(id, (record) => {
        const result = refused(record.stepUp, login, record.tokens?.scope, challenged);
        return [result.fresh ? { ...record, stepUp: result.record } : record, result];
      });
      // The connection leaves its place's tools until its owner approves (or it is removed).
      if (fresh) this.emit({ ...id, state: 'signed-in' });
      return new StepUpRequiredError(id, need.kind === 'step-up' ? 'sign-in' : 'key-refused', stepUpMessage(connection.displayName, need));
    });
  }

  /** Revokes the login at the provider where it can, then deletes every keychain item of the connection. */
  async revokeAndForget(connection: OAuthConnection): Promise<Revocation> {
    const id = identityOf(connection);
    // No flow yet: no sign-in was begun here, so there is none to cancel.
    this.flowMade?.cancel(id);
    const { revocation, hadLogin } = await this.store.forget(id, async (record) => ({
      revocation: await (await import('./revocation.js')).revokeTokens(record, connection.displayName, this.options.fetch),
      hadLogin: record.tokens !== undefined,
    }));
    if (hadLogin) this.emit({ ...id, state: 'sign-in' });
    return revocation;
  }

  /** Tells `listener` of every sign-in state change; returns a function that stops it. */
  onStateChange(listener: (change: SignInChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(change: SignInChange): void {
    for (const listener of this.listeners) {
      try {
        listener({ ...change });
      } catch (error) {
        // A failing listener never fails the sign-in or the call that changed the state.
        process.nextTick(() => {
          throw error;
        });
      }
    }
  }
}

function stepUpMessage(name: string, need: StepUpNeed): string {
  if (need.kind === 'step-up') {
    const what = need.added.length ? `more access (${need.added.join(', ')})` : `access it did not get at the last sign-in (${need.scope})`;
    return `${name} asks for ${what} to do this. Its owner must approve the wider access: sign in to ${name} again (Connect on the Connections page).`;
  }
  return (
    `${name} still refuses this login the access it asks for (${need.scope}) after ${need.signIns === 1 ? 'a sign-in' : `${need.signIns} sign-ins`} to approve it, ` +
    `so signing in again does not help: ${name}'s sign-in server does not grant that access to its owner. Ask ${name}'s administrator for it, then sign in again.`
  );
}

function identityOf(connection: OAuthConnection): ConnectionIdentity {
  return { storeId: connection.storeId, serverName: connection.name };
}
