import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { after, before, describe, it } from 'node:test';
import { OutputCapture, type OutputCaptureLimits } from './output-capture.js';

let dir: string;
let count = 0;

function capture(limits: Partial<OutputCaptureLimits> = {}): OutputCapture {
  count += 1;
  const path = join(dir, `out-${count}.log`);
  return new OutputCapture({ headBytes: 10, tailBytes: 10, maxSavedBytes: 1024 ** 2, savePath: async () => path, ...limits });
}

async function feed(sink: OutputCapture, chunks: Array<string | Buffer>): Promise<void> {
  await pipeline(Readable.from(chunks.map((chunk) => Buffer.from(chunk))), sink);
}

describe('OutputCapture', () => {
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'machine-capture-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  it('returns output that fits whole, and saves no file', async () => {
    const sink = capture();
    await feed(sink, ['hello ', 'world', '!!!!!!!!!']);
    assert.deepEqual(sink.result(), { text: 'hello world!!!!!!!!!', totalBytes: 20, elidedBytes: 0 });
  });

  it('keeps head and tail, counts what was elided, and saves all of it to a file', async () => {
    const sink = capture();
    const chunks = ['0123456789', 'abcdefghij', 'ABCDEFGHIJ', 'klmnopqrst', 'uvw'];
    await feed(sink, chunks);
    const result = sink.result();
    assert.equal(result.text, '0123456789\n... 23 bytes elided ...\nnopqrstuvw');
    assert.equal(result.totalBytes, 43);
    assert.equal(result.elidedBytes, 23);
    assert.equal(await readFile(result.fullOutputPath!, 'utf8'), chunks.join(''));
    assert.equal((await stat(result.fullOutputPath!)).mode & 0o777, 0o600);
  });

  it('keeps the tail right when one chunk is larger than the ring', async () => {
    const sink = capture();
    await feed(sink, ['0123456789', 'x'.repeat(30) + 'TAIL-12345']);
    assert.match(sink.result().text, /\nTAIL-12345$/);
  });

  it('does not cut a character in half at either edge', async () => {
    const sink = capture({ headBytes: 5, tailBytes: 5 });
    await feed(sink, ['a€€€€€€x€']); // € is 3 bytes: the head ends and the tail starts inside one
    const result = sink.result();
    assert.equal(result.text, 'a€\n... 15 bytes elided ...\nx€');
    assert.equal(result.elidedBytes, 15);
  });

  it('stops saving at the saved-output limit and says so', async () => {
    const sink = capture({ maxSavedBytes: 25 });
    await feed(sink, ['0123456789', 'abcdefghij', 'ABCDEFGHIJ', 'klmnopqrst']);
    const result = sink.result();
    assert.equal(await readFile(result.fullOutputPath!, 'utf8'), '0123456789abcdefghijABCDE');
    assert.match(result.fullOutputProblem!, /only the first 25 bytes of the output were saved/);
    assert.equal(result.totalBytes, 40);
  });

  it('still returns head and tail when the full output cannot be saved', async () => {
    const sink = capture({ savePath: async () => join(dir, 'no-such-folder', 'out.log') });
    await feed(sink, ['0123456789', 'abcdefghij', 'ABCDEFGHIJ']);
    const result = sink.result();
    assert.equal(result.text, '0123456789\n... 10 bytes elided ...\nABCDEFGHIJ');
    assert.equal(result.fullOutputPath, undefined);
    assert.match(result.fullOutputProblem!, /could not be saved: ENOENT/);
  });
});
