import express, { type ErrorRequestHandler, type Express, type RequestHandler } from 'express';
import { CustomOAuthError, InvalidClientMetadataError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { clientRegistrationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/register.js';
import { revocationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/revoke.js';
import { tokenHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/token.js';
import type { OAuthRegisteredClientsStore } from '@modelcontextprotocol/sdk/server/auth/clients.js';
import type { OAuthServerProvider } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { OAuthClientInformationFull } from '@modelcontextprotocol/sdk/shared/auth.js';
import { OAuthServerError } from '../auth/agent-oauth/errors.js';
import type { AuthorizationServer } from '../auth/agent-oauth/authorization-server.js';
import type { RegisteredClient } from '../auth/agent-oauth/oauth-state.js';
import { PRODUCT_NAME } from '../version.js';
import { authorizeRoute, WAIT_PATH } from './agent-authorize-route.js';
import { AUTHORIZATION_SERVER_PATH, MCP_PATH, PROTECTED_RESOURCE_PATH, resourceUrl } from './mcp-urls.js';
import { plainOAuthErrors } from './agent-oauth-error-words.js';
import type { RequestOrigin } from './request-origin.js';
import { endedPage, waitingPage } from './agent-sign-in-page.js';

export interface OAuthRoutesOptions {
  /** The origin each request reached this server at (the public one behind a reverse proxy). */
  originOf: RequestOrigin;
  log: (line: string) => void;
  /** Registrations one address may make per hour (RFC 7591 is open to anyone: floods are cut off). */
  registrationsPerHour?: number;
}

/**
 * The agent endpoint's authorization server, over HTTP: discovery documents, the sign-in start
 * (/authorize), the MCP SDK's token, registration and revocation handlers on top of
 * `AuthorizationServer`, and the page a client's browser waits on until the owner answers.
 */
export function oauthRoutes(server: AuthorizationServer, options: OAuthRoutesOptions): Express {
  const { originOf } = options;
  const app = express();
  app.disable('x-powered-by');
  const provider = sdkProvider(server);

  // Documents naming this server's origin, which comes from the request: never one cache's answer to another request.
  const hostDependent: RequestHandler = (_req, res, next) => {
    res.set({ Vary: originOf.vary, 'Cache-Control': 'no-store' });
    next();
  };
  app.use([PROTECTED_RESOURCE_PATH, AUTHORIZATION_SERVER_PATH, '/register', '/token', '/revoke'], publicCors);
  app.get([PROTECTED_RESOURCE_PATH, `${PROTECTED_RESOURCE_PATH}${MCP_PATH}`], hostDependent, (req, res) => {
    res.json({
      resource: resourceUrl(req, originOf),
      authorization_servers: [originOf(req)],
      bearer_methods_supported: ['header'],
      resource_name: PRODUCT_NAME,
    });
  });
  app.get(AUTHORIZATION_SERVER_PATH, hostDependent, (req, res) => {
    const origin = originOf(req);
    res.json({
      issuer: origin,
      authorization_endpoint: `${origin}/authorize`,
      token_endpoint: `${origin}/token`,
      registration_endpoint: `${origin}/register`,
      revocation_endpoint: `${origin}/revoke`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      client_id_metadata_document_supported: true,
      revocation_endpoint_auth_methods_supported: ['none'],
    });
  });

  app.use('/authorize', noFraming, authorizeRoute(server, originOf, options.log));
  app.use(['/token', '/register', '/revoke'], plainOAuthErrors);
  app.use('/token', tokenHandler({ provider }));
  app.use(
    '/register',
    clientRegistrationHandler({ clientsStore: provider.clientsStore, rateLimit: { max: options.registrationsPerHour ?? 20 } }),
  );
  app.use('/revoke', revocationHandler({ provider }));

  app.get(`${WAIT_PATH}:key`, noFraming, (req, res, next) => {
    server.wait(String(req.params.key)).then((state) => {
      if (state.state === 'answered') res.redirect(303, state.redirect);
      else if (state.state === 'pending') res.type('html').send(waitingPage(state.request));
      else res.status(410).type('html').send(endedPage(state.message));
    }, next);
  });
  app.use((_req, res) => {
    res.status(404).json({ error: 'Not found. The MCP endpoint is /mcp.' });
  });
  app.use(((error, _req, res, _next) => {
    if (res.headersSent) return;
    // The body parsers' refusals (malformed, too large) are the client's to fix.
    const { status, type } = error as { status?: number; type?: string };
    if (status !== undefined && status >= 400 && status < 500) {
      const why =
        type === 'entity.too.large'
          ? 'The request body is too large.'
          : type === 'entity.parse.failed'
            ? 'The request body is not valid JSON.'
            : 'The request body could not be read.';
      res.status(status).json({ error: 'invalid_request', error_description: why });
      return;
    }
    options.log(`An OAuth request failed: ${(error as Error).stack ?? String(error)}`);
    res
      .status(500)
      .json({ error: 'server_error', error_description: 'Something went wrong on this machine. The server log has the details.' });
  }) as ErrorRequestHandler);
  return app;
}

/**
 * The public OAuth documents and endpoints answer any browser page (a browser-based MCP client such
 * as the Inspector's): every origin, no cookies or other credentials, and the preflight a request
 * with headers (MCP-Protocol-Version, Content-Type) needs.
 */
const publicCors: RequestHandler = (req, res, next) => {
  res.set('Access-Control-Allow-Origin', '*');
  if (req.method !== 'OPTIONS' || req.headers['access-control-request-method'] === undefined) {
    next();
    return;
  }
  res.set({
    'Access-Control-Allow-Methods': 'GET, POST',
    'Access-Control-Allow-Headers': 'Authorization, Content-Type, MCP-Protocol-Version',
    'Access-Control-Max-Age': '600',
  });
  res.status(204).end();
};

/** The sign-in pages: never inside another site's frame (clickjacking), never cached, no referrer (the URL holds the key). */
const noFraming: RequestHandler = (_req, res, next) => {
  res.set({
    'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    'X-Frame-Options': 'DENY',
    'Cache-Control': 'no-store',
    'Referrer-Policy': 'no-referrer',
    'X-Content-Type-Options': 'nosniff',
  });
  next();
};

/** `AuthorizationServer` in the shape the SDK's handlers call; its errors become OAuth error answers. */
function sdkProvider(server: AuthorizationServer): OAuthServerProvider {
  const clientsStore: OAuthRegisteredClientsStore = {
    getClient: (id) =>
      oauthErrors(async () => {
        const client = await server.getClient(id);
        return client && sdkClient(client);
      }),
    registerClient: (metadata) =>
      oauthErrors(async () =>
        sdkClient(
          await server.registerClient({
            client_name: metadata.client_name,
            client_uri: metadata.client_uri,
            redirect_uris: metadata.redirect_uris,
          }),
        ),
      ),
  };
  return {
    clientsStore,
    authorize: () => {
      // /authorize is authorizeRoute's own; the SDK's handler is not used.
      throw new Error('not used');
    },
    challengeForAuthorizationCode: async (client, code) => oauthErrors(async () => server.challengeFor(client.client_id, code)),
    exchangeAuthorizationCode: (client, code, _verifier, redirectUri, resource) =>
      oauthErrors(() => server.exchangeCode(client.client_id, code, redirectUri, resource?.href)),
    exchangeRefreshToken: (client, refreshToken, _scopes, resource) =>
      oauthErrors(() => server.refresh(client.client_id, refreshToken, resource?.href)),
    verifyAccessToken: () => {
      // The agent endpoint verifies access tokens with the JwtVerifier; the SDK's bearer middleware is not used.
      throw new Error('not used');
    },
    revokeToken: (client, request) => oauthErrors(() => server.revokeToken(client.client_id, request.token)),
  };
}

function sdkClient(client: RegisteredClient): OAuthClientInformationFull {
  return {
    client_id: client.client_id,
    client_id_issued_at: client.client_id_issued_at,
    redirect_uris: client.redirect_uris,
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    ...(client.client_name && { client_name: client.client_name }),
    ...(client.client_uri && { client_uri: client.client_uri }),
  };
}

async function oauthErrors<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof OAuthServerError)) throw error;
    if (error.code === 'invalid_client_metadata') throw new InvalidClientMetadataError(error.message);
    throw new CustomOAuthError(error.code, error.message);
  }
}
