/** Why a URL was refused before anything was sent to it. */
export type NetworkPolicyErrorKind = 'scheme' | 'private-address' | 'app-port' | 'localhost' | 'redirect' | 'userinfo' | 'resolve-failed';

/**
 * A fetch for a connection was refused by the SSRF guard. The message names the URL's origin
 * only: a path or query string may hold secrets (codes, tokens) and messages end up in logs.
 */
export class NetworkPolicyError extends Error {
  override readonly name = 'NetworkPolicyError';
  constructor(
    readonly kind: NetworkPolicyErrorKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Told with every refusal a developer running a local MCP server would otherwise be stuck on. */
export const LOCAL_DEVELOPMENT_HINT =
  'For local development, set WORKSPACE_ALLOW_PRIVATE_NETWORK=1 to allow plain http and loopback or private targets.';

/** scheme://host:port of `url`, also for schemes whose WHATWG origin is the opaque "null". */
export function originOf(url: URL): string {
  return url.origin === 'null' ? `${url.protocol}//${url.host}` : url.origin;
}
