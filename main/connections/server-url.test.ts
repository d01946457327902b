import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkServerUrl, customName, ServerUrlError } from './server-url.js';

describe('the name of a server added by URL with none given', () => {
  it('is its host and path, without a plain /mcp', () => {
    assert.equal(customName(new URL('https://mcp.example.com/mcp')), 'mcp.example.com');
    assert.equal(customName(new URL('https://tools.example.com/one/mcp/')), 'tools.example.com/one/mcp');
  });
});

describe('checkServerUrl', () => {
  it('takes a URL of up to 2048 characters, as given and once normalized, and refuses a longer one saying how long it is', () => {
    const base = 'https://mcp.example.com/mcp?pad=';
    const longest = base + 'a'.repeat(2048 - base.length);
    assert.equal(checkServerUrl(longest, false).href, longest);
    assert.throws(
      () => checkServerUrl(`${longest}a`, false),
      (error: unknown) =>
        error instanceof ServerUrlError && /The URL is 2049 characters long; a server URL may have at most 2048\./.test(error.message),
    );
    // Each space becomes %20 once normalized: 1000 of them make 3000 characters from 1000.
    const spaced = `${base}${' '.repeat(1000)}x`;
    assert.ok(spaced.length <= 2048);
    assert.throws(() => checkServerUrl(spaced, false), /The URL is 3033 characters long/);
    assert.throws(() => checkServerUrl('x'.repeat(100_000), false), /The URL is 100000 characters long/);
  });
});
