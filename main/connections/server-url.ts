/** A connection's server URL is not acceptable; the message says why and what to do. */
export class ServerUrlError extends Error {
  override readonly name = 'ServerUrlError';
}

/**
 * Checks the form of a server URL a person gave: https only (plain http only when private network
 * targets are allowed, for local development), no credentials in it, no fragment.
 */
export function checkServerUrl(text: string, allowPrivateNetwork: boolean): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ServerUrlError(`"${text.slice(0, 200)}" is not a URL. Give the server's full address, for example https://mcp.example.com/mcp.`);
  }
  if (url.protocol !== 'https:' && !(allowPrivateNetwork && url.protocol === 'http:')) {
    throw new ServerUrlError(`${url.origin} does not use https. MCP servers are reached over https only.`);
  }
  if (url.username || url.password) {
    throw new ServerUrlError('The URL contains a user name or password. Remove them and put the key in a place secret sent as a header.');
  }
  if (url.hash) throw new ServerUrlError('The URL has a #fragment, which servers never see. Remove it.');
  return url;
}
