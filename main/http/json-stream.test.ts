import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { JsonStream, JsonStreamError } from './json-stream.js';

/** Parses `bytes` fed in pieces cut at `cuts`. */
function parse(bytes: Uint8Array, cuts: number[] = [], maxTokens = 1_000_000): unknown {
  const json = new JsonStream(maxTokens);
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    json.write(bytes.subarray(from, cut));
    from = cut;
  }
  return json.end();
}

function failure(bytes: Uint8Array, cuts: number[] = [], maxTokens?: number): JsonStreamError {
  try {
    parse(bytes, cuts, maxTokens);
  } catch (error) {
    assert.ok(error instanceof JsonStreamError, String(error));
    return error;
  }
  assert.fail(`parsed ${Buffer.from(bytes).toString()}`);
}

// Texts whose every byte boundary is a place a chunk may end: escapes, multi-byte characters,
// surrogate pairs, numbers and literals cut in two.
const TEXTS = [
  '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"write","arguments":{"path":"/tmp/a b","content":"héllo\\n\\"quoted\\" \\\\ end"}}}',
  '["\\ud83d\\ude00 😀 ü € 日本", "\\u00e9\\t\\/\\b\\f\\r", "", " "]',
  '[0, -0, 1.5e3, -2.25E-2, 12345678901234567890, true, false, null, {}, [], [[{}]]]',
  ' \t\r\n{ "a" : [ 1 , { "b" : "c" } ] , "d" : null } \n',
  '"a string alone"',
  '42',
  '{"d":1,"d":2}',
];

describe('JsonStream', () => {
  it('gives what JSON.parse gives, wherever the chunks are cut', () => {
    for (const text of TEXTS) {
      const bytes = Buffer.from(text);
      for (let cut = 0; cut <= bytes.length; cut++) {
        assert.deepEqual(parse(bytes, [cut]), JSON.parse(text), `${text} cut at ${cut}`);
      }
      assert.deepEqual(
        parse(
          bytes,
          Array.from({ length: bytes.length }, (_, i) => i),
        ),
        JSON.parse(text),
        `${text} one byte at a time`,
      );
    }
  });

  it('keeps a "__proto__" key as an own property, as JSON.parse does', () => {
    const value = parse(Buffer.from('{"params":{"__proto__":{"admin":true}}}')) as { params: Record<string, unknown> };
    assert.equal(Object.getPrototypeOf(value.params), Object.prototype);
    assert.equal((value.params as { admin?: boolean }).admin, undefined);
    assert.deepEqual(Object.keys(value.params), ['__proto__']);
  });

  it('joins a large string whole, across many chunks', () => {
    const content = 'x'.repeat(300_000) + 'é' + 'y'.repeat(300_000);
    const bytes = Buffer.from(JSON.stringify({ content }));
    const cuts = Array.from({ length: Math.floor(bytes.length / 1000) }, (_, i) => (i + 1) * 1000 - 1);
    assert.equal((parse(bytes, cuts) as { content: string }).content, content);
  });

  it('decodes long text of 1- to 4-byte characters and escapes, whatever byte the chunks end on', () => {
    // Longer than the 64 KiB string buffer, so its flushes fall inside characters too.
    const alphabet = ['a', 'é', '€', '😀', '\\', '"', '\n', 'z'];
    const content = Array.from({ length: 120_000 }, (_, i) => alphabet[(i * 7) % alphabet.length]).join('');
    const bytes = Buffer.from(JSON.stringify({ content }));
    for (const step of [997, 4096, 65_537]) {
      const cuts = Array.from({ length: Math.floor((bytes.length - 1) / step) }, (_, i) => (i + 1) * step);
      assert.equal((parse(bytes, cuts) as { content: string }).content, content, `chunks of ${step} bytes`);
    }
  });

  it('refuses what is not one JSON value, with the reason', () => {
    const bad: Array<[string, RegExp]> = [
      ['', /no JSON value/],
      ['  \n', /no JSON value/],
      ['{"a":1', /ended in mid-parsing/],
      ['"abc', /ended in the middle of a token/],
      ['{"a":1,}', /Unexpected/],
      ['[1] [2]', /Unexpected|after the JSON value/],
      ['"\\x"', /Unexpected/],
      ['NaN', /Unexpected/],
      ['"\u0001"', /Unexpected/],
    ];
    for (const [text, reason] of bad) assert.match(failure(Buffer.from(text)).message, reason, JSON.stringify(text));
    // Data after the value in a later chunk, and invalid UTF-8 (JSON.parse would turn it into U+FFFD).
    assert.match(failure(Buffer.from('{"a":1}  x'), [8]).message, /after the JSON value/);
    assert.doesNotThrow(() => parse(Buffer.from('{"a":1}  \n'), [8]));
    assert.ok(failure(Buffer.from([0x22, 0xff, 0xfe, 0x22])));
  });

  it('stops at the token limit, saying so, before parsing further', () => {
    const text = `[${'{},'.repeat(999)}{}]`; // 1 + 1000 × 2 + 999 + 1 = 3001 tokens
    assert.equal((parse(Buffer.from(text), [], 3001) as unknown[]).length, 1000);
    const error = failure(Buffer.from(text), [], 3000);
    assert.equal(error.tooManyTokens, true);
    assert.match(error.message, /more than 3000 tokens/);
    assert.equal(failure(Buffer.from('{"a":1,}')).tooManyTokens, false);
  });
});
