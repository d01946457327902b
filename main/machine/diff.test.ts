import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DIFF_MAX_LINES, DIFF_MAX_LINE_CHARS, unifiedDiff } from './diff.js';

const numbered = (count: number): string[] => Array.from({ length: count }, (_, i) => `line ${i + 1}`);

describe('unifiedDiff', () => {
  it('is empty when nothing changed', () => {
    assert.equal(unifiedDiff('a\nb\n', 'a\nb\n'), '');
  });

  it('shows a change with three lines of context and unified line numbers', () => {
    const before = numbered(20);
    const after = [...before];
    after[9] = 'changed 10';
    assert.equal(
      unifiedDiff(before.join('\n'), after.join('\n')),
      ['@@ -7,7 +7,7 @@', ' line 7', ' line 8', ' line 9', '-line 10', '+changed 10', ' line 11', ' line 12', ' line 13'].join('\n'),
    );
  });

  it('splits distant changes into separate hunks', () => {
    const before = numbered(40);
    const after = [...before];
    after[2] = 'first';
    after[35] = 'second';
    const diff = unifiedDiff(before.join('\n'), after.join('\n'));
    assert.deepEqual(
      diff.split('\n').filter((line) => line.startsWith('@@')),
      ['@@ -1,6 +1,6 @@', '@@ -33,7 +33,7 @@'],
    );
  });

  it('numbers a pure insertion from the line before it', () => {
    const diff = unifiedDiff('a\nb\n', 'a\nnew\nb\n');
    assert.equal(diff, ['@@ -1,2 +1,3 @@', ' a', '+new', ' b'].join('\n'));
  });

  it('finds the real change inside a moved block rather than replacing everything', () => {
    const diff = unifiedDiff(['x', 'a', 'b', 'c', 'y'].join('\n'), ['x', 'b', 'c', 'a', 'y'].join('\n'));
    assert.equal(diff.split('\n').filter((line) => /^[-+]/.test(line)).length, 2);
  });

  it('numbers an insertion at the very start of the file', () => {
    assert.equal(unifiedDiff('a\n', 'new\na\n'), ['@@ -1,1 +1,2 @@', '+new', ' a'].join('\n'));
    assert.equal(unifiedDiff('', 'new\n'), ['@@ -0,0 +1,1 @@', '+new'].join('\n'));
  });

  it('hides CRLF line endings', () => {
    assert.equal(unifiedDiff('a\r\nb\r\n', 'a\r\nc\r\n'), ['@@ -1,2 +1,2 @@', ' a', '-b', '+c'].join('\n'));
  });

  it(`stays within ${DIFF_MAX_LINES} lines and shortens long lines`, () => {
    const before = numbered(5000);
    const after = before.map((line) => `${line} changed ${'z'.repeat(DIFF_MAX_LINE_CHARS)}`);
    const started = Date.now();
    const diff = unifiedDiff(before.join('\n'), after.join('\n')).split('\n');
    assert.ok(Date.now() - started < 2000, 'a large change is diffed quickly');
    assert.equal(diff.length, DIFF_MAX_LINES + 1);
    assert.match(diff.at(-1)!, /^\.\.\. \d+ more diff lines not shown$/);
    assert.ok(diff.every((line) => line.length <= DIFF_MAX_LINE_CHARS + 2));
  });
});
