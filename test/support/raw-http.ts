import { request } from 'node:http';

/** The body of an MCP `initialize` request, what a client sends first: for tests of what meets it before any session. */
export const INITIALIZE_BODY = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
});

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * A request to the MCP endpoint with node:http, so that any header (Host, Origin, Content-Length)
 * and any body can be sent: a POST of JSON by default; `body` may go in several chunks.
 */
export function raw(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string | Buffer[] | undefined },
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: init.method ?? 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...init.headers },
      },
      (res) => {
        let text = '';
        res
          .setEncoding('utf8')
          .on('data', (chunk: string) => (text += chunk))
          .on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
      },
    );
    // The server may answer and close before the whole body is sent (some tests do exactly that):
    // a failed write is no failure as long as the answer comes.
    let answered = false;
    req.on('response', () => (answered = true));
    req.on('error', (error: NodeJS.ErrnoException) => (error.code === 'EPIPE' || error.code === 'ECONNRESET' ? undefined : reject(error)));
    req.on('close', () => answered || reject(new Error(`${url}: the connection closed with no answer`)));
    if (Array.isArray(init.body)) {
      for (const chunk of init.body) req.write(chunk);
      req.end();
    } else {
      req.end(init.body);
    }
  });
}
