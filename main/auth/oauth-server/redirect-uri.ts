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
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return refuse('it is not an absolute URL');
  }
  if (REFUSED_SCHEMES.has(url.protocol)) refuse(`the ${url.protocol} scheme cannot receive an answer`);
  if (url.hash || uri.includes('#')) refuse('a redirect URI must not have a fragment');
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) refuse('plain http is allowed only to a loopback address (127.0.0.1, [::1], localhost); use https');
  if (url.username || url.password) refuse('it must not hold a user name or password');
}
