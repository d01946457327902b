import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { registeredRedirectUri } from './redirect-uri.js';

describe('registeredRedirectUri', () => {
  const registered = [
    'http://127.0.0.1:19140/cb',
    'http://[::1]/cb',
    'https://app.example/oauth/cb',
    'cursor://anysphere.cursor-mcp/oauth/callback',
  ];

  it('takes a registered URI as parsed (scheme and host case), and a loopback one on any port', () => {
    assert.equal(registeredRedirectUri(registered, 'http://127.0.0.1:19140/cb'), 'http://127.0.0.1:19140/cb');
    assert.equal(registeredRedirectUri(registered, 'HTTPS://APP.example/oauth/cb'), 'HTTPS://APP.example/oauth/cb');
    assert.equal(registeredRedirectUri(registered, 'http://127.0.0.1:40123/cb'), 'http://127.0.0.1:40123/cb');
    assert.equal(registeredRedirectUri(registered, 'http://[::1]:40123/cb'), 'http://[::1]:40123/cb');
    assert.equal(
      registeredRedirectUri(registered, 'cursor://anysphere.cursor-mcp/oauth/callback'),
      'cursor://anysphere.cursor-mcp/oauth/callback',
    );
  });

  it('refuses user info, fragments, another loopback name, path or query, and another port of a non-loopback URI', () => {
    for (const uri of [
      'http://anthropic.com:443@127.0.0.1:19140/cb',
      'http://127.0.0.1:19140/cb#x',
      'http://localhost:19140/cb',
      'http://127.0.0.1:19140/cb/',
      'http://127.0.0.1:19140/cb?a=1',
      'https://app.example:8443/oauth/cb',
      'https://app.example/oauth/cb?next=https://evil.example',
      'not a url',
    ]) {
      assert.throws(
        () => registeredRedirectUri(registered, uri),
        (error: Error & { code?: string }) => error.code === 'invalid_request',
        uri,
      );
    }
  });

  it('uses the only registered URI when none is named, and asks for one when there are several', () => {
    assert.equal(registeredRedirectUri(['https://app.example/cb'], undefined), 'https://app.example/cb');
    assert.throws(() => registeredRedirectUri(registered, undefined), /redirect_uri is missing/);
  });
});
