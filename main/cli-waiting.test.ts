import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { waitingFor } from './cli-waiting.js';

/** A stream that records what is written, as a terminal (isTTY) or not. */
function stream(isTTY: boolean): NodeJS.WriteStream & { text: string } {
  const s = { isTTY, text: '', write: (chunk: string) => ((s.text += chunk), true) };
  return s as unknown as NodeJS.WriteStream & { text: string };
}

describe('waitingFor', () => {
  it('says on a terminal what it waits for, for how long so far and at most, then erases the line', async () => {
    const tty = stream(true);
    const answer = await waitingFor(
      'Waiting for the server to check linear',
      new Promise((r) => setTimeout(() => r('done'), 1_400)),
      121_000,
      tty,
    );
    assert.equal(answer, 'done');
    assert.match(tty.text, /\r\x1b\[2KWaiting for the server to check linear: 0 s \(at most 121 s\)/);
    assert.match(tty.text, /\r\x1b\[2KWaiting for the server to check linear: 1 s \(at most 121 s\)/);
    assert.ok(tty.text.endsWith('\r\x1b[2K'), 'the line is erased at the end');
  });

  it('writes nothing for a quick answer, nor when the stream is not a terminal', async () => {
    const tty = stream(true);
    await waitingFor('quick', Promise.resolve(1), 5_000, tty);
    assert.equal(tty.text, '');
    const pipe = stream(false);
    await waitingFor('slow', new Promise((r) => setTimeout(r, 500)), 5_000, pipe);
    assert.equal(pipe.text, '');
  });

  it('passes a failure on, erasing the line', async () => {
    const tty = stream(true);
    await assert.rejects(
      waitingFor('failing', new Promise((_, reject) => setTimeout(() => reject(new Error('refused')), 500)), 5_000, tty),
      /refused/,
    );
    assert.ok(tty.text.endsWith('\r\x1b[2K'));
  });
});
