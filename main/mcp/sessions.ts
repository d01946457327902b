import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { sendJson } from '../network/send-json.js';
import { DirectToolCalls } from './direct-tool-calls.js';
import { toolCallOf } from './tool-table.js';

interface Session<C> {
  caller: C;
  transport: StreamableHTTPServerTransport;
  server: McpServer;
  /** Answers tools/call itself (absent for a server without a tool table). */
  direct: DirectToolCalls | undefined;
  owner: string;
  lastActivity: number;
  /** When it was last used, as a count of uses of every session: orders uses within one millisecond too. */
  lastUse: number;
  /** Requests still open (a GET stream counts), so a session in use is never expired as idle. */
  open: number;
  /** POSTs still being answered: a session with a call in progress is never closed to make room. */
  calls: number;
}

export interface McpSessionsOptions<C> {
  /** A fresh MCP server for one session, bound to the caller that initialized it; may refuse by throwing. */
  createServer: (caller: C, req: IncomingMessage) => Promise<McpServer>;
  /** Identifies a caller; a session answers only to the identity that created it. */
  ownerOf: (caller: C) => string;
  idleTimeoutMs: number;
  /** Sessions one identity may hold at once; initializing one more closes its oldest idle one. */
  maxSessionsPerOwner: number;
  now?: () => number;
}

/**
 * Streamable HTTP sessions: initialize creates one (an MCP server of its own), the Mcp-Session-Id
 * header routes later requests to it, DELETE ends it, and sessions left idle are closed. One
 * identity holds at most `maxSessionsPerOwner` sessions (each is an MCP server in memory), so a
 * client that never ends its sessions loses its oldest idle ones rather than filling the host. A
 * session's tools/call requests are answered by DirectToolCalls, everything else by the SDK transport.
 */
export class McpSessions<C> {
  private readonly sessions = new Map<string, Session<C>>();
  /** POST responses still being written; shutdown lets them finish so callers get their results. */
  private readonly inflight = new Set<Promise<void>>();
  /** Initializes in progress per owner: they count against the limit before their session exists. */
  private readonly starting = new Map<string, number>();
  private readonly sweeper: NodeJS.Timeout;
  private readonly now: () => number;
  private uses = 0;

  constructor(private readonly options: McpSessionsOptions<C>) {
    this.now = options.now ?? Date.now;
    const every = Math.max(1_000, Math.min(60_000, options.idleTimeoutMs / 4));
    this.sweeper = setInterval(() => void this.closeIdle(), every);
    this.sweeper.unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  /** Serves one request of `caller`; `body` is its parsed JSON body, if it had one. */
  async handle(req: IncomingMessage, res: ServerResponse, caller: C, body: unknown): Promise<void> {
    const id = req.headers['mcp-session-id'];
    if (typeof id === 'string') {
      const session = this.sessions.get(id);
      // Another caller's session id is treated as unknown, so ids can't be probed or borrowed.
      if (!session || session.owner !== this.options.ownerOf(caller)) {
        sendError(
          res,
          404,
          -32001,
          'Session not found: it ended or expired. Start a new session by sending initialize without an Mcp-Session-Id header.',
        );
        return;
      }
      this.track(session, res);
      if (session.direct?.take(req, res, body)) return;
      await session.transport.handleRequest(req, res, body);
      return;
    }
    if (req.method !== 'POST' || !isInitializeRequest(body)) {
      sendError(
        res,
        400,
        -32000,
        'Bad Request: no Mcp-Session-Id header. Send initialize first, then pass the Mcp-Session-Id it returns on every request.',
      );
      return;
    }
    const owner = this.options.ownerOf(caller);
    if (!this.makeRoom(owner)) {
      const max = this.options.maxSessionsPerOwner;
      sendError(
        res,
        429,
        -32000,
        `Too many sessions: this credential already has ${max} open, each with a call in progress. End one you no longer use (DELETE /mcp with its Mcp-Session-Id) or wait for a call to finish, then initialize again.`,
      );
      return;
    }
    const started = this.reserve(owner);
    try {
      await this.create(req, res, caller, owner, body, started);
    } finally {
      started();
    }
  }

  /** Counts an initialize of `owner` as a session until the returned function is called (once or more). */
  private reserve(owner: string): () => void {
    this.starting.set(owner, (this.starting.get(owner) ?? 0) + 1);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const left = this.starting.get(owner)! - 1;
      if (left === 0) this.starting.delete(owner);
      else this.starting.set(owner, left);
    };
  }

