import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { pipeline } from 'node:stream/promises';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Launch } from '../../machine/command-runner.js';
import { terminateProcessGroup } from '../../machine/process-group.js';
import type { StderrLog } from './stderr-log.js';

/** After stdin is closed, how long a server has to exit by itself before it is signalled. */
const EXIT_GRACE_MS = 2_000;
/** Between SIGTERM and SIGKILL. */
const KILL_GRACE_MS = 2_000;

/** How the process ended: its exit code or signal. */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * The MCP stdio transport over a process this app starts: newline-delimited JSON-RPC on its stdin
 * and stdout (the SDK's framing), its stderr into the connection's log. Unlike the SDK's
 * StdioClientTransport, it starts the process from a Launch (the place's sandbox, or plain) in a
 * process group of its own, so that ending it ends everything it started.
 */
export class StdioProcess implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child: ChildProcess | undefined;
  private readonly buffer = new ReadBuffer();
  private exited: Promise<ProcessExit> | undefined;
  /** Lines on stdout that were not MCP messages (logging on the wrong stream), for the reason of a failure. */
  private notMcp: string | undefined;

  constructor(
    private readonly launch: Launch,
    private readonly log: StderrLog,
  ) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** How it ended, once it has (undefined while it runs). */
  exit: ProcessExit | undefined;

  /** The last thing on stdout that was not an MCP message. */
  get strayOutput(): string | undefined {
    return this.notMcp;
  }

  async start(): Promise<void> {
    const { file, args, env, cwd } = this.launch;
    const child = spawn(file, args, { env, ...(cwd && { cwd }), stdio: ['pipe', 'pipe', 'pipe'], detached: true, windowsHide: true });
    this.child = child;
    this.exited = new Promise((resolve) => {
      child.once('close', (code, signal) => {
        this.exit = { code, signal };
        this.launch.release?.();
        resolve(this.exit);
        this.onclose?.();
      });
    });
    child.stdin!.on('error', (error) => this.onerror?.(error));
    child.stdout!.on('data', (chunk: Buffer) => this.read(chunk));
    void pipeline(child.stderr!, this.log.sink()).catch(() => {});
    try {
      await Promise.race([once(child, 'spawn'), once(child, 'error').then(([error]) => Promise.reject(error as Error))]);
    } catch (error) {
      // Never started (ENOENT, EACCES): no 'close' follows an 'error' without a process.
      if (child.pid === undefined) {
        this.launch.release?.();
        this.exit = { code: null, signal: null };
      }
      throw error;
    }
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || this.exit) throw new Error('The server process is not running.');
    if (!stdin.write(serializeMessage(message))) await once(stdin, 'drain');
  }

  /** How it ended, if it has or does within `ms` (a broken pipe or a closed connection: it is ending). */
  async exitWithin(ms: number): Promise<ProcessExit | undefined> {
    if (this.exit || !this.exited) return this.exit;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
    try {
      return await Promise.race([this.exited, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Ends the server: stdin closed (most servers exit then), then its process group signalled. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child || !this.exited || this.exit) return;
    child.stdin!.end();
    const timer = (ms: number) => new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), ms).unref());
    if ((await Promise.race([this.exited, timer(EXIT_GRACE_MS)])) === 'late' && child.pid !== undefined) {
      await terminateProcessGroup(child.pid, KILL_GRACE_MS);
    }
    await this.exited;
  }

  private read(chunk: Buffer): void {
    try {
      this.buffer.append(chunk);
    } catch (error) {
      // A line past the SDK's buffer limit: dropped, and said so.
      this.notMcp = (error as Error).message;
      this.onerror?.(error as Error);
      return;
    }
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.buffer.readMessage();
      } catch (error) {
        // One bad line is skipped; the next may be a message.
        this.notMcp = (error as Error).message.replace(/\s+/g, ' ').slice(0, 200);
        this.log.note(`Not an MCP message on stdout: ${this.notMcp}`);
        continue;
      }
      if (message === null) return;
      this.onmessage?.(message);
    }
  }
}
