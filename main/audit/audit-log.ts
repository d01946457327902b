import { statSync } from 'node:fs';
import { mkdir, open, rename, stat, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import * as z from 'zod';

const auditRecordSchema = z.object({
  time: z.string(),
  tool: z.string(),
  caller: z.string(),
  /** The name of the OAuth client the call came from, when it signed in that way. */
  client: z.string().optional(),
  place: z.string().optional(),
  /** The place's sandbox policy at the call: machine, place or strict. */
  policy: z.enum(['machine', 'place', 'strict']).optional(),
  projectId: z.string().optional(),
  executionId: z.string().optional(),
  workspaceId: z.string().optional(),
  durationMs: z.number(),
  outcome: z.enum(['ok', 'error', 'timeout', 'cancelled']),
  error: z.string().optional(),
  /** A connection's tool: the connection's name and the upstream's own name for the tool, as people read them. */
  connection: z.object({ name: z.string(), tool: z.string() }).optional(),
});

/**
 * One tool call. There is deliberately no field for arguments, file contents or results: what a
 * call touched stays out of the log.
 */
export type AuditRecord = z.infer<typeof auditRecordSchema>;
/** What a caller gives; `time` is stamped when it is recorded, i.e. when the call ended. */
export type AuditEntry = Omit<AuditRecord, 'time'>;

export const AUDIT_LOG_FILE = 'audit.log';
export const DEFAULT_AUDIT_LOG_MAX_BYTES = 10 * 1024 * 1024;
/** Records waiting for the disk beyond this are dropped rather than kept in memory. */
const MAX_PENDING_BYTES = 4 * 1024 * 1024;
/** How long a record waits for others to share its write, by default. */
const DEFAULT_AUDIT_BATCH_MS = 100;
/** Records waiting past this size are written at once, without waiting out the batch time. */
const BATCH_BYTES = 64 * 1024;
const READ_CHUNK_BYTES = 64 * 1024;
/** The last records kept in memory, for the page's recent activity (its largest ask). */
export const RECENT_KEPT = 500;
/** How far back from its end the log is read for the records of earlier runs. */
const EARLIER_MAX_BYTES = 512 * 1024;

export interface AuditLogOptions {
  stateDir: string;
  /** Past this size the log moves to `audit.log.1` (replacing it) and a new one starts. */
  maxBytes?: number;
  /** Where write failures are told, once per outage; default stderr. */
  report?: (message: string) => void;
  /** How long a record waits for others to share its write; default 100 ms. */
  batchMs?: number;
}

/**
 * `<stateDir>/audit.log`, JSON lines, in the order recorded. `record` only queues the line: tool
 * calls never wait for the disk and never see a log failure. Lines are written in batches, at most
 * `batchMs` after the first of them: each write is a round trip through the thread pool, which on
 * a busy machine costs the event loop more than the write itself, so a call should not pay one of
 * its own. `flush` and `close` write at once and wait for the disk.
 */
export class AuditLog {
  readonly path: string;
  private readonly maxBytes: number;
  private readonly report: (message: string) => void;
  private readonly batchMs: number;
  private pending: string[] = [];
  private pendingBytes = 0;
  private draining = false;
  private drained: Promise<void> = Promise.resolve();
  /** Ends the current batch wait early; set while one is under way. */
  private endWait: (() => void) | undefined;
  private flushing = 0;
  private handle: FileHandle | undefined;
  private size: number | undefined;
  private troubled = false;
  private closed = false;
  /** The log's size when this process opened it: what lies before is earlier runs' records. */
  private readonly startSize: number;
  private rotated = false;
  private earlier: Promise<AuditRecord[]> | undefined;
  /** This process's records, newest last, up to RECENT_KEPT. */
  private readonly mine: AuditRecord[] = [];
  private readonly listeners = new Set<(record: AuditRecord) => void>();

  constructor(options: AuditLogOptions) {
    this.path = join(options.stateDir, AUDIT_LOG_FILE);
    this.maxBytes = options.maxBytes ?? DEFAULT_AUDIT_LOG_MAX_BYTES;
    this.report = options.report ?? ((message) => process.stderr.write(`${message}\n`));
    this.batchMs = options.batchMs ?? DEFAULT_AUDIT_BATCH_MS;
    this.startSize = sizeSync(this.path);
  }

  /** Hears each record as it is recorded (before it reaches the disk). */
  onRecord(listener: (record: AuditRecord) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  record(entry: AuditEntry): void {
    if (this.closed) return this.trouble('the audit log was already closed; a tool call was not recorded.');
    const record = toRecord(entry);
    const line = `${JSON.stringify(record)}\n`;
    const bytes = Buffer.byteLength(line);
    if (this.pendingBytes + bytes > MAX_PENDING_BYTES) {
      return this.trouble(`the audit log ${this.path} cannot keep up; tool calls are not being recorded.`);
    }
    this.pending.push(line);
    this.pendingBytes += bytes;
    this.mine.push(record);
    if (this.mine.length > RECENT_KEPT) this.mine.shift();
    for (const listener of this.listeners) listener(record);
    if (!this.draining) {
      this.draining = true;
      this.drained = this.drain();
    } else if (this.pendingBytes >= BATCH_BYTES) {
      this.endWait?.();
    }
  }

  /** Writes what is waiting now, and resolves once everything recorded so far is written (or failed and was reported). */
  async flush(): Promise<void> {
    this.flushing += 1;
    try {
      this.endWait?.();
      while (this.draining) await this.drained;
    } finally {
      this.flushing -= 1;
    }
  }

  /**
   * The last `n` records, oldest first: up to RECENT_KEPT from memory (this run's, after the last
   * of earlier runs read once), more read backwards from the end of the log (and of `audit.log.1`).
   */
  async readRecent(n: number): Promise<AuditRecord[]> {
    if (n <= 0) return [];
    if (n <= RECENT_KEPT) {
      this.earlier ??= this.readEarlier();
      return [...(await this.earlier), ...this.mine].slice(-n);
    }
    await this.flush();
    const latest = await lastRecords(this.path, n);
    const older = latest.length < n ? await lastRecords(`${this.path}.1`, n - latest.length) : [];
    return [...older, ...latest];
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
    await this.handle?.close();
    this.handle = undefined;
  }

  /** The last records of earlier runs: the log up to its size at open (moved to `.1` if this run rotated it). */
  private async readEarlier(): Promise<AuditRecord[]> {
    const bounds = { end: this.startSize, maxBytes: EARLIER_MAX_BYTES };
    const latest = await lastRecords(this.rotated ? `${this.path}.1` : this.path, RECENT_KEPT, bounds);
    const older =
      latest.length < RECENT_KEPT && !this.rotated
        ? await lastRecords(`${this.path}.1`, RECENT_KEPT - latest.length, { maxBytes: EARLIER_MAX_BYTES })
        : [];
    return [...older, ...latest];
  }

  private async drain(): Promise<void> {
    // Lines recorded while a write is in flight go out together in the next one.
    while (this.pending.length > 0) {
      await this.batchWait();
      const text = this.pending.join('');
      this.pending = [];
      this.pendingBytes = 0;
      await this.append(text);
    }
    this.draining = false;
  }

  /** Until the batch time is over, or at once when flushing or when enough is waiting. */
  private batchWait(): Promise<void> {
    if (this.flushing > 0 || this.pendingBytes >= BATCH_BYTES) return Promise.resolve();
    return new Promise((resolve) => {
      // Not unref'd: a process that ends on its own still writes its last records first.
      const timer = setTimeout(() => this.endWait?.(), this.batchMs);
      this.endWait = () => {
        clearTimeout(timer);
        this.endWait = undefined;
        resolve();
      };
    });
  }

  private async append(text: string): Promise<void> {
    try {
      const bytes = Buffer.byteLength(text);
      this.size ??= await sizeOf(this.path);
      if (this.size > 0 && this.size + bytes > this.maxBytes) await this.rotate();
      if (!this.handle) {
        await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
        this.handle = await open(this.path, 'a', 0o600);
      }
      await this.handle.appendFile(text);
      this.size += bytes;
      this.troubled = false;
    } catch (error) {
      // Start over from the file itself next time: the handle or the size may be off now.
      await this.handle?.close().catch(() => {});
      this.handle = undefined;
      this.size = undefined;
      this.trouble(
        `could not write the audit log ${this.path} (${(error as Error).message}); tool calls go on unrecorded until it works again.`,
      );
    }
  }

  private async rotate(): Promise<void> {
    // Closed first: Windows cannot rename a file that is open.
    await this.handle?.close();
    this.handle = undefined;
    await rename(this.path, `${this.path}.1`);
    this.rotated = true;
    this.size = 0;
  }

  private trouble(message: string): void {
    if (this.troubled) return;
    this.troubled = true;
    this.report(`persona-mcp-workspace: ${message}`);
  }
}

function toRecord(entry: AuditEntry): AuditRecord {
  // Copied field by field, so that nothing else a caller passes in (arguments, say) reaches the file.
  const optional = (value: string | undefined, max: number) => (value === undefined ? undefined : clip(value, max));
  const record: AuditRecord = {
    time: new Date().toISOString(),
    tool: clip(entry.tool, 200),
    caller: clip(entry.caller, 200),
    client: optional(entry.client, 200),
    place: optional(entry.place, 1024),
    policy: entry.policy,
    projectId: optional(entry.projectId, 200),
    executionId: optional(entry.executionId, 200),
    workspaceId: optional(entry.workspaceId, 200),
    durationMs: Number.isFinite(entry.durationMs) ? Math.max(0, Math.round(entry.durationMs)) : 0,
    outcome: entry.outcome,
    error: entry.error === undefined ? undefined : clip(redact(entry.error).replace(/\s+/g, ' '), 1000),
    ...(entry.connection && { connection: { name: clip(entry.connection.name, 200), tool: clip(entry.connection.tool, 200) } }),
  };
  return record;
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Best effort against credentials echoed in an error message: JWTs and Authorization values. */
function redact(message: string): string {
  return message
    .replace(/eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g, '[redacted]')
    .replace(/\b(Bearer|Basic)\s+[^\s"',;]+/gi, '$1 [redacted]');
}

async function sizeOf(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
}

function sizeSync(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/**
 * Up to `n` records from the end of `path` (or from `end`, reading at most `maxBytes`), oldest
 * first; lines that are not records (a torn last write) are skipped.
 */
async function lastRecords(path: string, n: number, bounds: { end?: number; maxBytes?: number } = {}): Promise<AuditRecord[]> {
  if (n <= 0) return [];
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const newestFirst: AuditRecord[] = [];
  const take = (line: Buffer) => {
    const parsed = line.length > 0 ? auditRecordSchema.safeParse(parseJson(line.toString('utf8'))) : undefined;
    if (parsed?.success) newestFirst.push(parsed.data);
  };
  try {
    const size = Math.min((await handle.stat()).size, bounds.end ?? Infinity);
    let position = size;
    const stop = Math.max(0, size - (bounds.maxBytes ?? Infinity));
    // The start of the earliest line seen so far, whose beginning lies in a chunk not read yet.
    let carry = Buffer.alloc(0);
    while (position > stop && newestFirst.length < n) {
      const length = Math.min(READ_CHUNK_BYTES, position - stop);
      position -= length;
      const chunk = Buffer.alloc(length);
      await handle.read(chunk, 0, length, position);
      // Splitting on '\n' bytes is safe for UTF-8: the byte never occurs inside a multi-byte character.
      const buffer = Buffer.concat([chunk, carry]);
      let end = buffer.length;
      let newline = buffer.lastIndexOf(0x0a, end - 1);
      while (newline !== -1 && newestFirst.length < n) {
        take(buffer.subarray(newline + 1, end));
        end = newline;
        newline = end > 0 ? buffer.lastIndexOf(0x0a, end - 1) : -1;
      }
      carry = buffer.subarray(0, end);
    }
    if (position === 0 && newestFirst.length < n) take(carry);
  } finally {
    await handle.close();
  }
  return newestFirst.reverse();
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
