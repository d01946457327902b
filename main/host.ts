import { once } from 'node:events';
import { mkdir } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { AuditLog } from './audit/audit-log.js';
import { AgentTokenStore } from './auth/agent-tokens.js';
import { AuthError, JwtVerifier, wwwAuthenticate, type Caller } from './auth/jwt-verifier.js';
import type { HostStatus } from '../common/host-status.js';
import type { Config } from './config.js';
import { bearerAuth, type Refusal } from './http/bearer-auth.js';
import { allowedHostNames, hostAndOriginGuard } from './http/guards.js';
import { CommandRunner } from './machine/command-runner.js';
import { SkillsWatch } from './machine/skills-watch.js';
import { auditedRunner } from './mcp/audited-runner.js';
import { machineTools } from './mcp/machine-tools.js';
import { Changes } from './mcp/resource-subscriptions.js';
import { McpSessions } from './mcp/sessions.js';
import { createWorkspaceServer } from './mcp/workspace-server.js';

export type { HostStatus };

/** Whoever runs the app: the CLI, the desktop window, or any caller when auth is off. */
export const LOCAL_CALLER: Caller = { subject: 'local', source: 'local' };

/** Large enough for a base64 `write` of a sizeable file, small enough to bound one request. */
const MAX_REQUEST_BYTES = '64mb';

/** How long stop() lets requests in progress send their answers before closing the sessions. */
const SHUTDOWN_GRACE_MS = 3_000;

interface Running {
  server: Server;
  sessions: McpSessions<Caller>;
  commands: CommandRunner;
  audit: AuditLog;
  skills: SkillsWatch;
}

export interface HostOptions {
  /** Where the host reports what a person running it should know (skipped skills, ...); default stderr. */
  log?: (line: string) => void;
}

/**
 * The machine's MCP server: start() opens the agent endpoint, stop() closes every session, kills
 * every running command and releases the port. Used by the CLI and by the desktop shell.
 */
export class Host {
  private current: HostStatus = { state: 'stopped' };
  private running: Running | undefined;
  private readonly listeners = new Set<(status: HostStatus) => void>();
  /** The app's own agent tokens; the CLI and the page create and revoke them here. */
  readonly tokens: AgentTokenStore;

  private readonly log: (line: string) => void;

  constructor(
    private readonly config: Config,
    options: HostOptions = {},
  ) {
    this.log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
    this.tokens = new AgentTokenStore({ stateDir: config.stateDir });
  }

  get status(): HostStatus {
    return this.current;
  }

  onStatus(listener: (status: HostStatus) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async start(): Promise<string> {
    if (this.current.state === 'running') return this.current.url;
    if (this.current.state !== 'stopped' && this.current.state !== 'failed') {
      throw new Error(`The server is ${this.current.state}; wait for it to finish.`);
    }
    this.setStatus({ state: 'starting' });
    try {
      this.running = await this.open();
      const url = mcpUrl(this.config.host, (this.running.server.address() as AddressInfo).port);
      this.setStatus({ state: 'running', url, auth: this.config.auth });
      return url;
    } catch (error) {
      this.setStatus({ state: 'failed', error: startFailure(error, this.config) });
      throw error;
    }
  }

  async stop(): Promise<void> {
    const running = this.running;
    if (!running) return;
    this.setStatus({ state: 'stopping' });
    this.running = undefined;
    const closed = once(running.server, 'close');
    running.server.close();
    // Commands first, so that their callers get a "server is shutting down" result before the sessions close.
    await running.commands.killAll();
    await running.sessions.closeAll(SHUTDOWN_GRACE_MS);
    // Streams that outlived their session (or idle keep-alive sockets) would hold the port.
    running.server.closeAllConnections();
    await closed;
    await Promise.all([running.audit.close(), running.skills.stop()]);
    this.setStatus({ state: 'stopped' });
  }

  private async open(): Promise<Running> {
    const { config } = this;
    await mkdir(config.stateDir, { recursive: true, mode: 0o700 });
    const verifier = config.auth
      ? await JwtVerifier.create({ ...config.jwt, appTokens: this.tokens })
      : undefined;
    const audit = new AuditLog({ stateDir: config.stateDir });
    const commands = new CommandRunner({ maxTimeoutSeconds: config.shellMaxTimeoutSeconds });
    const skillsChanged = new Changes();
    const skills = new SkillsWatch(config.skillsDir, {
      onChange: () => skillsChanged.emit(),
      onInvalid: (skill) => this.log(`Skill folder ${skill.dir} skipped: ${skill.reason}`),
      onError: (error) => this.log(`Cannot read the skills folder ${config.skillsDir}: ${error.message}`),
    });
    await skills.start();
    const tools = machineTools({ skillsDir: config.skillsDir, commands });
    const sessions = new McpSessions<Caller>({
      idleTimeoutMs: config.sessionIdleTimeoutMs,
      ownerOf: (caller) => `${caller.source}:${caller.subject}`,
      createServer: (caller) =>
        createWorkspaceServer({
          skillsDir: config.skillsDir,
          skillsChanged,
          tools,
          sources: [],
          run: auditedRunner((entry) => audit.record(entry), {
            caller: caller.subject,
            ...(caller.workspacePath !== undefined && { place: caller.workspacePath }),
            ...(caller.projectId !== undefined && { projectId: caller.projectId }),
          }),
        }),
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

    const server = app.listen(config.port, config.host);
    try {
      await once(server, 'listening');
    } catch (error) {
      await Promise.all([sessions.closeAll(), audit.close(), skills.stop()]);
      throw error;
    }
    return { server, sessions, commands, audit, skills };
  }

  private setStatus(status: HostStatus): void {
    this.current = status;
    for (const listener of this.listeners) listener(status);
  }
}

function refusal(error: unknown): Refusal {
  if (error instanceof AuthError) {
    // The identity provider's keys could not be fetched: not the caller's fault.
    const status = error.reason === 'key_unavailable' ? 503 : 401;
    return { status, challenge: wwwAuthenticate(error), message: error.message };
  }
  return { status: 500, challenge: wwwAuthenticate(), message: 'Could not check the token. See the server log.' };
}

function mcpUrl(host: string, port: number): string {
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}/mcp`;
}

function startFailure(error: unknown, config: Config): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE') return `Port ${config.port} on ${config.host} is already in use. Stop the other program or choose another port with --port.`;
  if (code === 'EACCES') return `Not allowed to listen on port ${config.port}. Ports below 1024 need extra rights; choose a port above 1024.`;
  if (code === 'EADDRNOTAVAIL') return `${config.host} is not an address of this machine. Use 127.0.0.1, 0.0.0.0 or one of this machine's addresses.`;
  return (error as Error).message;
}
