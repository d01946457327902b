/**
 * Read buffers whose newlines are counted at memory speed, for reads that must scan a large file
 * (to a line far down, or for its line count). Counting is a small WebAssembly SIMD loop over the
 * buffer in place, 64 bytes a step: about as fast as `wc -l`, where a JavaScript loop over the
 * bytes, or Buffer.indexOf once per line, is 5 to 10 times slower (see bench/README.md).
 */

// @types/node 20 does not declare WebAssembly (TypeScript's "dom" lib does); this is what this file uses.
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: Record<string, unknown> };
};

/** Bytes of one scan buffer. */
export const SCAN_BUFFER_BYTES = 1024 * 1024;
// Buffers kept for the next reads once released; more are made while more reads run at once.
const MAX_IDLE_BUFFERS = 4;
// WebAssembly memory comes in 64 KiB pages.
const PAGES = Math.ceil(SCAN_BUFFER_BYTES / 65536);

// (module
//   (memory (export "memory") PAGES)
//   (func (export "count") (param $p i32) (param $n i32) (result i32)
//     (local $end i32) (local $count i32) (local $nl v128)
//     end = p + n; nl = i8x16.splat(10)
//     while p + 64 <= end:   ;; four 16-byte vectors: compare with \n, bitmask, popcount
//       count += popcnt(bitmask(eq(load p, nl)) | bitmask(eq(load p+16, nl)) << 16)
//              + popcnt(bitmask(eq(load p+32, nl)) | bitmask(eq(load p+48, nl)) << 16)
//       p += 64
//     while p < end: count += (load8_u p == 10); p += 1
//     return count))
// prettier-ignore
const COUNT_BODY = [
  0x02, 0x02, 0x7f, 0x01, 0x7b, // locals: 2 x i32 ($end, $count), 1 x v128 ($nl)
  0x20, 0x00, 0x20, 0x01, 0x6a, 0x21, 0x02, // end = p + n
  0x41, 0x0a, 0xfd, 0x0f, 0x21, 0x04, // nl = i8x16.splat(10)
  0x02, 0x40, 0x03, 0x40, // block, loop
  0x20, 0x00, 0x41, 0xc0, 0x00, 0x6a, 0x20, 0x02, 0x4b, 0x0d, 0x01, // break if p + 64 > end
  0x20, 0x03, // count
  0x20, 0x00, 0xfd, 0x00, 0x00, 0x00, 0x20, 0x04, 0xfd, 0x23, 0xfd, 0x64, // bitmask(eq(v128.load offset=0, nl))
  0x20, 0x00, 0xfd, 0x00, 0x00, 0x10, 0x20, 0x04, 0xfd, 0x23, 0xfd, 0x64, // bitmask(eq(v128.load offset=16, nl))
  0x41, 0x10, 0x74, 0x72, 0x69, 0x6a, // << 16, or, popcnt, add
  0x20, 0x00, 0xfd, 0x00, 0x00, 0x20, 0x20, 0x04, 0xfd, 0x23, 0xfd, 0x64, // offset=32
  0x20, 0x00, 0xfd, 0x00, 0x00, 0x30, 0x20, 0x04, 0xfd, 0x23, 0xfd, 0x64, // offset=48
  0x41, 0x10, 0x74, 0x72, 0x69, 0x6a, // << 16, or, popcnt, add
  0x21, 0x03, // count = ...
  0x20, 0x00, 0x41, 0xc0, 0x00, 0x6a, 0x21, 0x00, // p += 64
  0x0c, 0x00, 0x0b, 0x0b, // continue; end loop, end block
  0x02, 0x40, 0x03, 0x40, // block, loop
  0x20, 0x00, 0x20, 0x02, 0x4f, 0x0d, 0x01, // break if p >= end
  0x20, 0x03, 0x20, 0x00, 0x2d, 0x00, 0x00, 0x41, 0x0a, 0x46, 0x6a, 0x21, 0x03, // count += (i32.load8_u p) == 10
  0x20, 0x00, 0x41, 0x01, 0x6a, 0x21, 0x00, // p += 1
  0x0c, 0x00, 0x0b, 0x0b, // continue; end loop, end block
  0x20, 0x03, 0x0b, // return count
];

function leb128(value: number): number[] {
  const bytes: number[] = [];
  do {
    let byte = value & 0x7f;
    value >>>= 7;
    if (value !== 0) byte |= 0x80;
    bytes.push(byte);
  } while (value !== 0);
  return bytes;
}

const section = (id: number, bytes: number[]): number[] => [id, ...leb128(bytes.length), ...bytes];
const name = (text: string): number[] => [text.length, ...Buffer.from(text, 'latin1')];

const counterModule = new WebAssembly.Module(
  new Uint8Array([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00], // "\0asm", version 1
    ...section(1, [1, 0x60, 2, 0x7f, 0x7f, 1, 0x7f]), // type 0: (i32, i32) -> i32
    ...section(3, [1, 0]), // function 0 has type 0
    ...section(5, [1, 0x00, ...leb128(PAGES)]), // one memory of PAGES pages
    ...section(7, [2, ...name('count'), 0x00, 0, ...name('memory'), 0x02, 0]), // exports
    ...section(10, [1, ...leb128(COUNT_BODY.length), ...COUNT_BODY]), // code
  ]),
);

/** A read buffer (in WebAssembly memory) and the count of newlines in part of it. */
export class ScanBuffer {
  /** SCAN_BUFFER_BYTES long. Read into it; views of it are only valid until release(). */
  readonly buffer: Buffer;
  private readonly countIn: (start: number, length: number) => number;

  constructor() {
    const { exports } = new WebAssembly.Instance(counterModule);
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
