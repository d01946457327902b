import { open, rm, type FileHandle } from 'node:fs/promises';
import { capturedOutput, type CapturedOutput } from './output-capture.js';

export interface OutputFileLimits {
  /** Bytes returned from the start of the output. */
  headBytes: number;
  /** Bytes returned from the end of the output. */
  tailBytes: number;
  /** Most bytes the file keeps once the command is done. */
  maxSavedBytes: number;
}

/**
 * One output stream of a command, written by the command itself straight into a file: the file's
 * descriptor is its stdout (or stderr), so printing costs what a redirect to a file costs and no
 * byte passes through this process. Head and tail are read from the file once the command is done;
 * the file is kept only when the output was too big to return whole.
 */
export class OutputFile {
  private constructor(
    readonly path: string,
    private readonly handle: FileHandle,
  ) {}

  /** Creates the file for reading and writing, private (command output can hold secrets); fails if it exists. */
  static async create(path: string): Promise<OutputFile> {
    return new OutputFile(path, await open(path, 'wx+', 0o600));
  }

  /** The descriptor to give the command as its stdout or stderr. */
  get fd(): number {
    return this.handle.fd;
  }

  /** Bytes written so far, and when the last ones were (ns since the epoch). */
  async written(): Promise<{ bytes: number; modifiedNs: bigint }> {
    const info = await this.handle.stat({ bigint: true });
    return { bytes: Number(info.size), modifiedNs: info.mtimeNs };
  }

  /** The last `count` bytes written so far (fewer if there are fewer). */
  async lastBytes(count: number): Promise<Buffer> {
    const { bytes } = await this.written();
    return this.readAt(Math.max(0, bytes - count), Math.min(count, bytes));
  }

  /**
   * What the command printed, once it is done: the whole output, or its head and tail with the file
   * kept for the rest (cut to maxSavedBytes). Closes the file, and deletes it when nothing was elided.
   */
  async finish(limits: OutputFileLimits): Promise<CapturedOutput> {
    try {
      const { bytes } = await this.written();
      if (bytes <= limits.headBytes + limits.tailBytes) {
        const whole = await this.readAt(0, bytes);
        await this.remove();
        return capturedOutput(whole, Buffer.alloc(0), bytes);
      }
      const head = await this.readAt(0, limits.headBytes);
      const tail = await this.readAt(bytes - limits.tailBytes, limits.tailBytes);
      const result: CapturedOutput = { ...capturedOutput(head, tail, bytes), fullOutputPath: this.path };
      if (bytes > limits.maxSavedBytes) {
        await this.handle.truncate(limits.maxSavedBytes);
        result.fullOutputProblem = `only the first ${limits.maxSavedBytes} bytes of the output were saved (the saved-output limit)`;
      }
      return result;
    } finally {
      await this.handle.close().catch(() => {});
    }
  }

  /** Closes and deletes the file (the command could not start). */
  async discard(): Promise<void> {
    await this.handle.close().catch(() => {});
    await this.remove();
  }

  private async remove(): Promise<void> {
    await rm(this.path, { force: true });
  }

  private async readAt(position: number, length: number): Promise<Buffer> {
    const buffer = Buffer.alloc(length);
    let got = 0;
    while (got < length) {
      const { bytesRead } = await this.handle.read(buffer, got, length - got, position + got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return buffer.subarray(0, got);
  }
}
