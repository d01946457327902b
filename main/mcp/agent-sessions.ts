import { hostname } from 'node:os';
import type { IncomingMessage } from 'node:http';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Caller } from '../auth/jwt-verifier.js';
import { PlaceAccessError } from '../connections/place-rules.js';
import { canRead } from '../places/access-rules.js';
import { PlacePathError, placeRootOf } from '../places/place-root.js';
import { LOCAL_PERSON } from '../places/user-id.js';
import type { Services } from '../services.js';
import { auditedRunner } from './audited-runner.js';
import { machineTools } from './machine-tools.js';
import { manageConnectionsTool } from './manage-connections-tool.js';
import { PlacePolicy } from './place-policy.js';
import { placeTools, toolSearchFor } from './place-tool-search.js';
import { sessionInstructions } from './session-instructions.js';
import { McpSessions } from './sessions.js';
import { createWorkspaceServer } from './workspace-server.js';

/** Per token (or signed-in client, or external subject): more than enough for one agent's parallel work. */
const MAX_SESSIONS_PER_CALLER = 64;

/** How soon a revoked client's open sessions (an SSE stream, say) are ended; its next request is refused at once anyway. */
const REVOCATION_CHECK_MS = 1_000;

/** The agents' MCP sessions, and how to end them all. */
export interface AgentSessions {
  sessions: McpSessions<Caller>;
  /** Ends every session, after giving requests in progress up to `graceMs` to send their answers. */
  close(graceMs?: number): Promise<void>;
}

/**
 * The agents' MCP sessions: each one in the place its caller names, with that place's policy, the
 * machine's tools and the place's connections, audited, with tool search when the tools are many.
 * A client whose access the owner revoked (here or from the CLI) loses its open sessions at once.
 */
export function agentSessions(services: Services): AgentSessions {
  const sessions = new McpSessions<Caller>({
    idleTimeoutMs: services.config.sessionIdleTimeoutMs,
    maxSessionsPerOwner: MAX_SESSIONS_PER_CALLER,
    ownerOf: (caller) => `${caller.source}:${caller.subject}`,
    createServer: (caller, req) => placeSession(services, caller, caller.workspacePath ?? workspacePathOf(req) ?? ''),
  });
  const revocations = setInterval(() => {
    sessions
      .closeWhere(
        async (caller) =>
          caller.client !== undefined && (await services.agentAuthorization.grantStatus(caller.client.grantId)).status !== 'active',
      )
      .catch((error: unknown) => services.log(`Could not check for revoked clients: ${(error as Error).message}`));
  }, REVOCATION_CHECK_MS);
  revocations.unref();
  return { sessions, close: (graceMs) => sessions.closeAll(graceMs).finally(() => clearInterval(revocations)) };
}

/**
 * The person a caller acts as. App tokens were made by whoever runs the app, so they act as
 * `local`; tokens of another issuer act as their subject.
 */
function personOf(caller: Caller): string {
  return caller.source === 'external' ? caller.subject : LOCAL_PERSON;
}

/** A new session's MCP server, for `caller` in the place at `path`; refused when the caller may not read that place. */
async function placeSession(services: Services, caller: Caller, path: string): Promise<McpServer> {
  const { config } = services;
  const person = personOf(caller);
  const place = placeRootOf(config.workspaceRoot, path);
  if (!canRead(await services.access.snapshot(), person, place)) {
    throw new PlaceAccessError(`${person} cannot work in ${place.label}. Ask one of its editors for access, or connect to another place.`);
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
    policy: (call) => policy.forCommand(call),
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
      policy: async (call) => (await policy.current(call)).kind,
      ...(caller.projectId !== undefined && { projectId: caller.projectId }),
    }),
    toolSearch: async (toolCount) => (await toolSearchFor(services, place, caller.tokenId, toolCount)).on,
  });
  services.placeSessions.add(place.root, server);
  return server;
}

/** The place named in the URL (`/mcp?workspace_path=`), if any; naming two is refused. */
function workspacePathOf(req: IncomingMessage): string | undefined {
  // Only the query is read: the base just makes the request target a URL.
  const values = new URL(req.url ?? '/', 'http://localhost').searchParams.getAll('workspace_path');
  if (values.length > 1) throw new PlacePathError(`The URL names ${values.length} places (workspace_path); name one.`);
  return values[0];
}
