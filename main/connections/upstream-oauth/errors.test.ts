import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidGrantError, ServerError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { describeFailure, redact } from './errors.js';

describe('describeFailure', () => {
  it('names the OAuth error code and the provider description', () => {
    assert.equal(describeFailure(new InvalidGrantError('refresh token already used'), []), 'invalid_grant: refresh token already used');
  });

  it('drops a non-OAuth error body, which the provider may have filled with anything', () => {
    const error = new ServerError('HTTP 502: Invalid OAuth error response: SyntaxError: bad json. Raw body: <html>code=abc</html>');
    assert.equal(describeFailure(error, []), 'HTTP 502:');
  });

  it('names the network cause', () => {
    const error = new TypeError('fetch failed', { cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }) });
    assert.equal(describeFailure(error, []), 'fetch failed (ECONNREFUSED)');
  });

  it('never repeats a secret the request carried, plain or URL-encoded, even across the cut', () => {
    const secret = 'sec/ret+value=1';
    const echoed = new Error(`${'x'.repeat(290)} ${secret} and ${encodeURIComponent(secret)}`);
    const text = describeFailure(echoed, [secret, undefined]);
    assert.ok(!text.includes(secret) && !text.includes(encodeURIComponent(secret)) && !text.includes('sec/'), text);
    assert.ok(text.length <= 300);
  });
});

describe('redact', () => {
  it('replaces every occurrence', () => {
    assert.equal(redact('a TOKEN b TOKEN', ['TOKEN']), 'a [redacted] b [redacted]');
  });
});
