import express, { type Request, type Router } from 'express';
import { rateLimit } from 'express-rate-limit';
import { OAuthServerError } from '../auth/agent-oauth/errors.js';
import type { AuthorizationServer } from '../auth/agent-oauth/authorization-server.js';
import { registeredRedirectUri } from '../auth/agent-oauth/redirect-uri.js';
import type { RegisteredClient } from '../auth/agent-oauth/oauth-state.js';
import { MCP_PATH } from './mcp-urls.js';
import type { RequestOrigin } from './request-origin.js';
import { refusedPage } from './agent-sign-in-page.js';

export const WAIT_PATH = '/oauth/wait/';

/** Sign-ins one address may start in 15 minutes: each one is recorded for the owner to answer. */
const STARTS_PER_WINDOW = 100;
const WINDOW_MS = 15 * 60_000;

/**
 * /authorize (RFC 6749 §4.1.1 with PKCE): who asks and where the answer goes are checked first, and
 * a refusal there is a page shown in the browser, never a redirect to an address the client did not
 * register. Past that, refusals go back to the client's redirect URI with its state, in words; an
 * accepted request is recorded for the owner and the browser waits on its page.
 */
export function authorizeRoute(server: AuthorizationServer, originOf: RequestOrigin, log: (line: string) => void): Router {
  const router = express.Router();
  router.use(
    rateLimit({
      windowMs: WINDOW_MS,
      limit: STARTS_PER_WINDOW,
      standardHeaders: true,
      legacyHeaders: false,
      handler: (_req, res) => {
        res
          .status(429)
          .type('html')
          .send(refusedPage('Too many sign-ins were started from this address. Wait 15 minutes, then start again from your app.'));
      },
    }),
    express.urlencoded({ extended: false, limit: '16kb' }),
  );
  router.all('/', async (req, res) => {
    if (req.method !== 'GET' && req.method !== 'POST') {
      res
        .status(405)
        .set('Allow', 'GET, POST')
        .type('html')
        .send(refusedPage(`${req.method} is not a way to start a sign-in: open this address in a browser.`));
      return;
    }
    const param = parameters(req);
    let client: RegisteredClient;
    let redirectUri: string;
    try {
      const clientId = param('client_id');
      if (clientId === undefined)
        throw new OAuthServerError('invalid_request', 'The sign-in link has no client_id. Start the sign-in again from your app.');
      const found = await server.getClient(clientId);
      if (!found)
        throw new OAuthServerError(
          'invalid_client',
          'The app that sent you here is not registered on this machine (or its registration was removed). Start the sign-in again from the app: it registers again.',
        );
      client = found;
      redirectUri = registeredRedirectUri(client.redirect_uris, param('redirect_uri'));
    } catch (error) {
      if (!(error instanceof OAuthServerError)) throw error;
      res.status(400).type('html').send(refusedPage(error.message));
      return;
    }
    let state: string | undefined;
    try {
      state = param('state');
      if (param('response_type') !== 'code')
        throw new OAuthServerError(
          'unsupported_response_type',
          'response_type must be "code": this server signs clients in with the authorization code flow only.',
        );
      const codeChallenge = param('code_challenge');
      const method = param('code_challenge_method');
      if (codeChallenge === undefined || method !== 'S256') {
        throw new OAuthServerError(
          'invalid_request',
          `PKCE with S256 is required: send code_challenge (the SHA-256 of the code verifier) with code_challenge_method=S256${method !== undefined && method !== 'S256' ? `; "${method.slice(0, 20)}" is not accepted` : ''}.`,
        );
      }
      const resource = param('resource');
      const scope = param('scope');
      const from = addressOf(req);
      const { key } = await server.startSignIn(
        client,
        {
          redirectUri,
          codeChallenge,
          ...(state !== undefined && { state }),
          ...(resource !== undefined && { resource }),
          scopes: scope ? scope.split(' ') : [],
          ...(from !== undefined && { from }),
        },
        `${originOf(req)}${MCP_PATH}`,
      );
      res.redirect(303, `${WAIT_PATH}${key}`);
    } catch (error) {
      if (!(error instanceof OAuthServerError)) log(`A sign-in could not start: ${(error as Error).stack ?? String(error)}`);
      const refusal =
        error instanceof OAuthServerError
          ? error
          : new OAuthServerError(
              'server_error',
              'The sign-in could not be recorded on this machine. Try again; the server log has the details.',
            );
      res.redirect(302, errorRedirect(redirectUri, refusal, state));
    }
  });
  return router;
}

/** A parameter from the query (GET) or the form (POST); one sent twice is refused (RFC 6749 §3.1). */
function parameters(req: Request): (name: string) => string | undefined {
  const source = (req.method === 'POST' ? req.body : req.query) as Record<string, unknown> | undefined;
  return (name) => {
    const value = source?.[name];
    if (value === undefined || typeof value === 'string') return value;
    throw new OAuthServerError('invalid_request', `${name} was sent more than once. Start the sign-in again from your app.`);
  };
}

function errorRedirect(redirectUri: string, error: OAuthServerError, state: string | undefined): string {
  const url = new URL(redirectUri);
  url.searchParams.set('error', error.code);
  url.searchParams.set('error_description', error.message);
  if (state !== undefined) url.searchParams.set('state', state);
  return url.href;
}

/** The address the request came from, an IPv4 one without its IPv6 wrapping. */
function addressOf(req: { socket: { remoteAddress?: string | undefined } }): string | undefined {
  return req.socket.remoteAddress?.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '');
}
