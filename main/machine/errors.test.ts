import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MachineError, fileSystemError } from './errors.js';

const errno = (code: string): NodeJS.ErrnoException => Object.assign(new Error(`${code}: failed`), { code });

describe('fileSystemError', () => {
  it('words the errors a file operation meets so an agent can act on them', () => {
    const cases: Array<[string, string, RegExp]> = [
      ['ENOSPC', 'io_error', /^Cannot write \/x: no space left on the device\. Free some space/],
      ['EROFS', 'permission_denied', /^Cannot write \/x: the file system is read-only\.$/],
      ['ENOTDIR', 'not_found', /^Cannot write \/x: a part of this path is a file, not a folder\.$/],
      ['EIO', 'io_error', /^Cannot write \/x: EIO: failed$/],
    ];
    for (const [code, expected, message] of cases) {
      const error = fileSystemError(errno(code), '/x', 'write');
      assert.equal(error.code, expected, code);
      assert.match(error.message, message);
      assert.equal((error.cause as NodeJS.ErrnoException).code, code);
    }
  });

  it('passes a MachineError through unchanged', () => {
    const original = new MachineError('too_large', 'too big');
    assert.equal(fileSystemError(original, '/x', 'edit'), original);
  });
});
