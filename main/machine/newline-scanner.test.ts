import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SCAN_BUFFER_BYTES, releaseScanBuffer, takeScanBuffer } from './newline-scanner.js';

function plainCount(bytes: Buffer, start: number, end: number): number {
  let count = 0;
  for (let i = start; i < end; i += 1) if (bytes[i] === 0x0a) count += 1;
  return count;
}

describe('newline scanner', () => {
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
