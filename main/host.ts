import { once } from 'node:events';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { HostStatus } from '../common/api/host-status.js';
import type { AgentTokenStore } from './auth/agent-tokens.js';
import type { Approvals } from './auth/agent-oauth/approvals.js';
import type { AuthorizationServer } from './auth/agent-oauth/authorization-server.js';
import { JwtVerifier } from './auth/jwt-verifier.js';
import type { Config } from './config.js';
import { AGENT_SERVER_OPTIONS, agentEndpoint } from './http/agent-endpoint.js';
import { signInsNeeded, type UpstreamSignInNeeded } from './connections/sign-ins-needed.js';
import type { ChangeFeed } from './events/change-feed.js';
import { lazyListener } from './http/lazy-listener.js';
import { agentSessions, type AgentSessions } from './mcp/agent-sessions.js';
import { sendJson } from './network/send-json.js';
import type { SandboxLimits } from './machine/sandbox/sandbox-limits.js';
import { claimStateDir, forgetRunningServer, recordRunningServer } from './running-server.js';
import { openServices, type Services } from './services.js';
import { PACKAGE_ROOT } from './version.js';

export type { HostStatus };

export interface HostOptions {
  /** Where the host reports what a person running it should know (skipped skills, ...); default stderr. */
  log?: (line: string) => void;
  env?: NodeJS.ProcessEnv;
  /** Opens a sign-in URL in the person's browser (the desktop app: shell.openExternal). */
  openBrowser?: (url: string) => void;
  /** The desktop app's window, shown when `persona-mcp-workspace open` asks; headless there is none. */
  showWindow?: () => void;
  /** The sandbox limits, their probes started by the caller (the CLI, before this code loads); the first open() takes them. */
  limits?: Promise<SandboxLimits>;
}

/** How long stopping lets requests in progress send their answers before closing the sessions. */
const SHUTDOWN_GRACE_MS = 3_000;

interface Open {
  services: Services;
  verifier: JwtVerifier | undefined;
  control: Server;
  controlUrl: string;
  stopStatus: () => void;
}

/**
 * The app's server side. open() brings up the shared services and the control plane (the page, its
 * API, sign-in callbacks: loopback only, up while the app runs); start() and stop() open and close
 * the agent endpoint (/mcp), as the tray's Start/Stop does; close() ends everything.
 */
export class Host {
  private current: HostStatus = { state: 'stopped' };
  private opened: Promise<Open> | undefined;
  private agent: ({ server: Server } & AgentSessions) | undefined;
  private readonly listeners = new Set<(status: HostStatus) => void>();
  private readonly log: (line: string) => void;
  /** The caller's limits until the services take them; a later open() (after a failed one) finds its own. */
  private givenLimits: Promise<SandboxLimits> | undefined;

  constructor(
    private readonly config: Config,
    private readonly options: HostOptions = {},
  ) {
    this.log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
    this.givenLimits = options.limits;
  }

  get status(): HostStatus {
    return this.current;
  }

