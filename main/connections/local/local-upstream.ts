import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CallToolResultSchema,
  ErrorCode,
  McpError,
  ToolListChangedNotificationSchema,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js';
import type { Launch } from '../../machine/command-runner.js';
import { PRODUCT_NAME, VERSION } from '../../version.js';
import type { CallOptions, UpstreamResult } from '../gateway/call-forwarder.js';
import type { UpstreamProblem } from '../gateway/upstream-problem.js';
import type { UpstreamTool } from '../gateway/upstream-connection.js';
import { UpstreamUnavailableError } from '../gateway/upstream-unavailable-error.js';
import type { StderrLog } from './stderr-log.js';
import { StdioProcess, type ProcessExit } from './stdio-process.js';
import { SDK_SCHEMA_VALIDATOR } from '../../sdk-schema-validator.js';

/** How long a failed call waits for the server's exit, to give it as the reason. */
const EXIT_SEEN_MS = 1_000;

/** What a local server is started with now: the launch (sandboxed or not), and what must end it. */
export interface LocalStart {
  launch: Launch;
  /** The place's policy it runs under: a different one ends it (the next use starts it under the new one). */
  policyKey: string;
  /** The secret values in its environment, hidden from its log. */
  secrets: { name: string; value: string }[];
  /** The command line, for the log. */
  commandLine: string;
}

export interface LocalUpstreamOptions {
  /** Works out how to start the server now (reads the place's policy and secrets). */
  start: () => Promise<LocalStart>;
  /** The place's policy now, to compare with the one the process was started under. */
  policyKey: () => Promise<string>;
  log: StderrLog;
  /** Longest wait for one answer (initialize, tools/list; a call's is reset by progress). */
  timeoutMs: number;
  /** A process without a request for this long is ended; the next use starts it again. */
  idleMs: number;
  onToolsChanged?: () => void;
  /** It failed: did not start, exited, or stopped answering (ConnectionHealth re-checks it with backoff). */
  onFailure?: (error: UpstreamUnavailableError) => void;
}

/** What the details show of a local server's process. */
export interface LocalProcessStatus {
  /** stopping: being ended (its stdin closed, then signalled), until it has exited. */
  state: 'running' | 'starting' | 'stopping' | 'stopped';
  pid?: number;
  /** ISO time it started (running), or ended (stopped after running). */
  since?: string;
  /** Why it is stopped (or being stopped): never started yet, ended after being idle, or how it exited. */
  stopped?: string;
  /** Its last stderr lines, newest last. */
  stderr: string[];
  /** Where its whole stderr is (in the state dir). */
  logFile: string;
}

interface Live {
  client: Client;
  process: StdioProcess;
  policyKey: string;
}

/**
 * One local MCP server, shared by the sessions of its place: its process is started on first use,
 * ended after `idleMs` without a request, ended and started again when the place's policy changes,
 * and, when it exits or stops answering, reported as failed (its health then starts it again with
 * backoff). Its failures say what happened: the command was not found, it exited (and its last
 * stderr line), or it never answered `initialize`.
 */
export class LocalUpstream {
  private live: Promise<Live> | undefined;
  private toolCache: Promise<UpstreamTool[]> | undefined;
  private closed = false;
  private active = 0;
  private lastUse = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  private state: { since: number; stopped?: string } = { since: Date.now(), stopped: 'not started yet: it starts on first use' };
  /** The process stop() is ending, and why: it is stopped only once it has exited. */
  private stopping: { process: StdioProcess; why: string } | undefined;

  constructor(
    readonly target: { name: string; displayName: string },
    private readonly options: LocalUpstreamOptions,
  ) {}

