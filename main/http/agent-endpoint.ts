import { hostname } from 'node:os';
import type { IncomingMessage, RequestListener, ServerOptions, ServerResponse } from 'node:http';
import { AuthError, wwwAuthenticate, type Caller, type JwtVerifier } from '../auth/jwt-verifier.js';
import { decideToolSearch, type ToolSearchDecision, type ToolSearchMode } from '../../common/tool-search-mode.js';
import { auditedRunner } from '../mcp/audited-runner.js';
import { machineTools } from '../mcp/machine-tools.js';
import { manageConnectionsTool } from '../mcp/manage-connections-tool.js';
import { PlacePolicy } from '../mcp/place-policy.js';
import { PlaceTools } from '../mcp/place-tools.js';
import { sessionInstructions } from '../mcp/session-instructions.js';
import { McpSessions } from '../mcp/sessions.js';
import { createWorkspaceServer } from '../mcp/workspace-server.js';
import { canRead } from '../places/access-rules.js';
import { PlacePathError, placeRootOf, type Place } from '../places/place-root.js';
import { LOCAL_PERSON } from '../places/user-id.js';
import type { Services } from '../services.js';
import { userError } from '../user-errors.js';
import { PlaceAccessError } from '../connections/place-rules.js';
import { bearerAuth, type Refusal } from './bearer-auth.js';
import { allowedHostNames, hostAndOriginCheck, refusedBody } from './guards.js';
import { readJsonBody, RequestBodyError } from './json-body.js';
import { lazyListener } from './lazy-listener.js';
import { isPublicOAuthPath, MCP_PATH, resourceMetadataUrl } from './mcp-urls.js';
import { requestOrigin, type RequestOrigin } from './request-origin.js';
import { sendJson } from '../network/send-json.js';

/** Whoever runs the app: the CLI, the desktop window, or any caller when auth is off. */
export const LOCAL_CALLER: Caller = { subject: LOCAL_PERSON, source: 'local' };

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

/** Per token (or signed-in client, or external subject): more than enough for one agent's parallel work. */
const MAX_SESSIONS_PER_CALLER = 64;

/**
 * The person a caller acts as. App tokens were made by whoever runs the app, so they act as
 * `local`; tokens of another issuer act as their subject.
 */
export function personOf(caller: Caller): string {
  return caller.source === 'external' ? caller.subject : LOCAL_PERSON;
}

/**
 * /mcp: guards, then the caller, then one MCP session per client, in the place the caller names.
 * A plain Node listener: it is on every agent call's path, and Express's request and response
 * objects cost about a third of the gateway's CPU per forwarded call.
 */
