import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { sendJson } from '../network/send-json.js';

/**
 * A request listener whose code is loaded on its first request, not when the server starts: the
 * page and the sign-in routes (express and all they bring) cost startup time that the first MCP
 * request does not need. A load that fails answers 500 and is tried again on the next request.
 */
export function lazyListener(load: () => Promise<RequestListener>, log: (line: string) => void): RequestListener {
  let loading: Promise<RequestListener> | undefined;
  return (req: IncomingMessage, res: ServerResponse) => {
    loading ??= load();
    loading.then(
      (listener) => listener(req, res),
      (error: unknown) => {
        loading = undefined;
        log(`Could not load the handler for ${req.method} ${req.url}: ${(error as Error).message}`);
        if (!res.headersSent) sendJson(res, 500, { error: { message: 'This part of the server could not be loaded; see its log.' } });
      },
    );
  };
}
