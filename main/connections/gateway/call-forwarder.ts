import { StreamableHTTPError, type StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { Post } from './upstream-post.js';

/** The most characters an upstream's answer to one call (its JSON, or one event) may take: what an agent may send us. */
export const MAX_ANSWER_CHARS = 64 * 2 ** 20;

/** A tools/call result as the upstream sent it. */
export interface UpstreamResult {
  content: unknown[];
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
}

export interface UpstreamProgress {
  progress: number;
  total?: number | undefined;
  message?: string | undefined;
}

export interface CallOptions {
  signal?: AbortSignal;
  onProgress?: (progress: UpstreamProgress) => void;
}

/** The upstream answered, but not with a tool result (a misconfigured or broken server). */
export class UpstreamAnswerError extends Error {
  override readonly name = 'UpstreamAnswerError';
}

/** The upstream answered a forwarded call with an HTTP error status; for 401/403, with its challenge. */
export class UpstreamStatusError extends StreamableHTTPError {
  constructor(
    status: number,
    readonly challenge: string | undefined,
  ) {
    super(status, `HTTP ${status}`);
  }
}

/** The open upstream session a forwarded call goes out on. */
export interface ForwardSession {
  /** How a request reaches the session's endpoint (see upstream-post.ts). */
  post: Post;
  /** The connection's credential headers, as the session was opened with. */
  headers: Record<string, string>;
  /** The SDK transport that opened the session: its id and protocol version, and where other messages go. */
  transport: StreamableHTTPClientTransport;
  /** Longest wait for the answer, restarted by each progress notification. */
  timeoutMs: number;
}

interface JsonRpcAnswer {
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

/**
 * Sends tools/call on an upstream session as one Streamable HTTP POST and reads its answer (JSON,
 * or an event stream with progress before the result). The SDK client does the same through
 * web streams, a generic SSE pipeline and a schema check of every result, which cost more than
 * the upstream's own work; our host's MCP server checks the result against the schema anyway.
 * Messages on the answer stream that are not this call's go to the SDK client, as if they had
 * come through its own transport.
 */
export class CallForwarder {
  private sent = 0;

  constructor(private readonly session: ForwardSession) {}

  async call(tool: string, args: Record<string, unknown> | undefined, opts: CallOptions = {}): Promise<UpstreamResult> {
    opts.signal?.throwIfAborted();
    // A string id can't collide with the SDK client's numeric ones on the same upstream session.
    const id = `gw-${(this.sent += 1)}`;
    const params = { name: tool, ...(args && { arguments: args }), ...(opts.onProgress && { _meta: { progressToken: id } }) };
    const exchange = new Exchange(this.session, id, opts);
    try {
      return await exchange.run(JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params }));
    } finally {
      exchange.finish();
    }
  }
}

/** One forwarded call: its request, timeout, cancellation and answer. */
class Exchange {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  /** Why the call was stopped (the caller cancelled, or the upstream took too long). */
  private stopped: unknown;
  private readonly onAbort = () => this.stop(callerReason(this.opts.signal!.reason));

  constructor(
    private readonly session: ForwardSession,
    private readonly id: string,
    private readonly opts: CallOptions,
  ) {
    opts.signal?.addEventListener('abort', this.onAbort, { once: true });
    this.restartTimer();
  }

  async run(body: string): Promise<UpstreamResult> {
    try {
      return await this.send(body);
    } catch (error) {
      throw this.stopped ?? error;
    }
  }

  finish(): void {
    clearTimeout(this.timer);
    this.opts.signal?.removeEventListener('abort', this.onAbort);
  }

