import type { HostStatus } from './host-status.js';

/**
 * How agents get in, as the page explains it: the key sources the endpoint accepts besides the
 * app's own tokens (`secret`: an HS256 secret shared with a platform, `public-key`, `jwks`).
 */
export type AuthMode = { required: false } | { required: true; external: Array<'secret' | 'public-key' | 'jwks'> };

/**
 * `GET /api/server`: the agent endpoint's state and what it is configured to be, so the page can
 * say where it listens and how agents sign in even while it is stopped.
 */
export type ServerInfo = HostStatus & {
  /** The configured address; `port` 0 means a free port is picked at each start. */
  listen: { host: string; port: number };
  /** Whether only this machine can reach the endpoint (a loopback address) or the network can. */
  reachable: 'this-machine' | 'network';
  authMode: AuthMode;
  /** The https origin agents reach the endpoint at through a reverse proxy (WORKSPACE_PUBLIC_URL), if set. */
  publicUrl?: string;
  /** Agents' commands running now; stopping the server ends them. */
  runningCommands: number;
  /** Agents' MCP sessions open now; stopping the server ends them too. */
  agentSessions: number;
};
