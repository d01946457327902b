import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson } from '../network/send-json.js';

export interface Refusal {
  status: number;
  /** Value of the WWW-Authenticate header. */
  challenge: string;
  message: string;
  /** Any other header the answer needs. */
  headers?: Record<string, string>;
}

/**
 * The verified caller of a request, or undefined once the refusal (a 401 and its WWW-Authenticate
 * challenge) has been sent: nothing else may run for an unauthenticated request.
 */
export function bearerAuth<C>(
  verify: (req: IncomingMessage) => Promise<C>,
  refuse: (error: unknown, req: IncomingMessage) => Refusal,
): (req: IncomingMessage, res: ServerResponse) => Promise<C | undefined> {
  return async (req, res) => {
    try {
      return await verify(req);
    } catch (error) {
      const { status, challenge, message, headers } = refuse(error, req);
      sendJson(res, status, { jsonrpc: '2.0', error: { code: -32001, message }, id: null }, { ...headers, 'WWW-Authenticate': challenge });
      return undefined;
    }
  };
}
