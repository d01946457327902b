import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike, Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolResultSchema,
  ErrorCode,
  McpError,
  ToolListChangedNotificationSchema,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js';
import { CallForwarder, UpstreamStatusError, type CallOptions, type UpstreamResult } from './call-forwarder.js';
import { UpstreamListing } from './upstream-listing.js';
import { postWithDispatcher, postWithFetch } from './upstream-post.js';
import { diagnose, type CredentialKind, type Refusal } from './upstream-problem.js';
import { UpstreamUnavailableError } from './upstream-unavailable-error.js';
import { createGuardedFetch, type GuardedFetch } from '../../network/guarded-fetch.js';
import { inertLine } from '../upstream-text.js';
import { PRODUCT_NAME, VERSION } from '../../version.js';
import { SDK_SCHEMA_VALIDATOR } from '../../sdk-schema-validator.js';

/** A reason is a sentence or two; the server's own words in it are cut well before this. */
const MAX_REASON = 1_000;

export type { UpstreamProgress, UpstreamResult } from './call-forwarder.js';
export { loadUndici } from '../../network/guarded-fetch.js';

/** Where an upstream MCP server is and how to reach it. */
export interface UpstreamTarget {
  /** The connection's server name (u<hash>__<catalog id>), named in every error. */
  name: string;
  displayName: string;
  url: string;
  transport: 'streamable-http' | 'sse';
}

/** An upstream tool as the upstream described it, its texts made inert (upstream-listing.ts). */
export interface UpstreamTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: { type: 'object'; [key: string]: unknown };
  outputSchema?: { type: 'object'; [key: string]: unknown };
  annotations?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

export interface UpstreamConnectionOptions {
  /** What the connection sends: how a refusal is read (a refused key, or a sign-in the server wants). */
  credentials: CredentialKind;
  /** Headers for every request (credentials); read again at each (re)connect, so a changed secret applies. */
  headers: () => Promise<Record<string, string>>;
  /** Longest wait for one answer (reset by progress on calls). */
  timeoutMs: number;
  /** The upstream changed its tools. */
  onToolsChanged?: () => void;
  /** A request failed because of the link or the server (not a JSON-RPC error, not a cancellation). */
  onFailure?: (error: UpstreamUnavailableError) => void;
  /** Lets the connection reach loopback and private addresses (local development and tests). */
  allowPrivateNetwork: boolean;
  /** The ports this app listens on: never reached on this machine, whatever the setting. */
  appPorts: () => readonly number[];
  /** Adds a login to every request (OAuth: the access token, kept fresh). */
  signedFetch?: (base: FetchLike) => FetchLike;
}

interface Live {
  client: Client;
  /**
   * This connection's own sockets, each pinned to an address the SSRF guard checked: dropped with
   * the client, so a reconnect never reuses a dead one and resolves the name again.
   */
  network: GuardedFetch;
  /** Sends tools/call itself on a Streamable HTTP session; absent for the legacy SSE transport. */
  forwarder: CallForwarder | undefined;
}

/**
 * One pooled client for one connection: connected on first use, tools cached until the upstream
 * says they changed, and reconnected after any failure.
 */
export class UpstreamConnection {
  private live: Promise<Live> | undefined;
  private toolCache: Promise<UpstreamTool[]> | undefined;
  private closed = false;
  /** The server's last 401/403 on a request of the SDK client, to tell a sign-in from a refused key. */
  private refusal: Refusal | undefined;
  /** The last listing read: kept when the cache is dropped, so a call made meanwhile still finds its tool's name. */
  private listing: UpstreamListing | undefined;

  constructor(
    readonly target: UpstreamTarget,
    private readonly options: UpstreamConnectionOptions,
  ) {}

