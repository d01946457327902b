import { createHash } from 'node:crypto';

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
    throw new ServerUrlError(`"${text.slice(0, 200)}" is not a URL. Give the server's full address, for example https://mcp.example.com/mcp.`);
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
  return new ServerUrlError(`The URL is ${length} characters long; a server URL may have at most ${MAX_SERVER_URL_LENGTH}. Give the server's address without extra query parameters.`);
}

/**
 * A catalog-shaped id for a server that is not listed, from its host, port and path, so that two
 * servers on one host can both be added: mcp.example.com/v1/mcp → custom-mcp-example-com-v1-mcp.
 * One too long for a catalog id (32 characters) keeps its start and a hash of the whole URL.
 */
export function customId(url: URL): string {
  const path = url.pathname.replace(/\/+$/, '');
  const slug = `${url.hostname}${url.port ? `-${url.port}` : ''}${path}${url.search}`.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
  const id = `custom-${slug}`;
  if (id.length <= 32) return id;
  const hash = createHash('sha256').update(`${url.host}${path}${url.search}`).digest('hex').slice(0, 6);
  return `${id.slice(0, 32 - hash.length - 1).replace(/-$/, '')}-${hash}`;
}

/** The name shown for a server that is not listed and was given none: its host and path (mcp.example.com/v1). */
export function customName(url: URL): string {
  const path = url.pathname.replace(/\/+$/, '');
  return path && path !== '/mcp' ? `${url.host}${path}` : url.host;
}
