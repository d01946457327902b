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
    assert.equal(check({ host: '127.0.0.1:9101', origin: 'http://127.0.0.1:9101' }), undefined);
    assert.equal(check({ host: 'localhost:9101', origin: 'http://LOCALHOST:9101' }), undefined);
    assert.equal(check({ host: '[::1]:9101', origin: 'http://[::1]:9101' }), undefined);
    assert.equal(check({ host: '127.0.0.1', origin: 'http://127.0.0.1' }), undefined, 'the default port');
    assert.equal(check({ host: '127.0.0.1:9101', origin: 'https://console.example' }), undefined);
    assert.equal(check({ host: '127.0.0.1:9101' }), undefined, 'no Origin: not a browser page');
  });

  it('refuses another port, scheme or host of this machine, and opaque origins', () => {
    for (const origin of ['http://127.0.0.1:9102', 'http://127.0.0.1', 'https://127.0.0.1:9101', 'http://localhost:9101', 'null', 'file://', 'http://127.0.0.1:9101/path']) {
      assert.match(check({ host: '127.0.0.1:9101', origin }) ?? '', /only from its own origin/, origin);
    }
  });
});
