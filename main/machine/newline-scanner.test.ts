import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { compileWat } from '../../scripts/build-wasm.js';
import { NEWLINE_COUNT_WASM, SCAN_BUFFER_BYTES, releaseScanBuffer, takeScanBuffer } from './newline-scanner.js';

function plainCount(bytes: Buffer, start: number, end: number): number {
  let count = 0;
  for (let i = start; i < end; i += 1) if (bytes[i] === 0x0a) count += 1;
  return count;
}

/** Random numbers from a seed, so that a failure can be run again as it was. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    // mulberry32
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

describe('newline scanner', () => {
  it('runs the module built from its text source, and the same source always builds the same bytes', async () => {
    const source = fileURLToPath(new URL('./newline-count.wat', import.meta.url));
    const text = await readFile(source, 'utf8');
    const built = Buffer.from(await compileWat(source, text));
    assert.deepEqual(Buffer.from(await compileWat(source, text)), built, 'a second build gives the same bytes');
    assert.deepEqual(await readFile(NEWLINE_COUNT_WASM), built, `${NEWLINE_COUNT_WASM} is what newline-count.wat builds`);
  });

  it('counts as a plain loop does on random buffers, at the sizes where its steps change', () => {
    const seed = Date.now();
    const random = seeded(seed);
    const scan = takeScanBuffer();
    try {
      // Around a 16-byte vector, a 64-byte step, a page, and the whole buffer; and some sizes at random.
      const edges = [0, 1, 2, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 4095, 4096, 4097, 65535, 65536, 65537];
      // From no newline to only newlines, and any byte at all (-1: 0x0a is one of 256).
      for (const density of [0, 0.001, 0.05, 0.5, 1, -1]) {
        for (let i = 0; i < SCAN_BUFFER_BYTES; i += 1) {
          scan.buffer[i] = density < 0 ? Math.floor(random() * 256) : random() < density ? 0x0a : 0x61 + (i % 26);
        }
        const sizes = [
          ...edges,
          SCAN_BUFFER_BYTES - 1,
          SCAN_BUFFER_BYTES,
          ...Array.from({ length: 4 }, () => Math.floor(random() * SCAN_BUFFER_BYTES)),
        ];
        for (const size of sizes) {
          for (const start of [0, 1, 7, 63, Math.floor(random() * (SCAN_BUFFER_BYTES - size + 1))]) {
            if (start + size > SCAN_BUFFER_BYTES) continue;
            const where = `seed ${seed}, density ${density}: [${start}, ${start + size})`;
            assert.equal(scan.countNewlines(start, start + size), plainCount(scan.buffer, start, start + size), where);
          }
        }
      }
    } finally {
      releaseScanBuffer(scan);
    }
  });

  it('counts the newlines of any range, whatever its alignment and length', () => {
    const scan = takeScanBuffer();
    try {
      // Newlines at irregular places, and bytes that differ from \n in one bit (0x0b, 0x8a, 0x0e).
      const pattern = Buffer.from('ab\n\x0b\n\n\x8axyz\x0e\n€\n😀 and more text\n\n\n');
      for (let i = 0; i < 4096; i += 1) scan.buffer[i] = pattern[(i * 7 + (i >> 5)) % pattern.length]!;
      for (let start = 0; start < 80; start += 1) {
        for (let end = start; end < start + 300; end += 1) {
          assert.equal(scan.countNewlines(start, end), plainCount(scan.buffer, start, end), `${start}-${end}`);
        }
      }
    } finally {
      releaseScanBuffer(scan);
    }
  });

  it('counts a whole buffer of newlines, and one with none', () => {
    const scan = takeScanBuffer();
    try {
      scan.buffer.fill(0x0a);
      assert.equal(scan.countNewlines(0, SCAN_BUFFER_BYTES), SCAN_BUFFER_BYTES);
      scan.buffer.fill(0x61);
      assert.equal(scan.countNewlines(0, SCAN_BUFFER_BYTES), 0);
    } finally {
      releaseScanBuffer(scan);
    }
  });

  it('gives reads running at once their own buffers, and reuses released ones', () => {
    const first = takeScanBuffer();
    const second = takeScanBuffer();
    assert.notEqual(first.buffer.buffer, second.buffer.buffer);
    first.buffer.fill(0x0a, 0, 100);
    second.buffer.fill(0x61, 0, 100);
    assert.equal(first.countNewlines(0, 100), 100);
    releaseScanBuffer(second);
    releaseScanBuffer(first);
    assert.equal(takeScanBuffer(), first);
    assert.equal(takeScanBuffer(), second);
    releaseScanBuffer(first);
    releaseScanBuffer(second);
  });

  it('refuses a range outside its buffer', () => {
    const scan = takeScanBuffer();
    try {
      assert.throws(() => scan.countNewlines(0, SCAN_BUFFER_BYTES + 1), RangeError);
      assert.throws(() => scan.countNewlines(5, 4), RangeError);
      assert.throws(() => scan.countNewlines(-1, 4), RangeError);
    } finally {
      releaseScanBuffer(scan);
    }
  });
});