  onStatus(listener: (status: HostStatus) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The shared services and the control plane; resolves with the control plane's URL. */
  async open(): Promise<string> {
    this.opened ??= this.openControl().catch((error: unknown) => {
      this.opened = undefined;
      throw error;
    });
    return (await this.opened).controlUrl;
  }

  /** The app's own agent tokens (after open()). */
  async tokens(): Promise<AgentTokenStore> {
    await this.open();
    return (await this.opened!).services.tokens;
  }

  /** The agent endpoint's OAuth authorization server: sign-in requests and signed-in clients (after open()). */
  async agentAuthorization(): Promise<AuthorizationServer> {
    await this.open();
    return (await this.opened!).services.agentAuthorization;
  }

  /** The owner's side of agent sign-ins: what waits for an answer, and the answers (after open()). */
  async approvals(): Promise<Approvals> {
    await this.open();
    return (await this.opened!).services.approvals;
  }

  /** The connections using `person`'s login whose server asks for a sign-in (after open()): the tray's attention state. */
  async signInsNeeded(person: string): Promise<UpstreamSignInNeeded[]> {
    await this.open();
    return signInsNeeded(person, (await this.opened!).services);
  }

  /** What changed on the server, as it happens (after open()): the tray listens here. */
  async changes(): Promise<ChangeFeed> {
    await this.open();
    return (await this.opened!).services.changes;
  }

  /** A one-time link that signs a browser on this machine in to the page. */
  async loginUrl(): Promise<string> {
    const { services, controlUrl } = await this.opened!;
    return `${controlUrl}/login?token=${services.admin.createLoginToken()}`;
  }

  /** The desktop window's credential for the control plane. */
  async adminToken(): Promise<string> {
    return (await this.opened!).services.admin.adminToken;
  }

  /** Opens the agent endpoint; resolves with its MCP URL. */
  async start(): Promise<string> {
    if (this.current.state === 'running') return this.current.url;
    if (this.current.state !== 'stopped' && this.current.state !== 'failed') {
      throw new Error(`The server is ${this.current.state}; wait for it to finish.`);
    }
    this.setStatus({ state: 'starting' });
    try {
      await this.open();
      const { services, verifier } = await this.opened!;
      const sessions = agentSessions(services);
      const server = createServer(AGENT_SERVER_OPTIONS, agentEndpoint(services, verifier, sessions.sessions)).listen(
        this.config.port,
        this.config.host,
      );
      try {
        await once(server, 'listening');
      } catch (error) {
        await sessions.close();
        throw error;
      }
      this.agent = { server, ...sessions };
      services.listeningPorts.add((server.address() as AddressInfo).port);
      const url = serverUrl(this.config.host, (server.address() as AddressInfo).port, '/mcp');
      this.setStatus({ state: 'running', url, auth: this.config.auth });
      await this.recordRunning(services);
      return url;
    } catch (error) {
      this.setStatus({ state: 'failed', error: startFailure(error, this.config.host, this.config.port) });
      throw error;
    }
  }

  /**
   * Loads the code that reaches remote servers if a place has a remote connection, and reaches none
   * (after open()): called once the agent endpoint's URL is out, it loads while the first agent
   * connects instead of after that agent asks for its tools. No connection, no loading.
   */
  async loadRemoteClient(): Promise<void> {
    const { services } = await this.opened!;
    for (const root of await services.store.roots()) {
      if ((await services.store.list(root)).some((c) => c.transport !== 'stdio')) return services.gateway.loadRemoteClient();
    }
  }

  /** Closes the agent endpoint: running commands are stopped, sessions closed, the port released. */
  async stop(): Promise<void> {
    const agent = this.agent;
    if (!agent) return;
    this.setStatus({ state: 'stopping' });
    this.agent = undefined;
    const { services } = await this.opened!;
    const closed = once(agent.server, 'close');
    agent.server.close();
    // Commands first, so that their callers get a "server is shutting down" result before the sessions close.
    await services.commands.killAll();
    // No agent can read the saved outputs any more.
    for (const line of await services.commands.removeSavedOutputs()) services.log(`Saved bash outputs: ${line}`);
    await agent.close(SHUTDOWN_GRACE_MS);
    // Streams that outlived their session (or idle keep-alive sockets) would hold the port.
    agent.server.closeAllConnections();
    await closed;
    this.setStatus({ state: 'stopped' });
    await this.recordRunning(services);
  }

  /** Stops everything: the agent endpoint, the control plane and the services. */
  async close(): Promise<void> {
    await this.stop();
    const opened = this.opened;
    this.opened = undefined;
    if (!opened) return;
    const { services, control, stopStatus } = await opened;
    stopStatus();
    await forgetRunningServer(this.config.stateDir);
    await closeServer(control);
    await services.close();
  }

  private async openControl(): Promise<Open> {
    const limits = this.givenLimits;
    this.givenLimits = undefined;
    // What failed before the services took the limits ends their groups (and a probe's process).
    const dropLimits = () =>
      limits?.then(
        (taken) => taken.close(),
        () => {},
      );
    let control: Server;
    try {
      // One server per state dir: a second one would show and change state the first does not know of.
      await claimStateDir(this.config.stateDir);
      // The control plane listens first: its URL is where sign-ins come back, which the services are
      // made with. Until they are open, it answers that the app is starting.
      control = createServer(answerStarting).listen(this.config.controlPort, '127.0.0.1');
      try {
        await once(control, 'listening');
      } catch (error) {
        await forgetRunningServer(this.config.stateDir);
        throw new Error(startFailure(error, '127.0.0.1', this.config.controlPort, '--control-port'), { cause: error });
      }
    } catch (error) {
      await dropLimits();
      throw error;
    }
    const controlPort = (control.address() as AddressInfo).port;
    const controlUrl = serverUrl('127.0.0.1', controlPort, '');
    let services: Services;
    try {
      services = await openServices(this.config, this.log, {
        controlUrl,
        ...(this.options.env && { env: this.options.env }),
        ...(this.options.openBrowser && { openBrowser: this.options.openBrowser }),
        ...(limits && { limits }),
      });
    } catch (error) {
      await closeServer(control);
      await forgetRunningServer(this.config.stateDir);
      throw error;
    }
    try {
      services.listeningPorts.add(controlPort);
      const verifier = this.config.auth
        ? await JwtVerifier.create({ ...this.config.jwt, appTokens: services.tokens, grants: services.agentAuthorization })
        : undefined;
      // The page and its API are loaded on their first request: an agent's first request does not wait for them.
      const app = lazyListener(async () => {
        const { controlPlane } = await import('./http/control-plane.js');
        return controlPlane(services, {
          pageDir: join(PACKAGE_ROOT, 'dist', 'renderer'),
          host: {
            status: () => this.status,
            agentSessions: () => this.agent?.sessions.size ?? 0,
            start: () => this.start(),
            stop: () => this.stop(),
            ...(this.options.showWindow && { showWindow: this.options.showWindow }),
          },
        });
      }, this.log);
      control.off('request', answerStarting).on('request', app);
      const stopStatus = this.onStatus(() => services.changes.publish({ topic: 'server' }));
      // So that `persona-mcp-workspace open` and the reading commands find this server.
      await this.recordRunning(services);
      return { services, verifier, control, controlUrl, stopStatus };
    } catch (error) {
      await closeServer(control);
      await services.close();
      await forgetRunningServer(this.config.stateDir);
      throw error;
    }
  }

  private recordRunning(services: Services): Promise<void> {
    const mcpUrl = this.current.state === 'running' ? this.current.url : undefined;
    return recordRunningServer(this.config.stateDir, {
      controlUrl: services.controlUrl,
      adminToken: services.admin.adminToken,
      upstreamTimeoutMs: this.config.upstreamTimeoutMs,
      ...(mcpUrl && { mcpUrl }),
    });
  }

  private setStatus(status: HostStatus): void {
    this.current = status;
    for (const listener of this.listeners) listener(status);
  }
}

/** The control plane's answer while the services it serves are still opening (a page loaded that early). */
const answerStarting: RequestListener = (_req, res) =>
  sendJson(res, 503, { error: { message: 'The app is starting. Try again in a moment.' } }, { 'Retry-After': '1' });

async function closeServer(server: Server): Promise<void> {
  const closed = once(server, 'close');
  server.close();
  server.closeAllConnections();
  await closed;
}

function serverUrl(host: string, port: number, path: string): string {
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}${path}`;
}

function startFailure(error: unknown, host: string, port: number, flag = '--port'): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE')
    return `Port ${port} on ${host} is already in use. Stop the other program or choose another port with ${flag}.`;
  if (code === 'EACCES') return `Not allowed to listen on port ${port}. Ports below 1024 need extra rights; choose a port above 1024.`;
  if (code === 'EADDRNOTAVAIL')
    return `${host} is not an address of this machine. Use 127.0.0.1, 0.0.0.0 or one of this machine's addresses.`;
  return (error as Error).message;
}
