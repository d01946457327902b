/** Helpers to cut UTF-8 byte buffers without splitting a character. */
import { isUtf8 } from 'node:buffer';

/** Drops an incomplete multi-byte sequence at the end of `bytes`. */
export function completeUtf8Prefix(bytes: Buffer): Buffer {
  const end = bytes.length;
  for (let i = end - 1; i >= 0 && i >= end - 4; i -= 1) {
    const byte = bytes[i]!;
    if ((byte & 0xc0) === 0x80) continue; // continuation byte: keep looking for the lead byte
    const length = byte < 0x80 ? 1 : byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return i + length > end ? bytes.subarray(0, i) : bytes;
  }
  return bytes;
}

/** Drops continuation bytes at the start of `bytes` (the tail of a character cut off before it). */
export function skipUtf8Continuation(bytes: Buffer): Buffer {
  let start = 0;
  while (start < bytes.length && start < 3 && (bytes[start]! & 0xc0) === 0x80) start += 1;
  return bytes.subarray(start);
}

/** True when `bytes` has no NUL byte and is valid UTF-8 (a sequence cut at the end is allowed when `partial`). */
export function looksLikeText(bytes: Buffer, partial: boolean): boolean {
  if (bytes.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: partial });
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether a stream of bytes, given in pieces, is text: valid UTF-8 without NUL bytes (what edit
 * accepts). A character cut between two pieces is checked once the next piece completes it.
 */
export class Utf8Stream {
  private tail: Buffer = Buffer.alloc(0);
  private valid = true;

  push(piece: Buffer): void {
    if (!this.valid || piece.length === 0) return;
    if (piece.includes(0)) {
      this.valid = false;
      return;
    }
    let body = piece;
    if (this.tail.length > 0) {
      // The character cut at the end of the last piece, completed by the start of this one.
      const joined = Buffer.concat([this.tail, piece.subarray(0, 3)]);
      const whole = completeUtf8Prefix(joined);
      if (whole.length <= this.tail.length) {
        // Still cut (a piece of fewer than 3 bytes): wait for more.
        if (joined.length - this.tail.length === piece.length && piece.length < 3) this.tail = Buffer.from(joined);
        else this.valid = false;
        return;
      }
      if (!isUtf8(whole)) {
        this.valid = false;
        return;
      }
      body = piece.subarray(whole.length - this.tail.length);
    }
    const whole = completeUtf8Prefix(body);
    this.valid = isUtf8(whole);
    this.tail = Buffer.from(body.subarray(whole.length));
  }

  /** At the end of the stream: whether all of it was text. */
  end(): boolean {
    return this.valid && this.tail.length === 0;
  }
}