export function agentEndpoint(
  services: Services,
  verifier: JwtVerifier | undefined,
): { listener: RequestListener; sessions: McpSessions<Caller>; close(): Promise<void> } {
  const { config } = services;
  const sessions = new McpSessions<Caller>({
    idleTimeoutMs: config.sessionIdleTimeoutMs,
    maxSessionsPerOwner: MAX_SESSIONS_PER_CALLER,
    ownerOf: (caller) => `${caller.source}:${caller.subject}`,
    createServer: async (caller, req) => {
      const person = personOf(caller);
      const place = placeRootOf(config.workspaceRoot, caller.workspacePath ?? workspacePathOf(req) ?? '');
      if (!canRead(await services.access.snapshot(), person, place)) {
        throw new PlaceAccessError(
          `${person} cannot work in ${place.label}. Ask one of its editors for access, or connect to another place.`,
        );
      }
      const connections = await services.connections.usable(place);
      const policy = new PlacePolicy(place, services.access, {
        workspaceRoot: config.workspaceRoot,
        stateDir: config.stateDir,
        skillsDir: config.skillsDir,
        env: process.env,
        sandboxes: services.sandboxes,
        limits: services.limits,
        caughtUp: (dir, root) => services.policyWatch.caughtUp(dir, root),
        appPorts: () => [...services.listeningPorts],
        outputsOf: (root) => services.commands.outputFolder(root),
      });
      const tools = machineTools({
        skillsDir: config.skillsDir,
        commands: services.commands,
        policy: () => policy.forCommand(),
        place: place.root,
      });
      const server = createWorkspaceServer({
        instructions: sessionInstructions({
          hostname: hostname(),
          cwd: process.cwd(),
          place: place.label,
          connections: connections.map((c) => c.displayName),
        }),
        skillsDir: config.skillsDir,
        skillsChanged: services.skillsChanged,
        tools: [...tools, manageConnectionsTool(place, person, services.connections)],
        sources: [placeTools(services, place)],
        run: auditedRunner((entry) => services.audit.record(entry), {
          caller: caller.subject,
          ...(caller.client && { client: caller.client.name }),
          place: place.root,
          policy: async () => (await policy.current()).kind,
          ...(caller.projectId !== undefined && { projectId: caller.projectId }),
        }),
        toolSearch: async (toolCount) => (await toolSearchFor(services, place, caller.tokenId, toolCount)).on,
      });
      services.placeSessions.add(place.root, server);
      return server;
    },
  });

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
  const listener: RequestListener = (req, res) => {
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
  // A client whose access the owner revoked (here or from the CLI) loses its open sessions at once.
  const revocations = setInterval(() => {
    sessions
      .closeWhere(
        async (caller) =>
          caller.client !== undefined && (await services.agentAuthorization.grantStatus(caller.client.grantId)).status !== 'active',
      )
      .catch((error: unknown) => services.log(`Could not check for revoked clients: ${(error as Error).message}`));
  }, REVOCATION_CHECK_MS);
  revocations.unref();
  return { listener, sessions, close: () => sessions.closeAll().finally(() => clearInterval(revocations)) };
}

/** How soon a revoked client's open sessions (an SSE stream, say) are ended; its next request is refused at once anyway. */
const REVOCATION_CHECK_MS = 1_000;

function placeTools(services: Services, place: Place): PlaceTools {
  return new PlaceTools(place, {
    connections: services.connections,
    gateway: services.gateway,
    health: services.health,
    catalogDescription: (id) => services.catalog.list().entries.find((entry) => entry.id === id)?.description,
    report: services.log,
  });
}

/** Whether a session in `place` (with the app token `tokenId`, if any) that would list `toolCount` tools gets tool search. */
async function toolSearchFor(
  services: Services,
  place: Place,
  tokenId: string | undefined,
  toolCount: number,
): Promise<ToolSearchDecision> {
  return decideToolSearch({
    ...(tokenId !== undefined && { token: await services.tokens.toolSearch(tokenId) }),
    place: (await services.access.snapshot()).places[place.root]?.toolSearch ?? 'auto',
    toolCount,
    threshold: services.config.toolSearchThreshold,
  });
}

/**
 * Tool search for a place as the page shows it: the place's setting, how many tools its agents
 * would list now (its connections asked now), and whether that turns tool search on.
 */
export async function placeToolSearch(
  services: Services,
  place: Place,
): Promise<{ mode: ToolSearchMode; toolCount: number; threshold: number } & ToolSearchDecision> {
  // The machine's tools and manage_my_mcp_servers, as every session lists them.
  const fixed = machineTools({ skillsDir: services.config.skillsDir, commands: services.commands }).length + 1;
  const toolCount = fixed + (await placeTools(services, place).tools()).length;
  const decision = await toolSearchFor(services, place, undefined, toolCount);
  const mode = (await services.access.snapshot()).places[place.root]?.toolSearch ?? 'auto';
  return { mode, toolCount, threshold: services.config.toolSearchThreshold, ...decision };
}

function isMcpPath(url: string): boolean {
  const end = url.indexOf('?');
  const path = end === -1 ? url : url.slice(0, end);
  return path === '/mcp' || path === '/mcp/';
}

/** The place named in the URL (`/mcp?workspace_path=`), if any; naming two is refused. */
function workspacePathOf(req: IncomingMessage): string | undefined {
  // Only the query is read: the base just makes the request target a URL.
  const values = new URL(req.url ?? '/', 'http://localhost').searchParams.getAll('workspace_path');
  if (values.length > 1) throw new PlacePathError(`The URL names ${values.length} places (workspace_path); name one.`);
  return values[0];
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
