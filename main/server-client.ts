import type * as z from 'zod';
import { errorAnswer } from '../common/api/errors.js';
import { findRunningServer, type RunningServer } from './running-server.js';
import { DEFAULT_UPSTREAM_TIMEOUT_SECONDS } from './settings.js';

/**
 * The longest a command waits for a check of a connection's server: two requests (initialize,
 * tools/list), each given `upstreamTimeoutMs`, and a moment for the rest.
 */
export function checkLimitMs(upstreamTimeoutMs: number): number {
  return 2 * upstreamTimeoutMs + 1_000;
}

/** The running server refused a command's request; its message says why and what to do. */
export class ServerRefusalError extends Error {
  override readonly name = 'ServerRefusalError';
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/**
 * The running server's API, for a command on this machine: the owner's credential from
 * control.json, requests and answers checked against the contract (common/api). The server is the
 * one truth: commands show what it computed rather than checking again with their own environment.
 */
export class ServerClient {
  /** The longest any of its answers takes: none waits for more than one check of a connection's server. */
  readonly limitMs: number;

  constructor(readonly server: RunningServer) {
    this.limitMs = checkLimitMs(server.upstreamTimeoutMs ?? DEFAULT_UPSTREAM_TIMEOUT_SECONDS * 1000);
  }

  async call<S extends z.ZodType>(method: string, path: string, answer: S, body?: unknown): Promise<z.infer<S>> {
    let response: Response;
    try {
      response = await fetch(`${this.server.controlUrl}/api${path}`, {
        method,
        headers: { Authorization: `Bearer ${this.server.adminToken}`, ...(body !== undefined && { 'Content-Type': 'application/json' }) },
        ...(body !== undefined && { body: JSON.stringify(body) }),
        // A server that stopped answering is not waited for without end.
        signal: AbortSignal.timeout(this.limitMs + ANSWER_MARGIN_MS),
      });
    } catch (error) {
      const why =
        (error as Error).name === 'TimeoutError'
          ? ` within ${Math.round((this.limitMs + ANSWER_MARGIN_MS) / 1000)} s`
          : `: ${(error as Error).message}`;
      throw new ServerRefusalError(
        `The server running on this state dir (pid ${this.server.pid}, ${this.server.controlUrl}) did not answer${why}. Is it stopping or stuck? Try again, or restart it.`,
        503,
      );
    }
    const json = await response.json().catch(() => undefined);
    if (!response.ok) {
      const refusal = errorAnswer.safeParse(json);
      throw new ServerRefusalError(
        refusal.success ? refusal.data.error.message : `The server answered HTTP ${response.status}.`,
        response.status,
      );
    }
    const checked = answer.safeParse(json);
    if (!checked.success) {
      throw new ServerRefusalError(
        `The running server's answer to ${method} ${path.split('?')[0]} is not what this command expects: the server and this command are of different versions. Restart the server.`,
        502,
      );
    }
    return checked.data;
  }
}

/** Beyond a check's limit, for the server's own work around it (the state files, the keychain). */
const ANSWER_MARGIN_MS = 10_000;

/** The server running on this state dir, if one runs. */
export async function runningServer(stateDir: string): Promise<ServerClient | undefined> {
  const found = await findRunningServer(stateDir);
  return found && new ServerClient(found);
}

/** `path` with its query (undefined values left out). */
export function withQuery(path: string, params: Record<string, string | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined) search.set(key, value);
  const text = search.toString();
  return text ? `${path}?${text}` : path;
}

/**
 * Says on stderr, in one line, that no server runs and so this command does `what` itself: what it
 * shows may then differ from what a server with other settings would find.
 */
export function sayNoServer(stateDir: string, what: string): void {
  process.stderr.write(`No server runs on the state dir ${stateDir}: this command ${what}.\n`);
}
