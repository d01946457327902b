/**
 * Read buffers whose newlines are counted at memory speed, for reads that must scan a large file
 * (to a line far down, or for its line count). Counting is a small WebAssembly SIMD loop over the
 * buffer in place, 64 bytes a step (newline-count.wat): about as fast as `wc -l`, where a JavaScript loop over the
 * bytes, or Buffer.indexOf once per line, is 5 to 10 times slower (see bench/README.md).
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../version.js';

// @types/node 20 does not declare WebAssembly (TypeScript's "dom" lib does); this is what this file uses.
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: Record<string, unknown> };
};

/** Bytes of one scan buffer: the counting module's whole memory (16 pages of 64 KiB). */
export const SCAN_BUFFER_BYTES = 1024 * 1024;
// Buffers kept for the next reads once released; more are made while more reads run at once.
const MAX_IDLE_BUFFERS = 4;

/** The counting module, built by `npm run build` from its source, newline-count.wat beside this file. */
export const NEWLINE_COUNT_WASM = join(PACKAGE_ROOT, 'dist', 'wasm', 'newline-count.wasm');

let counterModule: object | undefined;

/** The counting module, compiled on the first read that needs it. */
function counter(): object {
  if (counterModule) return counterModule;
  let bytes: Buffer;
  try {
    bytes = readFileSync(NEWLINE_COUNT_WASM);
  } catch (error) {
    throw new Error(
      `Cannot load the line counter ${NEWLINE_COUNT_WASM} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}). Build it with \`npm run build\`, or reinstall the app.`,
      { cause: error },
    );
  }
  return (counterModule = new WebAssembly.Module(bytes));
}

/** A read buffer (in WebAssembly memory) and the count of newlines in part of it. */
export class ScanBuffer {
  /** SCAN_BUFFER_BYTES long. Read into it; views of it are only valid until release(). */
  readonly buffer: Buffer;
  private readonly countIn: (start: number, length: number) => number;

  constructor() {
    const { exports } = new WebAssembly.Instance(counter());
    this.buffer = Buffer.from((exports['memory'] as { buffer: ArrayBuffer }).buffer, 0, SCAN_BUFFER_BYTES);
    this.countIn = exports['count'] as (start: number, length: number) => number;
  }

  /** Number of \n bytes in buffer[start, end). */
  countNewlines(start: number, end: number): number {
    if (!(Number.isInteger(start) && Number.isInteger(end) && start >= 0 && start <= end && end <= SCAN_BUFFER_BYTES)) {
      throw new RangeError(`countNewlines(${start}, ${end}) is outside the ${SCAN_BUFFER_BYTES}-byte buffer`);
    }
    return this.countIn(start, end - start);
  }
}

const idle: ScanBuffer[] = [];

/** A scan buffer for one read; give it back with releaseScanBuffer once done with it. */
export function takeScanBuffer(): ScanBuffer {
  // Making one instantiates the module (about half a millisecond), so they are reused.
  return idle.pop() ?? new ScanBuffer();
}

export function releaseScanBuffer(scan: ScanBuffer): void {
  if (idle.length < MAX_IDLE_BUFFERS && !idle.includes(scan)) idle.push(scan);
}
