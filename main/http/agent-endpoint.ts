import type { IncomingMessage, RequestListener, ServerOptions, ServerResponse } from 'node:http';
import { AuthError, wwwAuthenticate, type Caller, type JwtVerifier } from '../auth/jwt-verifier.js';
import type { McpSessions } from '../mcp/sessions.js';
import { LOCAL_PERSON } from '../places/user-id.js';
import type { Services } from '../services.js';
import { userError } from '../user-errors.js';
import { bearerAuth, type Refusal } from './bearer-auth.js';
import { allowedHostNames, hostAndOriginCheck, refusedBody } from './guards.js';
import { readJsonBody, RequestBodyError } from './json-body.js';
import { lazyListener } from './lazy-listener.js';
import { isPublicOAuthPath, MCP_PATH, resourceMetadataUrl } from './mcp-urls.js';
import { requestOrigin, type RequestOrigin } from './request-origin.js';
import { sendJson } from '../network/send-json.js';

/** Whoever runs the app: the CLI, the desktop window, or any caller when auth is off. */
const LOCAL_CALLER: Caller = { subject: LOCAL_PERSON, source: 'local' };

/** Large enough for a base64 `write` of a sizeable file, small enough to bound one request. */
const MAX_REQUEST_BYTES = 64 * 2 ** 20;

/**
 * Idle keep-alive connections. A client keeps an idle connection for a time of its own (fetch's
 * undici: 4 s, or the server's `Keep-Alive: timeout` hint less 2 s) and may send its next request on
 * it until then; if the server closes it meanwhile, that request is lost ("fetch failed"). Node
 * closes idle connections 5 s after an answer, and answers on an event stream carried no hint at
 * all, so a call made 4-5 s after an answer was lost whenever the client's own timer ran late (a
 * busy client, a loaded machine). The server keeps idle connections well past what it tells clients.
 */
const KEEP_ALIVE_HINT = 'timeout=60';
export const AGENT_SERVER_OPTIONS: ServerOptions = { keepAliveTimeout: 75_000 };

/**
 * /mcp: guards, then the caller, then the request goes to the caller's MCP session (mcp/agent-sessions.ts).
 * A plain Node listener: it is on every agent call's path, and Express's request and response
 * objects cost about a third of the gateway's CPU per forwarded call.
 */
export function agentEndpoint(
  services: Services,
  verifier: JwtVerifier | undefined,
  sessions: Pick<McpSessions<Caller>, 'handle'>,
): RequestListener {
  const { config } = services;
  // Behind a TLS-terminating proxy, the public host and origin are this server's own too.
  const publicUrl = config.publicUrl === undefined ? undefined : new URL(config.publicUrl);
  const guard = hostAndOriginCheck(
    allowedHostNames(config.host, publicUrl ? [...config.allowedHosts, publicUrl.hostname] : config.allowedHosts),
    publicUrl ? [...config.allowedOrigins, publicUrl.origin] : config.allowedOrigins,
  );
  const originOf = requestOrigin(config.publicUrl);
  const refuse = refusal(originOf);
  const authenticate = verifier
    ? bearerAuth((req) => verifier.verifyAuthorization(req.headers.authorization, `${originOf(req)}${MCP_PATH}`), refuse)
    : bearerAuth(async () => LOCAL_CALLER, refuse);
  const serve = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const caller = await authenticate(req, res);
    if (!caller) return;
    if (caller.client)
      services.agentAuthorization
        .touch(caller.client.grantId)
        .catch((error: unknown) => services.log(`Could not note when ${caller.client!.name} was last used: ${(error as Error).message}`));
    await sessions.handle(req, res, caller, await readJsonBody(req, MAX_REQUEST_BYTES));
  };
  // With auth on, this endpoint is also its own OAuth authorization server (discovery, sign-in,
  // tokens), loaded on its first request.
  const oauth =
    verifier &&
    lazyListener(
      async () => (await import('./agent-oauth-routes.js')).oauthRoutes(services.agentAuthorization, { originOf, log: services.log }),
      services.log,
    );
  return (req, res) => {
    // Set here, it replaces Node's own hint (the server's real timeout) on every answer, event streams included.
    res.setHeader('Keep-Alive', KEEP_ALIVE_HINT);
    // Any browser page may read the public OAuth documents and use their endpoints (no cookies are involved there).
    const refused = guard(req.headers, oauth !== undefined && isPublicOAuthPath(req.url ?? ''));
    if (refused) return sendJson(res, refused.status, refusedBody(refused.message));
    if (!isMcpPath(req.url ?? '')) {
      if (oauth) return oauth(req, res);
      return sendJson(res, 404, { error: 'Not found. The MCP endpoint is /mcp.' });
    }
    serve(req, res).catch((error: unknown) => answerError(req, res, error, services.log));
  };
}

function isMcpPath(url: string): boolean {
  const end = url.indexOf('?');
  const path = end === -1 ? url : url.slice(0, end);
  return path === '/mcp' || path === '/mcp/';
}

function refusal(originOf: RequestOrigin): (error: unknown, req: IncomingMessage) => Refusal {
  return (error, req) => {
    if (error instanceof AuthError) {
      // The identity provider's keys could not be fetched: not the caller's fault.
      const status = error.reason === 'key_unavailable' ? 503 : 401;
      // The challenge names this server's origin, which comes from the request.
      return {
        status,
        challenge: wwwAuthenticate(error, resourceMetadataUrl(req, originOf)),
        message: error.message,
        headers: { Vary: originOf.vary, 'Cache-Control': 'no-store' },
      };
    }
    return { status: 500, challenge: wwwAuthenticate(), message: 'Could not check the token. See the server log.' };
  };
}

/** Errors before a session exists (a bad place, no access, a broken body) as JSON-RPC errors. */
function answerError(req: IncomingMessage, res: ServerResponse, error: unknown, log: (line: string) => void): void {
  const known = error instanceof RequestBodyError ? error : userError(error);
  const status = known?.status ?? 500;
  if (!known) log(`MCP request failed: ${(error as Error).stack ?? String(error)}`);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const code = error instanceof RequestBodyError ? error.code : -32000;
  // A body left unread (too large, say) would be taken for the next request on this connection.
  const close: Record<string, string> = req.complete ? {} : { Connection: 'close' };
  sendJson(
    res,
    status,
    { jsonrpc: '2.0', error: { code, message: known?.message ?? 'Internal error. See the server log.' }, id: null },
    close,
  );
}
