import type { IncomingMessage, ServerResponse } from 'node:http';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  ErrorCode,
  McpError,
  RELATED_TASK_META_KEY,
  SUPPORTED_PROTOCOL_VERSIONS,
  type CallToolResult,
  type JSONRPCMessage,
  type ServerNotification,
} from '@modelcontextprotocol/sdk/types.js';
import { DEFAULT_SSE_KEEP_ALIVE_MS } from '@modelcontextprotocol/sdk/server/sseKeepAlive.js';
import { mediaType } from '../network/media-type.js';
import type { ToolExtra } from './session-tool.js';

/** A session's tools/call handler, validating the request and the result as the SDK's server does. */
export type ToolCall = (request: unknown, extra: ToolExtra) => Promise<CallToolResult>;

type RequestId = string | number;

interface CallRequest {
  jsonrpc: '2.0';
  id: RequestId;
  method: 'tools/call';
  params: { _meta?: Record<string, unknown>; task?: unknown; [key: string]: unknown };
}

/**
 * Answers one session's tools/call POSTs without the SDK's Streamable HTTP transport, which turns
 * every Node request into a web Request, validates it with zod, and writes the answer through a
 * web ReadableStream: on a forwarded call that costs about as much as the upstream's whole work.
 * The answer is one JSON body, or an event stream once the tool sends a notification (progress)
 * before its result or runs longer than the keep-alive interval, as the Streamable HTTP spec allows
 * either. A long call's stream carries keep-alive comments as the SDK's does: its headers go out at
 * once and bytes keep coming, so clients (fetch waits 300 s for headers, then 300 s between bytes)
 * and proxies with idle timeouts don't drop a call that runs for minutes. Anything else the session
 * receives (initialize, lists, batches, task requests, malformed or unusual requests) still goes
 * to the SDK transport, which also answers the errors.
 */
export class DirectToolCalls {
  /** Calls in progress by request id, so that notifications/cancelled can reach them. */
  private readonly running = new Map<RequestId, AbortController>();

  constructor(
    private readonly sessionId: string,
    private readonly server: McpServer,
    private readonly call: ToolCall,
    /** How long a call may stay silent on the wire, as the SDK transport's `keepAliveMs`. */
    private readonly keepAliveMs = DEFAULT_SSE_KEEP_ALIVE_MS,
  ) {}

  /** Answers `req` if it is a tools/call or the cancellation of one of these calls; false leaves it to the SDK transport. */
  take(req: IncomingMessage, res: ServerResponse, parsed: unknown): boolean {
    if (req.method !== 'POST') return false;
    const body = parsed as Record<string, unknown> | undefined;
    if (typeof body !== 'object' || body === null || Array.isArray(body) || body.jsonrpc !== '2.0') return false;
    if (body.method === 'notifications/cancelled' && !('id' in body)) return this.cancel(body.params, res);
    if (!isPlainCall(body) || this.running.has(body.id) || !acceptable(req)) return false;
    // run() answers every outcome of the call itself; this is for a failure to write the answer.
    this.run(body, req, res).catch(() => res.destroy());
    return true;
  }

  /** Stops every call in progress: the session is closing (as the SDK's Protocol does on close). */
  abortAll(): void {
    for (const controller of this.running.values()) controller.abort();
    this.running.clear();
  }

  private cancel(params: unknown, res: ServerResponse): boolean {
    const { requestId, reason } = (params ?? {}) as { requestId?: RequestId; reason?: unknown };
    const controller = requestId === undefined ? undefined : this.running.get(requestId);
    if (!controller) return false;
    controller.abort(reason);
    res.writeHead(202).end();
    return true;
  }

