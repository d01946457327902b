import { isLoopbackHost } from '../../config.js';
import { OAuthServerError } from './errors.js';

/** Schemes a browser would run or render instead of handing the answer to an app. */
const REFUSED_SCHEMES = new Set(['javascript:', 'data:', 'vbscript:', 'file:', 'blob:', 'about:', 'filesystem:', 'ftp:', 'ws:', 'wss:']);
const MAX_REDIRECT_URI_LENGTH = 2000;

/**
 * Checks a redirect URI a client registers: https anywhere, http only to this machine's loopback
 * (RFC 8252 §7.3), or an app's own scheme (`cursor://...`, RFC 8252 §7.1); never one a browser
 * would execute or show itself, never with a fragment. Throws `invalid_client_metadata`.
 */
export function checkRedirectUri(uri: string): void {
  const refuse = (why: string): never => {
    throw new OAuthServerError('invalid_client_metadata', `The redirect URI "${uri.slice(0, 200)}" is refused: ${why}.`);
  };
  if (uri.length > MAX_REDIRECT_URI_LENGTH) refuse(`it is longer than ${MAX_REDIRECT_URI_LENGTH} characters`);
  // It is shown to the owner (page, terminal) as written: nothing there may act instead of showing.
  if (!/^[\x21-\x7e]+$/.test(uri)) refuse('it may hold only printable ASCII characters, no spaces (percent-encode the rest)');
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return refuse('it is not an absolute URL');
  }
  if (REFUSED_SCHEMES.has(url.protocol)) refuse(`the ${url.protocol} scheme cannot receive an answer`);
  if (url.hash || uri.includes('#')) refuse('a redirect URI must not have a fragment');
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname))
    refuse('plain http is allowed only to a loopback address (127.0.0.1, [::1], localhost); use https');
  if (url.username || url.password) refuse('it must not hold a user name or password');
}

/**
 * The redirect URI a sign-in's answer goes to: `requested` when, parsed as registration parses it,
 * it is one of `registered`; a loopback one may differ in its port only (RFC 8252 §7.3: native apps
 * listen on any free port). Nothing else passes: no user info, fragment, other host or path.
 * Without one, the client's only registered URI. Throws `invalid_request`, to be shown to the
 * person in the browser, never sent to the URI.
 */
export function registeredRedirectUri(registered: readonly string[], requested: string | undefined): string {
  if (requested === undefined) {
    if (registered.length === 1) return registered[0]!;
    throw new OAuthServerError(
      'invalid_request',
      `redirect_uri is missing, and this client registered ${registered.length} of them: the app must say which one the answer goes to.`,
    );
  }
  const refuse = (why: string): never => {
    throw new OAuthServerError(
      'invalid_request',
      `The answer cannot go to "${requested.slice(0, 200)}": ${why}. The app that sent you here may not be the one it claims to be; close this page and start the sign-in again from your app.`,
    );
  };
  try {
    checkRedirectUri(requested);
  } catch (error) {
    if (!(error instanceof OAuthServerError)) throw error;
    refuse('it is not a redirect URI this server accepts (no user name, password or fragment; https, or http to this machine only)');
  }
  const wanted = new URL(requested);
  const matches = registered.some((uri) => {
    const known = URL.canParse(uri) ? new URL(uri) : undefined;
    if (!known) return false;
    if (known.href === wanted.href) return true;
    return known.protocol === 'http:' && isLoopbackHost(known.hostname) && withoutPort(known) === withoutPort(wanted);
  });
  if (!matches) refuse('it is not one of the redirect URIs this client registered');
  return requested;
}

/** A URL without its port (and without user info or fragment, which redirect URIs never have). */
function withoutPort(url: URL): string {
  return `${url.protocol}//${url.hostname}${url.pathname}${url.search}`;
}