  /** The server's tools (listed once, then cached); `signal` ends a listing this call starts. */
  tools(signal?: AbortSignal): Promise<UpstreamTool[]> {
    this.toolCache ??= this.withClient(signal, async ({ client }) => {
      const listing = new UpstreamListing();
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : {}, { timeout: this.options.timeoutMs, ...(signal && { signal }) });
        listing.add(page.tools as UpstreamTool[]);
        cursor = page.nextCursor;
      } while (cursor && listing.tools.length < 10_000);
      this.listing = listing;
      return listing.tools;
    }).catch((error: unknown) => {
      this.toolCache = undefined;
      throw error;
    });
    return this.toolCache;
  }

  /**
   * Measures the connection: a new session (initialize with the credentials as they are now) and
   * a fresh tools/list on it, which then serves the calls. Throws UpstreamUnavailableError.
   * `signal` cancels it: the session it opened is closed, which ends its requests and their sockets.
   */
  async check(signal?: AbortSignal): Promise<UpstreamTool[]> {
    await this.disconnect();
    const cancel = () => void this.disconnect();
    signal?.addEventListener('abort', cancel, { once: true });
    try {
      return await this.tools(signal);
    } finally {
      signal?.removeEventListener('abort', cancel);
    }
  }

  /** Calls a tool by the name it was listed with here; the upstream is asked by its own name for it. */
  async call(listed: string, args: Record<string, unknown> | undefined, opts: CallOptions = {}): Promise<UpstreamResult> {
    const tool = this.listing?.upstreamName(listed) ?? listed;
    return this.withClient(opts.signal, async ({ client, forwarder }) => {
      if (forwarder) return forwarder.call(tool, args, opts);
      const result = await client.request(
        { method: 'tools/call', params: { name: tool, ...(args && { arguments: args }) } },
        CallToolResultSchema,
        {
          timeout: this.options.timeoutMs,
          resetTimeoutOnProgress: true,
          ...(opts.signal && { signal: opts.signal }),
          ...(opts.onProgress && {
            onprogress: (p: Progress) => opts.onProgress!({ progress: p.progress, total: p.total, message: p.message }),
          }),
        },
      );
      return result as UpstreamResult;
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.disconnect();
  }

  /**
   * Runs `fn` on a connected client. A failure of the link drops the client (the next use
   * reconnects); a request the upstream never saw because its session had ended is retried once.
   */
  private async withClient<T>(signal: AbortSignal | undefined, fn: (live: Live) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt += 1) {
      const live = await this.connection(signal);
      try {
        return await fn(live);
      } catch (error) {
        // The caller cancelled: the link is fine, and the upstream is being told (notifications/cancelled).
        if (signal?.aborted) throw error;
        if (error instanceof McpError && !isLinkFailure(error)) throw error; // the upstream answered with a JSON-RPC error
        await this.disconnect();
        if (attempt === 0 && error instanceof StreamableHTTPError && error.code === 404) continue;
        const unavailable = this.unavailable(error);
        this.options.onFailure?.(unavailable);
        throw unavailable;
      }
    }
  }

  /** The connected client; `signal` ends the connecting this call starts (a cancelled check is no failure of the server). */
  private connection(signal?: AbortSignal): Promise<Live> {
    if (this.closed) return Promise.reject(new UpstreamUnavailableError(this.target.name, 'not-mcp', `${this.label()} was removed.`));
    this.live ??= this.connect(signal).catch((error: unknown) => {
      this.live = undefined;
      if (signal?.aborted) throw error;
      const unavailable = this.unavailable(error);
      this.options.onFailure?.(unavailable);
      throw unavailable;
    });
    return this.live;
  }

  private async connect(signal: AbortSignal | undefined): Promise<Live> {
    const url = new URL(this.target.url);
    const headers = await this.options.headers();
    const requestInit = { headers };
    const network = createGuardedFetch({ allowPrivateNetwork: this.options.allowPrivateNetwork, appPorts: this.options.appPorts });
    const signed = this.options.signedFetch ? this.options.signedFetch(network.fetch) : network.fetch;
    const fetch: FetchLike = async (input, init) => {
      const response = await signed(input, init);
      if (response.status === 401 || response.status === 403)
        this.refusal = { status: response.status, challenge: response.headers.get('www-authenticate') ?? undefined };
      return response;
    };
    const streamable = this.target.transport === 'sse' ? undefined : new StreamableHTTPClientTransport(url, { requestInit, fetch });
    const transport: Transport = streamable ?? new SSEClientTransport(url, { requestInit, fetch });
    const client = new Client({ name: PRODUCT_NAME, version: VERSION }, { capabilities: {}, jsonSchemaValidator: SDK_SCHEMA_VALIDATOR });
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      this.toolCache = undefined;
      this.options.onToolsChanged?.();
    });
    client.onclose = () => {
      this.live = undefined;
      this.toolCache = undefined;
    };
    try {
      await client.connect(transport, { timeout: this.options.timeoutMs, ...(signal && { signal }) });
    } catch (error) {
      await network.close();
      throw error;
    }
    // An OAuth connection's requests need its signed fetch; any other goes straight on the dispatcher
    // the guarded fetch checked this URL for while the session was opened.
    const post = this.options.signedFetch
      ? postWithFetch(url, fetch)
      : postWithDispatcher(url, await network.dispatcher(), postWithFetch(url, fetch));
    const forwarder = streamable && new CallForwarder({ post, headers, transport: streamable, timeoutMs: this.options.timeoutMs });
    return { client, network, forwarder };
  }

  private async disconnect(): Promise<void> {
    const live = this.live;
    this.live = undefined;
    this.toolCache = undefined;
    if (!live) return;
    const current = await live.catch(() => undefined);
    await current?.client.close().catch(() => {});
    await current?.network.close().catch(() => {});
  }

  private unavailable(error: unknown): UpstreamUnavailableError {
    if (error instanceof UpstreamUnavailableError) return error;
    const refusal = error instanceof UpstreamStatusError ? { status: error.code ?? 0, challenge: error.challenge } : this.refusal;
    const { problem, text } = diagnose(error, this.options.credentials, this.options.timeoutMs, refusal);
    const challenge = problem === 'sign-in' && refusal?.status === 401 ? refusal.challenge : undefined;
    // The cause may quote the server (an error's text): inert like the rest of what it sends.
    return new UpstreamUnavailableError(this.target.name, problem, `${this.label()} is unavailable: ${inertLine(text, MAX_REASON)}`, {
      cause: error,
      ...(challenge && { challenge }),
    });
  }

  private label(): string {
    return `The connection "${this.target.displayName}"`;
  }
}

function isLinkFailure(error: McpError): boolean {
  return error.code === ErrorCode.RequestTimeout || error.code === ErrorCode.ConnectionClosed;
}
