import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Readable } from 'node:stream';
import type { Agent } from 'undici';
import { mediaType } from '../../network/media-type.js';

/** The upstream's answer to one POST, its body decoded to text as it arrives. */
export interface PostAnswer {
  status: number;
  /** The media type, lowercased, without its parameters ('' when absent). */
  contentType: string;
  /** The `WWW-Authenticate` header of a 401 or 403 (how to authorize), if any. */
  challenge: string | undefined;
  /** The body's text chunks; read to the end, or discard(), so that the socket is reused. */
  text: AsyncIterator<string>;
  discard(): Promise<void>;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** Sends one POST to the connection's MCP endpoint. */
export type Post = (headers: Record<string, string>, body: string, signal: AbortSignal) => Promise<PostAnswer>;

/**
 * A POST through the connection's fetch: for OAuth connections, whose fetch adds the access
 * token and, after a 401, refreshes it and sends the request again.
 */
export function postWithFetch(url: URL, fetch: FetchLike): Post {
  return async (headers, body, signal) => {
    const response = await fetch(url, { method: 'POST', headers, body, signal });
    const stream = response.body;
    const text = stream ? decode(stream) : empty();
    return {
      status: response.status,
      contentType: mediaType(response.headers.get('content-type')),
      challenge: response.headers.get('www-authenticate') ?? undefined,
      text,
      discard: async () => {
        // A stream being read is locked, and cancel() on it fails: ending the reading releases
        // and cancels it (that of a stream never read does nothing, and cancel() then works).
        await text.return(undefined);
        await stream?.cancel().catch(() => {});
      },
    };
  };
}

/**
 * A POST straight on the connection's guarded dispatcher, with undici's request API: no web
 * Request, Response or streams, which cost the gateway about 1 ms of CPU per call here. Only for
 * the URL whose session the SDK client opened through the guarded fetch of that same dispatcher:
 * that fetch checked the URL's origin (scheme, address) and pinned its host name's checked
 * addresses, the only ones the dispatcher's sockets connect to. A redirect is sent again through
 * `redirected` (the guarded fetch), which checks its target and follows it only within the origin.
 */
export function postWithDispatcher(url: URL, agent: Agent, redirected: Post): Post {
  const origin = url.origin;
  const path = `${url.pathname}${url.search}`;
  return async (headers, body, signal) => {
    const response = await agent.request({ origin, path, method: 'POST', headers, body, signal });
    if (REDIRECT_STATUSES.has(response.statusCode)) {
      await response.body.dump().catch(() => {});
      return redirected(headers, body, signal);
    }
    const header = response.headers['content-type'];
    const challenge = response.headers['www-authenticate'];
    return {
      status: response.statusCode,
      contentType: mediaType(Array.isArray(header) ? header[0] : header),
      challenge: Array.isArray(challenge) ? challenge.join(', ') : challenge,
      text: textOf(response.body),
      discard: async () => {
        await response.body.dump().catch(() => {});
      },
    };
  };
}

/**
 * A body's text as it arrives, fed by the stream's events: Node's own async iterator of a stream
 * (what `for await` uses) costs more to set up than the whole parse of a small answer. Not
 * setEncoding: undici's body keeps yielding Buffers with it, cut anywhere in a character.
 */
function textOf(body: Readable): AsyncIterator<string> {
  const decoder = new TextDecoder();
  const queue: string[] = [];
  let ended = false;
  let failure: unknown;
  let waiting: { resolve: (result: IteratorResult<string>) => void; reject: (error: unknown) => void } | undefined;
  const settle = (): void => {
    const reader = waiting;
    if (!reader || (!queue.length && !ended && failure === undefined)) return;
    waiting = undefined;
    if (queue.length) reader.resolve({ value: queue.shift()!, done: false });
    else if (failure !== undefined) reader.reject(failure);
    else reader.resolve({ value: undefined, done: true });
  };
  body
    .on('data', (chunk: Buffer) => {
      const text = decoder.decode(chunk, { stream: true });
      if (text) queue.push(text);
      settle();
    })
    .on('end', () => {
      const rest = decoder.decode();
      if (rest) queue.push(rest);
      ended = true;
      settle();
    })
    .on('error', (error) => {
      failure = error;
      settle();
    });
  return {
    next: () =>
      new Promise((resolve, reject) => {
        waiting = { resolve, reject };
        settle();
      }),
  };
}

async function* decode(stream: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  for await (const chunk of stream) yield decoder.decode(chunk, { stream: true });
  const rest = decoder.decode();
  if (rest) yield rest;
}

async function* empty(): AsyncGenerator<string> {}