  /** The server's tools (listed once, then cached); `signal` ends a listing this call starts. */
  tools(signal?: AbortSignal): Promise<UpstreamTool[]> {
    this.toolCache ??= this.withClient(signal, async ({ client }) => {
      const tools: UpstreamTool[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : {}, { timeout: this.options.timeoutMs, ...(signal && { signal }) });
        tools.push(...(page.tools as UpstreamTool[]));
        cursor = page.nextCursor;
      } while (cursor && tools.length < 10_000);
      return tools;
    }).catch((error: unknown) => {
      this.toolCache = undefined;
      throw error;
    });
    return this.toolCache;
  }

  /**
   * Measures it: a fresh process (its environment and policy as they are now), initialize and
   * tools/list. `signal` cancels it: the process it started is ended.
   */
  async check(signal?: AbortSignal): Promise<UpstreamTool[]> {
    await this.stop('restarted to check it');
    const cancel = () => void this.stop('its check was cancelled; it starts again on the next use');
    signal?.addEventListener('abort', cancel, { once: true });
    try {
      return await this.tools(signal);
    } finally {
      signal?.removeEventListener('abort', cancel);
    }
  }

  call(tool: string, args: Record<string, unknown> | undefined, opts: CallOptions = {}): Promise<UpstreamResult> {
    return this.withClient(opts.signal, async ({ client }) => {
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

  status(): LocalProcessStatus {
    const process = this.current;
    const base = { stderr: this.options.log.recent(), logFile: this.options.log.path };
    if (process?.pid !== undefined && !process.exit)
      return { state: 'running', pid: process.pid, since: new Date(this.state.since).toISOString(), ...base };
    if (this.live) return { state: 'starting', ...base };
    const stopping = this.stopping;
    if (stopping && !stopping.process.exit)
      return {
        state: 'stopping',
        ...(stopping.process.pid !== undefined && { pid: stopping.process.pid }),
        stopped: stopping.why,
        ...base,
      };
    return {
      state: 'stopped',
      since: new Date(this.state.since).toISOString(),
      ...(this.state.stopped && { stopped: this.state.stopped }),
      ...base,
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.stop('the connection was removed or changed');
    this.options.log.close();
  }

  private current: StdioProcess | undefined;

  private async withClient<T>(signal: AbortSignal | undefined, fn: (live: Live) => Promise<T>): Promise<T> {
    this.active += 1;
    try {
      const live = await this.connection(signal);
      try {
        return await fn(live);
      } catch (error) {
        if (signal?.aborted) throw error;
        // The server answered with a JSON-RPC error: it works.
        if (error instanceof McpError && error.code !== ErrorCode.RequestTimeout && error.code !== ErrorCode.ConnectionClosed) throw error;
        // A server killed during a call fails it (a broken pipe, a closed connection) a moment before
        // its exit is seen: the exit is the reason to give, as exited() reports it.
        if (!(error instanceof McpError && error.code === ErrorCode.RequestTimeout)) await live.process.exitWithin(EXIT_SEEN_MS);
        const unavailable = this.unavailable(error, live.process, 'call');
        // An exit was reported as it happened; a server that stopped answering is ended and reported now.
        if (!live.process.exit) {
          await this.stop(unavailable.message);
          this.options.onFailure?.(unavailable);
        }
        throw unavailable;
      }
    } finally {
      this.active -= 1;
      this.lastUse = Date.now();
      this.armIdleTimer();
    }
  }

  /** The running server; `signal` ends the start this call begins (a cancelled check is no failure of the server). */
  private async connection(signal?: AbortSignal): Promise<Live> {
    if (this.closed) throw new UpstreamUnavailableError(this.target.name, 'not-mcp', `${this.label()} was removed.`);
    const running = this.live;
    if (running) {
      const live = await running.catch(() => undefined);
      // A process started under another policy ends; this use starts it under the current one.
      if (live && this.live === running && live.policyKey !== (await this.options.policyKey()))
        await this.stop("the place's policy changed");
    }
    this.live ??= this.start(signal).catch((error: unknown) => {
      this.live = undefined;
      throw error;
    });
    return this.live;
  }

  private async start(signal: AbortSignal | undefined): Promise<Live> {
    let begun: LocalStart;
    try {
      begun = await this.options.start();
    } catch (error) {
      const unavailable = new UpstreamUnavailableError(
        this.target.name,
        'unreachable',
        `${this.label()} cannot start: ${(error as Error).message}`,
        { cause: error },
      );
      this.stopped(unavailable.message);
      this.options.onFailure?.(unavailable);
      throw unavailable;
    }
    const { log } = this.options;
    log.hide(begun.secrets);
    log.note(`Starting: ${begun.commandLine}`);
    const process = new StdioProcess(begun.launch, log);
    const client = new Client({ name: PRODUCT_NAME, version: VERSION }, { capabilities: {}, jsonSchemaValidator: SDK_SCHEMA_VALIDATOR });
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      this.toolCache = undefined;
      this.options.onToolsChanged?.();
    });
    process.onclose = () => this.exited(process);
    try {
      await client.connect(process, { timeout: this.options.timeoutMs, ...(signal && { signal }) });
    } catch (error) {
      if (signal?.aborted) {
        await process.close();
        this.stopped('its check was cancelled; it starts again on the next use');
        throw error;
      }
      const unavailable = this.unavailable(error, process, 'initialize');
      await process.close();
      this.stopped(unavailable.message);
      this.options.onFailure?.(unavailable);
      throw unavailable;
    }
    this.current = process;
    this.state = { since: Date.now() };
    log.note(`Running as process ${process.pid}.`);
    return { client, process, policyKey: begun.policyKey };
  }

  /** The process ended: by our hand (stop), or by itself, which is a failure reported to health. */
  private exited(process: StdioProcess): void {
    const stopping = this.stopping;
    if (stopping?.process === process) {
      // Ended by stop(): stopped from now, for the reason it was stopped.
      this.stopping = undefined;
      this.stopped(stopping.why);
    }
    if (this.current !== process) return;
    this.current = undefined;
    this.live = undefined;
    this.toolCache = undefined;
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    const unavailable = new UpstreamUnavailableError(
      this.target.name,
      'unreachable',
      `${this.label()} is unavailable: ${exitWords(process.exit)}${this.lastWords()}`,
    );
    this.options.log.note(exitWords(process.exit));
    this.stopped(unavailable.message);
    this.options.onFailure?.(unavailable);
  }

  /** Ends the process if one runs or starts; the next use starts a new one. */
  private async stop(why: string): Promise<void> {
    const live = this.live;
    this.live = undefined;
    this.toolCache = undefined;
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    const current = await live?.catch(() => undefined);
    if (!current) return;
    // Not a failure: exited() ignores a process no longer current.
    if (this.current === current.process) this.current = undefined;
    if (!current.process.exit) this.stopping = { process: current.process, why };
    else this.stopped(why);
    this.options.log.note(`Stopping: ${why.replace(/\.$/, '')}.`);
    await current.client.close().catch(() => {});
    // exited() says it is stopped, with this reason, when it has exited.
    await current.process.close();
  }

  private stopped(why: string): void {
    this.state = { since: Date.now(), stopped: why };
  }

  /** One timer while it runs, looking at the last use when it fires (no timer per request). */
  private armIdleTimer(delay = this.options.idleMs): void {
    if (this.idleTimer || !this.live) return;
    this.idleTimer = setTimeout(() => {
      this.idleTimer = undefined;
      const left = this.lastUse + this.options.idleMs - Date.now();
      if (this.active > 0 || left > 0) this.armIdleTimer(Math.max(left, 1_000));
      else void this.stop(`idle for ${Math.round(this.options.idleMs / 1000)} s; it starts again on the next use`);
    }, delay);
    this.idleTimer.unref();
  }

  private unavailable(error: unknown, process: StdioProcess, during: 'initialize' | 'call'): UpstreamUnavailableError {
    if (error instanceof UpstreamUnavailableError) return error;
    const { problem, text } = this.diagnose(error, process, during);
    return new UpstreamUnavailableError(this.target.name, problem, `${this.label()} is unavailable: ${text}`, { cause: error });
  }

  private diagnose(error: unknown, process: StdioProcess, during: 'initialize' | 'call'): { problem: UpstreamProblem; text: string } {
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    if (code === 'ENOENT')
      return {
        problem: 'unreachable',
        text: 'its command was not found on this machine. Install it, or give the full path of the program.',
      };
    if (code === 'EACCES')
      return { problem: 'unreachable', text: 'its command cannot be run (permission denied). Check that the program is executable.' };
    const exit = process.exit;
    if (exit && exit.code === 127)
      return {
        problem: 'unreachable',
        text: `its command was not found (exit code 127).${this.lastWords()} Install it, or give the full path of the program.`,
      };
    if (exit)
      return {
        problem: 'unreachable',
        text: `it ${exitWords(exit)} before answering ${during === 'initialize' ? 'initialize' : 'the call'}.${this.lastWords()}`,
      };
    if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
      const stray = process.strayOutput
        ? ` It wrote text that is not MCP on stdout (${process.strayOutput}); a server must log to stderr only.`
        : '';
      const what = during === 'initialize' ? 'initialize' : 'a request';
      return {
        problem: stray ? 'not-mcp' : 'unreachable',
        text: `it did not answer ${what} within ${Math.max(1, Math.round(this.options.timeoutMs / 1000))} s.${stray || this.lastWords()} It was stopped; it is started again shortly.`,
      };
    }
    if (error instanceof McpError) return { problem: 'not-mcp', text: `it answered initialize with an error (${error.message}).` };
    const message = error instanceof Error ? error.message : String(error);
    return { problem: 'unreachable', text: `${message.replace(/\s+/g, ' ').slice(0, 300)}.${this.lastWords()}` };
  }

  private lastWords(): string {
    const line = this.options.log.lastLine();
    return line ? ` Its last output: "${line}".` : '';
  }

  private label(): string {
    return `The local server "${this.target.displayName}"`;
  }
}

function exitWords(exit: ProcessExit | undefined): string {
  if (!exit) return 'ended';
  if (exit.signal) return `was ended by ${exit.signal}`;
  return `exited with code ${exit.code}`;
}
