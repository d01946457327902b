import type { OAuthClientProvider, OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { ConnectionIdentity } from '../../secrets/connection-secrets.js';
import { SignInStateError } from './errors.js';
import { type ClientSource, type OAuthStore, storedTokens } from './oauth-store.js';
import { signedIn } from './step-ups.js';

export interface SignInProviderOptions {
  connection: ConnectionIdentity;
  store: OAuthStore;
  redirectUrl: string;
  clientMetadata: OAuthClientMetadata;
  /** The https URL of this app's client ID metadata document, when one is hosted. */
  clientMetadataUrl: string | undefined;
  /** This sign-in's state. */
  state: string;
  /** What discovery found (done before, to refuse a provider without PKCE S256 first). */
  discovery: OAuthDiscoveryState;
  /**
   * This sign-in registers the app anew (its stored registration is limited to fewer scopes than
   * it asks for); the new registration replaces the stored one only with the login it gets.
   */
  renewRegistration: boolean;
  now: () => number;
}

/**
 * One sign-in of one connection as the SDK sees it (`auth()` to begin, `fetchToken()` to finish):
 * the registration, the PKCE verifier and, once the code is exchanged, the tokens, all kept in the
 * connection's keychain record. The SDK picks the registration in the MCP authorization spec's order (stored or own
 * app, else a client ID metadata document, else dynamic registration) and the resource, and
 * builds the authorization URL with PKCE S256.
 */
export class SignInProvider implements OAuthClientProvider {
  readonly clientMetadataUrl?: string;
  private authorizationUrl: URL | undefined;
  /** The registration this sign-in made, while the stored one still serves the current login. */
  private renewed: OAuthClientInformationMixed | undefined;

  constructor(private readonly options: SignInProviderOptions) {
    if (options.clientMetadataUrl) this.clientMetadataUrl = options.clientMetadataUrl;
  }

  get redirectUrl(): string {
    return this.options.redirectUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    return this.options.clientMetadata;
  }

  state(): string {
    return this.options.state;
  }

  discoveryState(): OAuthDiscoveryState {
    return this.options.discovery;
  }

  async clientInformation(): Promise<OAuthClientInformationMixed | undefined> {
    if (this.options.renewRegistration) return this.renewed;
    return (await this.options.store.read(this.options.connection)).client?.information;
  }

  async saveClientInformation(information: OAuthClientInformationMixed): Promise<void> {
    // Called by auth() for a client ID metadata document or a dynamic registration (an own app is stored by SignInFlow).
    const source: ClientSource = information.client_id === this.clientMetadataUrl ? 'metadata-document' : 'registered';
    if (this.options.renewRegistration) {
      this.renewed = information;
      return;
    }
    await this.options.store.update(this.options.connection, (record) => [{ ...record, client: { source, information } }, undefined]);
  }

  /**
   * No stored login is offered to the SDK: a sign-in always goes to the person. (Given one, auth()
   * would refresh it itself, outside the single flight that keeps a rotated refresh token safe.)
   */
  tokens(): undefined {
    return undefined;
  }

  /** Stores the new login and, in the same write, drops the verifier, records the server it came from, and meets a step-up's need. */
  async saveTokens(tokens: OAuthTokens): Promise<void> {
    const { discovery } = this.options;
    // The new login's scope replaces that of a login the provider ended (grantedScope).
    await this.options.store.update(this.options.connection, ({ signIn, stepUp, grantedScope: _replaced, ended: _over, ...record }) => [
      {
        ...record,
        ...(signedIn(stepUp) && { stepUp: signedIn(stepUp) }),
        // A newer sign-in begun meanwhile keeps its verifier.
        ...(signIn && signIn.state !== this.options.state && { signIn }),
        ...(this.renewed && { client: { source: 'registered' as const, information: this.renewed } }),
        server: {
          authorizationServerUrl: discovery.authorizationServerUrl,
          metadata: discovery.authorizationServerMetadata!,
          ...(this.resource && { resource: this.resource }),
        },
        // Without a scope in the answer, the login has the scope asked for (RFC 6749 5.1), kept to widen it later.
        tokens: storedTokens(
          { ...tokens, ...(tokens.scope === undefined && this.scope !== undefined && { scope: this.scope }) },
          discovery.authorizationServerUrl,
          this.options.now(),
        ),
      },
      undefined,
    ]);
  }

  async saveCodeVerifier(verifier: string): Promise<void> {
    await this.options.store.update(this.options.connection, (record) => [
      { ...record, signIn: { state: this.options.state, verifier } },
      undefined,
    ]);
  }

  async codeVerifier(): Promise<string> {
    const { signIn } = await this.options.store.read(this.options.connection);
    // One sign-in per connection at a time: a newer one replaced this one's verifier.
    if (signIn?.state !== this.options.state) {
      throw new SignInStateError(
        'A newer sign-in to this connection was started after this one. Finish that one, or start the sign-in again.',
      );
    }
    return signIn.verifier;
  }

  redirectToAuthorization(authorizationUrl: URL): void {
    // The page opens it (system browser, $BROWSER, or printed): here it is only kept.
    this.authorizationUrl = authorizationUrl;
  }

  /** Whether this sign-in registered the app anew (stored with its login by saveTokens). */
  get renewedRegistration(): boolean {
    return this.renewed !== undefined;
  }

  /** The URL the SDK built, once `auth()` returned REDIRECT. */
  get url(): URL | undefined {
    return this.authorizationUrl;
  }

  /** The scope the authorization request asked for. */
  get scope(): string | undefined {
    return this.authorizationUrl?.searchParams.get('scope') ?? undefined;
  }

  /** The resource the authorization request named: the token requests must name the same. */
  get resource(): string | undefined {
    return this.authorizationUrl?.searchParams.get('resource') ?? undefined;
  }
}
