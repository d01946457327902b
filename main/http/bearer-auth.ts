import type { RequestHandler } from 'express';

export interface Refusal {
  status: number;
  /** Value of the WWW-Authenticate header. */
  challenge: string;
  message: string;
}

/**
 * Puts the verified caller in `res.locals.caller`, or answers with the refusal (a 401 and its
 * WWW-Authenticate challenge); nothing behind this middleware runs for an unauthenticated request.
 */
export function bearerAuth<C>(verify: (authorization: string | undefined) => Promise<C>, refuse: (error: unknown) => Refusal): RequestHandler {
  return (req, res, next) => {
    verify(req.headers.authorization).then(
      (caller) => {
        res.locals.caller = caller;
        next();
      },
      (error: unknown) => {
        const { status, challenge, message } = refuse(error);
        res.status(status).set('WWW-Authenticate', challenge).json({ jsonrpc: '2.0', error: { code: -32001, message }, id: null });
      },
    );
  };
}
