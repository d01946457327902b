import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { describe, it } from 'node:test';
import { allowedHostNames, hostAndOriginCheck, normalizeHost } from './guards.js';

describe('allowed host names', () => {
  it('follow a loopback bind address', () => {
    assert.deepEqual([...allowedHostNames('127.0.0.1', [])].sort(), ['127.0.0.1', '::1', 'localhost']);
  });

  it('follow a specific bind address, plus configured names', () => {
    assert.deepEqual([...allowedHostNames('192.0.2.10', ['Build.Example'])].sort(), ['192.0.2.10', 'build.example']);
  });

  it('include every address and the name of this machine when bound to all interfaces', () => {
    const names = allowedHostNames('0.0.0.0', []);
    assert.ok(names.has('localhost') && names.has('127.0.0.1'));
    assert.ok(names.has(hostname().toLowerCase()));
    assert.ok(!names.has('attacker.example'));
  });

  it('compare Host headers without port or brackets', () => {
    assert.equal(normalizeHost('LocalHost:9100'), 'localhost');
    assert.equal(normalizeHost('[::1]:9100'), '::1');
    assert.equal(normalizeHost('::1'), '::1');
    assert.equal(normalizeHost('example.com'), 'example.com');
  });
});

describe('the Origin check', () => {
  const check = hostAndOriginCheck(allowedHostNames('127.0.0.1', []), ['https://console.example']);

  it('takes only the exact origin the request was sent to, and listed origins', () => {
    assert.equal(
      check({ host: '127.0.0.1:9101', origin: 'http://127.0.0.1:9101' }, true),
      undefined,
      'any origin where the caller allows it',
    );
    assert.equal(check({ host: '127.0.0.1:9101', origin: 'http://127.0.0.1:9101' }), undefined);
    assert.equal(check({ host: 'localhost:9101', origin: 'http://LOCALHOST:9101' }), undefined);
    assert.equal(check({ host: '[::1]:9101', origin: 'http://[::1]:9101' }), undefined);
    assert.equal(check({ host: '127.0.0.1', origin: 'http://127.0.0.1' }), undefined, 'the default port');
    assert.equal(check({ host: '127.0.0.1:9101', origin: 'https://console.example' }), undefined);
    assert.equal(check({ host: '127.0.0.1:9101' }), undefined, 'no Origin: not a browser page');
  });

  it('refuses another port, scheme or host of this machine, and opaque origins (403)', () => {
    for (const origin of ['http://127.0.0.1:9102', 'http://127.0.0.1', 'https://127.0.0.1:9101', 'http://localhost:9101', 'null']) {
      const refused = check({ host: '127.0.0.1:9101', origin });
      assert.equal(refused?.status, 403, origin);
      assert.match(refused.message, /only from its own origin/, origin);
    }
  });

  it('refuses an Origin that is not an origin (400), even where any origin is allowed', () => {
    for (const origin of ['file://', 'http://127.0.0.1:9101/path', 'http://127.0.0.1:9101 evil.com', 'http://x@127.0.0.1:9101']) {
      assert.equal(check({ host: '127.0.0.1:9101', origin }, true)?.status, 400, origin);
    }
  });
});

describe('the Host check', () => {
  const check = hostAndOriginCheck(allowedHostNames('127.0.0.1', []), []);

  it('refuses a Host that is not a host and an optional port (400)', () => {
    for (const host of [
      '127.0.0.1:19100@evil.com',
      '127.0.0.1:19101 evil.com',
      '127.0.0.1:19101\tevil.com',
      'me@127.0.0.1:19101',
      '127.0.0.1:19101/x',
      '',
      undefined,
    ]) {
      const refused = check({ host });
      assert.equal(refused?.status, 400, JSON.stringify(host));
      assert.doesNotMatch(refused.message, /\t/, 'no control character is echoed');
    }
  });

  it("refuses a host that is not this server's (403), and lets its own through", () => {
    assert.equal(check({ host: 'evil.com:19101' })?.status, 403);
    assert.equal(check({ host: '127.0.0.1.evil.com' })?.status, 403);
    assert.equal(check({ host: 'localhost.:19101' })?.status, 403);
    assert.equal(check({ host: '127.0.0.1:19101' }), undefined);
    assert.equal(check({ host: '[::1]:19101' }), undefined);
  });
});
