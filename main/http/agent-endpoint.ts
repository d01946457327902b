import express, { type ErrorRequestHandler, type Express } from 'express';
import { AuthError, wwwAuthenticate, type Caller, type JwtVerifier } from '../auth/jwt-verifier.js';
import { auditedRunner } from '../mcp/audited-runner.js';
import { machineTools } from '../mcp/machine-tools.js';
import { manageConnectionsTool } from '../mcp/manage-connections-tool.js';
import { PlaceTools } from '../mcp/place-tools.js';
import { McpSessions } from '../mcp/sessions.js';
import { createWorkspaceServer } from '../mcp/workspace-server.js';
import { canRead } from '../places/access-rules.js';
import { placeRootOf } from '../places/place-root.js';
import { LOCAL_PERSON } from '../places/user-id.js';
import type { Services } from '../services.js';
import { userError } from '../user-errors.js';
import { PlaceAccessError } from '../connections/place-connections.js';
import { bearerAuth, type Refusal } from './bearer-auth.js';
import { allowedHostNames, hostAndOriginGuard } from './guards.js';

/** Whoever runs the app: the CLI, the desktop window, or any caller when auth is off. */
export const LOCAL_CALLER: Caller = { subject: LOCAL_PERSON, source: 'local' };

/** Large enough for a base64 `write` of a sizeable file, small enough to bound one request. */
const MAX_REQUEST_BYTES = '64mb';

/**
 * The person a caller acts as. App tokens were made by whoever runs the app, so they act as
 * `local`; tokens of another issuer act as their subject.
 */
export function personOf(caller: Caller): string {
  return caller.source === 'external' ? caller.subject : LOCAL_PERSON;
}

/** /mcp: guards, then the caller, then one MCP session per client, in the place the caller names. */
export function agentEndpoint(services: Services, verifier: JwtVerifier | undefined): { app: Express; sessions: McpSessions<Caller> } {
  const { config } = services;
  const tools = machineTools({ skillsDir: config.skillsDir, commands: services.commands });
  const sessions = new McpSessions<Caller>({
    idleTimeoutMs: config.sessionIdleTimeoutMs,
    ownerOf: (caller) => `${caller.source}:${caller.subject}`,
    createServer: async (caller, req) => {
      const person = personOf(caller);
      const query = typeof req.query.workspace_path === 'string' ? req.query.workspace_path : undefined;
      const place = placeRootOf(config.workspaceRoot, caller.workspacePath ?? query ?? '');
      if (!canRead(await services.access.snapshot(), person, place)) {
        throw new PlaceAccessError(`${person} cannot work in ${place.label}. Ask one of its editors for access, or connect to another place.`);
      }
      const server = createWorkspaceServer({
        skillsDir: config.skillsDir,
        skillsChanged: services.skillsChanged,
        tools: [...tools, manageConnectionsTool(place, person, services.connections)],
        sources: [new PlaceTools(place, { connections: services.connections, gateway: services.gateway, report: services.log })],
        run: auditedRunner((entry) => services.audit.record(entry), {
          caller: caller.subject,
          place: place.root,
          ...(caller.projectId !== undefined && { projectId: caller.projectId }),
        }),
      });
      services.placeSessions.add(place.root, server);
      return server;
    },
  });

  const app = express();
  app.disable('x-powered-by');
  app.use(hostAndOriginGuard(allowedHostNames(config.host, config.allowedHosts), config.allowedOrigins));
  const authenticate = verifier
    ? bearerAuth((header) => verifier.verifyAuthorization(header), refusal)
    : bearerAuth(async () => LOCAL_CALLER, refusal);
  app.all('/mcp', authenticate, express.json({ limit: MAX_REQUEST_BYTES }), (req, res, next) => {
    sessions.handle(req, res, res.locals.caller as Caller).catch(next);
  });
  app.use((_req, res) => {
    res.status(404).json({ error: 'Not found. The MCP endpoint is /mcp.' });
  });
  app.use(jsonRpcErrors(services.log));
  return { app, sessions };
}

function refusal(error: unknown): Refusal {
  if (error instanceof AuthError) {
    // The identity provider's keys could not be fetched: not the caller's fault.
    const status = error.reason === 'key_unavailable' ? 503 : 401;
    return { status, challenge: wwwAuthenticate(error), message: error.message };
  }
  return { status: 500, challenge: wwwAuthenticate(), message: 'Could not check the token. See the server log.' };
}

/** Errors before a session exists (a bad place, no access, a broken body) as JSON-RPC errors. */
function jsonRpcErrors(log: (line: string) => void): ErrorRequestHandler {
  return (error: unknown, _req, res, _next) => {
    const known = userError(error);
    const status = known?.status ?? ((error as { status?: number }).status && (error as { status: number }).status < 500 ? (error as { status: number }).status : 500);
    const message = known?.message ?? (status < 500 ? (error as Error).message : 'Internal error. See the server log.');
    if (!known && status >= 500) log(`MCP request failed: ${(error as Error).stack ?? String(error)}`);
    if (res.headersSent) return;
    res.status(status).json({ jsonrpc: '2.0', error: { code: -32000, message }, id: null });
  };
}