  private async run(request: CallRequest, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const controller = new AbortController();
    this.running.set(request.id, controller);
    const answer = new Answer(res, this.sessionId, this.keepAliveMs);
    const extra: ToolExtra = {
      signal: controller.signal,
      sessionId: this.sessionId,
      requestId: request.id,
      requestInfo: { headers: req.headers },
      ...(request.params._meta && { _meta: request.params._meta }),
      sendNotification: async (notification: ServerNotification) => {
        if (!controller.signal.aborted) answer.event({ jsonrpc: '2.0', ...notification } as JSONRPCMessage);
      },
      // Requests to the client (sampling, elicitation) go on the session's GET stream, and its
      // answer comes back through the SDK transport to the server that sent them.
      sendRequest: ((request, schema, options) => {
        if (controller.signal.aborted) return Promise.reject(new McpError(ErrorCode.ConnectionClosed, 'Request was cancelled'));
        return this.server.server.request(request, schema, options);
      }) as ToolExtra['sendRequest'],
    };
    let message: JSONRPCMessage;
    try {
      message = { jsonrpc: '2.0', id: request.id, result: await this.call(request, extra) };
    } catch (error) {
      const { code, message: text, data } = error as { code?: unknown; message?: string; data?: unknown };
      message = {
        jsonrpc: '2.0',
        id: request.id,
        error: {
          code: Number.isSafeInteger(code) ? (code as number) : ErrorCode.InternalError,
          message: text ?? 'Internal error',
          ...(data !== undefined && { data }),
        },
      };
    } finally {
      if (this.running.get(request.id) === controller) this.running.delete(request.id);
    }
    // A cancelled call gets no answer (the client has stopped waiting); its stream just ends.
    if (controller.signal.aborted) answer.end();
    else answer.finish(message);
  }
}

/** The answer to one POST: JSON when the result is all there is to send, else an event stream. */
class Answer {
  private streaming = false;
  private readonly keepAlive: NodeJS.Timeout;

  constructor(
    private readonly res: ServerResponse,
    private readonly sessionId: string,
    keepAliveMs: number,
  ) {
    // Silent for that long: the answer becomes a stream (if it is not one yet) and says it is alive.
    this.keepAlive = setInterval(() => {
      if (!this.open()) return;
      this.startStream();
      this.res.write(': keepalive\n\n');
    }, keepAliveMs);
    this.keepAlive.unref();
  }

  event(message: JSONRPCMessage): void {
    if (!this.open()) return;
    this.startStream();
    this.res.write(sse(message));
  }

  finish(message: JSONRPCMessage): void {
    clearInterval(this.keepAlive);
    if (!this.open()) return;
    if (this.streaming) {
      this.res.end(sse(message));
      return;
    }
    const body = JSON.stringify(message);
    this.res
      .writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), 'mcp-session-id': this.sessionId })
      .end(body);
  }

  end(): void {
    clearInterval(this.keepAlive);
    if (!this.open()) return;
    this.startStream();
    this.res.end();
  }

  private startStream(): void {
    if (this.streaming) return;
    this.streaming = true;
    // The headers the SDK transport sends with its event streams.
    this.res.writeHead(200, {
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
      'mcp-session-id': this.sessionId,
    });
  }

  /** The client may have gone: a disconnect is not a cancellation (the tool runs on), there is just no one to tell. */
  private open(): boolean {
    return !this.res.writableEnded && !this.res.destroyed;
  }
}

function sse(message: JSONRPCMessage): string {
  return `event: message\ndata: ${JSON.stringify(message)}\n\n`;
}

function isPlainCall(body: Record<string, unknown>): body is Record<string, unknown> & CallRequest {
  if (body.method !== 'tools/call' || !(typeof body.id === 'string' || Number.isSafeInteger(body.id))) return false;
  const params = body.params as CallRequest['params'] | undefined;
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return false;
  // Task-augmented calls and calls within a task need the SDK's task machinery.
  return (
    params.task === undefined &&
    (params._meta === undefined || (typeof params._meta === 'object' && params._meta !== null && !(RELATED_TASK_META_KEY in params._meta)))
  );
}

/** The checks the SDK transport makes on a POST; a request that fails one goes to it, for its error answer. */
function acceptable(req: IncomingMessage): boolean {
  const accept = req.headers.accept ?? '';
  const version = req.headers['mcp-protocol-version'];
  return (
    accept.includes('application/json') &&
    accept.includes('text/event-stream') &&
    mediaType(req.headers['content-type']) === 'application/json' &&
    (version === undefined || (typeof version === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(version)))
  );
}
