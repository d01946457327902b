import type { Agent, fetch as undiciFetch, RequestInit as UndiciRequestInit } from 'undici';
import { NetworkPolicyError, originOf } from './network-policy-error.js';
import { PinnedAddresses } from './pinned-lookup.js';
import { checkTarget, resolveWithSystem, type Resolver, type TargetPolicy } from './target-check.js';

/** Redirects followed for one request (the fetch standard allows 20; a sound server needs one or two). */
export const MAX_REDIRECTS = 5;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
// Dropped with the body when a redirect turns a request into a GET (fetch standard, HTTP-redirect fetch).
const REQUEST_BODY_HEADERS = ['content-encoding', 'content-language', 'content-location', 'content-type', 'content-length'];

export interface GuardedFetchOptions {
  /** Local development (WORKSPACE_ALLOW_PRIVATE_NETWORK=1): plain http, loopback and private addresses allowed. */
  allowPrivateNetwork: boolean;
  /** The ports this app listens on: never reached on this machine, whatever the setting. */
  appPorts: () => readonly number[];
  /** Where host names are resolved; the system resolver unless given. */
  resolve?: Resolver;
}

export interface GuardedFetch {
  /** A fetch for the MCP SDK's transports and auth code (its `FetchLike`). */
  fetch: (input: string | URL, init?: RequestInit) => Promise<Response>;
  /** The dispatcher every request goes through; its sockets connect only to checked addresses. */
  dispatcher(): Promise<Agent>;
  /** Drops every socket, aborting requests still running: the connection they served is gone. */
  close(): Promise<void>;
}

/** undici, loaded with a connection's first request (a server that never calls out never loads it) or ahead of it. */
export const loadUndici = () => import('undici');

/**
 * A fetch for one connection that refuses to reach anything but public https servers (SSRF guard):
 * every URL — the first and each redirect — is checked (scheme, credentials, every address its
 * host resolves to) before a socket is opened, and the socket is pinned to the checked addresses.
 *
 * Redirects: by default followed up to MAX_REDIRECTS times within the same origin (scheme, host
 * and port), each re-checked; a redirect to another origin is refused with a NetworkPolicyError.
 * With `redirect: 'manual'` the 3xx response is returned as it is — the MCP SDK asks for that to
 * follow redirects itself and to report the ones it won't, and every URL it then fetches comes
 * back through here and is checked. `redirect: 'error'` fails on any redirect, as in fetch.
 */
export function createGuardedFetch(options: GuardedFetchOptions): GuardedFetch {
  const policy: TargetPolicy = {
    allowPrivateNetwork: options.allowPrivateNetwork,
    appPorts: options.appPorts,
    resolve: options.resolve ?? resolveWithSystem,
  };
  const pins = new PinnedAddresses();
  let loaded: Promise<{ agent: Agent; fetch: typeof undiciFetch }> | undefined;
  let closed = false;
  const undici = () =>
    // Its default export: a bundle exposes this CommonJS package's exports only there.
    (loaded ??= loadUndici().then(({ default: { Agent, fetch } }) => ({
      agent: new Agent({ connect: { lookup: pins.lookup } }),
      fetch,
    })));

  // Origins already checked and pinned: a connection resolves its server's name once, not per call.
  const checked = new Set<string>();

  async function send(url: URL, init: RequestInit): Promise<Response> {
    if (closed)
      throw new Error(
        `Not sent to ${originOf(url)}: this connection's network was closed (the connection was removed, changed or the app is stopping).`,
      );
    // A URL with user info never matches (its key differs), so checkTarget refuses it every time.
    const key = url.username || url.password ? undefined : url.origin;
    if (!key || !checked.has(key)) {
      const addresses = await checkTarget(url, policy);
      // undici looks up the URL's hostname, exactly as the URL parser wrote it.
      if (addresses) pins.pin(url.hostname, addresses);
      if (key) checked.add(key);
    }
    const { agent, fetch } = await undici();
    const response = await fetch(url, { ...(init as unknown as UndiciRequestInit), dispatcher: agent });
    return asGlobalResponse(response);
  }

  async function guardedFetch(input: string | URL, init: RequestInit = {}): Promise<Response> {
    let url = new URL(input);
    if (init.redirect === 'manual' || init.redirect === 'error') return send(url, init);
    let request = init;
    for (let followed = 0; ; followed += 1) {
      const response = await send(url, { ...request, redirect: 'manual' });
      const location = REDIRECT_STATUSES.has(response.status) ? response.headers.get('location') : null;
      if (location === null) return response;
      // Frees the socket for the next request.
      await response.body?.cancel();
      const next = redirectTarget(location, url);
      if (next.origin !== url.origin) {
        throw new NetworkPolicyError(
          'redirect',
          `Refused the redirect from ${originOf(url)} to ${originOf(next)}: redirects are followed only within the same origin (scheme, host and port). Use the final URL directly if it is right.`,
        );
      }
      if (followed === MAX_REDIRECTS) {
        throw new NetworkPolicyError(
          'redirect',
          `Refused ${originOf(url)}: it redirected more than ${MAX_REDIRECTS} times. Check the URL.`,
        );
      }
      request = redirectedRequest(request, response.status, url);
      url = next;
    }
  }

  return {
    fetch: guardedFetch,
    dispatcher: async () => (await undici()).agent,
    close: async () => {
      closed = true;
      checked.clear();
      pins.clear();
      await (await loaded)?.agent.destroy();
    },
  };
}

function redirectTarget(location: string, from: URL): URL {
  try {
    return new URL(location, from);
  } catch {
    throw new NetworkPolicyError('redirect', `Refused the redirect from ${originOf(from)}: its Location is not a URL.`);
  }
}

/** The request to send to a redirect's target, as the fetch standard rewrites it. */
function redirectedRequest(init: RequestInit, status: number, from: URL): RequestInit {
  const method = (init.method ?? 'GET').toUpperCase();
  if ((status === 303 && method !== 'GET' && method !== 'HEAD') || ((status === 301 || status === 302) && method === 'POST')) {
    const headers = new Headers(init.headers);
    for (const name of REQUEST_BODY_HEADERS) headers.delete(name);
    return { ...init, method: 'GET', body: null, headers };
  }
  // A streamed body was consumed by the first request and cannot be sent again.
  if (init.body instanceof ReadableStream || (typeof init.body === 'object' && init.body !== null && Symbol.asyncIterator in init.body)) {
    throw new NetworkPolicyError(
      'redirect',
      `Refused the redirect within ${originOf(from)}: the request body was a stream, which cannot be sent again.`,
    );
  }
  return init;
}

/**
 * undici's own Response is another class than the global one, and code that checks
 * `instanceof Response` (the MCP SDK's OAuth error parsing) would read it as a string: hand out
 * a global Response over the same body stream.
 */
function asGlobalResponse(response: Awaited<ReturnType<typeof undiciFetch>>): Response {
  const bodiless = response.status === 101 || response.status === 204 || response.status === 205 || response.status === 304;
  const headers = new Headers();
  for (const [key, value] of response.headers) headers.append(key, value);
  const global = new Response(bodiless ? null : (response.body as ReadableStream<Uint8Array> | null), {
    status: response.status,
    statusText: response.statusText,
    headers,
  });
  // The URL answered, as fetch reports it (after any redirect it followed).
  Object.defineProperty(global, 'url', { value: response.url });
  return global;
}
