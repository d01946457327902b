import * as z from 'zod';
import { hostStatus } from './host-status.js';

/**
 * How agents get in, as the page explains it: the key sources the endpoint accepts besides the
 * app's own tokens (`secret`: an HS256 secret shared with a platform, `public-key`, `jwks`).
 */
export const authMode = z.union([
  z.object({ required: z.literal(false) }),
  z.object({ required: z.literal(true), external: z.array(z.enum(['secret', 'public-key', 'jwks'])) }),
]);
export type AuthMode = z.infer<typeof authMode>;

export const nativeModuleName = z.enum(['keytar', 'node-pty']);
export type NativeModuleName = z.infer<typeof nativeModuleName>;

/** An optional native module of the server's install: loaded, or why not, what works without it and the step that fixes it. */
export const nativeModule = z.object({
  name: nativeModuleName,
  /** What it gives. */
  gives: z.string(),
  loaded: z.boolean(),
  problem: z.string().optional(),
  without: z.string().optional(),
  fix: z.string().optional(),
});
export type NativeModule = z.infer<typeof nativeModule>;

/**
 * `GET /api/server`: the agent endpoint's state and what it is configured to be, so the page can
 * say where it listens and how agents sign in even while it is stopped.
 */
export const serverInfo = z.intersection(
  hostStatus,
  z.object({
    /** The configured address; `port` 0 means a free port is picked at each start. */
    listen: z.object({ host: z.string(), port: z.number() }),
    /** Whether only this machine can reach the endpoint (a loopback address) or the network can. */
    reachable: z.enum(['this-machine', 'network']),
    authMode,
    /** The https origin agents reach the endpoint at through a reverse proxy (WORKSPACE_PUBLIC_URL), if set. */
    publicUrl: z.string().optional(),
    /** Agents' commands running now; stopping the server ends them. */
    runningCommands: z.number(),
    /** Agents' MCP sessions open now; stopping the server ends them too. */
    agentSessions: z.number(),
    /** The optional native modules, as this server found them (GET /api/server only). */
    nativeModules: z.array(nativeModule).optional(),
  }),
);
export type ServerInfo = z.infer<typeof serverInfo>;

/**
 * `status --json`: the state dir, the server running on it (absent: none) with the pid and page it
 * recorded, and the optional native modules as that server found them (with none running, as the
 * command found them in its own install).
 */
export const statusAnswer = z.object({
  stateDir: z.string(),
  server: z.intersection(serverInfo, z.object({ pid: z.number(), pageUrl: z.string() })).optional(),
  nativeModules: z.array(nativeModule),
  nativeModulesCheckedBy: z.enum(['server', 'this command']),
});
export type StatusAnswer = z.infer<typeof statusAnswer>;

/** One tool call from the audit log. Never arguments, contents or results. */
export const activityRecord = z.object({
  time: z.string(),
  tool: z.string(),
  /** The token's subject: `token:<id>` for the app's own tokens, else the platform's user id. */
  caller: z.string(),
  /** The OAuth client's name, for a client that signed in (its caller is `grant:<id>`). */
  client: z.string().optional(),
  /** The place's root; `""` is This machine. */
  place: z.string().optional(),
  durationMs: z.number(),
  outcome: z.enum(['ok', 'error', 'timeout', 'cancelled']),
  error: z.string().optional(),
  /** A connection's tool: the connection's name and the upstream's own name for the tool. */
  connection: z.object({ name: z.string(), tool: z.string() }).optional(),
});
export type ActivityRecord = z.infer<typeof activityRecord>;

/** GET /api/activity?limit=: the last tool calls, oldest first. */
export const activityAnswer = z.object({ records: z.array(activityRecord) });
export const ACTIVITY_MAX_LIMIT = 500;

/** POST /api/open: the desktop app showed its window, or a fresh one-time login link. */
export const openAnswer = z.union([z.object({ window: z.literal(true) }), z.object({ url: z.string(), expiresInSeconds: z.number() })]);
