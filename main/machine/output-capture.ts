import { open, type FileHandle } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { completeUtf8Prefix, skipUtf8Continuation } from './utf8.js';

export interface OutputCaptureLimits {
  /** Bytes kept from the start of the output. */
  headBytes: number;
  /** Bytes kept from the end of the output. */
  tailBytes: number;
  /** Most bytes saved to the full-output file. */
  maxSavedBytes: number;
  /** Names the file to create, asked only once the output outgrows head + tail, to hold all of it. */
  savePath: () => Promise<string>;
}

export interface CapturedOutput {
  /** The output, or its head and tail around a "... N bytes elided ..." line. */
  text: string;
  totalBytes: number;
  elidedBytes: number;
  /** Where all the output was saved, when part of it was elided. */
  fullOutputPath?: string;
  /** Set when the saved file is incomplete (over its size limit, or a write failed). */
  fullOutputProblem?: string;
  /** How long the saved file is kept, for the agent. */
  fullOutputKept?: string;
}

/**
 * The text of an output of `totalBytes` bytes from its first and last bytes: all of it when they
 * are all of it, else head and tail (neither cutting a character) around a "... N bytes elided ..." line.
 */
export function capturedOutput(head: Buffer, tail: Buffer, totalBytes: number): CapturedOutput {
  if (totalBytes <= head.length + tail.length) {
    return { text: Buffer.concat([head, tail]).toString('utf8'), totalBytes, elidedBytes: 0 };
  }
  const start = completeUtf8Prefix(head);
  const end = skipUtf8Continuation(tail);
  const elidedBytes = totalBytes - start.length - end.length;
  return { text: `${start.toString('utf8')}\n... ${elidedBytes} bytes elided ...\n${end.toString('utf8')}`, totalBytes, elidedBytes };
}

/**
 * A sink for one output stream that holds only a fixed head and a ring-buffer tail in memory,
 * and streams everything to a file once the output is too big to return whole. Being a Writable,
 * it pushes back on the producer (the child process blocks on write) while the file catches up.
 */
export class OutputCapture extends Writable {
  private readonly head: Buffer;
  private headLength = 0;
  private readonly tail: Buffer;
  private tailStart = 0; // where the oldest tail byte is, once the ring has wrapped
  private tailLength = 0;
  private total = 0;
  private file: FileHandle | undefined;
  private filePath: string | undefined;
  private saved = 0;
  private saveProblem: string | undefined;

  constructor(private readonly limits: OutputCaptureLimits) {
    super();
    this.head = Buffer.alloc(limits.headBytes);
    this.tail = Buffer.alloc(limits.tailBytes);
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.take(chunk).then(() => callback(), callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    const file = this.file;
    this.file = undefined;
    if (!file) return callback();
    file.close().then(() => callback(), callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    const file = this.file;
    this.file = undefined;
    if (!file) return callback(error);
    file.close().then(
      () => callback(error),
      () => callback(error),
    );
  }

  /** What was captured; call after the stream has finished. */
  result(): CapturedOutput {
    // Until the output outgrows head + tail, the ring never wraps: head then tail is all of it.
    const tail = this.total <= this.limits.headBytes + this.limits.tailBytes ? this.tail.subarray(0, this.tailLength) : this.ringContents();
    const result = capturedOutput(this.head.subarray(0, this.headLength), tail, this.total);
    if (result.elidedBytes === 0) return result;
    if (this.filePath && this.saved > 0) result.fullOutputPath = this.filePath;
    if (this.saveProblem) result.fullOutputProblem = this.saveProblem;
    return result;
  }

  private async take(chunk: Buffer): Promise<void> {
    const { headBytes, tailBytes } = this.limits;
    // Up to here everything is still in memory, so the file can start with all of it.
    if (!this.file && !this.saveProblem && this.total + chunk.length > headBytes + tailBytes) {
      await this.startSaving();
    }
    this.total += chunk.length;
    const toHead = Math.min(headBytes - this.headLength, chunk.length);
    chunk.copy(this.head, this.headLength, 0, toHead);
    this.headLength += toHead;
    this.pushTail(chunk.subarray(toHead));
    await this.save(chunk);
  }

  private pushTail(bytes: Buffer): void {
    const size = this.tail.length;
    if (size === 0 || bytes.length === 0) return;
    if (bytes.length >= size) {
      bytes.copy(this.tail, 0, bytes.length - size);
      this.tailStart = 0;
      this.tailLength = size;
      return;
    }
    const writeAt = (this.tailStart + this.tailLength) % size;
    const first = Math.min(bytes.length, size - writeAt);
    bytes.copy(this.tail, writeAt, 0, first);
    bytes.copy(this.tail, 0, first);
    const overflow = Math.max(0, this.tailLength + bytes.length - size);
    this.tailLength = Math.min(size, this.tailLength + bytes.length);
    this.tailStart = (this.tailStart + overflow) % size;
  }

  private ringContents(): Buffer {
    const end = this.tailStart + this.tailLength;
    if (end <= this.tail.length) return Buffer.from(this.tail.subarray(this.tailStart, end));
    return Buffer.concat([this.tail.subarray(this.tailStart), this.tail.subarray(0, end - this.tail.length)]);
  }

  private async startSaving(): Promise<void> {
    try {
      const path = await this.limits.savePath();
      // Private: command output can hold secrets.
      this.file = await open(path, 'wx', 0o600);
      this.filePath = path;
    } catch (error) {
      this.saveProblem = `the full output could not be saved: ${(error as Error).message}`;
      return;
    }
    await this.save(Buffer.concat([this.head.subarray(0, this.headLength), this.ringContents()]));
  }

  private async save(bytes: Buffer): Promise<void> {
    if (!this.file) return;
    const room = this.limits.maxSavedBytes - this.saved;
    const part = bytes.length > room ? bytes.subarray(0, room) : bytes;
    try {
      await this.file.write(part);
      this.saved += part.length;
    } catch (error) {
      this.saveProblem = `saving the full output stopped after ${this.saved} bytes: ${(error as Error).message}`;
      await this.stopSaving();
      return;
    }
    if (part.length < bytes.length) {
      this.saveProblem = `only the first ${this.limits.maxSavedBytes} bytes of the output were saved (the saved-output limit)`;
      await this.stopSaving();
    }
  }

  private async stopSaving(): Promise<void> {
    const file = this.file;
    this.file = undefined;
    await file?.close().catch(() => {});
  }
}
