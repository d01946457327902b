import type { IncomingMessage } from 'node:http';
import { JsonStream, JsonStreamError } from './json-stream.js';
import { mediaType } from '../network/media-type.js';

/** A request body this endpoint cannot take; `status` and `code` (JSON-RPC) say how to answer. */
export class RequestBodyError extends Error {
  override readonly name = 'RequestBodyError';
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The parsed JSON body of a POST whose Content-Type is application/json, or undefined for any other
 * request: those go on unread, to be answered by whoever knows what to say about them.
 *
 * A large body costs at most about twice its size while it is read: it is parsed as it arrives (no
 * whole copy of its bytes or text), and a body of many small values, which would cost many times its
 * size (`[{},{},...]` some 30 times, and seconds of CPU), is refused at `maxJsonTokens`. A small one
 * (every tool call but a large `write`) is read whole (`WHOLE_BODY_BYTES`).
 */
export function readJsonBody(req: IncomingMessage, limitBytes: number): Promise<unknown> {
  if (req.method !== 'POST' || mediaType(req.headers['content-type']) !== 'application/json') return Promise.resolve(undefined);
  const refusal = unsupported(req, limitBytes);
  if (refusal) return Promise.reject(refusal);
  // While reading, the announced size (or, unannounced, the largest body) sets the cap; at the end,
  // the real size, so a body gets the same answer however it is framed.
  const announced = Number(req.headers['content-length'] ?? limitBytes);
  if (announced <= WHOLE_BODY_BYTES) return readWhole(req);
  const json = new JsonStream(maxJsonTokens(Math.min(announced, limitBytes)));
  return new Promise((resolve, reject) => {
    let size = 0;
    const fail = (error: Error) => {
      req.off('data', onData).off('end', onEnd).off('error', fail);
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limitBytes) return fail(tooLarge(limitBytes));
      try {
        json.write(chunk);
      } catch (error) {
        fail(unparsable(error as JsonStreamError));
      }
    };
    const onEnd = () => {
      try {
        const value = json.end();
        if (json.tokens > maxJsonTokens(size)) throw new JsonStreamError(`more than ${maxJsonTokens(size)} tokens`, true);
        resolve(value);
      } catch (error) {
        reject(unparsable(error as JsonStreamError));
      }
    };
    req.on('data', onData).on('end', onEnd).on('error', fail);
  });
}

/**
 * A body announced at most this large is read whole and given to `JSON.parse`, which is several
 * times faster than the streaming parser (whose string buffer alone is this size): holding its
 * bytes, text and value at once costs little, and it cannot hold more tokens than `maxJsonTokens`.
 */
const WHOLE_BODY_BYTES = 64 * 1024;

/** Invalid UTF-8 is refused and a byte order mark skipped, as the streaming parser does. */
const utf8 = new TextDecoder('utf-8', { fatal: true });

function readWhole(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req
      .on('data', (chunk: Buffer) => chunks.push(chunk))
      .on('end', () => {
        try {
          resolve(JSON.parse(utf8.decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks))));
        } catch (error) {
          reject(unparsable(new JsonStreamError((error as Error).message)));
        }
      })
      .on('error', reject);
  });
}

/**
 * The most JSON tokens (strings, numbers, literals and punctuation) a body of `bytes` may hold:
 * enough for any request made of fields and text (131,072, plus one per 64 bytes), while what they
 * parse into costs at most about half the body's size again (a token costs up to some 30 bytes).
 */
export function maxJsonTokens(bytes: number): number {
  return 131_072 + Math.floor(bytes / 64);
}

function unparsable(error: JsonStreamError): RequestBodyError {
  if (error.tooManyTokens) {
    return new RequestBodyError(
      413,
      -32000,
      `The request holds too many JSON values for its size (${error.message}). Parsing that many small values would cost this server many times the request's size: send large data as one string (text, or base64) instead.`,
    );
  }
  return new RequestBodyError(400, -32700, `Parse error: the request body is not valid JSON (${error.message}).`);
}

/** What is wrong with the body before reading it: its encoding, its charset or its announced size. */
function unsupported(req: IncomingMessage, limitBytes: number): RequestBodyError | undefined {
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') {
    return new RequestBodyError(415, -32000, `Content-Encoding "${encoding}" is not supported: send the request body uncompressed.`);
  }
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.headers['content-type'] ?? '')?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    return new RequestBodyError(415, -32000, `Charset "${charset}" is not supported: send the request body as UTF-8 JSON.`);
  }
  if (Number(req.headers['content-length'] ?? 0) > limitBytes) return tooLarge(limitBytes);
  return undefined;
}

function tooLarge(limitBytes: number): RequestBodyError {
  return new RequestBodyError(
    413,
    -32000,
    `The request is larger than the ${limitBytes / 2 ** 20} MiB this server accepts: send less at once (write a large file in parts, say).`,
  );
}
