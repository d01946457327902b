import { closeSync, fstatSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { Writable } from 'node:stream';

/** Lines kept in memory for the connection's details. */
export const STDERR_LINES_KEPT = 20;
const MAX_SHOWN_LINE = 300;
/** A line longer than this is cut into pieces (a flood without line breaks never grows memory). */
const MAX_LINE_CHARS = 16 * 1024;
/** The log file is moved to `<file>.1` (one older file kept) past this size. */
export const LOG_FILE_MAX_BYTES = 5 * 1024 * 1024;
/** Most stderr taken in per second: past it the server waits on its own pipe (a flood costs this app little). */
export const STDERR_BYTES_PER_SECOND = 1024 * 1024;

// Terminal escapes (colours, cursor moves, titles) and other control characters: data, never acted on.
const ESCAPES = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]/g;
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/**
 * What a local server writes to stderr: every line appended to its log file in the state dir (with
 * the time), the last few kept for its details. The secrets it was given are replaced by their
 * names before anything is written or kept, so its log never holds a key the server printed.
 * Written as it arrives, one write per chunk, at most STDERR_BYTES_PER_SECOND: a server that
 * floods stderr is slowed by its own pipe, never by memory or time here.
 */
export class StderrLog {
  private readonly lines: { text: string; ours: boolean }[] = [];
  private partial = '';
  private fd: number | undefined;
  private size = 0;
  private secrets: readonly { name: string; value: string }[] = [];
  private window = { start: 0, bytes: 0 };

  constructor(readonly path: string) {}

  /** The secret values to hide from now on (each start's), by the name shown instead. */
  hide(secrets: readonly { name: string; value: string }[]): void {
    // Longest first, so a secret that contains another is replaced whole.
    this.secrets = secrets.filter((s) => s.value.length >= 4).sort((a, b) => b.value.length - a.value.length);
  }

  /** A stream to pipe the process's stderr into. */
  sink(): Writable {
    return new Writable({
      decodeStrings: true,
      write: (chunk: Buffer, _encoding, done) => {
        this.take(chunk.toString('utf8'));
        const now = Date.now();
        if (now - this.window.start >= 1000) this.window = { start: now, bytes: 0 };
        this.window.bytes += chunk.length;
        // Over the rate: the next chunk is read once this second is over; meanwhile the pipe fills and the server waits.
        if (this.window.bytes <= STDERR_BYTES_PER_SECOND) done();
        else setTimeout(done, this.window.start + 1000 - now);
      },
      final: (done) => {
        this.flush();
        done();
      },
    });
  }

  /** A line of this app's own about the process (started, exited), in the same log. */
  note(line: string): void {
    this.flush();
    this.add([`[${new Date().toISOString()}] ${line}`], true);
  }

  /** The last lines, newest last, without control characters, each at most 300 characters. */
  recent(): string[] {
    return this.lines.map((line) => line.text);
  }

  /** The last line the server itself wrote, for a reason (undefined before any). */
  lastLine(): string | undefined {
    return this.lines.findLast((line) => !line.ours)?.text;
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  /** Closes and deletes the log (the connection was removed). */
  remove(): void {
    this.close();
    rmSync(this.path, { force: true });
    rmSync(`${this.path}.1`, { force: true });
  }

  private take(text: string): void {
    const lines = (this.partial + text).split('\n');
    let rest = lines.pop()!;
    // A flood without line breaks is cut into pieces rather than held.
    while (rest.length > MAX_LINE_CHARS) {
      lines.push(rest.slice(0, MAX_LINE_CHARS));
      rest = rest.slice(MAX_LINE_CHARS);
    }
    this.partial = rest;
    if (lines.length) this.add(lines, false);
  }

  private flush(): void {
    if (this.partial) this.add([this.partial], false);
    this.partial = '';
  }

  /** Writes whole lines in one go; only the last few are looked at for the details. */
  private add(raw: string[], ours: boolean): void {
    let text = `${raw.join('\n')}\n`;
    for (const { name, value } of this.secrets) text = text.split(value).join(`[secret ${name}]`);
    this.write(text);
    const lines = text.split('\n').slice(-STDERR_LINES_KEPT - 1, -1);
    for (const line of lines) {
      const shown = line.replace(ESCAPES, '').replace(CONTROL, '').trim();
      if (!shown) continue;
      this.lines.push({ text: shown.length <= MAX_SHOWN_LINE ? shown : `${shown.slice(0, MAX_SHOWN_LINE)}…`, ours });
      if (this.lines.length > STDERR_LINES_KEPT) this.lines.shift();
    }
  }

  private write(text: string): void {
    try {
      if (this.fd === undefined) {
        mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
        this.fd = openSync(this.path, 'a', 0o600);
        this.size = fstatSync(this.fd).size;
      }
      const bytes = Buffer.from(text);
      if (this.size + bytes.length > LOG_FILE_MAX_BYTES && this.size > 0) {
        closeSync(this.fd);
        renameSync(this.path, `${this.path}.1`);
        this.fd = openSync(this.path, 'a', 0o600);
        this.size = 0;
      }
      writeSync(this.fd, bytes);
      this.size += bytes.length;
    } catch {
      // A log that cannot be written (disk full) must not stop the server: the last lines are still kept.
    }
  }
}
