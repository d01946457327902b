import type { IncomingMessage } from 'node:http';
import { mediaType } from './media-type.js';

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
 */
export function readJsonBody(req: IncomingMessage, limitBytes: number): Promise<unknown> {
  if (req.method !== 'POST' || mediaType(req.headers['content-type']) !== 'application/json') return Promise.resolve(undefined);
  const refusal = unsupported(req, limitBytes);
  if (refusal) return Promise.reject(refusal);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const fail = (error: Error) => {
      req.off('data', onData).off('end', onEnd).off('error', fail);
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limitBytes) fail(tooLarge(limitBytes));
      else chunks.push(chunk);
    };
    const onEnd = () => {
      const text = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
      try {
        resolve(JSON.parse(text));
      } catch (error) {
        reject(new RequestBodyError(400, -32700, `Parse error: the request body is not valid JSON (${(error as Error).message}).`));
      }
    };
    req.on('data', onData).on('end', onEnd).on('error', fail);
  });
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
  return new RequestBodyError(413, -32000, `The request is larger than the ${limitBytes / 2 ** 20} MiB this server accepts: send less at once (write a large file in parts, say).`);
}
