import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { forTerminal } from './terminal-text.js';

describe('text for a terminal', () => {
  it('writes what a terminal would act on as escapes, keeping line feeds, tabs and other text', () => {
    assert.equal(forTerminal('\x1b[2J\x1b]0;pwned\x07'), '\\x1b[2J\\x1b]0;pwned\\x07');
    assert.equal(forTerminal('a\rb\x9bc\x7fd'), 'a\\x0db\\x9bc\\x7fd');
    assert.equal(forTerminal('evil\u202efdp.exe'), 'evil\\u202efdp.exe');
    assert.equal(forTerminal('one\ntwo\tcolumns, café 😀'), 'one\ntwo\tcolumns, café 😀');
  });
});
