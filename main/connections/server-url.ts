/** A connection's server URL is not acceptable; the message says why and what to do. */
export class ServerUrlError extends Error {
  override readonly name = 'ServerUrlError';
}

/** Longer than any real server's address; a URL is stored with each connection and sent with each call. */
export const MAX_SERVER_URL_LENGTH = 2048;

/**
 * Checks the form of a server URL a person gave: at most 2048 characters (as given and once
 * normalized), https only (plain http only when private network targets are allowed, for local
 * development), no credentials in it, no fragment.
 */
export function checkServerUrl(text: string, allowPrivateNetwork: boolean): URL {
  if (text.length > MAX_SERVER_URL_LENGTH) throw tooLong(text.length);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ServerUrlError(
      `"${text.slice(0, 200)}" is not a URL. Give the server's full address, for example https://mcp.example.com/mcp.`,
    );
  }
  if (url.protocol !== 'https:' && !(allowPrivateNetwork && url.protocol === 'http:')) {
    throw new ServerUrlError(`${url.origin} does not use https. MCP servers are reached over https only.`);
  }
  if (url.username || url.password) {
    throw new ServerUrlError('The URL contains a user name or password. Remove them and put the key in a place secret sent as a header.');
  }
  if (url.hash) throw new ServerUrlError('The URL has a #fragment, which servers never see. Remove it.');
  // Normalizing may lengthen it (percent-encoding, punycode host names).
  if (url.href.length > MAX_SERVER_URL_LENGTH) throw tooLong(url.href.length);
  return url;
}

function tooLong(length: number): ServerUrlError {
  return new ServerUrlError(
    `The URL is ${length} characters long; a server URL may have at most ${MAX_SERVER_URL_LENGTH}. Give the server's address without extra query parameters.`,
  );
}

/** The name shown for a server that is not listed and was given none: its host and path (mcp.example.com/v1). */
export function customName(url: URL): string {
  const path = url.pathname.replace(/\/+$/, '');
  return path && path !== '/mcp' ? `${url.host}${path}` : url.host;
}