  private async send(body: string): Promise<UpstreamResult> {
    const { transport } = this.session;
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(transport.sessionId && { 'mcp-session-id': transport.sessionId }),
      ...(transport.protocolVersion && { 'mcp-protocol-version': transport.protocolVersion }),
      ...this.session.headers,
    };
    const answer = await this.session.post(headers, body, this.controller.signal);
    if (answer.status < 200 || answer.status > 299) {
      await answer.discard();
      // 404 on a request with a session id: the upstream ended the session (UpstreamConnection opens a new one).
      throw new UpstreamStatusError(answer.status, answer.challenge);
    }
    if (answer.contentType === 'application/json' || answer.contentType === 'text/event-stream') {
      try {
        return answer.contentType === 'application/json' ? await this.readJson(answer.text) : await this.readStream(answer.text);
      } catch (error) {
        // An error answer, a broken event or one too large leaves the rest unread: drop it, or the socket stays taken.
        void answer.discard();
        throw error;
      }
    }
    await answer.discard();
    throw new UpstreamAnswerError(
      `it answered tools/call with ${answer.contentType ? `content type ${answer.contentType}` : 'no content'} instead of JSON or an event stream. The server may be misconfigured.`,
    );
  }

  private async readJson(text: AsyncIterator<string>): Promise<UpstreamResult> {
    let body = '';
    for (let chunk = await text.next(); !chunk.done; chunk = await text.next()) {
      body += chunk.value;
      if (body.length > MAX_ANSWER_CHARS) throw tooLarge();
    }
    const result = this.answer(JSON.parse(body) as JSONRPCMessage | JSONRPCMessage[]);
    if (!result) throw new UpstreamAnswerError('its JSON answer to tools/call did not contain the result.');
    return result;
  }

  private async readStream(text: AsyncIterator<string>): Promise<UpstreamResult> {
    // Only `event` and `data` matter here: `id` and `retry` serve resumption, which a forwarded
    // call does not use (a broken answer stream fails the call instead).
    const events: EventSourceMessage[] = [];
    let overflow = false;
    const parser = createParser({
      onEvent: (event) => events.push(event),
      onError: (error) => (overflow ||= error.type === 'max-buffer-size-exceeded'),
      maxBufferSize: MAX_ANSWER_CHARS,
    });
    for (;;) {
      const chunk = await text.next();
      if (chunk.done) throw new UpstreamAnswerError('its answer stream ended before the tool result arrived.');
      parser.feed(chunk.value);
      if (overflow) throw tooLarge();
      for (const event of events.splice(0)) {
        if (event.event !== undefined && event.event !== 'message') continue;
        const result = this.answer(JSON.parse(event.data) as JSONRPCMessage);
        if (result) {
          // The rest is the stream's end: read it so the socket stays reusable, without waiting for it.
          void drain(text);
          return result;
        }
      }
    }
  }

  /** Handles the messages of one JSON answer or event; the call's result once it is among them. */
  private answer(messages: JSONRPCMessage | JSONRPCMessage[]): UpstreamResult | undefined {
    let result: UpstreamResult | undefined;
    for (const message of Array.isArray(messages) ? messages : [messages]) {
      if ('id' in message && message.id === this.id && !('method' in message)) result = toResult(message as JsonRpcAnswer);
      else if (!this.progress(message)) this.session.transport.onmessage?.(message);
    }
    return result;
  }

  private progress(message: JSONRPCMessage): boolean {
    if (!('method' in message) || message.method !== 'notifications/progress' || message.params?.progressToken !== this.id) return false;
    const { progress, total, message: text } = message.params as { progress: number; total?: number; message?: string };
    this.restartTimer();
    this.opts.onProgress?.({ progress, ...(total !== undefined && { total }), ...(text !== undefined && { message: text }) });
    return true;
  }

  private restartTimer(): void {
    clearTimeout(this.timer);
    const timeout = this.session.timeoutMs;
    this.timer = setTimeout(() => this.stop(new McpError(ErrorCode.RequestTimeout, 'Request timed out', { timeout })), timeout);
  }

  /** Tells the upstream to stop the tool (notifications/cancelled) and abandons the request. */
  private stop(reason: unknown): void {
    if (this.stopped !== undefined) return;
    this.stopped = reason;
    clearTimeout(this.timer);
    void this.session.transport
      .send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: this.id, reason: String(reason) } })
      .catch(() => {});
    this.controller.abort(reason);
  }
}

function tooLarge(): UpstreamAnswerError {
  return new UpstreamAnswerError(`its answer to tools/call took more than ${MAX_ANSWER_CHARS / 2 ** 20} MiB, more than a tool result may.`);
}

/** The result, or the upstream's JSON-RPC error as the SDK client reports it. */
function toResult(answer: JsonRpcAnswer): UpstreamResult {
  if (answer.error) throw new McpError(answer.error.code, answer.error.message, answer.error.data);
  const result = answer.result as Partial<UpstreamResult> | null | undefined;
  if (typeof result !== 'object' || result === null || (result.content !== undefined && !Array.isArray(result.content))) {
    throw new UpstreamAnswerError('it answered tools/call with something that is not a tool result. The server may be misconfigured.');
  }
  // The schema's default: a result with only structured content has empty content.
  return { ...result, content: result.content ?? [] } as UpstreamResult;
}

// The SDK's Protocol rejects a cancelled request with an McpError made of the reason; keep that shape.
function callerReason(reason: unknown): McpError {
  return reason instanceof McpError ? reason : new McpError(ErrorCode.RequestTimeout, String(reason));
}

async function drain(text: AsyncIterator<string>): Promise<void> {
  try {
    while (!(await text.next()).done);
  } catch {
    // The stream broke after the result arrived: nothing is lost.
  }
}
