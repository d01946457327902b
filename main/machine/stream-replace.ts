import { writev } from 'node:fs';
import { writeAll } from './replace-file.js';

function writevAsync(fd: number, pieces: Buffer[], position: number): Promise<number> {
  return new Promise((resolve, reject) => writev(fd, pieces, position, (error, written) => (error ? reject(error) : resolve(written))));
}

/** Stages hand on their output once this much of it waits, so memory stays bounded whatever the replacements make. */
const FLUSH_BYTES = 1024 * 1024;
const EMPTY = Buffer.alloc(0);

/** Where the pieces of a stream go next. Pieces stay valid only until the call that gave them returns. */
export interface PieceSink {
  write(pieces: readonly Buffer[]): Promise<void>;
  end(): Promise<void>;
}

/**
 * One edit over a stream of bytes: every occurrence of `from`, found left to right without overlaps
 * (as String.split finds them), also across the boundaries between pieces, is replaced by `to`.
 * Counts them, and notes where in its output the first began and the last ended, which bound
 * what changed.
 */
export class StreamReplacer implements PieceSink {
  count = 0;
  /** Offset in the output where the first replacement starts; -1 before one. */
  firstStart = -1;
  /** Offset in the output where the last replacement ends. */
  lastEnd = -1;
  /** Bytes handed on so far (all of the output, once ended). */
  written = 0;
  /** Newlines each replacement adds (negative: takes away). */
  readonly newlinesAdded: number;
  // The end of the input seen so far that a match could still start in.
  private carry = EMPTY;

  constructor(
    private readonly from: Buffer,
    private readonly to: Buffer,
    private readonly next: PieceSink,
  ) {
    this.newlinesAdded = countByte(to, 0x0a) - countByte(from, 0x0a);
  }

  async write(pieces: readonly Buffer[]): Promise<void> {
    let out: Buffer[] = [];
    let outBytes = 0;
    const emit = (piece: Buffer): void => {
      if (piece.length === 0) return;
      out.push(piece);
      outBytes += piece.length;
    };
    const flush = async (): Promise<void> => {
      const handed = out;
      this.written += outBytes;
      out = [];
      outBytes = 0;
      await this.next.write(handed);
    };
    const keep = this.from.length - 1;
    for (const piece of pieces) {
      const data = this.carry.length > 0 ? Buffer.concat([this.carry, piece]) : piece;
      let at = 0;
      for (let found = data.indexOf(this.from, at); found !== -1; found = data.indexOf(this.from, at)) {
        emit(data.subarray(at, found));
        const start = this.written + outBytes;
        if (this.firstStart < 0) this.firstStart = start;
        emit(this.to);
        this.lastEnd = start + this.to.length;
        this.count += 1;
        at = found + this.from.length;
        if (outBytes >= FLUSH_BYTES) await flush();
      }
      const cut = Math.max(at, data.length - keep);
      emit(data.subarray(at, cut));
      // Copied: the piece's memory is the reader's again once this returns.
      this.carry = Buffer.from(data.subarray(cut));
    }
    await flush();
  }

  async end(): Promise<void> {
    const rest = this.carry;
    this.carry = EMPTY;
    this.written += rest.length;
    await this.next.write([rest]);
    await this.next.end();
  }
}

/** The last stage: writes the pieces to a file from its start, keeping them until flush(). */
export class FileSink implements PieceSink {
  written = 0;
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(private readonly fd: number) {}

  async write(pieces: readonly Buffer[]): Promise<void> {
    for (const piece of pieces) {
      if (piece.length === 0) continue;
      this.pending.push(piece);
      this.pendingBytes += piece.length;
    }
    if (this.pendingBytes >= FLUSH_BYTES) await this.flush();
  }

  /** Writes what waits; after it, no piece given before is referred to any more. */
  async flush(): Promise<void> {
    if (this.pendingBytes === 0) return;
    const pieces = this.pending;
    const total = this.pendingBytes;
    this.pending = [];
    this.pendingBytes = 0;
    const wrote = await writevAsync(this.fd, pieces, this.written);
    if (wrote < total) await writeAll(this.fd, Buffer.concat(pieces).subarray(wrote), this.written + wrote);
    this.written += total;
  }

  async end(): Promise<void> {
    await this.flush();
  }
}

function countByte(bytes: Buffer, byte: number): number {
  let count = 0;
  for (let at = bytes.indexOf(byte); at !== -1; at = bytes.indexOf(byte, at + 1)) count += 1;
  return count;
}
