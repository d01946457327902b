import { auth, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';

/**
 * The MCP SDK client's own OAuth flow, with everything it would keep (registration, tokens, the
 * PKCE verifier) in memory, and the authorization URL it would open in a browser kept for the test.
 */
export class MemoryOAuthProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;
  readonly sentState = `state-${Math.random().toString(36).slice(2)}`;

  constructor(
    readonly redirectUrl: string,
    readonly clientName = 'Test agent',
  ) {}

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.clientName,
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  state(): string {
    return this.sentState;
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens): void {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }
  codeVerifier(): string {
    return this.verifier;
  }
}

/** Starts the SDK's sign-in against `serverUrl`: registration, PKCE, and the authorization URL (not opened). */
export async function startSignIn(provider: MemoryOAuthProvider, serverUrl: string, fetchFn: FetchLike = fetch): Promise<URL> {
  const result = await auth(provider, { serverUrl, fetchFn });
  if (result !== 'REDIRECT' || !provider.authorizationUrl) throw new Error(`expected a redirect to authorize, got ${result}`);
  return provider.authorizationUrl;
}

/** Follows the authorization URL as a browser would, up to the page that waits for the owner; returns that page's URL. */
export async function openAuthorization(url: URL, fetchFn: FetchLike = fetch): Promise<string> {
  const res = await fetchFn(url, { redirect: 'manual' });
  const location = res.headers.get('location');
  if (res.status !== 303 || !location) throw new Error(`authorize answered ${res.status}: ${await res.text()}`);
  return new URL(location, url).href;
}

/** Asks the waiting page once: the client's redirect with its query when answered, else undefined. */
export async function pollWait(waitUrl: string, fetchFn: FetchLike = fetch): Promise<URL | undefined> {
  const res = await fetchFn(waitUrl, { redirect: 'manual' });
  if (res.status === 200) {
    await res.text();
    return undefined;
  }
  const location = res.headers.get('location');
  if (res.status !== 303 || !location) throw new Error(`the waiting page answered ${res.status}: ${await res.text()}`);
  return new URL(location);
}

/** Finishes the SDK's sign-in with the code the redirect carried. */
export async function finishSignIn(
  provider: MemoryOAuthProvider,
  serverUrl: string,
  code: string,
  fetchFn: FetchLike = fetch,
): Promise<void> {
  const result = await auth(provider, { serverUrl, authorizationCode: code, fetchFn });
  if (result !== 'AUTHORIZED') throw new Error(`expected AUTHORIZED, got ${result}`);
}
