import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RecentOutput } from './recent-output.js';

describe('RecentOutput', () => {
  it('has no line before any output', () => {
    assert.equal(new RecentOutput().lastLine(), undefined);
  });

  it('gives the last non-blank line across chunks', () => {
    const recent = new RecentOutput();
    recent.add(Buffer.from('first\nsec'));
    recent.add(Buffer.from('ond\n\n  \n'));
    assert.equal(recent.lastLine(), 'second');
  });

  it('shows what a redrawn progress line shows now, without terminal escapes', () => {
    const recent = new RecentOutput();
    recent.add(Buffer.from('\x1b[32m 10%\r 50%\r\x1b[1m 90%\x1b[0m\r\n'));
    assert.equal(recent.lastLine(), '90%');
  });

  it('shortens a very long line and keeps only recent output', () => {
    const recent = new RecentOutput();
    recent.add(Buffer.from(`old line\n${'y'.repeat(5000)}`));
    const line = recent.lastLine()!;
    assert.equal(line, `${'y'.repeat(200)}…`);
  });
});
