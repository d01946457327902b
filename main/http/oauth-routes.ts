import express, { type Express, type RequestHandler, type Response } from 'express';
import { CustomOAuthError, InvalidClientMetadataError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { authorizationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/authorize.js';
import { clientRegistrationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/register.js';
import { revocationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/revoke.js';
import { tokenHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/token.js';
import type { OAuthRegisteredClientsStore } from '@modelcontextprotocol/sdk/server/auth/clients.js';
import type { OAuthServerProvider } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { OAuthClientInformationFull } from '@modelcontextprotocol/sdk/shared/auth.js';
import { OAuthServerError } from '../auth/oauth-server/errors.js';
import type { AuthorizationServer } from '../auth/oauth-server/authorization-server.js';
import type { RegisteredClient } from '../auth/oauth-server/oauth-state.js';
import { PRODUCT_NAME } from '../version.js';
import type { RequestOrigin } from './request-origin.js';
import { endedPage, waitingPage } from './sign-in-page.js';
import { MCP_PATH, PROTECTED_RESOURCE_PATH } from './mcp-urls.js';

export const WAIT_PATH = '/oauth/wait/';

export interface OAuthRoutesOptions {
  /** The origin each request reached this server at (the public one behind a reverse proxy). */
  originOf: RequestOrigin;
  /** Registrations one address may make per hour (RFC 7591 is open to anyone: floods are cut off). */
  registrationsPerHour?: number;
}

/**
 * The agent endpoint's authorization server, over HTTP: discovery documents, and the MCP SDK's
 * authorize, token, registration and revocation handlers on top of `AuthorizationServer`; plus the
 * page a client's browser waits on until the owner answers.
 */
export function oauthRoutes(server: AuthorizationServer, options: OAuthRoutesOptions): Express {
  const { originOf } = options;
  const app = express();
  app.disable('x-powered-by');
  const provider = sdkProvider(server, originOf);

  const protectedResource: RequestHandler = (req, res) => {
    const origin = originOf(req);
    const place = typeof req.query.workspace_path === 'string' ? req.query.workspace_path : undefined;
    const resource = `${origin}${MCP_PATH}${place === undefined ? '' : `?${new URLSearchParams({ workspace_path: place })}`}`;
    res.set('Access-Control-Allow-Origin', '*').json({
      resource,
      authorization_servers: [origin],
      bearer_methods_supported: ['header'],
      resource_name: PRODUCT_NAME,
    });
  };
  app.get([PROTECTED_RESOURCE_PATH, `${PROTECTED_RESOURCE_PATH}${MCP_PATH}`], protectedResource);
  app.get(['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration'], (req, res) => {
    const origin = originOf(req);
    res.set('Access-Control-Allow-Origin', '*').json({
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

  app.use('/authorize', noFraming, keepStateOnRefusal, authorizationHandler({ provider }));
  app.use('/token', tokenHandler({ provider }));
  app.use('/register', clientRegistrationHandler({ clientsStore: provider.clientsStore, rateLimit: { max: options.registrationsPerHour ?? 20 } }));
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
  return app;
}

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

/**
 * The SDK's authorize handler leaves `state` out of the error redirect when a parameter is wrong
 * (no PKCE, say); RFC 6749 §4.1.2.1 wants it back unchanged whenever the client sent one.
 */
const keepStateOnRefusal: RequestHandler = (req, res, next) => {
  const sent = (req.method === 'GET' ? req.query : (req.body as Record<string, unknown> | undefined) ?? {}).state;
  if (typeof sent === 'string') {
    const redirect = res.redirect.bind(res) as (status: number, url: string) => void;
    res.redirect = ((status: number, url: string) => {
      // Only the client's redirect URI is absolute; the way to the waiting page is a path.
      if (!URL.canParse(url)) return redirect(status, url);
      const target = new URL(url);
      if (target.searchParams.has('error') && !target.searchParams.has('state')) target.searchParams.set('state', sent);
      redirect(status, target.href);
    }) as typeof res.redirect;
  }
  next();
};

/** `AuthorizationServer` in the shape the SDK's handlers call; its errors become OAuth error answers. */
function sdkProvider(server: AuthorizationServer, originOf: RequestOrigin): OAuthServerProvider {
  const clientsStore: OAuthRegisteredClientsStore = {
    getClient: (id) =>
      oauthErrors(async () => {
        const client = await server.getClient(id);
        return client && sdkClient(client);
      }),
    registerClient: (metadata) =>
      oauthErrors(async () =>
        sdkClient(await server.registerClient({ client_name: metadata.client_name, client_uri: metadata.client_uri, redirect_uris: metadata.redirect_uris })),
      ),
  };
  return {
    clientsStore,
    authorize: (client, params, res: Response) =>
      oauthErrors(async () => {
        const { key } = await server.startSignIn(
          (await server.getClient(client.client_id))!,
          {
            redirectUri: params.redirectUri,
            codeChallenge: params.codeChallenge,
            ...(params.state !== undefined && { state: params.state }),
            ...(params.resource && { resource: params.resource.href }),
            scopes: params.scopes ?? [],
          },
          `${originOf(res.req)}${MCP_PATH}`,
        );
        res.redirect(303, `${WAIT_PATH}${key}`);
      }),
    challengeForAuthorizationCode: async (client, code) => oauthErrors(async () => server.challengeFor(client.client_id, code)),
    exchangeAuthorizationCode: (client, code, _verifier, redirectUri, resource) =>
      oauthErrors(() => server.exchangeCode(client.client_id, code, redirectUri, resource?.href)),
    exchangeRefreshToken: (client, refreshToken, _scopes, resource) => oauthErrors(() => server.refresh(client.client_id, refreshToken, resource?.href)),
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