  /**
   * Makes room for one more session of `owner` by closing its least recently used sessions that
   * have no call in progress; false when every one of them is busy. Runs synchronously, so
   * initializes arriving together cannot all see the same free slot.
   */
  private makeRoom(owner: string): boolean {
    const mine = [...this.sessions].filter(([, s]) => s.owner === owner);
    const excess = mine.length + (this.starting.get(owner) ?? 0) - this.options.maxSessionsPerOwner + 1;
    if (excess <= 0) return true;
    const idle = mine.filter(([, s]) => s.calls === 0).sort(([, a], [, b]) => a.lastUse - b.lastUse);
    if (idle.length < excess) return false;
    for (const [id, session] of idle.slice(0, excess)) {
      // Out of the table at once, so its next request is told the session ended.
      this.sessions.delete(id);
      void session.transport.close();
    }
    return true;
  }

  private async create(
    req: IncomingMessage,
    res: ServerResponse,
    caller: C,
    owner: string,
    body: unknown,
    started: () => void,
  ): Promise<void> {
    const server = await this.options.createServer(caller, req);
    const call = toolCallOf(server);
    let direct: DirectToolCalls | undefined;
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => {
        direct = call && new DirectToolCalls(id, server, call);
        const session: Session<C> = { caller, transport, server, direct, owner, lastActivity: this.now(), lastUse: 0, open: 0, calls: 0 };
        this.sessions.set(id, session);
        started();
        this.track(session, res);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.delete(transport.sessionId);
      direct?.abortAll();
      void server.close();
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
    // An initialize that failed validation never became a session; don't leave its server behind.
    if (!transport.sessionId) await server.close();
  }

  private track(session: Session<C>, res: ServerResponse): void {
    const post = res.req.method === 'POST';
    session.open += 1;
    if (post) session.calls += 1;
    session.lastActivity = this.now();
    session.lastUse = ++this.uses;
    const done = new Promise<void>((resolve) =>
      res.once('close', () => {
        session.open -= 1;
        if (post) session.calls -= 1;
        session.lastActivity = this.now();
        session.lastUse = ++this.uses;
        this.inflight.delete(done);
        resolve();
      }),
    );
    if (post) this.inflight.add(done);
  }

  async closeIdle(): Promise<void> {
    const cutoff = this.now() - this.options.idleTimeoutMs;
    const idle = [...this.sessions.values()].filter((s) => s.open === 0 && s.lastActivity < cutoff);
    await Promise.all(idle.map((s) => s.transport.close()));
  }

  /** Ends at once the sessions whose caller `test` picks (a client whose access was revoked). */
  async closeWhere(test: (caller: C) => boolean | Promise<boolean>): Promise<number> {
    const doomed: Session<C>[] = [];
    for (const session of [...this.sessions.values()]) if (await test(session.caller)) doomed.push(session);
    await Promise.all(doomed.map((s) => s.transport.close()));
    return doomed.length;
  }

  /** Ends every session, after giving requests in progress up to `graceMs` to send their answers. */
  async closeAll(graceMs = 0): Promise<void> {
    clearInterval(this.sweeper);
    if (this.inflight.size > 0 && graceMs > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.all(this.inflight), new Promise((r) => (timer = setTimeout(r, graceMs)))]);
      clearTimeout(timer);
    }
    await Promise.all([...this.sessions.values()].map((s) => s.transport.close()));
    this.sessions.clear();
  }
}

function sendError(res: ServerResponse, status: number, code: number, message: string): void {
  sendJson(res, status, { jsonrpc: '2.0', error: { code, message }, id: null });
}
