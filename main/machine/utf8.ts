/** Helpers to cut UTF-8 byte buffers without splitting a character. */

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
