import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inertDescription, inertLine, MAX_DESCRIPTION, MAX_NAME } from './upstream-text.js';

describe('upstream text made inert', () => {
  it('removes escape sequences whole, in their 7-bit and C1 forms', () => {
    assert.equal(inertLine('ansi\x1b[31m', MAX_NAME), 'ansi');
    assert.equal(inertLine('a\x1b[38;5;196mred\x1b[0m', MAX_NAME), 'ared');
    assert.equal(inertLine('\x1b]0;pwned\x07title', MAX_NAME), 'title');
    assert.equal(inertLine('\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\', MAX_NAME), 'link');
    assert.equal(inertLine('\x9b31mc1\x9d0;t\x9c', MAX_NAME), 'c1');
    assert.equal(inertLine('\x1bPq#0;2;0;0;0\x1b\\dcs', MAX_NAME), 'dcs');
    assert.equal(inertLine('reset\x1bc\x1b(B', MAX_NAME), 'reset');
  });

  it("drops what is left of an unterminated sequence's opening, and every other control", () => {
    assert.equal(inertLine('\x1b]0;never ends', MAX_NAME), '0;never ends');
    assert.equal(inertLine('a\x00b\x07c\x7fd\x85e\x9ff', MAX_NAME), 'abcd ef');
    assert.equal(inertLine('evil\u202efdp.exe\u2066', MAX_NAME), 'evilfdp.exe');
    assert.equal(inertLine('lone \ud800 surrogate', MAX_NAME), 'lone \ufffd surrogate');
  });

  it('makes one line of a name or title, and cuts it without splitting a character', () => {
    assert.equal(inertLine('line\r\nbreak\tand\u2028more', MAX_NAME), 'line break and more');
    assert.equal(inertLine(`${'n'.repeat(5_000)}`, MAX_NAME).length, MAX_NAME);
    assert.equal(inertLine(`${'a'.repeat(127)}😀`, MAX_NAME), 'a'.repeat(127));
  });

  it("keeps a description's lines and tabs, turning CR LF and CR into LF", () => {
    assert.equal(inertDescription('\x1b[2J\x1b]0;pwned\x07One.\r\nTwo.\rThree\tcolumns.\x1b[0m'), 'One.\nTwo.\nThree\tcolumns.');
  });

  it('caps a description, saying it was cut', () => {
    const cut = inertDescription(`\x1b[2J${'x'.repeat(200_000)}`);
    assert.ok(cut.startsWith('x'.repeat(MAX_DESCRIPTION)));
    assert.equal(cut.slice(MAX_DESCRIPTION), "\n[Cut: the server's description is 200,000 characters long; the first 8,000 are shown.]");
    assert.equal(inertDescription('x'.repeat(MAX_DESCRIPTION)), 'x'.repeat(MAX_DESCRIPTION));
  });
});
